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
import { countrySelect } from './countries.ts';
import { html, page, type Html, type PageScripts } from './html.ts';
import { boundFormToken, checkBoundFormToken, sameOriginPost } from './session.ts';
import { nextActionScripts, paymentElementScripts } from './stripe.ts';
import { customFieldAnswers, customFieldErrorKey, customFieldsFieldset, customFieldsSelection, type CustomFieldsView } from './checkout-custom-fields.ts';

const checkoutQuery = parse(`query ($clientSecret: String!) {
  checkoutClient(clientSecret: $clientSecret) {
    id status amount currency totalAmount expiresAt successUrl url isPaymentRequired
    discountAmount netAmount taxAmount allowDiscountCodes productId
    discount { name code duration ... on CheckoutDiscountFixedRepeatDuration { durationInMonths } ... on CheckoutDiscountPercentageRepeatDuration { durationInMonths } }
    products { id name }
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

const updateMutation = parse(`mutation ($clientSecret: String!, $input: CheckoutUpdatePublicInput!) {
  checkoutClientUpdate(clientSecret: $clientSecret, input: $input) { id }
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
  discountAmount: number;
  netAmount: number;
  taxAmount: number | null;
  allowDiscountCodes: boolean;
  productId: string;
  discount: { name: string; code: string | null; duration: 'once' | 'forever' | 'repeating'; durationInMonths?: number } | null;
  products: { id: string; name: string }[];
  customerEmail: string | null;
  customerName: string | null;
  requireBillingAddress: boolean;
  customerBillingAddress: Partial<Record<AddressField, string | null>> | null;
  billingAddressFields: Record<AddressField, FieldMode>;
  /** From the processor: with Stripe, `publishable_key`, and `intent_status` with `intent_client_secret` while the bank asks the buyer. */
  paymentProcessorMetadata: Partial<Record<'publishable_key' | 'intent_status' | 'intent_client_secret' | 'decline_message', string>>;
  organization: { name: string };
  product: { name: string; description: string | null };
  productPrice: { amountType: 'fixed' | 'custom' | 'free'; recurringInterval: string | null; priceAmount?: number; minimumAmount?: number | null; maximumAmount?: number | null; presetAmount?: number | null };
}

const addressLabels: Record<AddressField, string> = { country: 'Country', line1: 'Address', line2: 'Address line 2', postalCode: 'Postal code', city: 'City', state: 'State or region' };

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

/** How long a subscription's discount lasts, in words; nothing for a one-time purchase. */
function discountTerm(checkout: CheckoutView): string {
  const discount = checkout.discount;
  if (!discount || !checkout.productPrice.recurringInterval) return '';
  if (discount.duration === 'forever') return ' (every payment)';
  if (discount.duration === 'once') return ' (first payment)';
  return ` (first ${discount.durationInMonths} month${discount.durationInMonths === 1 ? '' : 's'})`;
}

/** What the buyer pays, line by line: the product, the discount, tax, and the total due now. */
function orderSummary(checkout: CheckoutView): Html {
  const every = checkout.productPrice.recurringInterval ? html` <span class="muted">every ${checkout.productPrice.recurringInterval}</span>` : '';
  const discount = checkout.discount && checkout.discountAmount > 0 ? html`<tr><th scope="row">${checkout.discount.name}${discountTerm(checkout)}</th><td>−${formatMoney(checkout.discountAmount, checkout.currency)}</td></tr>` : '';
  const tax = checkout.taxAmount ? html`<tr><th scope="row">Tax</th><td>${formatMoney(checkout.taxAmount, checkout.currency)}</td></tr>` : '';
  return html`<table class="summary" aria-label="Order summary">
<tr><th scope="row">${checkout.product.name}${every}</th><td>${formatMoney(checkout.amount, checkout.currency)}</td></tr>
${discount}${tax}<tr class="total"><th scope="row">${checkout.productPrice.recurringInterval ? 'Total due today' : 'Total'}</th><td>${formatMoney(checkout.totalAmount, checkout.currency)}</td></tr>
</table>`;
}

/**
 * The forms that change the checkout before paying, each its own small post (so the card field's
 * script never sees them): which of the offered products, and the discount code.
 */
async function changeForms(environment: Environment, checkout: CheckoutView, clientSecret: string, typed: URLSearchParams | null, errors: FieldErrors): Promise<Html> {
  const action = `${new URL(checkout.url).pathname}/update`;
  const token = html`<input type="hidden" name="form_token" value="${await boundFormToken(environment, `checkout:${clientSecret}`)}">`;
  const products =
    checkout.products.length > 1
      ? html`<form method="post" action="${action}" novalidate>
${token}<fieldset>
<legend>Choose</legend>
${errorFor('product_id', errors)}
${checkout.products.map((product) => html`<label class="choice"><input type="radio" name="product_id" value="${product.id}"${product.id === checkout.productId ? html` checked` : ''}> ${product.name}</label>
`)}<div class="actions"><button type="submit" name="action" value="choose_product" class="secondary">Update</button></div>
</fieldset>
</form>`
      : '';
  let discount: Html | string = '';
  if (checkout.discount && checkout.discount.code !== null && checkout.allowDiscountCodes) {
    discount = html`<form method="post" action="${action}" novalidate>
${token}<p>Discount code <strong>${checkout.discount.code.toUpperCase()}</strong> applied. <button type="submit" name="action" value="remove_discount" class="link">Remove</button></p>
</form>`;
  } else if (checkout.allowDiscountCodes && !checkout.discount) {
    discount = html`<form method="post" action="${action}" novalidate>
${token}${input('discount_code', 'Discount code', { value: typed?.get('discount_code') ?? '', autocomplete: 'off' }, errors)}
<div class="actions"><button type="submit" name="action" value="apply_discount" id="apply-discount" class="secondary">Apply</button></div>
</form>`;
  }
  return html`${products}${discount}`;
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
${orderSummary(checkout)}
${await changeForms(environment, checkout, clientSecret, typed, errors)}
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
    field === 'country'
      ? countrySelect({ id: 'country', name: 'country', label: addressLabels.country, value: value(field, address[field] ?? null), required: checkout.billingAddressFields[field] === 'required' || checkout.requireBillingAddress, error: errors.country })
      : input(field, addressLabels[field], { value: value(field, address[field] ?? null), required: checkout.billingAddressFields[field] === 'required', autocomplete: { line1: 'address-line1', line2: 'address-line2', postalCode: 'postal-code', city: 'address-level2', state: 'address-level1' }[field] }, errors),
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

/**
 * A declined checkout's page: why, the summary, and the card field again. Its order is fixed; only
 * the card changes (modules/checkouts/retry.ts).
 */
async function retryPage(environment: Environment, checkout: CheckoutView, clientSecret: string, errors: FieldErrors, status = 200): Promise<OAuthResponse> {
  const sandbox = environment.name === 'sandbox';
  const card = cardField(checkout, (_name, fallback = null) => (fallback === null ? null : sandbox ? 'tok_visa' : ''), errors, sandbox);
  const declined = checkout.paymentProcessorMetadata.decline_message ?? 'The payment was declined.';
  const title = 'Your payment was declined';
  const body = html`<p class="muted">${checkout.organization.name}</p>
<h1>${title}</h1>
<div class="error" role="alert" id="form-error">${errors.form ?? html`${declined} Nothing was charged: you can pay with another card.`}</div>
${orderSummary(checkout)}
<form method="post" action="${new URL(checkout.url).pathname}" novalidate>
<input type="hidden" name="form_token" value="${await boundFormToken(environment, `checkout:${clientSecret}`)}">
${card.field}
<div class="actions"><button type="submit">Pay ${formatMoney(checkout.totalAmount, checkout.currency)}</button></div>
</form>`;
  const successOrigin = new URL(checkout.successUrl).origin;
  return page(body, { title, environment: environment.name, status, formTargets: successOrigin === new URL(checkout.url).origin ? [] : [successOrigin], scripts: card.scripts });
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
  if (checkout.status === 'failed') return retryPage(environment, checkout, request.params.client_secret, {});
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
  if (checkout.status === 'failed') return retry(environment, request, now, checkout, form);
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

/** Another card for a declined checkout. */
async function retry(environment: Environment, request: OAuthRequest, now: Date, checkout: CheckoutView, form: URLSearchParams): Promise<OAuthResponse> {
  const clientSecret = request.params.client_secret;
  const card = form.get('card')?.trim();
  if (!card) return retryPage(environment, checkout, clientSecret, { card: 'Required: the card to pay with.' }, 422);
  const result = await environment.graphql!(confirmMutation, { clientSecret, input: { confirmationTokenId: card } }, buyerContext(environment, request, now));
  if (result.errors?.length) {
    const status = (result.errors[0].extensions?.http as { status?: number } | undefined)?.status ?? 400;
    return retryPage(environment, checkout, clientSecret, fieldErrors(result.errors[0]), status >= 500 ? 400 : status);
  }
  return redirect(`${new URL(checkout.url).pathname}/confirmation`);
}

/** The buyer's changes before paying: another of the offered products, a discount code applied or removed. */
async function update(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const clientSecret = request.params.client_secret;
  const checkout = await loadCheckout(environment, request, now);
  if (checkout === null || checkout === 'expired') return notFoundPage(environment, checkout);
  const form = formBody(request);
  const home = new URL(checkout.url).pathname;
  if (!sameOriginPost(environment, request) || !(await checkBoundFormToken(environment, `checkout:${clientSecret}`, form.get('form_token')))) {
    return checkoutPage(environment, checkout, clientSecret, null, { form: 'This form did not come from this page. Please try again.' }, 403);
  }
  if (checkout.status !== 'open') return redirect(home);
  const action = form.get('action');
  const code = form.get('discount_code')?.trim() ?? '';
  let input: Record<string, unknown>;
  if (action === 'apply_discount') {
    if (!code) return checkoutPage(environment, checkout, clientSecret, form, { discount_code: 'Enter a discount code.' }, 422);
    input = { discountCode: code };
  } else if (action === 'remove_discount') {
    input = { discountCode: null };
  } else if (action === 'choose_product') {
    // Only what the page offered: anything else (a foreign or malformed id) is said in words, unasked.
    const productId = form.get('product_id');
    if (!checkout.products.some((product) => product.id === productId)) return checkoutPage(environment, checkout, clientSecret, null, { form: 'Choose one of the products offered.' }, 422);
    input = { productId };
  } else {
    return checkoutPage(environment, checkout, clientSecret, null, { form: 'This change is not one the page offers. Please try again.' }, 400);
  }
  const result = await environment.graphql!(updateMutation, { clientSecret, input }, buyerContext(environment, request, now));
  if (result.errors?.length) {
    const error = result.errors[0];
    const status = (error.extensions?.http as { status?: number } | undefined)?.status ?? 400;
    const issues = (error.extensions?.issues as { loc: (string | number)[]; msg: string }[] | undefined) ?? [];
    // Said next to the field that caused it, when the page shows that field.
    const field = input.discountCode !== undefined ? 'discount_code' : checkout.products.length > 1 ? 'product_id' : 'form';
    const message = issues[0]?.msg ?? error.message;
    return checkoutPage(environment, checkout, clientSecret, form, issues.length ? { [field]: message } : { form: message }, status >= 500 ? 400 : status);
  }
  return redirect(home);
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
    failed: {
      title: 'Payment failed',
      body: html`<p class="error" role="alert">${metadata.decline_message ?? 'Your card was declined.'} Nothing was charged.</p><p><a href="${home}">Try another card</a></p>`,
    },
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
  { method: 'POST', path: '/checkout/{client_secret}/update', handler: update },
  { method: 'GET', path: '/checkout/{client_secret}/confirmation', handler: confirmation },
];
