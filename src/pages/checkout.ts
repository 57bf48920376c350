// The hosted checkout page at a checkout's `url`: what the buyer sees and pays on. It is a client of
// the schema's checkout client fields (`checkoutClient`, `checkoutClientConfirm`), run in-process,
// not a second implementation. Plain HTML forms; the status view refreshes itself (a meta refresh)
// until the order is paid or the payment failed. With the test processor nothing needs JavaScript.
// When Stripe takes the environment's payments (the checkout's processor metadata carries a
// publishable key), the card field is Stripe's Payment Element and the status view runs the bank's
// 3-D Secure check: the only scripts these pages run (pages/stripe.ts).
// The checkout's client secret in the URL is the buyer's only credential, and the page sets no
// cookie; its form still carries a token (an HMAC of the client secret under the environment's
// key) and must come from this origin, so another site cannot post it on a buyer's behalf.
import { parse, type GraphQLError } from 'graphql';
import type { Context, Environment } from '../context.ts';
import { formatMoney, majorUnits, minorUnitExponent, parseMajorUnits } from '../currencies.ts';
import { formBody, redirect, type OAuthRequest, type OAuthResponse } from '../oauth/http.ts';
import type { OAuthRoute } from '../oauth/routes.ts';
import { stripeExponent } from '../stripe-amounts.ts';
import { html, page, type Html, type PageScripts } from './html.ts';
import { boundFormToken, checkBoundFormToken, sameOriginPost } from './session.ts';
import { nextActionScripts, paymentElementScripts } from './stripe.ts';
import { customFieldAnswers, customFieldErrorKey, customFieldsFieldset, customFieldsSelection, type CustomFieldsView } from './checkout-custom-fields.ts';

const checkoutQuery = parse(`query ($clientSecret: String!) {
  checkoutClient(clientSecret: $clientSecret) {
    id status amount currency totalAmount expiresAt successUrl url isPaymentRequired
    customerEmail customerName requireBillingAddress
    customerBillingAddress { country line1 line2 city postalCode state }
    billingAddressFields { country line1 line2 city postalCode state }
    paymentProcessorMetadata
    organization { name }
    product { name description }
    ${customFieldsSelection}
    productPrice {
      amountType recurringInterval
      ... on ProductPriceFixed { priceAmount }
      ... on ProductPriceCustom { minimumAmount maximumAmount presetAmount }
    }
  }
}`);

const confirmMutation = parse(`mutation ($clientSecret: String!, $input: CheckoutConfirmInput!) {
  checkoutClientConfirm(clientSecret: $clientSecret, input: $input) { id status }
}`);

type FieldMode = 'required' | 'optional' | 'disabled';
const addressFields = ['country', 'line1', 'line2', 'postalCode', 'city', 'state'] as const;
type AddressField = (typeof addressFields)[number];

interface CheckoutView extends CustomFieldsView {
  id: string;
  status: 'open' | 'confirmed' | 'succeeded' | 'failed' | 'expired';
  amount: number;
  currency: string;
  totalAmount: number;
  expiresAt: string;
  successUrl: string;
  url: string;
  isPaymentRequired: boolean;
  customerEmail: string | null;
  customerName: string | null;
  requireBillingAddress: boolean;
  customerBillingAddress: Partial<Record<AddressField, string | null>> | null;
  billingAddressFields: Record<AddressField, FieldMode>;
  /** From the processor: with Stripe, `publishable_key`, and `intent_status` with `intent_client_secret` while the bank asks the buyer. */
  paymentProcessorMetadata: Partial<Record<'publishable_key' | 'intent_status' | 'intent_client_secret', string>>;
  organization: { name: string };
  product: { name: string; description: string | null };
  productPrice: { amountType: 'fixed' | 'custom' | 'free'; recurringInterval: string | null; priceAmount?: number; minimumAmount?: number | null; maximumAmount?: number | null; presetAmount?: number | null };
}

const addressLabels: Record<AddressField, string> = { country: 'Country (2-letter code, such as US)', line1: 'Address', line2: 'Address line 2', postalCode: 'Postal code', city: 'City', state: 'State or region' };

/** The context a buyer's page acts in: no token, the buyer's address, the request's clock. */
function buyerContext(environment: Environment, request: OAuthRequest, now: Date): Context {
  return { environment, prisma: environment.prisma, principal: { kind: 'anonymous' }, requestId: request.requestId, clientIp: request.clientIp, now: () => now };
}

/** The checkout as the buyer may see it; the schema answers an expired one with EXPIRED_CHECKOUT. */
async function loadCheckout(environment: Environment, request: OAuthRequest, now: Date): Promise<CheckoutView | 'expired' | null> {
  const result = await environment.graphql!(checkoutQuery, { clientSecret: request.params.client_secret }, buyerContext(environment, request, now));
  if (result.errors?.[0]?.extensions?.code === 'EXPIRED_CHECKOUT') return 'expired';
  return (result.data?.checkoutClient as CheckoutView | undefined) ?? null;
}

// ---- money ---------------------------------------------------------------------------------

/** An example amount to type in `currency`'s own decimals: "12.50", "12" for jpy, "12.500" for kwd. */
function typingExample(currency: string): string {
  const [, zeros = ''] = majorUnits(0, currency).split('.');
  return zeros ? `12.5${zeros.slice(1)}` : '12';
}

/** An amount the buyer typed in major units as minor units, or null when it is not one. */
function minorUnits(typed: string, currency: string): number | null {
  const amount = parseMajorUnits(typed, currency);
  // GraphQL's Int is 32-bit: larger is no amount any price accepts.
  return amount !== null && amount <= 2_147_483_647 ? amount : null;
}

// ---- rendering -----------------------------------------------------------------------------

type FieldErrors = Partial<Record<string, string>>;

function errorFor(name: string, errors: FieldErrors): Html | string {
  return errors[name] ? html`<p class="error" id="${name}-error">${errors[name]}</p>` : '';
}

function input(name: string, label: string, options: { type?: string; value?: string | null; required?: boolean; autocomplete?: string; hint?: string; inputmode?: string }, errors: FieldErrors): Html {
  const described = [errors[name] ? `${name}-error` : '', options.hint ? `${name}-hint` : ''].filter(Boolean).join(' ');
  return html`<label for="${name}">${label}${options.required ? '' : html` <span class="muted">(optional)</span>`}</label>
${options.hint ? html`<p class="muted hint" id="${name}-hint">${options.hint}</p>` : ''}
${errorFor(name, errors)}
<input type="${options.type ?? 'text'}" id="${name}" name="${name}" value="${options.value ?? ''}"${options.required ? html` required` : ''}${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ''}${options.inputmode ? html` inputmode="${options.inputmode}"` : ''}${described ? html` aria-describedby="${described}"` : ''}${errors[name] ? html` aria-invalid="true"` : ''}>`;
}

function priceLine(checkout: CheckoutView): string {
  const price = checkout.productPrice;
  const every = price.recurringInterval ? ` every ${price.recurringInterval}` : '';
  if (price.amountType === 'free') return 'Free';
  if (price.amountType === 'fixed') return `${formatMoney(checkout.amount, checkout.currency)}${every}`;
  const low = formatMoney(price.minimumAmount ?? 0, checkout.currency);
  return price.maximumAmount ? `Pay what you want, from ${low} to ${formatMoney(price.maximumAmount, checkout.currency)}${every}` : `Pay what you want, from ${low}${every}`;
}

/** The card field: Stripe's Payment Element when Stripe takes the payments, else a test card token field. */
function cardField(checkout: CheckoutView, typed: (name: string, fallback?: string | null) => string | null, errors: FieldErrors, sandbox: boolean): { field: Html; scripts?: PageScripts } {
  const publishableKey = checkout.paymentProcessorMetadata.publishable_key;
  if (!publishableKey) {
    return {
      field: input('card', 'Card', {
        value: typed('card', sandbox ? 'tok_visa' : ''),
        required: true,
        autocomplete: 'off',
        hint: sandbox ? 'Sandbox: use a test card token: tok_visa pays, tok_chargeDeclined is declined.' : 'The payment method token.',
      }, errors),
    };
  }
  const decimals = stripeExponent(checkout.currency);
  if (decimals === null) {
    return { field: html`<p class="error">Cards cannot pay in ${checkout.currency.toUpperCase()} here. Ask the seller for another checkout.</p>` };
  }
  // What the buyer pays, in Stripe's unit: the typed amount of a pay-what-you-want price.
  const amount = checkout.productPrice.amountType === 'custom' ? (minorUnits(typed('amount') ?? '', checkout.currency) ?? checkout.amount) : checkout.totalAmount;
  const stripeUnits = Math.round(amount * 10 ** (decimals - minorUnitExponent(checkout.currency)));
  // The token is made anew on every submit: a refused post's token is never sent again.
  return {
    field: html`<fieldset>
<legend>Payment</legend>
${errorFor('card', errors)}
<p class="error" id="payment-element-error" role="alert" hidden></p>
<div id="payment-element" data-publishable-key="${publishableKey}" data-setup-future-usage="${checkout.productPrice.recurringInterval ? 'off_session' : ''}" data-amount="${stripeUnits}" data-amount-decimals="${decimals}" data-currency="${checkout.currency}"></div>
<noscript><p class="error">Paying by card needs JavaScript: Stripe's card field runs in your browser.</p></noscript>
<input type="hidden" name="card" value="">
</fieldset>`,
    scripts: paymentElementScripts,
  };
}

async function checkoutPage(environment: Environment, checkout: CheckoutView, clientSecret: string, typed: URLSearchParams | null, errors: FieldErrors, status = 200): Promise<OAuthResponse> {
  const value = (name: string, fallback: string | null = null) => typed?.get(name) ?? fallback;
  const address = checkout.customerBillingAddress ?? {};
  const price = checkout.productPrice;
  const sandbox = environment.name === 'sandbox';
  const general = errors.form ? html`<div class="error" role="alert" id="form-error">${errors.form}</div>` : '';
  const summary = Object.keys(errors).length ? html`<div class="error" role="alert">Please correct the fields marked below.</div>` : '';
  const card = checkout.isPaymentRequired || price.amountType === 'custom' ? cardField(checkout, value, errors, sandbox) : null;
  const body = html`<p class="muted">${checkout.organization.name}</p>
<h1>${checkout.product.name}</h1>
${checkout.product.description ? html`<p>${checkout.product.description}</p>` : ''}
<p class="price"><strong>${priceLine(checkout)}</strong></p>
${general || summary}
<form method="post" action="${new URL(checkout.url).pathname}" novalidate>
<input type="hidden" name="form_token" value="${await boundFormToken(environment, `checkout:${clientSecret}`)}">
${
  price.amountType === 'custom'
    ? input('amount', `Amount (${checkout.currency.toUpperCase()})`, { value: value('amount', majorUnits(price.presetAmount ?? checkout.amount, checkout.currency)), required: true, inputmode: 'decimal', hint: priceLine(checkout) }, errors)
    : ''
}
${input('email', 'Email', { type: 'email', value: value('email', checkout.customerEmail), required: true, autocomplete: 'email' }, errors)}
${input('name', 'Name', { value: value('name', checkout.customerName), autocomplete: 'name' }, errors)}
<fieldset>
<legend>Billing address</legend>
${addressFields
  .filter((field) => checkout.billingAddressFields[field] !== 'disabled' || (field === 'country' && checkout.requireBillingAddress))
  .map((field) =>
    input(field, addressLabels[field], { value: value(field, address[field] ?? null), required: checkout.billingAddressFields[field] === 'required' || (field === 'country' && checkout.requireBillingAddress), autocomplete: { country: 'country', line1: 'address-line1', line2: 'address-line2', postalCode: 'postal-code', city: 'address-level2', state: 'address-level1' }[field] }, errors),
  )}
</fieldset>
${customFieldsFieldset(checkout, typed, errors)}
${card?.field ?? ''}
<div class="actions"><button type="submit">${price.amountType === 'custom' ? 'Pay' : checkout.isPaymentRequired ? `Pay ${formatMoney(checkout.totalAmount, checkout.currency)}` : 'Get it'}</button></div>
</form>`;
  // A post may end, through the status page, at the seller's success URL: the policy must allow it.
  const successOrigin = new URL(checkout.successUrl).origin;
  return page(body, { title: checkout.product.name, environment: environment.name, status, formTargets: successOrigin === new URL(checkout.url).origin ? [] : [successOrigin], scripts: card?.scripts });
}

function notFoundPage(environment: Environment, checkout: 'expired' | null): OAuthResponse {
  if (checkout === 'expired') {
    return page(html`<h1>Checkout expired</h1><p class="error" role="alert">This checkout has expired, and nothing was charged. Ask the seller for a new link.</p>`, { title: 'Checkout expired', environment: environment.name, status: 410 });
  }
  return page(html`<h1>Checkout not found</h1><p>This checkout link is not valid. Ask the seller for a new one.</p>`, { title: 'Checkout not found', environment: environment.name, status: 404 });
}

// ---- the buyer's confirm ------------------------------------------------------------------------

/** The confirm input from the form, with what the form itself can tell is wrong. */
function confirmInput(checkout: CheckoutView, form: URLSearchParams): { input: Record<string, unknown>; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const text = (name: string) => form.get(name)?.trim() || null;
  const input: Record<string, unknown> = { customerEmail: text('email'), customerName: text('name') };
  if (checkout.productPrice.amountType === 'custom') {
    const amount = minorUnits(form.get('amount') ?? '', checkout.currency);
    if (amount === null) errors.amount = `Enter an amount, such as ${typingExample(checkout.currency)}.`;
    else input.amount = amount;
  }
  const address = Object.fromEntries(addressFields.map((field) => [field, text(field)]).filter(([, v]) => v !== null));
  if (Object.keys(address).length) input.customerBillingAddress = { ...address, country: (address.country as string | undefined)?.toUpperCase() ?? '' };
  if (text('card')) input.confirmationTokenId = text('card');
  const custom = customFieldAnswers(checkout, form);
  input.customFieldData = custom.answers;
  return { input, errors: { ...errors, ...custom.errors } };
}

/** The confirm's refusal, as words next to the fields it is about. */
function fieldErrors(error: GraphQLError): FieldErrors {
  const issues = (error.extensions?.issues as { loc: (string | number)[]; msg: string }[] | undefined) ?? [];
  if (!issues.length) return { form: error.message };
  const fieldOf: Record<string, string> = { customerEmail: 'email', customerName: 'name', amount: 'amount', confirmationTokenId: 'card', customerBillingAddress: 'country' };
  const errors: FieldErrors = {};
  for (const issue of issues) {
    const [, first, second] = issue.loc.map(String);
    const field = customFieldErrorKey(issue.loc) ?? (first === 'customerBillingAddress' && second ? second : (fieldOf[first] ?? 'form'));
    errors[field] ??= issue.msg.replace(/^Field required: /, 'Required: ').replace(/^Field required$/, 'Required.');
  }
  return errors;
}

async function showCheckout(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const checkout = await loadCheckout(environment, request, now);
  if (checkout === null || checkout === 'expired') return notFoundPage(environment, checkout);
  if (checkout.status !== 'open') return redirect(`${new URL(checkout.url).pathname}/confirmation`);
  return checkoutPage(environment, checkout, request.params.client_secret, null, {});
}

async function confirm(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const clientSecret = request.params.client_secret;
  const checkout = await loadCheckout(environment, request, now);
  if (checkout === null || checkout === 'expired') return notFoundPage(environment, checkout);
  const form = formBody(request);
  if (!sameOriginPost(environment, request) || !(await checkBoundFormToken(environment, `checkout:${clientSecret}`, form.get('form_token')))) {
    return checkoutPage(environment, checkout, clientSecret, form, { form: 'This form did not come from this page. Please try again.' }, 403);
  }
  if (checkout.status !== 'open') return redirect(`${new URL(checkout.url).pathname}/confirmation`);
  const { input, errors } = confirmInput(checkout, form);
  if (Object.keys(errors).length) return checkoutPage(environment, checkout, clientSecret, form, errors, 422);
  const result = await environment.graphql!(confirmMutation, { clientSecret, input }, buyerContext(environment, request, now));
  if (result.errors?.length) {
    const status = (result.errors[0].extensions?.http as { status?: number } | undefined)?.status ?? 400;
    const errors = fieldErrors(result.errors[0]);
    // The schema speaks minor units; the buyer typed major ones.
    if (errors.amount && checkout.productPrice.amountType === 'custom') errors.amount = `Enter an amount the seller accepts: ${priceLine(checkout).replace(/^Pay what you want, /, '')}.`;
    return checkoutPage(environment, checkout, clientSecret, form, errors, status >= 500 ? 400 : status);
  }
  return redirect(`${new URL(checkout.url).pathname}/confirmation`);
}

/**
 * The status view: refreshes itself until the order is paid or the payment failed. While the
 * buyer's bank asks them to confirm (Stripe's `requires_action`), it opens Stripe's 3-D Secure
 * popup instead, and does not refresh under it; the popup done, the page comes back marked
 * `?authenticated` and refreshes until Stripe's webhook settles the order.
 */
async function confirmation(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const checkout = await loadCheckout(environment, request, now);
  if (checkout === null || checkout === 'expired') return notFoundPage(environment, checkout);
  const home = new URL(checkout.url).pathname;
  const ownConfirmation = checkout.successUrl === `${checkout.url}/confirmation`;
  // `href` percent-encodes what an HTTP header cannot carry as it was typed.
  if (checkout.status === 'succeeded' && !ownConfirmation) return redirect(new URL(checkout.successUrl).href);
  const metadata = checkout.paymentProcessorMetadata;
  const bankAsks = checkout.status === 'confirmed' && metadata.intent_status === 'requires_action' && metadata.publishable_key && metadata.intent_client_secret;
  if (bankAsks && !request.query.has('authenticated')) {
    const title = 'Confirm with your bank';
    const body = html`<p class="muted">${checkout.organization.name} · ${checkout.product.name} · ${formatMoney(checkout.totalAmount, checkout.currency)}</p>
<h1>${title}</h1>
<div role="status" aria-live="polite" id="next-action" data-publishable-key="${metadata.publishable_key}" data-client-secret="${metadata.intent_client_secret}" data-after-url="${home}/confirmation?authenticated">Your bank asks you to confirm this payment in the window that opens.</div>
<noscript><p class="error">Confirming with your bank needs JavaScript: Stripe's window runs in your browser.</p></noscript>`;
    return page(body, { title, environment: environment.name, scripts: nextActionScripts });
  }
  const views: Record<CheckoutView['status'], { title: string; body: Html; refresh?: boolean }> = {
    open: { title: 'Not paid yet', body: html`<p>This checkout has not been paid yet.</p><p><a href="${home}">Go to the checkout</a></p>` },
    confirmed: {
      title: 'Processing your payment…',
      body: html`<p>This page updates by itself when your payment goes through.</p>${bankAsks ? html`<p><a href="${home}/confirmation">Your bank’s window did not open?</a></p>` : ''}`,
      refresh: true,
    },
    succeeded: { title: 'Paid', body: html`<p>Thank you: ${checkout.product.name} is yours. A receipt goes to ${checkout.customerEmail ?? 'your email address'}.</p>` },
    failed: { title: 'Payment failed', body: html`<p class="error" role="alert">Your card was declined, and nothing was charged. Ask the seller for a new checkout link to try another card.</p>` },
    expired: { title: 'Checkout expired', body: html`<p class="error" role="alert">This checkout has expired. Ask the seller for a new link.</p>` },
  };
  const view = views[checkout.status];
  const body = html`<p class="muted">${checkout.organization.name} · ${checkout.product.name} · ${formatMoney(checkout.totalAmount, checkout.currency)}</p>
<h1>${view.title}</h1>
<div role="status" aria-live="polite">${view.body}</div>`;
  return page(body, { title: view.title, environment: environment.name, headers: view.refresh ? { refresh: '2' } : {} });
}

export const checkoutPages: OAuthRoute[] = [
  { method: 'GET', path: '/checkout/{client_secret}', handler: showCheckout },
  { method: 'POST', path: '/checkout/{client_secret}', handler: confirm },
  { method: 'GET', path: '/checkout/{client_secret}/confirmation', handler: confirmation },
];
