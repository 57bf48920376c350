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
import { parse, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Context, Environment, Principal } from '../context.ts';
import { formatMoney } from '../currencies.ts';
import { exchangeLinkSession, portalCustomer } from '../auth/customer-sessions.ts';
import { portalOrganization, portalSignInLink, requestPortalSignIn, signInWithPortalLink } from '../auth/portal-sign-in.ts';
import { KassaError } from '../graphql/errors.ts';
import { cookies, formBody, redirect, type OAuthRequest, type OAuthResponse } from '../oauth/http.ts';
import type { OAuthRoute } from '../oauth/routes.ts';
import { countrySelect } from './countries.ts';
import { html, page, type Html } from './html.ts';
import { boundFormToken, checkBoundFormToken, sameOriginPost, vouchedSameOriginPost } from './session.ts';

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

async function portalPage(environment: Environment, slug: string, principal: CustomerPrincipal, portal: Portal, notice?: { text: string; error?: boolean }, status = 200): Promise<OAuthResponse> {
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
  const body = html`<p class="muted">${portal.organization.name}</p>
<h1>Your purchases</h1>
<p>Signed in as <strong>${portal.customer.email}</strong>.</p>
${notice ? html`<p class="${notice.error ? 'error' : 'notice'}" role="${notice.error ? 'alert' : 'status'}">${notice.text}</p>` : ''}
${section('orders', 'Orders', orderRows, 'No orders yet.')}
${section('subscriptions', 'Subscriptions', subscriptionRows, 'No subscriptions.')}
${section('benefits', 'Benefits', benefitRows, 'No benefits.')}
${section('license-keys', 'License keys', keyRows, 'No license keys.')}
${action(environment, slug, 'sign-out', token, 'Sign out', [], true)}`;
  return page(body, { title: `${portal.organization.name}: customer portal`, environment: environment.name, status });
}

// ---- handlers -------------------------------------------------------------------------------

async function run(environment: Environment, ctx: Context, document: DocumentNode, variables: Record<string, unknown> = {}): Promise<ExecutionResult> {
  return environment.graphql!(document, variables, ctx);
}

async function render(environment: Environment, request: OAuthRequest, principal: CustomerPrincipal, now: Date, notice?: { text: string; error?: boolean }, status?: number): Promise<OAuthResponse> {
  const result = await run(environment, contextFor(environment, request, principal, now), portalQuery);
  if (result.errors?.length) throw result.errors[0];
  return portalPage(environment, request.params.slug, principal, (result.data as { customerPortal: Portal }).customerPortal, notice, status);
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
  return redirect(`${portalPath(environment)}/${encodeURIComponent(slug)}`, { 'set-cookie': sessionCookie(environment, token, maxAge), 'referrer-policy': 'no-referrer' });
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
  if (await portalCustomer(environment, cookies(request).get(cookieName(environment)), slug, now)) return redirect(`${portalPath(environment)}/${encodeURIComponent(slug)}`);
  return signInForm(environment, slug, organization.name);
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
    return redirect(`${portalPath(environment)}/${encodeURIComponent(slug)}`, { 'set-cookie': sessionCookie(environment, session.token, maxAge), 'referrer-policy': 'no-referrer' });
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
];
