// The customer portal page at a customer session's `customer_portal_url`: the customer's orders
// (invoices generated on request, billing details editable until then), subscriptions (cancel at
// period end, resume), benefits and license keys. A client of the schema's CustomerPortal root,
// run in-process with the customer's own principal, so it reaches exactly what the API would.
// Signing in: the link carries the session token once. Opening it only shows whose portal it is,
// with a "Continue as <email>" button; the button's post trades the token for an HttpOnly, Secure,
// SameSite cookie scoped to the portal's path, and sends the browser to the page without the token
// in the address. A link alone never signs a browser in, so nobody can send someone else a link to
// their own portal and have them enter details there unawares (session fixation). A customer
// without a link asks for one by email at …/sign-in (auth/portal-sign-in.ts): the mailed link leads
// to the same kind of confirmation step. Forms carry a
// token bound to the session (an HMAC under the environment's key) and must come from this origin.
import { parse, type DocumentNode, type ExecutionResult, type GraphQLError } from 'graphql';
import type { Context, Environment, Principal } from '../context.ts';
import { formatMoney, minorUnitExponent } from '../currencies.ts';
import { exchangeLinkSession, portalCustomer } from '../auth/customer-sessions.ts';
import { portalOrganization, portalSignInLink, requestPortalSignIn, signInWithPortalLink } from '../auth/portal-sign-in.ts';
import { KassaError } from '../graphql/errors.ts';
import { cookies, formBody, redirect, type OAuthRequest, type OAuthResponse } from '../oauth/http.ts';
import type { OAuthRoute } from '../oauth/routes.ts';
import { countrySelect } from './countries.ts';
import { stripeExponent } from '../stripe-amounts.ts';
import { html, page, type Html, type PageScripts } from './html.ts';
import { boundFormToken, checkBoundFormToken, sameOriginPost, vouchedSameOriginPost } from './session.ts';
import { portalCardScripts, setupNextActionScripts } from './stripe.ts';

type CustomerPrincipal = Extract<Principal, { kind: 'customer' }>;

const portalQuery = parse(`query {
  customerPortal {
    organization { name slug }
    customer { email name }
    orders(limit: 100) { items {
      id createdAt status paid totalAmount currency isInvoiceGenerated billingName
      billingAddress { country line1 line2 postalCode city state }
      product { name }
      customFieldAnswers { slug label value }
    } }
    subscriptions(limit: 100) { items {
      id status amount currency recurringInterval cancelAtPeriodEnd currentPeriodEnd endsAt
      product { name }
    } }
    benefitGrants(limit: 100) { items { id isGranted benefit { description type } } }
    licenseKeys(limit: 100) { items { id key status expiresAt usage limitActivations activations { id label createdAt } } }
  }
}`);

const linkQuery = parse(`query { customerPortal { organization { name } customer { email } } }`);

const operations = {
  orderUpdate: parse(`mutation ($id: UUID!, $input: CustomerOrderUpdateInput!) { customerPortal { orderUpdate(id: $id, input: $input) { id } } }`),
  invoiceGenerate: parse(`mutation ($id: UUID!) { customerPortal { orderInvoiceGenerate(id: $id) { id } } }`),
  invoice: parse(`query ($id: UUID!) { customerPortal { orderInvoice(id: $id) { url } } }`),
  subscriptionUpdate: parse(`mutation ($id: UUID!, $input: CustomerSubscriptionUpdateInput!) { customerPortal { subscriptionUpdate(id: $id, input: $input) { id } } }`),
  signOut: parse(`mutation { customerPortal { signOut } }`),
};

interface CustomFieldAnswer {
  slug: string;
  label: string;
  value: string;
}

/** What the customer answered at checkout, as label: value lines under the order. */
function customFieldAnswerList(answers: CustomFieldAnswer[]): Html | string {
  if (!answers.length) return '';
  return html`<dl class="answers">${answers.map((answer) => html`<div><dt>${answer.label}:</dt> <dd>${answer.value}</dd></div>`)}</dl>`;
}

interface Portal {
  organization: { name: string; slug: string };
  customer: { email: string; name: string | null };
  orders: { items: { id: string; createdAt: string; status: string; paid: boolean; totalAmount: number; currency: string; isInvoiceGenerated: boolean; billingName: string | null; billingAddress: Record<string, string | null> | null; product: { name: string }; customFieldAnswers: CustomFieldAnswer[] }[] };
  subscriptions: { items: { id: string; status: string; amount: number; currency: string; recurringInterval: string; cancelAtPeriodEnd: boolean; currentPeriodEnd: string | null; endsAt: string | null; product: { name: string } }[] };
  benefitGrants: { items: { id: string; isGranted: boolean; benefit: { description: string; type: string } }[] };
  licenseKeys: { items: { id: string; key: string; status: string; expiresAt: string | null; usage: number; limitActivations: number | null; activations: { id: string; label: string; createdAt: string }[] }[] };
}

// ---- the session ---------------------------------------------------------------------------

const portalPath = (environment: Environment) => `${environment.name === 'sandbox' ? '/sandbox' : ''}/portal`;
const cookieName = (environment: Environment) => (environment.name === 'sandbox' ? 'kassa_sandbox_portal' : 'kassa_portal');

function sessionCookie(environment: Environment, token: string, maxAgeSeconds: number): string {
  return `${cookieName(environment)}=${token}; Path=${portalPath(environment)}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`;
}

/**
 * Where a link may open the portal once the customer is signed in: the failed-payment email's link
 * (`…/sign-in?next=payment-methods`) opens it at the cards. The choice waits in a short-lived cookie
 * of the portal's path while the customer signs in by email; only these section names are taken.
 */
const landings = ['payment-methods'] as const;
const landingCookieName = (environment: Environment) => (environment.name === 'sandbox' ? 'kassa_sandbox_portal_next' : 'kassa_portal_next');

function landingCookie(environment: Environment, section: string, maxAgeSeconds: number): string {
  return `${landingCookieName(environment)}=${section}; Path=${portalPath(environment)}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`;
}

function landingSection(value: string | null | undefined): string | null {
  return value && (landings as readonly string[]).includes(value) ? value : null;
}

/** The portal's address after signing in, at the section the sign-in began for, and the cookies to set. */
function signedInRedirect(environment: Environment, request: OAuthRequest, slug: string, session: string): OAuthResponse {
  const section = landingSection(cookies(request).get(landingCookieName(environment)));
  const setCookies = section ? [session, landingCookie(environment, '', 0)] : session;
  return redirect(`${portalPath(environment)}/${encodeURIComponent(slug)}${section ? `#${section}` : ''}`, { 'set-cookie': setCookies, 'referrer-policy': 'no-referrer' });
}

/** Signs in from a link: the link's session is traded for one that lives only in the cookie. */
function exchangeLink(environment: Environment, request: OAuthRequest, principal: CustomerPrincipal, now: Date) {
  return exchangeLinkSession(contextFor(environment, request, principal, now), principal);
}

function contextFor(environment: Environment, request: OAuthRequest, principal: CustomerPrincipal, now: Date): Context {
  return { environment, prisma: environment.prisma, principal, requestId: request.requestId, clientIp: request.clientIp, now: () => now };
}

// ---- rendering -----------------------------------------------------------------------------

const day = (iso: string) => new Date(iso).toISOString().slice(0, 10);

function signedOutPage(environment: Environment, slug?: string): OAuthResponse {
  const signIn = slug ? html`<p><a href="${portalPath(environment)}/${encodeURIComponent(slug)}/sign-in">Get a sign-in link by email</a></p>` : '';
  const body = html`<h1>Signed out</h1><p>This portal link has expired or was already used (each link signs in once). Ask the seller for a new link to your customer portal, or get one by email.</p>${signIn}`;
  return page(body, { title: 'Customer portal', environment: environment.name, status: 401 });
}

/** What a portal link's form token is bound to: the link's own session. */
const linkSubject = (principal: CustomerPrincipal) => `portal-link:${principal.sessionId}`;

/** The step between a link and a sign-in: whose portal this is, and a button to continue as them. */
async function continuePage(environment: Environment, request: OAuthRequest, principal: CustomerPrincipal, linkToken: string, now: Date): Promise<OAuthResponse> {
  const { slug } = request.params;
  const result = await run(environment, contextFor(environment, request, principal, now), linkQuery);
  if (result.errors?.length) throw result.errors[0];
  const { organization, customer } = (result.data as { customerPortal: Pick<Portal, 'organization' | 'customer'> }).customerPortal;
  const formToken = await boundFormToken(environment, linkSubject(principal));
  const body = html`<p class="muted">${organization.name}</p>
<h1>Your customer portal</h1>
<p>This link opens the customer portal of <strong>${customer.email}</strong>.</p>
<p class="muted">Continue only if this is your email address. Anything you do or enter after continuing is done as ${customer.email}.</p>
<form method="post" action="${portalPath(environment)}/${slug}/continue">
<input type="hidden" name="form_token" value="${formToken}">
<input type="hidden" name="customer_session_token" value="${linkToken}">
<button type="submit">Continue as ${customer.email}</button>
</form>`;
  return page(body, { title: `${organization.name}: customer portal`, environment: environment.name });
}

function action(environment: Environment, slug: string, path: string, token: string, label: string, fields: Html[] = [], secondary = false): Html {
  return html`<form method="post" action="${portalPath(environment)}/${slug}/${path}">
<input type="hidden" name="form_token" value="${token}">
${fields}
<button type="submit"${secondary ? html` class="secondary"` : ''}>${label}</button>
</form>`;
}

function field(id: string, name: string, label: string, value: string | null | undefined, required = false): Html {
  return html`<label for="${id}">${label}${required ? '' : html` <span class="muted">(optional)</span>`}</label>
<input type="text" id="${id}" name="${name}" value="${value ?? ''}"${required ? html` required` : ''}>`;
}

async function portalPage(environment: Environment, slug: string, principal: CustomerPrincipal, portal: Portal, notice?: { text: string; error?: boolean }, status = 200, payments?: PaymentsView, errors: FieldErrors = {}): Promise<OAuthResponse> {
  const token = await boundFormToken(environment, `portal:${principal.sessionId}`);
  const { orders, subscriptions, benefitGrants, licenseKeys } = portal;
  const orderRows = orders.items.map((order) => {
    const invoice = order.isInvoiceGenerated
      ? html` · <a href="${portalPath(environment)}/${slug}/orders/${order.id}/invoice">Download invoice</a>`
      : order.paid
        ? action(
            environment,
            slug,
            `orders/${order.id}/invoice`,
            token,
            'Generate invoice',
            [
              html`<p class="muted">The invoice carries these billing details; they cannot change once it exists.</p>`,
              field(`billing-name-${order.id}`, 'billing_name', 'Billing name', order.billingName ?? portal.customer.name, true),
              countrySelect({ id: `country-${order.id}`, name: 'country', label: 'Country', value: order.billingAddress?.country, required: true }),
              field(`line1-${order.id}`, 'line1', 'Address', order.billingAddress?.line1),
              field(`line2-${order.id}`, 'line2', 'Address line 2', order.billingAddress?.line2),
              field(`postal-${order.id}`, 'postal_code', 'Postal code', order.billingAddress?.postalCode),
              field(`city-${order.id}`, 'city', 'City', order.billingAddress?.city),
              field(`state-${order.id}`, 'state', 'State or region', order.billingAddress?.state),
            ],
            true,
          )
        : html`<span class="muted">No invoice until paid.</span>`;
    return html`<li class="item"><strong>${order.product.name}</strong> · ${formatMoney(order.totalAmount, order.currency)} · ${day(order.createdAt)} · <span class="status">${order.status}</span>${invoice}${customFieldAnswerList(order.customFieldAnswers)}</li>`;
  });
  const subscriptionRows = subscriptions.items.map((subscription) => {
    const period = subscription.currentPeriodEnd ? day(subscription.currentPeriodEnd) : null;
    const state = subscription.cancelAtPeriodEnd ? `Cancels on ${period ?? day(subscription.endsAt ?? '')}` : period ? `Renews on ${period}` : subscription.status;
    const live = subscription.status === 'active' || subscription.status === 'trialing' || subscription.status === 'past_due';
    const change = !live
      ? ''
      : subscription.cancelAtPeriodEnd
        ? action(environment, slug, `subscriptions/${subscription.id}/resume`, token, 'Resume subscription')
        : action(environment, slug, `subscriptions/${subscription.id}/cancel`, token, 'Cancel subscription', [], true);
    return html`<li class="item"><strong>${subscription.product.name}</strong> · ${formatMoney(subscription.amount, subscription.currency)} every ${subscription.recurringInterval} · <span class="status">${subscription.status}</span><p>${state}</p>${change}</li>`;
  });
  const benefitRows = benefitGrants.items.filter((g) => g.isGranted).map((grant) => html`<li class="item">${grant.benefit.description} <span class="muted">(${grant.benefit.type.replace('_', ' ')})</span></li>`);
  const keyRows = licenseKeys.items.map(
    (key) => html`<li class="item"><code>${key.key}</code> · <span class="status">${key.status}</span>${key.expiresAt ? html` · expires ${day(key.expiresAt)}` : ''}
<p class="muted">Activations: ${key.activations.length}${key.limitActivations !== null ? html` of ${key.limitActivations}` : ''}</p>
${key.activations.length ? html`<ul>${key.activations.map((a) => html`<li>${a.label} <span class="muted">since ${day(a.createdAt)}</span></li>`)}</ul>` : ''}</li>`,
  );
  const section = (id: string, title: string, rows: Html[], empty: string) => html`<section aria-labelledby="${id}"><h2 id="${id}">${title}</h2>${rows.length ? html`<ul class="items">${rows}</ul>` : html`<p class="muted">${empty}</p>`}</section>`;
  const cards = payments ? paymentsSection(environment, slug, token, payments, errors) : null;
  const body = html`<p class="muted">${portal.organization.name}</p>
<h1>Your purchases</h1>
<p>Signed in as <strong>${portal.customer.email}</strong>.</p>
${notice ? html`<p class="${notice.error ? 'error' : 'notice'}" role="${notice.error ? 'alert' : 'status'}">${notice.text}</p>` : ''}
${cards?.reminder ?? ''}
${section('orders', 'Orders', orderRows, 'No orders yet.')}
${section('subscriptions', 'Subscriptions', subscriptionRows, 'No subscriptions.')}
${cards?.section ?? ''}
${section('benefits', 'Benefits', benefitRows, 'No benefits.')}
${section('license-keys', 'License keys', keyRows, 'No license keys.')}
${action(environment, slug, 'sign-out', token, 'Sign out', [], true)}`;
  return page(body, { title: `${portal.organization.name}: customer portal`, environment: environment.name, status, scripts: cards?.scripts });
}

// ---- handlers -------------------------------------------------------------------------------

async function run(environment: Environment, ctx: Context, document: DocumentNode, variables: Record<string, unknown> = {}): Promise<ExecutionResult> {
  return environment.graphql!(document, variables, ctx);
}

async function render(environment: Environment, request: OAuthRequest, principal: CustomerPrincipal, now: Date, notice?: { text: string; error?: boolean }, status?: number, errors?: FieldErrors): Promise<OAuthResponse> {
  const ctx = contextFor(environment, request, principal, now);
  const result = await run(environment, ctx, portalQuery);
  if (result.errors?.length) throw result.errors[0];
  return portalPage(environment, request.params.slug, principal, (result.data as { customerPortal: Portal }).customerPortal, notice, status, await loadPayments(environment, ctx), errors);
}

async function showPortal(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const { slug } = request.params;
  const linkToken = request.query.get('customer_session_token');
  if (linkToken !== null) {
    const principal = await portalCustomer(environment, linkToken, slug, now);
    if (!principal) return signedOutPage(environment);
    return continuePage(environment, request, principal, linkToken, now);
  }
  const principal = await portalCustomer(environment, cookies(request).get(cookieName(environment)), slug, now);
  if (!principal) return signedOutPage(environment, slug);
  return render(environment, request, principal, now);
}

/**
 * "Continue as <email>": spends the link on a session in the cookie. Whoever holds the link can
 * read this form's token, so the token alone proves nothing against the link's own sender: the
 * browser must also say the post came from this site (a post from elsewhere, or one saying
 * nothing of where it came from, is refused).
 */
async function continueFromLink(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const { slug } = request.params;
  const form = formBody(request);
  const principal = await portalCustomer(environment, form.get('customer_session_token') ?? undefined, slug, now);
  if (!principal) return signedOutPage(environment);
  if (!vouchedSameOriginPost(environment, request) || !(await checkBoundFormToken(environment, linkSubject(principal), form.get('form_token')))) {
    const body = html`<h1>Not signed in</h1><p class="error" role="alert">This sign-in did not come from the portal link's page. Open the link you were sent again, and continue from there.</p>`;
    return page(body, { title: 'Customer portal', environment: environment.name, status: 403 });
  }
  // The token leaves the browser at once: it is traded for the cookie and the page loads without it.
  const { token, expiresAt } = await exchangeLink(environment, request, principal, now);
  const maxAge = Math.max(1, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));
  return signedInRedirect(environment, request, slug, sessionCookie(environment, token, maxAge));
}

/** A form post of the signed-in customer: the session, the origin and the form's token, then `act`. */
async function posted(environment: Environment, request: OAuthRequest, now: Date, act: (ctx: Context, form: URLSearchParams) => Promise<ExecutionResult | OAuthResponse>, done: string): Promise<OAuthResponse> {
  const { slug } = request.params;
  const principal = await portalCustomer(environment, cookies(request).get(cookieName(environment)), slug, now);
  if (!principal) return signedOutPage(environment);
  const form = formBody(request);
  if (!sameOriginPost(environment, request) || !(await checkBoundFormToken(environment, `portal:${principal.sessionId}`, form.get('form_token')))) {
    return render(environment, request, principal, now, { text: 'This form did not come from this page. Please try again.', error: true }, 403);
  }
  const outcome = await act(contextFor(environment, request, principal, now), form);
  if ('status' in outcome && typeof outcome.status === 'number') return outcome as OAuthResponse;
  const errors = (outcome as ExecutionResult).errors;
  if (errors?.length) return render(environment, request, principal, now, { text: errors[0].message, error: true }, 422);
  return render(environment, request, principal, now, { text: done });
}

async function generateInvoice(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const id = request.params.order_id;
  return posted(
    environment,
    request,
    now,
    async (ctx, form) => {
      const text = (name: string) => form.get(name)?.trim() || null;
      const address = { country: text('country')?.toUpperCase() ?? '', line1: text('line1'), line2: text('line2'), postalCode: text('postal_code'), city: text('city'), state: text('state') };
      const updated = await run(environment, ctx, operations.orderUpdate, { id, input: { billingName: text('billing_name'), billingAddress: address } });
      if (updated.errors?.length) return updated;
      return run(environment, ctx, operations.invoiceGenerate, { id });
    },
    'The invoice is ready: download it from your orders.',
  );
}

async function downloadInvoice(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const principal = await portalCustomer(environment, cookies(request).get(cookieName(environment)), request.params.slug, now);
  if (!principal) return signedOutPage(environment);
  const result = await run(environment, contextFor(environment, request, principal, now), operations.invoice, { id: request.params.order_id });
  const url = (result.data as { customerPortal: { orderInvoice: { url: string } } } | null)?.customerPortal.orderInvoice.url;
  if (!url) return render(environment, request, principal, now, { text: result.errors?.[0]?.message ?? 'No invoice for this order.', error: true }, 404);
  return redirect(url);
}

const subscriptionChange = (cancelAtPeriodEnd: boolean, done: string) => (environment: Environment, request: OAuthRequest, now: Date) =>
  posted(environment, request, now, (ctx) => run(environment, ctx, operations.subscriptionUpdate, { id: request.params.subscription_id, input: { cancelAtPeriodEnd } }), done);

async function signOut(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  return posted(
    environment,
    request,
    now,
    async (ctx) => {
      await run(environment, ctx, operations.signOut);
      return { ...signedOutPage(environment), status: 200, headers: { ...signedOutPage(environment).headers, 'set-cookie': sessionCookie(environment, '', 0) } };
    },
    '',
  );
}

// ---- payment methods and failed payments ------------------------------------------------------
// The "Payment methods" section (#payment-methods), where the failed-payment email leads: the
// customer's saved cards (make one the default, remove one, add one) and each order whose payment
// failed, with "Pay now" (a saved card or a new one, through orderPaymentConfirm, as the API's
// retry). Cards are kept at the processor (modules/payments/saved-methods.ts): with Stripe, a new
// card is typed in Stripe's Payment Element (pages/stripe.ts) and the page posts the
// ConfirmationToken Stripe made, in `card`; the test processor keeps no cards, and "Pay now" takes
// a test card token. Only with Stripe does the page run a script or admit Stripe's origins.

const paymentsQuery = parse(`query { customerPortal { orders(limit: 100) { items {
  id status paid totalAmount currency billingReason product { name } subscription { id status }
} } } }`);
const paymentMethodsQuery = parse(`query { customerPortal { paymentMethods(limit: 100) { items {
  id type isDefault ... on PaymentMethodCard { methodMetadata { brand last4 expMonth expYear wallet } }
} } } }`);
const paymentStatusQuery = parse(`query ($id: UUID!) { customerPortal { orderPaymentStatus(id: $id) { status error } } }`);

const cardFields = `id type ... on PaymentMethodCard { methodMetadata { brand last4 expMonth expYear wallet } }`;
const paymentOperations = {
  create: parse(`mutation ($input: CustomerPaymentMethodCreateInput!) { customerPortal { customerPaymentMethodCreate(input: $input) { ${cardFields} } } }`),
  setDefault: parse(`mutation ($id: ID!) { customerPortal { customerDefaultPaymentMethodUpdate(id: $id) { ${cardFields} } } }`),
  remove: parse(`mutation ($id: ID!) { customerPortal { customerPaymentMethodDelete(id: $id) } }`),
  pay: parse(`mutation ($id: UUID!, $input: CustomerOrderPaymentConfirmInput!) { customerPortal { orderPaymentConfirm(id: $id, input: $input) { status } } }`),
};

interface SavedCard {
  id: string;
  type: string;
  isDefault?: boolean;
  methodMetadata?: { brand: string; last4: string; expMonth: number; expYear: number; wallet: string | null };
}

interface UnpaidOrder {
  id: string;
  totalAmount: number;
  currency: string;
  billingReason: string;
  product: { name: string };
  subscription: { id: string; status: string } | null;
  /** Why its latest payment failed, in words. */
  declined: string;
}

interface PaymentsView {
  /** The saved cards; null when the processor could not be asked. */
  methods: SavedCard[] | null;
  /** Whether the environment's processor keeps cards (Stripe does, the test processor does not). */
  keepsCards: boolean;
  /** Stripe's publishable key when Stripe takes the environment's payments: the page then runs Stripe.js. */
  publishableKey: string | null;
  /** Orders whose latest payment failed: unpaid, still due. */
  unpaid: UnpaidOrder[];
  /** The currency a card is saved for (Stripe's setup mode asks for one): the customer's latest order's. */
  currency: string;
}

/** Words next to a field, by the field's id; `form` is the page's own notice. */
type FieldErrors = Partial<Record<string, string>>;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the payments section shows; asked with the customer's own principal, so only their orders and cards. */
async function loadPayments(environment: Environment, ctx: Context): Promise<PaymentsView> {
  const processor = environment.paymentProcessor;
  const keepsCards = Boolean(processor?.savedMethods);
  const orders = await run(environment, ctx, paymentsQuery);
  if (orders.errors?.length) throw orders.errors[0];
  const items = (orders.data as { customerPortal: { orders: { items: (Omit<UnpaidOrder, 'declined'> & { status: string; paid: boolean })[] } } }).customerPortal.orders.items;
  const unpaid: UnpaidOrder[] = [];
  for (const order of items.filter((o) => o.status === 'pending' && !o.paid)) {
    const payment = await run(environment, ctx, paymentStatusQuery, { id: order.id });
    const latest = (payment.data as { customerPortal: { orderPaymentStatus: { status: string; error: string | null } } } | null)?.customerPortal.orderPaymentStatus;
    if (latest?.status === 'failed') unpaid.push({ ...order, declined: latest.error ?? 'The payment was declined.' });
  }
  let methods: SavedCard[] | null = [];
  if (keepsCards) {
    // The processor is across the network: the rest of the page shows even when it does not answer.
    const listed = await run(environment, ctx, paymentMethodsQuery);
    methods = listed.errors?.length ? null : (listed.data as { customerPortal: { paymentMethods: { items: SavedCard[] } } }).customerPortal.paymentMethods.items;
  }
  return { methods, keepsCards, publishableKey: processor?.pageSettings?.().publishable_key ?? null, unpaid, currency: items[0]?.currency ?? 'usd' };
}

function cardName(method: SavedCard): string {
  const card = method.methodMetadata;
  if (!card) return method.type.replace(/_/g, ' ');
  return `${card.brand.charAt(0).toUpperCase()}${card.brand.slice(1)} ending in ${card.last4}`;
}

function cardExpiry(method: SavedCard): string {
  const card = method.methodMetadata;
  return card ? `expires ${String(card.expMonth).padStart(2, '0')}/${card.expYear}` : '';
}

function fieldError(id: string, errors: FieldErrors): Html | string {
  return errors[id] ? html`<p class="error" id="${id}-error">${errors[id]}</p>` : '';
}

/** A new card's field: Stripe's Payment Element, or a card token with the test processor. */
function newCardField(environment: Environment, id: string, view: PaymentsView, errors: FieldErrors, element: { mode: 'setup' } | { mode: 'payment'; order: UnpaidOrder }): Html {
  if (view.publishableKey) {
    const currency = element.mode === 'payment' ? element.order.currency : view.currency;
    const decimals = stripeExponent(currency);
    if (decimals === null) return html`<p class="error">Cards cannot pay in ${currency.toUpperCase()} here.</p>`;
    const amount = element.mode === 'payment' ? Math.round(element.order.totalAmount * 10 ** (decimals - minorUnitExponent(currency))) : null;
    const saving = element.mode === 'payment' && element.order.billingReason === 'subscription_create' ? 'off_session' : '';
    return html`${fieldError(id, errors)}
<p class="error" id="${id}-element-error" role="alert" hidden></p>
<div id="${id}-element" data-stripe-element="${element.mode}" data-publishable-key="${view.publishableKey}" data-currency="${currency}"${amount !== null ? html` data-amount="${amount}" data-setup-future-usage="${saving}"` : ''}></div>
<noscript><p class="error">A new card needs JavaScript: Stripe's card field runs in your browser.</p></noscript>
<input type="hidden" name="card" value="">`;
  }
  const sandbox = environment.name === 'sandbox';
  const described = [errors[id] ? `${id}-error` : '', `${id}-hint`].filter(Boolean).join(' ');
  return html`<label for="${id}">Card</label>
<p class="muted hint" id="${id}-hint">${sandbox ? 'Sandbox: use a test card token: tok_visa pays, tok_chargeDeclined is declined.' : 'The payment method token.'}</p>
${fieldError(id, errors)}
<input type="text" id="${id}" name="card" value="" autocomplete="off" required aria-describedby="${described}"${errors[id] ? html` aria-invalid="true"` : ''}>`;
}

function savedCardRow(environment: Environment, slug: string, token: string, method: SavedCard, errors: FieldErrors): Html {
  const id = `method-${method.id}`;
  const makeDefault = method.isDefault ? '' : action(environment, slug, `payment-methods/${encodeURIComponent(method.id)}/default`, token, 'Make default');
  return html`<li class="item" id="${id}"><strong>${cardName(method)}</strong>${cardExpiry(method) ? html` · ${cardExpiry(method)}` : ''}${method.isDefault ? html` · <span class="status">Default</span>` : ''}
${fieldError(id, errors)}
<div class="actions">${makeDefault}${action(environment, slug, `payment-methods/${encodeURIComponent(method.id)}/remove`, token, 'Remove', [], true)}</div></li>`;
}

function addCardForm(environment: Environment, slug: string, token: string, view: PaymentsView, errors: FieldErrors): Html {
  if (!view.keepsCards) return html`<p class="muted">Cards are not kept here: you give a card with each payment.</p>`;
  if (!view.publishableKey) return html``;
  return html`<form method="post" action="${portalPath(environment)}/${slug}/payment-methods" novalidate>
<input type="hidden" name="form_token" value="${token}">
<fieldset>
<legend>Add a card</legend>
${newCardField(environment, 'new-card', view, errors, { mode: 'setup' })}
<div class="choice"><input type="checkbox" id="set-default" name="set_default" value="yes" checked><label for="set-default">Make it my default: my subscriptions renew with it</label></div>
</fieldset>
<div class="actions"><button type="submit">Save card</button></div>
</form>`;
}

function payNowForm(environment: Environment, slug: string, token: string, view: PaymentsView, order: UnpaidOrder, errors: FieldErrors): Html {
  const id = `pay-${order.id}`;
  const saved = (view.methods ?? []).filter((m) => m.methodMetadata);
  const checkedFirst = [...saved].sort((a, b) => Number(Boolean(b.isDefault)) - Number(Boolean(a.isDefault)));
  const choices = saved.length
    ? html`${checkedFirst.map(
        (method, i) => html`<div class="choice"><input type="radio" id="${id}-${method.id}" name="payment_method" value="${method.id}"${i === 0 ? html` checked` : ''}><label for="${id}-${method.id}">${cardName(method)}${cardExpiry(method) ? html` (${cardExpiry(method)})` : ''}</label></div>`,
      )}
<div class="choice"><input type="radio" id="${id}-new" name="payment_method" value="new"><label for="${id}-new">A new card</label></div>`
    : html`<input type="hidden" name="payment_method" value="new">`;
  const money = formatMoney(order.totalAmount, order.currency);
  const pastDue = order.subscription?.status === 'past_due' ? html`<p>Your subscription is past due: pay now to keep it.</p>` : '';
  return html`<li class="item" id="${id}"><strong>${order.product.name}</strong> · ${money} · <span class="status">payment failed</span>
<p>${order.declined}</p>
${pastDue}
<form method="post" action="${portalPath(environment)}/${slug}/orders/${order.id}/pay" novalidate>
<input type="hidden" name="form_token" value="${token}">
<fieldset>
<legend>Pay ${money} with</legend>
${fieldError(`${id}-method`, errors)}
${choices}
${newCardField(environment, `${id}-card`, view, errors, { mode: 'payment', order })}
</fieldset>
<div class="actions"><button type="submit">Pay ${money} now</button></div>
</form></li>`;
}

/** The section, a reminder at the top of the page when a payment failed, and the scripts it needs. */
function paymentsSection(environment: Environment, slug: string, token: string, view: PaymentsView, errors: FieldErrors): { section: Html; reminder: Html | string; scripts?: PageScripts } {
  const methods =
    view.methods === null
      ? html`<p class="error">Your saved cards could not be loaded just now. Reload the page in a moment.</p>`
      : view.methods.length
        ? html`<ul class="items">${view.methods.map((method) => savedCardRow(environment, slug, token, method, errors))}</ul>`
        : view.keepsCards
          ? html`<p class="muted">No saved cards.</p>`
          : '';
  const unpaid = view.unpaid.length
    ? html`<h3 id="failed-payments">Payments to fix</h3><ul class="items">${view.unpaid.map((order) => payNowForm(environment, slug, token, view, order, errors))}</ul>`
    : '';
  const section = html`<section aria-labelledby="payment-methods"><h2 id="payment-methods">Payment methods</h2>
${unpaid}
${view.keepsCards ? html`<h3 id="saved-cards">Saved cards</h3>` : ''}
${methods}
${addCardForm(environment, slug, token, view, errors)}
</section>`;
  const reminder = view.unpaid.length
    ? html`<p class="error" role="note">A payment failed. <a href="#payment-methods">Pay it now</a> with another card.</p>`
    : '';
  const newCards = view.publishableKey && (view.keepsCards || view.unpaid.length);
  return { section, reminder, scripts: newCards ? portalCardScripts : undefined };
}

/** An API refusal, in words for the customer. */
function refusalWords(error: GraphQLError): string {
  const issues = (error.extensions?.issues as { msg: string }[] | undefined) ?? [];
  return (issues[0]?.msg ?? error.message).replace(/^Field required: /, 'Required: ');
}

const httpStatus = (error: GraphQLError) => {
  const status = (error.extensions?.http as { status?: number } | undefined)?.status ?? 400;
  return status >= 500 && status !== 503 ? 400 : status;
};

type PaymentOutcome = OAuthResponse | { notice?: { text: string; error?: boolean }; errors?: FieldErrors; status?: number };
/** A page or a redirect made by the action itself, rather than the portal page shown again. */
const isResponse = (outcome: PaymentOutcome): outcome is OAuthResponse => 'headers' in outcome;

/** A post of the payments section: the session, the origin and the form's token, as every portal form; then `act`. */
async function postedPayment(environment: Environment, request: OAuthRequest, now: Date, act: (ctx: Context, form: URLSearchParams, principal: CustomerPrincipal) => Promise<PaymentOutcome>): Promise<OAuthResponse> {
  const principal = await portalCustomer(environment, cookies(request).get(cookieName(environment)), request.params.slug, now);
  if (!principal) return signedOutPage(environment);
  const form = formBody(request);
  if (!sameOriginPost(environment, request) || !(await checkBoundFormToken(environment, `portal:${principal.sessionId}`, form.get('form_token')))) {
    return render(environment, request, principal, now, { text: 'This form did not come from this page. Please try again.', error: true }, 403);
  }
  const outcome = await act(contextFor(environment, request, principal, now), form, principal);
  if (isResponse(outcome)) return outcome;
  return render(environment, request, principal, now, outcome.notice, outcome.status ?? 200, outcome.errors);
}

const notYours = (what: string) => ({ notice: { text: `This ${what} is not one of yours: nothing was changed.`, error: true }, status: 404 });
const fixBelow = { text: 'Nothing was changed: see Payment methods below.', error: true };

/** POST …/payment-methods: saves the card Stripe's element made a ConfirmationToken of. */
async function addPaymentMethod(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const { slug } = request.params;
  return postedPayment(environment, request, now, async (ctx, form, principal) => {
    const card = form.get('card')?.trim() ?? '';
    const setDefault = form.get('set_default') === 'yes';
    if (!card) return { notice: fixBelow, errors: { 'new-card': 'Required: type the card in the card field.' }, status: 422 };
    const returnUrl = `${environment.publicUrl}/portal/${encodeURIComponent(slug)}`;
    const result = await run(environment, ctx, paymentOperations.create, { input: { confirmationTokenId: card, setDefault, returnUrl } });
    const error = result.errors?.[0];
    if (error?.extensions?.code === 'PAYMENT_METHOD_REQUIRES_ACTION') return setupNextActionPage(environment, slug, principal, card, setDefault, String(error.extensions.clientSecret ?? ''));
    // Without a processor that keeps cards the page shows no card field to say it next to.
    if (error && !environment.paymentProcessor?.savedMethods) return { notice: { text: refusalWords(error), error: true }, status: httpStatus(error) };
    if (error) return { notice: fixBelow, errors: { 'new-card': refusalWords(error) }, status: httpStatus(error) };
    const saved = (result.data as { customerPortal: { customerPaymentMethodCreate: SavedCard } }).customerPortal.customerPaymentMethodCreate;
    return { notice: { text: `Your ${cardName(saved)} is saved.${setDefault ? ' Your subscriptions renew with it.' : ''}` } };
  });
}

/** The bank asks the customer to confirm the card being saved: Stripe's popup, then the same token again. */
async function setupNextActionPage(environment: Environment, slug: string, principal: CustomerPrincipal, card: string, setDefault: boolean, clientSecret: string): Promise<OAuthResponse> {
  const publishableKey = environment.paymentProcessor?.pageSettings?.().publishable_key ?? '';
  const title = 'Confirm your card with your bank';
  const body = html`<h1>${title}</h1>
<div role="status" aria-live="polite" id="setup-next-action" data-publishable-key="${publishableKey}" data-client-secret="${clientSecret}">Your bank asks you to confirm this card in the window that opens.</div>
<noscript><p class="error">Confirming with your bank needs JavaScript: Stripe's window runs in your browser.</p></noscript>
<p id="setup-back" hidden><a href="${portalPath(environment)}/${slug}#payment-methods">Back to your payment methods</a></p>
<form id="setup-again" method="post" action="${portalPath(environment)}/${slug}/payment-methods">
<input type="hidden" name="form_token" value="${await boundFormToken(environment, `portal:${principal.sessionId}`)}">
<input type="hidden" name="card" value="${card}">
${setDefault ? html`<input type="hidden" name="set_default" value="yes">` : ''}
</form>`;
  return page(body, { title, environment: environment.name, status: 402, scripts: setupNextActionScripts });
}

/** POST …/payment-methods/{id}/default and …/remove. */
const paymentMethodChange = (change: 'setDefault' | 'remove') => (environment: Environment, request: OAuthRequest, now: Date) =>
  postedPayment(environment, request, now, async (ctx) => {
    const id = request.params.payment_method_id;
    const result = await run(environment, ctx, paymentOperations[change], { id });
    const error = result.errors?.[0];
    if (error?.extensions?.code === 'RESOURCE_NOT_FOUND') return notYours('payment method');
    if (error) return { notice: fixBelow, errors: { [`method-${id}`]: refusalWords(error) }, status: httpStatus(error) };
    if (change === 'remove') return { notice: { text: 'The card is removed.' } };
    const method = (result.data as { customerPortal: { customerDefaultPaymentMethodUpdate: SavedCard } }).customerPortal.customerDefaultPaymentMethodUpdate;
    return { notice: { text: `Your ${cardName(method)} is now your default: your subscriptions renew with it.` } };
  });

/** POST …/orders/{id}/pay: pays an order whose payment failed again, with a saved card or a new one. */
async function payOrder(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const { slug, order_id: orderId } = request.params;
  return postedPayment(environment, request, now, async (ctx, form) => {
    if (!uuidPattern.test(orderId)) return notYours('order');
    const choice = form.get('payment_method') ?? 'new';
    const card = form.get('card')?.trim() ?? '';
    const field = choice === 'new' ? `pay-${orderId}-card` : `pay-${orderId}-method`;
    if (choice === 'new' && !card) return { notice: fixBelow, errors: { [field]: 'Required: the card to pay with.' }, status: 422 };
    const input = choice === 'new' ? { confirmationTokenId: card } : { paymentMethodId: choice };
    const result = await run(environment, ctx, paymentOperations.pay, { id: orderId, input });
    const error = result.errors?.[0];
    if (error?.extensions?.code === 'RESOURCE_NOT_FOUND') return notYours('order');
    // The card's refusals are said next to it; the order's (paid meanwhile, a payment under way) at the top.
    if (error && !error.extensions?.issues) return { notice: { text: refusalWords(error), error: true }, status: httpStatus(error) };
    if (error) return { notice: fixBelow, errors: { [field]: refusalWords(error) }, status: httpStatus(error) };
    return redirect(`${portalPath(environment)}/${encodeURIComponent(slug)}/orders/${orderId}/payment`);
  });
}

/** GET …/orders/{id}/payment: the outcome of a payment; refreshes itself while it is pending. */
async function orderPaymentPage(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const { slug, order_id: orderId } = request.params;
  const principal = await portalCustomer(environment, cookies(request).get(cookieName(environment)), slug, now);
  if (!principal) return signedOutPage(environment, slug);
  const result = uuidPattern.test(orderId) ? await run(environment, contextFor(environment, request, principal, now), paymentStatusQuery, { id: orderId }) : null;
  const payment = (result?.data as { customerPortal: { orderPaymentStatus: { status: string; error: string | null } } } | null | undefined)?.customerPortal.orderPaymentStatus;
  if (!payment) return render(environment, request, principal, now, { text: 'This order is not one of yours.', error: true }, 404);
  const back = `${portalPath(environment)}/${encodeURIComponent(slug)}`;
  const views: Record<string, { title: string; body: Html; refresh?: boolean }> = {
    pending: { title: 'Processing your payment…', body: html`<p>This page updates by itself when your payment goes through.</p>`, refresh: true },
    succeeded: { title: 'Paid', body: html`<p>Thank you: the order is paid.</p><p><a href="${back}">Back to your purchases</a></p>` },
    failed: {
      title: 'Payment declined',
      body: html`<p class="error" role="alert">${payment.error ?? 'The payment was declined.'} Nothing was charged.</p><p><a href="${back}#payment-methods">Pay with another card</a></p>`,
    },
  };
  const view = views[payment.status] ?? views.pending;
  const body = html`<h1>${view.title}</h1>
<div role="status" aria-live="polite">${view.body}</div>`;
  return page(body, { title: view.title, environment: environment.name, headers: view.refresh ? { refresh: '2' } : {} });
}

// ---- signing in by email -------------------------------------------------------------------

const signInRequestSubject = (slug: string) => `portal-sign-in:${slug}`;
const signInLinkSubject = (tokenId: string) => `portal-sign-in-link:${tokenId}`;

function notFoundPage(environment: Environment): OAuthResponse {
  return page(html`<h1>Not found</h1><p>There is no customer portal here.</p>`, { title: 'Customer portal', environment: environment.name, status: 404 });
}

async function signInForm(environment: Environment, slug: string, organization: string, options: { email?: string; error?: string; status?: number; headers?: Record<string, string> } = {}): Promise<OAuthResponse> {
  const formToken = await boundFormToken(environment, signInRequestSubject(slug));
  const body = html`<p class="muted">${organization}</p>
<h1>Sign in to your customer portal</h1>
<p>Enter the email address you bought with. We will send you a link that signs you in.</p>
${options.error ? html`<p class="error" role="alert" id="sign-in-error">${options.error}</p>` : ''}
<form method="post" action="${portalPath(environment)}/${slug}/sign-in" novalidate>
<input type="hidden" name="form_token" value="${formToken}">
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="email" required value="${options.email ?? ''}"${options.error ? html` aria-describedby="sign-in-error" aria-invalid="true"` : ''}>
<div class="actions"><button type="submit">Email me a sign-in link</button></div>
</form>`;
  return page(body, { title: `${organization}: customer portal`, environment: environment.name, status: options.status, headers: options.headers });
}

/** The link of a sign-in email is only a confirmation step: a mail scanner that opens it spends nothing. */
async function linkConfirmPage(environment: Environment, slug: string, organization: string, token: string, link: { tokenId: string; customer: { email: string } }): Promise<OAuthResponse> {
  const formToken = await boundFormToken(environment, signInLinkSubject(link.tokenId));
  const body = html`<p class="muted">${organization}</p>
<h1>Your customer portal</h1>
<p>This link signs in <strong>${link.customer.email}</strong>.</p>
<form method="post" action="${portalPath(environment)}/${slug}/sign-in/continue">
<input type="hidden" name="form_token" value="${formToken}">
<input type="hidden" name="token" value="${token}">
<button type="submit">Continue as ${link.customer.email}</button>
</form>`;
  return page(body, { title: `${organization}: customer portal`, environment: environment.name, headers: { 'referrer-policy': 'no-referrer' } });
}

function linkRefusedPage(environment: Environment, slug: string, message: string, status: number): OAuthResponse {
  const body = html`<h1>Not signed in</h1><p class="error" role="alert">${message}</p><p><a href="${portalPath(environment)}/${encodeURIComponent(slug)}/sign-in">Get a new sign-in link</a></p>`;
  return page(body, { title: 'Customer portal', environment: environment.name, status });
}

/** GET …/sign-in: the form asking for an email; with `token`, the step that confirms a mailed link. */
async function showSignIn(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const { slug } = request.params;
  const organization = await portalOrganization(environment, slug);
  if (!organization) return notFoundPage(environment);
  const token = request.query.get('token');
  if (token !== null) {
    try {
      return await linkConfirmPage(environment, slug, organization.name, token, await portalSignInLink(environment, organization.id, token, now));
    } catch (error) {
      if (error instanceof KassaError) return linkRefusedPage(environment, slug, error.message, 400);
      throw error;
    }
  }
  const section = landingSection(request.query.get('next'));
  if (await portalCustomer(environment, cookies(request).get(cookieName(environment)), slug, now)) return redirect(`${portalPath(environment)}/${encodeURIComponent(slug)}${section ? `#${section}` : ''}`);
  return signInForm(environment, slug, organization.name, section ? { headers: { 'set-cookie': landingCookie(environment, section, 3600) } } : {});
}

/** POST …/sign-in: mails a link when the address is a customer's; answers the same either way. */
async function requestSignIn(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const { slug } = request.params;
  const organization = await portalOrganization(environment, slug);
  if (!organization) return notFoundPage(environment);
  const form = formBody(request);
  const email = (form.get('email') ?? '').trim();
  if (!sameOriginPost(environment, request) || !(await checkBoundFormToken(environment, signInRequestSubject(slug), form.get('form_token')))) {
    return signInForm(environment, slug, organization.name, { email, status: 403, error: 'This form did not come from this page. Please try again.' });
  }
  try {
    await requestPortalSignIn(environment, organization.id, email, request.clientIp, now);
  } catch (error) {
    if (!(error instanceof KassaError)) throw error;
    const retryAfter = (error.extensions.retryAfter as number | undefined) ?? undefined;
    const message = error.code === 'BAD_USER_INPUT' ? 'Enter a valid email address.' : error.message;
    return signInForm(environment, slug, organization.name, { email, status: error.status, error: message, headers: retryAfter ? { 'retry-after': String(retryAfter) } : undefined });
  }
  const body = html`<p class="muted">${organization.name}</p>
<h1>Check your email</h1>
<p role="status">If <strong>${email}</strong> is the address of a customer of ${organization.name}, a sign-in link is on its way there. It works once, for 15 minutes.</p>`;
  return page(body, { title: `${organization.name}: customer portal`, environment: environment.name });
}

/** POST …/sign-in/continue: spends the mailed link on a session in the cookie, as the portal's own links do. */
async function continueFromEmailLink(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const { slug } = request.params;
  const organization = await portalOrganization(environment, slug);
  if (!organization) return notFoundPage(environment);
  const form = formBody(request);
  const token = form.get('token') ?? '';
  const anonymous: Context = { environment, prisma: environment.prisma, principal: { kind: 'anonymous' }, requestId: request.requestId, clientIp: request.clientIp, now: () => now };
  try {
    const link = await portalSignInLink(environment, organization.id, token, now);
    if (!vouchedSameOriginPost(environment, request) || !(await checkBoundFormToken(environment, signInLinkSubject(link.tokenId), form.get('form_token')))) {
      return linkRefusedPage(environment, slug, "This sign-in did not come from the link's page. Open the link you were sent again, and continue from there.", 403);
    }
    const session = await signInWithPortalLink(anonymous, organization.id, token);
    const maxAge = Math.max(1, Math.floor((session.expiresAt.getTime() - now.getTime()) / 1000));
    return signedInRedirect(environment, request, slug, sessionCookie(environment, session.token, maxAge));
  } catch (error) {
    if (error instanceof KassaError) return linkRefusedPage(environment, slug, error.message, 400);
    throw error;
  }
}

export const portalPages: OAuthRoute[] = [
  { method: 'GET', path: '/portal/{slug}/sign-in', handler: showSignIn },
  { method: 'POST', path: '/portal/{slug}/sign-in', handler: requestSignIn },
  { method: 'POST', path: '/portal/{slug}/sign-in/continue', handler: continueFromEmailLink },
  { method: 'GET', path: '/portal/{slug}', handler: showPortal },
  { method: 'POST', path: '/portal/{slug}/continue', handler: continueFromLink },
  { method: 'POST', path: '/portal/{slug}/orders/{order_id}/invoice', handler: generateInvoice },
  { method: 'GET', path: '/portal/{slug}/orders/{order_id}/invoice', handler: downloadInvoice },
  { method: 'POST', path: '/portal/{slug}/subscriptions/{subscription_id}/cancel', handler: subscriptionChange(true, 'Your subscription will end at the end of the paid period.') },
  { method: 'POST', path: '/portal/{slug}/subscriptions/{subscription_id}/resume', handler: subscriptionChange(false, 'Your subscription goes on.') },
  { method: 'POST', path: '/portal/{slug}/sign-out', handler: signOut },
  { method: 'POST', path: '/portal/{slug}/payment-methods', handler: addPaymentMethod },
  { method: 'POST', path: '/portal/{slug}/payment-methods/{payment_method_id}/default', handler: paymentMethodChange('setDefault') },
  { method: 'POST', path: '/portal/{slug}/payment-methods/{payment_method_id}/remove', handler: paymentMethodChange('remove') },
  { method: 'POST', path: '/portal/{slug}/orders/{order_id}/pay', handler: payOrder },
  { method: 'GET', path: '/portal/{slug}/orders/{order_id}/payment', handler: orderPaymentPage },
];
