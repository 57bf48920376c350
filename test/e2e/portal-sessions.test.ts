// Which sessions reach what: the customer portal's pages over HTTP (a link's session traded for the
// cookie's, and every session the pages must not take), a checkout's session on the Customer
// Portal API, the Core API's lists under an organization token and a user's session, and the
// sign-in page under a user's session cookie. From the attacker's side: a session of another
// organization, of a checkout, unknown, spent or expired.
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { generateToken } from '../../src/auth/tokens.ts';
import { Browser as FormBrowser, formFields, userSessionToken } from '../helpers/oauth.ts';
import { confirmForCustomer, fixedProduct, paidOrderOf } from '../helpers/purchases.ts';
import { clockFrom, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { shop: 'sandbox', other: 'sandbox' }, resetClockAfterEach: true });

const base = () => t.server.base('sandbox');
const portalUrl = (slug: string) => `${t.server.url}/sandbox/portal/${slug}`;
const portalCookie = 'kassa_sandbox_portal';
const address = (name: string) => `${name}-${randomUUID()}@example.com`;

let shopSlug: string;
let otherSlug: string;
/** What each organization sold to one buyer: an order of a one-time product and one of a subscription. */
const sold: Record<'shop' | 'other', { orderIds: string[]; subscriptionId: string; checkoutSession: string; buyerId: string }> = {} as never;

/** Buys `productId` in `org` for the customer with tok_visa; the checkout's own customer session and the paid order. */
async function purchase(org: typeof t.shop, productId: string, customerId: string, email: string) {
  const { checkoutId, session } = await confirmForCustomer(org, productId, customerId, email);
  return { session, order: await paidOrderOf(org, checkoutId) };
}

beforeAll(async () => {
  for (const name of ['shop', 'other'] as const) {
    const org = t[name];
    const oneTime = await fixedProduct(org, 'Ebook', 900);
    const monthly = await fixedProduct(org, 'Club', 500, 'month');
    // A customer made before the buyers: a lookup that lost its condition would find this one first.
    expect((await org.api('POST', '/customers/', { email: address('first'), name: 'First' })).status).toBe(201);
    const buyer = address(`${name}-buyer`);
    const customer = await org.api('POST', '/customers/', { email: buyer, name: 'Buyer' });
    const single = await purchase(org, oneTime.id, customer.body.id, buyer);
    const recurring = await purchase(org, monthly.id, customer.body.id, buyer);
    expect([single.order.customerId, recurring.order.customerId]).toEqual([customer.body.id, customer.body.id]);
    sold[name] = { orderIds: [single.order.id, recurring.order.id], subscriptionId: recurring.order.subscriptionId!, checkoutSession: single.session, buyerId: customer.body.id };
  }
  shopSlug = (await t.shop.api('GET', `/organizations/${t.shop.organizationId}`)).body.slug;
  otherSlug = (await t.other.api('GET', `/organizations/${t.other.organizationId}`)).body.slug;
});

/** A portal link's session for a customer of `org`, as the organization's backend makes one. */
async function linkSession(org: typeof t.shop, customerId: string) {
  const created = await org.api('POST', '/customer-sessions/', { customer_id: customerId });
  expect(created.status).toBe(201);
  return created.body.token as string;
}

const me = (token: string) => restClient(base(), token)('GET', '/customer-portal/customers/me');

/** The portal page as a browser holding `cookie` shows it. */
const pageWith = (slug: string, cookie: string) => fetch(portalUrl(slug), { headers: { cookie: `${portalCookie}=${cookie}` } }).then(async (r) => ({ status: r.status, text: await r.text() }));

describe("the portal's pages", () => {
  it('trade a link’s session for the cookie’s: the link works no more, anywhere, and the new session ends when the link’s would have', async () => {
    const at = clockFrom(t.server, 1);
    const link = await linkSession(t.shop, sold.shop.buyerId);
    const linkEnds = (await t.server.kassa.environments.sandbox.environment.prisma.customerSession.findFirstOrThrow({ where: { customerId: sold.shop.buyerId }, orderBy: { createdAt: 'desc' } })).expiresAt;
    // Used once on the API first, so its principal is held in the cache when it is spent.
    expect((await me(link)).status).toBe(200);
    at(600);
    const browser = new FormBrowser(t.server.url);
    const shown = await browser.get(`${portalUrl(shopSlug)}?customer_session_token=${encodeURIComponent(link)}`);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('Continue as');
    const continued = await browser.post(`${portalUrl(shopSlug)}/continue`, formFields(shown.text));
    expect(continued.status).toBe(303);
    const setCookie = continued.headers.getSetCookie().find((c) => c.startsWith(`${portalCookie}=`))!;
    // Fifty minutes of the link's hour were left.
    expect(setCookie).toContain('Max-Age=3000;');
    const cookie = browser.cookies.get(portalCookie)!;
    expect(cookie).not.toBe(link);
    expect((await me(link)).status).toBe(401);
    const signedIn = await me(cookie);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.id).toBe(sold.shop.buyerId);
    expect((await pageWith(shopSlug, cookie)).text).toContain('Signed in as');
    const session = await t.server.kassa.environments.sandbox.environment.prisma.customerSession.findFirstOrThrow({ where: { customerId: sold.shop.buyerId, revokedAt: null, checkoutId: null }, orderBy: { createdAt: 'desc' } });
    expect(session.expiresAt).toEqual(linkEnds);
    // The link, spent, shows the signed-out page.
    expect((await new FormBrowser(t.server.url).get(`${portalUrl(shopSlug)}?customer_session_token=${encodeURIComponent(link)}`)).status).toBe(401);
  });

  it("refuses a continue whose form carries another link than the page it came from, and spends neither link", async () => {
    const [mine, theirs] = [await linkSession(t.shop, sold.shop.buyerId), await linkSession(t.other, sold.other.buyerId)];
    const theirsHere = await linkSession(t.shop, (await t.shop.api('POST', '/customers/', { email: address('victim'), name: 'Victim' })).body.id);
    const browser = new FormBrowser(t.server.url);
    const fields = formFields((await browser.get(`${portalUrl(shopSlug)}?customer_session_token=${encodeURIComponent(mine)}`)).text);
    for (const swapped of [theirsHere, theirs, 'x', '']) {
      const answer = await browser.post(`${portalUrl(shopSlug)}/continue`, { ...fields, customer_session_token: swapped });
      expect([swapped, answer.status]).toEqual([swapped, swapped === theirsHere ? 403 : 401]);
      expect(answer.headers.getSetCookie()).toEqual([]);
    }
    for (const token of [mine, theirsHere, theirs]) expect((await me(token)).status).toBe(200);
  });

  it("take no session but a live portal session of the page's own organization", async () => {
    const own = await linkSession(t.shop, sold.shop.buyerId);
    expect((await pageWith(shopSlug, own)).text).toContain('Signed in as');
    const refused: [string, string][] = [
      ['another organization’s customer', await linkSession(t.other, sold.other.buyerId)],
      ['a checkout’s session', sold.shop.checkoutSession],
      ['an unknown session', generateToken('polar', 'cst')],
      ['an organization token', t.shop.token],
      ['garbage', 'x'],
    ];
    for (const [what, token] of refused) {
      const page = await pageWith(shopSlug, token);
      expect([what, page.status], page.text.slice(0, 200)).toEqual([what, 401]);
      expect(page.text).toContain('Signed out');
      const link = await new FormBrowser(t.server.url).get(`${portalUrl(shopSlug)}?customer_session_token=${encodeURIComponent(token)}`);
      expect([what, link.status]).toEqual([what, 401]);
    }
    // The other organization's own portal takes its own customer's session.
    expect((await pageWith(otherSlug, await linkSession(t.other, sold.other.buyerId))).text).toContain('Signed in as');
  });
});

describe("a checkout's session", () => {
  it('reaches what that checkout bought, not the rest of what the customer bought, nor the customer', async () => {
    expect((await me(sold.shop.checkoutSession)).status).toBe(403);
    const orders = await restClient(base(), sold.shop.checkoutSession)('GET', '/customer-portal/orders/');
    expect(orders.body.items.map((o: { id: string }) => o.id)).toEqual([sold.shop.orderIds[0]]);
    const subscriptions = await restClient(base(), sold.shop.checkoutSession)('GET', '/customer-portal/subscriptions/');
    expect(subscriptions.body.items).toEqual([]);
    // The customer's own portal session reaches both.
    const full = await restClient(base(), await linkSession(t.shop, sold.shop.buyerId))('GET', '/customer-portal/orders/');
    expect(full.body.items.map((o: { id: string }) => o.id).sort()).toEqual([...sold.shop.orderIds].sort());
  });
});

describe('the Core API', () => {
  it("lists an organization's own orders and subscriptions, under its token and its owner's session alike, and finds none of another's", async () => {
    const session = await userSessionToken(t.server, 'sandbox', t.shop.userEmail, t.shop.userPassword);
    for (const token of [t.shop.token, session]) {
      const api = restClient(base(), token);
      const orders = await api('GET', '/orders/?limit=100');
      expect(orders.body.items.map((o: { id: string }) => o.id).sort()).toEqual([...sold.shop.orderIds].sort());
      const subscriptions = await api('GET', '/subscriptions/?limit=100');
      expect(subscriptions.body.items.map((s: { id: string }) => s.id)).toEqual([sold.shop.subscriptionId]);
      expect((await api('GET', `/orders/${sold.other.orderIds[0]}`)).status).toBe(404);
      expect((await api('GET', `/subscriptions/${sold.other.subscriptionId}`)).status).toBe(404);
    }
  });
});

describe("the sign-in page under a user's session cookie", () => {
  it('shows whose session it is while it lives, and the sign-in form once it has expired', async () => {
    const at = clockFrom(t.server, 2);
    const session = await userSessionToken(t.server, 'sandbox', t.shop.userEmail, t.shop.userPassword);
    const signInPage = () => fetch(`${t.server.url}/sandbox/oauth2/login`, { headers: { cookie: `kassa_sandbox_session=${session}` } }).then((r) => r.text());
    at(7 * 24 * 3600 - 0.001);
    const live = await signInPage();
    expect(live).toContain('<h1>Signed in</h1>');
    expect(live).toContain(`You are signed in as <strong>${t.shop.userEmail}</strong>`);
    at(7 * 24 * 3600);
    const expired = await signInPage();
    expect(expired).not.toContain('Signed in');
    expect(expired).toContain('name="password"');
  });
});
