// The rules a checkout enforces and the races it must survive, over REST in sandbox with the wire
// bodies of the official client: what a confirm needs, expiry (by moving the server clock), the
// states in which a checkout can no longer change, what a checkout may offer, concurrent and
// repeated confirms; then the same refusals as GraphQL error codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { madeOutOfIdOrder, restClient, type Api, type GqlResponse, type RestResponse } from '../helpers/server.ts';
import { userSessionToken } from '../helpers/oauth.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventsOf, newOrganization, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectGraphQLError, expectStatus } from '../helpers/responses.ts';
import { eventually, sleep } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '300' } });
// Registered after useTestServer, so it runs before the server is closed.
afterAll(() => {
  t.server.clock.now = null;
});

const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;

/** A typed error body as the client library parses it: exactly `{error, detail}` with a non-empty string detail. */
function expectTypedError(response: RestResponse, status: number, error: string) {
  expectErrorBody(response, status, error);
  expect(response.body.detail.length).toBeGreaterThan(0);
}

/** A 422 validation body whose issues are exactly at `locs`. */
function expectValidationAt(response: RestResponse, ...locs: (string | number)[][]) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body).toEqual({ detail: expect.any(Array) });
  expect(response.body.detail.map((issue: { loc: unknown }) => issue.loc)).toEqual(locs);
  for (const issue of response.body.detail) expect(issue).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
}

async function product(org: Org, price: Record<string, unknown> = { amount_type: 'fixed', price_amount: 1_500, price_currency: 'usd' }, name = 'Rulebook') {
  return expectStatus(await org.api('POST', '/products/', { name, recurring_interval: null, prices: [price] }), 201) as { id: string };
}

/** The minimal create body the client library sends, for these products. */
const createBody = (products: string[], extra: Record<string, unknown> = {}) => ({
  allow_discount_codes: true,
  require_billing_address: false,
  is_business_customer: false,
  products,
  ...extra,
});

async function checkout(org: Org, productId: string, extra: Record<string, unknown> = {}) {
  return expectStatus(await org.api('POST', '/checkouts/', createBody([productId], extra)), 201) as { id: string; client_secret: string; status: string };
}

const confirmPath = (clientSecret: string) => `/checkouts/client/${clientSecret}/confirm`;
const visa = (customer_email = 'buyer@example.com') => ({ customer_email, confirmation_token_id: 'tok_visa' });

async function ordersOf(org: Org, checkoutId: string) {
  return expectStatus(await org.api('GET', `/orders/?checkout_id=${checkoutId}`), 200).items as { id: string; status: string; paid: boolean; customer: { email: string } }[];
}

/** How many checkouts the organization has. */
async function checkoutCount(o: Org) {
  return expectStatus(await o.api('GET', '/checkouts/'), 200).pagination.total_count as number;
}

async function statusOf(org: Org, checkoutId: string): Promise<string> {
  return expectStatus(await org.api('GET', `/checkouts/${checkoutId}`), 200).status;
}

/** Each response as `status error-or-checkout-status`, for failure messages. */
const outcomes = (responses: RestResponse[]) => responses.map((r) => `${r.status} ${r.body?.error ?? r.body?.status ?? ''}`).join(', ');

/** The payments of a checkout's orders, and the payment jobs scheduled for them. */
async function paymentsAndJobsOf(checkoutId: string) {
  const payments = await prisma().payment.findMany({ where: { order: { checkoutId } } });
  const ids = new Set(payments.map((p) => p.id));
  const jobs = (await prisma().job.findMany({ where: { kind: 'payment.charge' } })).filter((j) => ids.has((j.payload as { paymentId: string }).paymentId));
  return { payments, jobs };
}

describe('confirming without what the payment needs', () => {
  let org: Org;
  let productId: string;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    productId = (await product(org)).id;
  });

  it('refuses a confirm without customer_email with a 422 naming customer_email', async () => {
    const c = await checkout(org, productId);
    expectValidationAt(await org.publicApi('POST', confirmPath(c.client_secret), { confirmation_token_id: 'tok_visa' }), ['body', 'customer_email']);
  });

  it('refuses a confirm of a paid price without a card with a 422 naming confirmation_token_id', async () => {
    const c = await checkout(org, productId);
    expectValidationAt(await org.publicApi('POST', confirmPath(c.client_secret), { customer_email: 'nocard@example.com' }), ['body', 'confirmation_token_id']);
  });

  it('refuses a confirm with an unknown card token with a 422 naming confirmation_token_id', async () => {
    const c = await checkout(org, productId);
    const response = await org.publicApi('POST', confirmPath(c.client_secret), { customer_email: 'fake@example.com', confirmation_token_id: 'tok_madeUp' });
    expectValidationAt(response, ['body', 'confirmation_token_id']);
    expect(response.body.detail[0].msg).toMatch(/tok_visa/);
  });

  it('names every missing field at once, in its words', async () => {
    const c = await checkout(org, productId, { require_billing_address: true });
    const refused = await org.publicApi('POST', confirmPath(c.client_secret), {});
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      { loc: ['body', 'customer_email'], msg: 'Field required: the buyer’s email address', type: 'missing' },
      { loc: ['body', 'customer_billing_address'], msg: 'Field required: this checkout asks for a billing address', type: 'missing' },
      { loc: ['body', 'confirmation_token_id'], msg: 'Field required: the payment method token', type: 'missing' },
    ]);
    // A checkout of a known customer needs no email.
    const customer = expectStatus(await org.api('POST', '/customers/', { email: `known-${crypto.randomUUID()}@example.com` }), 201);
    const known = await checkout(org, productId, { customer_id: customer.id });
    expectStatus(await org.publicApi('POST', confirmPath(known.client_secret), { confirmation_token_id: 'tok_visa' }), 200);
  });

  it('leaves a refused checkout open, unchanged and without an order, customer or event, so it can still be paid', async () => {
    const c = await checkout(org, productId, { customer_email: 'original@example.com' });
    expectValidationAt(
      await org.publicApi('POST', confirmPath(c.client_secret), { customer_email: 'changed@example.com', confirmation_token_id: 'tok_madeUp' }),
      ['body', 'confirmation_token_id'],
    );
    const after = expectStatus(await org.api('GET', `/checkouts/${c.id}`), 200);
    expect(after).toMatchObject({ status: 'open', customer_email: 'original@example.com', customer_id: null });
    expect(await ordersOf(org, c.id)).toEqual([]);
    const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.resourceId === c.id);
    expect(events.map((e) => e.type)).toEqual(['checkout.created']);
    expect(expectStatus(await org.api('GET', `/customers/?email=changed%40example.com`), 200).items).toEqual([]);

    expectStatus(await org.publicApi('POST', confirmPath(c.client_secret), visa('original@example.com')), 200);
    await eventually(() => ordersOf(org, c.id), (orders) => orders.length === 1 && orders[0].paid, 'the order to be paid');
  });
});

describe('an expired checkout', () => {
  let org: Org;
  let c: { id: string; client_secret: string };
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    c = await checkout(org, (await product(org)).id, { customer_email: 'late@example.com' });
    t.server.clock.now = new Date(Date.now() + 2 * 3600_000);
  });
  afterAll(() => {
    t.server.clock.now = null;
  });

  it('refuses the buyer confirming it with 410 ExpiredCheckoutError', async () => {
    expectTypedError(await org.publicApi('POST', confirmPath(c.client_secret), visa('late@example.com')), 410, 'ExpiredCheckoutError');
  });

  it('refuses the buyer updating it with 410 ExpiredCheckoutError', async () => {
    expectTypedError(await org.publicApi('PATCH', `/checkouts/client/${c.client_secret}`, { customer_email: 'later@example.com' }), 410, 'ExpiredCheckoutError');
  });

  it('refuses the buyer reading it with 410 ExpiredCheckoutError', async () => {
    expectTypedError(await org.publicApi('GET', `/checkouts/client/${c.client_secret}`), 410, 'ExpiredCheckoutError');
  });

  it('is marked expired by the sweep, with a checkout.updated event rendering it expired', async () => {
    await eventually(() => statusOf(org, c.id), (status) => status === 'expired', 'the sweep to expire the checkout');
    const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.resourceId === c.id);
    expect(events.map((e) => e.type)).toEqual(['checkout.created', 'checkout.updated']);
    const rest = expectStatus(await org.api('GET', `/checkouts/${c.id}`), 200);
    expect(rest.status).toBe('expired');
    expect(events[1].data).toEqual(rest);
  });

  it('still refuses a confirm with 410 once swept, and the organization updating it with 403 NotOpenCheckout', async () => {
    await eventually(() => statusOf(org, c.id), (status) => status === 'expired', 'the sweep to expire the checkout');
    expectTypedError(await org.publicApi('POST', confirmPath(c.client_secret), visa('late@example.com')), 410, 'ExpiredCheckoutError');
    const update = await org.api('PATCH', `/checkouts/${c.id}`, { metadata: { retry: true } });
    expectTypedError(update, 403, 'NotOpenCheckout');
    expect(update.body.detail).toBe('This checkout has expired.');
  });

  it('never got an order, a customer or a payment, and was expired by one event only', async () => {
    expect(await ordersOf(org, c.id)).toEqual([]);
    const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.resourceId === c.id);
    expect(events.map((e) => e.type)).toEqual(['checkout.created', 'checkout.updated']);
    expect(expectStatus(await org.api('GET', '/customers/'), 200).items).toEqual([]);
    expect((await paymentsAndJobsOf(c.id)).payments).toEqual([]);
  });
});

describe('a confirmed checkout', () => {
  let org: Org;
  let c: { id: string; client_secret: string };
  let firstConfirm: RestResponse;
  let statusBeforeSecond: string;
  let secondConfirm: RestResponse;
  let organizationUpdate: RestResponse;
  let buyerUpdate: RestResponse;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    c = await checkout(org, (await product(org)).id);
    // The slow test card keeps the checkout `confirmed` for the card delay (300 ms) after the payment job starts.
    firstConfirm = await org.publicApi('POST', confirmPath(c.client_secret), { customer_email: 'once@example.com', confirmation_token_id: 'tok_delayedFailure' });
    [statusBeforeSecond, secondConfirm, organizationUpdate, buyerUpdate] = await Promise.all([
      statusOf(org, c.id),
      org.publicApi('POST', confirmPath(c.client_secret), visa('twice@example.com')),
      org.api('PATCH', `/checkouts/${c.id}`, { metadata: { late: 'change' } }),
      org.publicApi('PATCH', `/checkouts/client/${c.client_secret}`, { customer_email: 'changed@example.com' }),
    ]);
  });

  it('was confirmed by the first confirm', () => {
    expect(expectStatus(firstConfirm, 200)).toMatchObject({ id: c.id, status: 'confirmed', customer_session_token: expect.any(String) });
    expect(statusBeforeSecond).toBe('confirmed');
  });

  it('refuses a second confirm with 403 NotOpenCheckout', () => {
    expectTypedError(secondConfirm, 403, 'NotOpenCheckout');
  });

  it('refuses PATCH /v1/checkouts/{id} with 403 NotOpenCheckout', () => {
    expectTypedError(organizationUpdate, 403, 'NotOpenCheckout');
  });

  it("refuses the buyer's update with 403 NotOpenCheckout", () => {
    expectTypedError(buyerUpdate, 403, 'NotOpenCheckout');
  });

  it('keeps the first confirmation: one order for the first email, metadata unchanged', async () => {
    const failed = await eventually(() => org.api('GET', `/checkouts/${c.id}`), (r) => r.body.status === 'failed', 'the slow card to fail');
    expect(failed.body.customer_email).toBe('once@example.com');
    expect(failed.body.metadata).toEqual({});
    const orders = await ordersOf(org, c.id);
    expect(orders).toHaveLength(1);
    expect(orders[0]).toMatchObject({ status: 'pending', paid: false, customer: expect.objectContaining({ email: 'once@example.com' }) });
  });

  it('takes a confirm after the payment has failed as another card for the same order, not a second purchase', async () => {
    await eventually(() => statusOf(org, c.id), (status) => status === 'failed', 'the slow card to fail');
    expect(expectStatus(await org.publicApi('POST', confirmPath(c.client_secret), visa('retry@example.com')), 200)).toMatchObject({ status: 'confirmed', customer_email: 'once@example.com' });
    await eventually(() => statusOf(org, c.id), (status) => status === 'succeeded', 'the second card to pay');
    const orders = await ordersOf(org, c.id);
    expect(orders.map((o) => [o.status, o.paid, o.customer.email])).toEqual([['paid', true, 'once@example.com']]);
  });
});

describe('a succeeded checkout', () => {
  it('refuses another confirm with 403 NotOpenCheckout and keeps its single order', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const c = await checkout(org, (await product(org)).id);
    expectStatus(await org.publicApi('POST', confirmPath(c.client_secret), visa()), 200);
    await eventually(() => statusOf(org, c.id), (status) => status === 'succeeded', 'the checkout to succeed');
    expectTypedError(await org.publicApi('POST', confirmPath(c.client_secret), visa()), 403, 'NotOpenCheckout');
    const late = await org.api('PATCH', `/checkouts/${c.id}`, { customer_name: 'Too late' });
    expectTypedError(late, 403, 'NotOpenCheckout');
    expect(late.body.detail).toBe('This checkout is succeeded: it can no longer change.');
    const orders = await ordersOf(org, c.id);
    expect(orders.map((o) => [o.status, o.paid])).toEqual([['paid', true]]);
  });
});

describe('an unknown client secret', () => {
  const secret = 'service_c_doesNotExist0000000000000000000000';
  let buyer: Api;
  beforeAll(() => {
    buyer = restClient(t.server.base('sandbox'));
  });

  it('is not found when read', async () => {
    expectTypedError(await buyer('GET', `/checkouts/client/${secret}`), 404, 'ResourceNotFound');
  });

  it('is not found when updated', async () => {
    expectTypedError(await buyer('PATCH', `/checkouts/client/${secret}`, { customer_email: 'ghost@example.com' }), 404, 'ResourceNotFound');
  });

  it('is not found when confirmed', async () => {
    expectTypedError(await buyer('POST', confirmPath(secret), visa('ghost@example.com')), 404, 'ResourceNotFound');
  });
});

describe('an environment without a payment processor', () => {
  const bare = useTestServer({ env: { PRODUCTION_PAYMENT_PROCESSOR: 'none' } });

  it('refuses to confirm a checkout with something to pay, writing nothing, and confirms a free one', async () => {
    const org = await newOrganization(bare.server, 'production');
    const paid = await checkout(org, (await product(org)).id);
    const refused = await org.publicApi('POST', confirmPath(paid.client_secret), { customer_email: 'nobody-charges@example.com', confirmation_token_id: 'tok_visa' });
    expect([refused.status, refused.body]).toEqual([400, { error: 'PaymentError', detail: 'No payment processor is configured for this environment.' }]);
    expect(expectStatus(await org.api('GET', `/checkouts/${paid.id}`), 200)).toMatchObject({ status: 'open', customer_id: null });
    expect(expectStatus(await org.api('GET', '/orders/'), 200).items).toEqual([]);
    const free = await checkout(org, (await product(org, { amount_type: 'free', price_currency: 'usd' }, 'Gift')).id);
    expect(expectStatus(await org.publicApi('POST', confirmPath(free.client_secret), { customer_email: 'gift@example.com' }), 200).status).toBe('confirmed');
  });
});

describe('billing addresses', () => {
  let org: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
  });

  it('refuses to confirm a checkout that requires a billing address without one, with 422 at the address, and creates no order', async () => {
    const productId = (await product(org)).id;
    const c = await checkout(org, productId, { require_billing_address: true });
    expectValidationAt(await org.publicApi('POST', confirmPath(c.client_secret), visa('no-address@example.com')), ['body', 'customer_billing_address']);
    expect(await statusOf(org, c.id)).toBe('open');
    expect(await ordersOf(org, c.id)).toEqual([]);
    const withAddress = { ...visa('no-address@example.com'), customer_billing_address: { line1: '1 Main St', city: 'Paris', postal_code: '75001', country: 'FR' } };
    expect(expectStatus(await org.publicApi('POST', confirmPath(c.client_secret), withAddress), 200).status).toBe('confirmed');
  });

  it('refuses a checkout, a buyer update and an order update with a country that is not one, naming the country', async () => {
    const productId = (await product(org)).id;
    const address = { line1: '1 Nowhere', country: 'XX' };
    expectValidationAt(await org.api('POST', '/checkouts/', createBody([productId], { customer_billing_address: address })), ['body', 'customer_billing_address', 'country']);
    const c = await checkout(org, productId);
    expectValidationAt(await org.publicApi('PATCH', `/checkouts/client/${c.client_secret}`, { customer_billing_address: address }), ['body', 'customer_billing_address', 'country']);
    expectStatus(await org.publicApi('POST', confirmPath(c.client_secret), visa('address@example.com')), 200);
    const [order] = await eventually(() => ordersOf(org, c.id), (orders) => orders.length === 1, 'the order');
    expectValidationAt(await org.api('PATCH', `/orders/${order.id}`, { billing_name: 'Someone', billing_address: address }), ['body', 'billing_address', 'country']);
    expect(expectStatus(await org.api('GET', `/orders/${order.id}`), 200).billing_address).toBeNull();
  });
});

describe("a checkout of another environment or another organization", () => {
  let org: Org;
  let c: { id: string; client_secret: string };
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    c = await checkout(org, (await product(org)).id);
  });

  it('is not found under production by its sandbox client secret, and confirming it there creates nothing', async () => {
    const production = restClient(t.server.base('production'));
    expectTypedError(await production('GET', `/checkouts/client/${c.client_secret}`), 404, 'ResourceNotFound');
    expectTypedError(await production('POST', confirmPath(c.client_secret), visa()), 404, 'ResourceNotFound');
    expect(await statusOf(org, c.id)).toBe('open');
    expect(await ordersOf(org, c.id)).toEqual([]);
  });

  it("is not found by another organization's token, which cannot change it", async () => {
    const other = await newOrganization(t.server, 'sandbox');
    expectTypedError(await other.api('GET', `/checkouts/${c.id}`), 404, 'ResourceNotFound');
    expectTypedError(await other.api('PATCH', `/checkouts/${c.id}`, { customer_name: 'Intruder' }), 404, 'ResourceNotFound');
    expect(expectStatus(await org.api('GET', `/checkouts/${c.id}`), 200).customer_name).toBeNull();
  });
});

describe('products a checkout cannot offer', () => {
  let org: Org;
  let stranger: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    stranger = await newOrganization(t.server, 'sandbox');
  });

  it('refuses an archived product with a 422 naming it', async () => {
    const archived = await product(org, undefined, 'Retired');
    expectStatus(await org.api('PATCH', `/products/${archived.id}`, { is_archived: true }), 200);
    const before = await checkoutCount(org);
    expectValidationAt(await org.api('POST', '/checkouts/', createBody([archived.id])), ['body', 'products', 0]);
    expect(await checkoutCount(org)).toBe(before);
  });

  it('refuses an archived product offered after a live one, naming its position', async () => {
    const live = await product(org, undefined, 'Live');
    const archived = await product(org, undefined, 'Retired too');
    expectStatus(await org.api('PATCH', `/products/${archived.id}`, { is_archived: true }), 200);
    expectValidationAt(await org.api('POST', '/checkouts/', createBody([live.id, archived.id])), ['body', 'products', 1]);
  });

  it("refuses another organization's product with a 422 naming it", async () => {
    const own = await product(org, undefined, 'Own');
    const foreign = await product(stranger, undefined, 'Foreign');
    const before = await checkoutCount(org);
    expectValidationAt(await org.api('POST', '/checkouts/', createBody([own.id, foreign.id])), ['body', 'products', 1]);
    expectValidationAt(await org.api('POST', '/checkouts/', createBody([foreign.id])), ['body', 'products', 0]);
    expect(await checkoutCount(org)).toBe(before);
    expect(await checkoutCount(stranger)).toBe(0);
  });
});

describe('what creating a checkout refuses, in its words', () => {
  let org: Org;
  let stranger: Org;
  let sold: { id: string };
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    stranger = await newOrganization(t.server, 'sandbox');
    sold = await product(org, undefined, 'Sold');
  });

  /** The 422's issues, whole, and that nothing was created. */
  async function refused(body: Record<string, unknown>, api: Api = org.api) {
    const before = await checkoutCount(org);
    const answer = await api('POST', '/checkouts/', body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(await checkoutCount(org)).toBe(before);
    return answer.body.detail as { loc: (string | number)[]; msg: string; type: string }[];
  }

  it('an empty or repeated product list, an upgrade of a subscription, and an address that is none', async () => {
    expect(await refused(createBody([]))).toEqual([{ loc: ['body', 'products'], msg: 'List should have at least 1 item after validation, not 0', type: 'too_short' }]);
    expect(await refused(createBody([sold.id], { customer_email: 'not an address' }))).toEqual([
      { loc: ['body', 'customer_email'], msg: 'value is not a valid email address', type: 'value_error' },
    ]);
    expect(await refused(createBody([sold.id, sold.id]))).toEqual([{ loc: ['body', 'products'], msg: 'Each product may be offered once.', type: 'value_error' }]);
    expect(await refused(createBody([sold.id], { subscription_id: crypto.randomUUID() }))).toEqual([
      { loc: ['body', 'subscription_id'], msg: 'Subscription upgrades are not available on this server yet.', type: 'value_error' },
    ]);
  });

  it('an unknown, foreign or archived product, naming each position', async () => {
    const foreign = await product(stranger, undefined, 'Foreign');
    const archived = await product(org, undefined, 'Archived');
    expectStatus(await org.api('PATCH', `/products/${archived.id}`, { is_archived: true }), 200);
    expect(await refused(createBody([sold.id, crypto.randomUUID(), foreign.id, archived.id]))).toEqual([
      { loc: ['body', 'products', 1], msg: 'Product not found.', type: 'value_error' },
      { loc: ['body', 'products', 2], msg: 'Product not found.', type: 'value_error' },
      { loc: ['body', 'products', 3], msg: 'This product is archived and cannot be sold.', type: 'value_error' },
    ]);
  });

  it("products of two of the caller's organizations, under a user's session that reaches both", async () => {
    const session = await userSessionToken(t.server, 'sandbox', org.userEmail, org.userPassword);
    const user = restClient(t.server.base('sandbox'), session);
    const second = expectStatus(await user('POST', '/organizations/', { name: 'Second shop', slug: `second-${crypto.randomUUID()}` }), 201);
    const elsewhere = expectStatus(await user('POST', '/products/', { organization_id: second.id, name: 'Elsewhere', recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] }), 201);
    expect(await refused(createBody([sold.id, elsewhere.id]), user)).toEqual([{ loc: ['body', 'products'], msg: 'All products must belong to one organization.', type: 'value_error' }]);
    // Each alone is sold, in its own organization.
    expect(expectStatus(await user('POST', '/checkouts/', createBody([elsewhere.id])), 201).product.organization_id).toBe(second.id);
  });

  it('a malformed id or a negative amount, before anything is looked up', async () => {
    const custom = await product(org, { amount_type: 'custom', price_currency: 'usd' }, 'Negative');
    for (const [body, loc] of [
      [createBody(['not-a-uuid']), ['body', 'products', 0]],
      [createBody([sold.id], { customer_id: '12345' }), ['body', 'customer_id']],
      [createBody([sold.id], { discount_id: "'; DROP TABLE checkouts;--" }), ['body', 'discount_id']],
    ] as const) {
      const issues = await refused(body);
      expect(issues.map((issue) => issue.loc)).toEqual([loc]);
    }
    expect(await refused(createBody([custom.id], { amount: -500 }))).toEqual([{ loc: ['body', 'amount'], msg: 'The amount must be between 50 and 99999999.', type: 'value_error' }]);
  });

  it('a pay-what-you-want amount outside its bounds, or the defaults of 50 and 99,999,999; in bounds, the amount, the preset or the minimum', async () => {
    const bounded = await product(org, { amount_type: 'custom', minimum_amount: 500, maximum_amount: 5000, preset_amount: 1200, price_currency: 'usd' }, 'Bounded');
    const open = await product(org, { amount_type: 'custom', price_currency: 'usd' }, 'Open');
    for (const [productId, amount, words] of [
      [bounded.id, 499, 'The amount must be between 500 and 5000.'],
      [bounded.id, 5001, 'The amount must be between 500 and 5000.'],
      [open.id, 49, 'The amount must be between 50 and 99999999.'],
      [open.id, 100_000_000, 'The amount must be between 50 and 99999999.'],
    ] as const) {
      expect(await refused(createBody([productId], { amount }))).toEqual([{ loc: ['body', 'amount'], msg: words, type: 'value_error' }]);
    }
    const amountOf = async (productId: string, extra: Record<string, unknown>) => expectStatus(await org.api('POST', '/checkouts/', createBody([productId], extra)), 201).amount;
    expect(await amountOf(bounded.id, { amount: 500 })).toBe(500);
    expect(await amountOf(bounded.id, { amount: 5000 })).toBe(5000);
    expect(await amountOf(bounded.id, {})).toBe(1200);
    expect(await amountOf(open.id, {})).toBe(50);
    expect(await amountOf(open.id, { amount: 99_999_999 })).toBe(99_999_999);
  });

  it("an unknown, foreign or ended discount, at discount_id; the organization's live one applies", async () => {
    // A live discount of the organization: a lookup that lost its id would find this one.
    const live = expectStatus(await org.api('POST', '/discounts/', { name: 'Live', type: 'percentage', basis_points: 1000, duration: 'once' }), 201);
    const ended = expectStatus(await org.api('POST', '/discounts/', { name: 'Ended', type: 'percentage', basis_points: 1000, duration: 'once', ends_at: '2020-01-01T00:00:00Z' }), 201);
    const foreign = expectStatus(await stranger.api('POST', '/discounts/', { name: 'Theirs', type: 'percentage', basis_points: 1000, duration: 'once' }), 201);
    for (const discountId of [crypto.randomUUID(), foreign.id, ended.id]) {
      const issues = await refused(createBody([sold.id], { discount_id: discountId }));
      expect(issues).toHaveLength(1);
      expect(issues[0].loc).toEqual(['body', 'discount_id']);
    }
    const discounted = expectStatus(await org.api('POST', '/checkouts/', createBody([sold.id], { discount_id: live.id })), 201);
    expect([discounted.discount_id, discounted.discount_amount, discounted.total_amount]).toEqual([live.id, 150, 1350]);
  });

  it("a customer that is unknown, deleted or another organization's, at customer_id, with every other issue at once", async () => {
    const gone = expectStatus(await org.api('POST', '/customers/', { email: `gone-${crypto.randomUUID()}@example.com` }), 201);
    expectStatus(await org.api('DELETE', `/customers/${gone.id}`), 204);
    const theirs = expectStatus(await stranger.api('POST', '/customers/', { email: `theirs-${crypto.randomUUID()}@example.com` }), 201);
    for (const customerId of [crypto.randomUUID(), gone.id, theirs.id]) {
      expect(await refused(createBody([sold.id], { customer_id: customerId }))).toEqual([{ loc: ['body', 'customer_id'], msg: 'Customer not found.', type: 'value_error' }]);
    }
    const issues = await refused(createBody([sold.id], { customer_id: gone.id, success_url: 'ftp://example.com', customer_billing_address: { country: 'XX' } }));
    expect(issues.map((i) => i.loc)).toEqual([['body', 'customer_id'], ['body', 'customer_billing_address', 'country'], ['body', 'success_url']]);
  });

  it('takes an external customer id: the customer holding it is the buyer; an id nobody holds names no customer yet', async () => {
    const external = `ext-${crypto.randomUUID()}`;
    const holder = expectStatus(await org.api('POST', '/customers/', { email: `holder-${crypto.randomUUID()}@example.com`, external_id: external }), 201);
    // Another organization's customer with the same external id is not this one's.
    expectStatus(await stranger.api('POST', '/customers/', { email: `other-${crypto.randomUUID()}@example.com`, external_id: external }), 201);
    for (const field of ['external_customer_id', 'customer_external_id']) {
      const created = expectStatus(await org.api('POST', '/checkouts/', createBody([sold.id], { [field]: external })), 201);
      expect([field, created.customer_id, created.external_customer_id]).toEqual([field, holder.id, external]);
    }
    const nobody = expectStatus(await org.api('POST', '/checkouts/', createBody([sold.id], { external_customer_id: `none-${crypto.randomUUID()}` })), 201);
    expect(nobody.customer_id).toBeNull();
    const known = expectStatus(await org.api('POST', '/checkouts/', createBody([sold.id], { customer_id: holder.id })), 201);
    expect(known.customer_id).toBe(holder.id);
  });
});

describe('what a checkout keeps, and how checkouts are listed', () => {
  let org: Org;
  let first: { id: string };
  let second: { id: string };
  const address = { line1: '1 Main St', line2: 'Floor 2', postal_code: '10001', city: 'New York', state: 'US-NY', country: 'US' };
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    first = await product(org, undefined, 'First');
    second = await product(org, { amount_type: 'fixed', price_amount: 2_500, price_currency: 'eur' }, 'Second');
  });

  it('stores every field given, exactly, with one checkout.created event', async () => {
    const customer = expectStatus(await org.api('POST', '/customers/', { email: `kept-${crypto.randomUUID()}@example.com` }), 201);
    // Stored and shown exactly as given.
    const given = {
      customer_id: customer.id,
      external_customer_id: 'ext-kept',
      customer_name: 'Ada Lovelace',
      customer_ip_address: '203.0.113.9',
      customer_billing_name: 'Analytical Engines Ltd',
      customer_billing_address: address,
      customer_tax_id: 'DE123456789',
      is_business_customer: true,
      require_billing_address: true,
      allow_discount_codes: false,
      metadata: { ref: 'r-1', n: 2 },
      customer_metadata: { tier: 'gold' },
    };
    const created = expectStatus(
      await org.api('POST', '/checkouts/', { products: [first.id, second.id], ...given, customer_email: '  ada@example.com ', success_url: 'https://shop.example/thanks?c={CHECKOUT_ID}' }),
      201,
    );
    const read = expectStatus(await org.api('GET', `/checkouts/${created.id}`), 200);
    expect(read).toMatchObject({ ...given, status: 'open', product_id: first.id, amount: 1_500, currency: 'usd', customer_email: 'ada@example.com', discount_id: null, discount_amount: 0 });
    expect(read.success_url).toBe(`https://shop.example/thanks?c=${created.id}`);
    expect(read.products.map((p: { id: string }) => p.id)).toEqual([first.id, second.id]);
    expect(new Date(read.expires_at).getTime() - new Date(read.created_at).getTime()).toBe(3_600_000);
    expect(read.client_secret).toMatch(/^[a-z]+_c_[A-Za-z0-9_-]{32}$/);
    const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.resourceId === created.id);
    expect(events.map((e) => e.type)).toEqual(['checkout.created']);
  });

  it('defaults what is left out', async () => {
    const created = expectStatus(await org.api('POST', '/checkouts/', { products: [first.id] }), 201);
    expect(created).toMatchObject({
      customer_id: null,
      external_customer_id: null,
      customer_name: null,
      customer_email: null,
      customer_ip_address: null,
      customer_billing_name: null,
      customer_billing_address: null,
      customer_tax_id: null,
      is_business_customer: false,
      require_billing_address: false,
      allow_discount_codes: true,
      metadata: {},
      customer_metadata: {},
    });
    // With no success URL of its own, the buyer lands on the checkout's confirmation page.
    expect(created.success_url).toBe(`${t.server.base('sandbox')}/checkout/${created.client_secret}/confirmation`.replace('/v1/', '/'));
  });

  it("changes a buyer's fields on an open checkout, and switches only to a product it offers", async () => {
    const created = expectStatus(await org.api('POST', '/checkouts/', { products: [first.id, second.id], customer_billing_address: address, customer_tax_id: 'DE1' }), 201);
    const buyer = (body: Record<string, unknown>) => org.publicApi('PATCH', `/checkouts/client/${created.client_secret}`, body);
    const elsewhere = await product(org, undefined, 'Not offered');
    const notOffered = await buyer({ product_id: elsewhere.id });
    expect(notOffered.status).toBe(422);
    expect(notOffered.body.detail).toEqual([{ loc: ['body', 'product_id'], msg: 'This product is not offered by this checkout.', type: 'value_error' }]);
    const badEmail = await buyer({ customer_email: 'not an email' });
    expect(badEmail.status).toBe(422);
    expect(badEmail.body.detail.map((i: { loc: unknown }) => i.loc)).toEqual([['body', 'customer_email']]);
    expect(expectStatus(await org.api('GET', `/checkouts/${created.id}`), 200)).toMatchObject({ product_id: first.id, amount: 1_500, currency: 'usd', customer_email: null });

    const switched = expectStatus(await buyer({ product_id: second.id, customer_email: ' grace@example.com', customer_name: 'Grace', customer_billing_name: 'Grace Ltd', is_business_customer: true }), 200);
    expect(switched).toMatchObject({ product_id: second.id, amount: 2_500, currency: 'eur', customer_email: 'grace@example.com', customer_name: 'Grace', customer_billing_name: 'Grace Ltd', is_business_customer: true });
    // What an update leaves out (or sends as null where null means nothing) stays as it was.
    expect(switched).toMatchObject({ customer_billing_address: address, customer_tax_id: 'DE1' });
    const kept = expectStatus(await buyer({ is_business_customer: null, product_id: null }), 200);
    expect(kept).toMatchObject({ is_business_customer: true, product_id: second.id, customer_billing_address: address, customer_tax_id: 'DE1', customer_name: 'Grace' });
    expect(expectStatus(await buyer({ customer_tax_id: 'DE2' }), 200)).toMatchObject({ customer_tax_id: 'DE2', customer_billing_address: address, product_id: second.id });
    const cleared = expectStatus(await buyer({ customer_billing_address: null, customer_tax_id: null, customer_email: null }), 200);
    expect(cleared).toMatchObject({ customer_billing_address: null, customer_tax_id: null, customer_email: null, customer_name: 'Grace', product_id: second.id });
  });

  it("changes the organization's fields with one checkout.updated each, refuses a bad success URL changing nothing, and finds no other organization's", async () => {
    const live = expectStatus(await org.api('POST', '/discounts/', { name: 'Tenth', type: 'percentage', basis_points: 1000, duration: 'once' }), 201);
    const created = expectStatus(await org.api('POST', '/checkouts/', { products: [first.id], metadata: { keep: 'me' }, customer_metadata: { tier: 'gold' }, success_url: 'https://shop.example/a' }), 201);
    const update = (body: Record<string, unknown>) => org.api('PATCH', `/checkouts/${created.id}`, body);
    const changed = expectStatus(
      await update({ allow_discount_codes: false, require_billing_address: true, customer_ip_address: '198.51.100.7', discount_id: live.id, success_url: 'https://shop.example/b' }),
      200,
    );
    expect(changed).toMatchObject({
      allow_discount_codes: false,
      require_billing_address: true,
      customer_ip_address: '198.51.100.7',
      discount_id: live.id,
      discount_amount: 150,
      total_amount: 1_350,
      success_url: 'https://shop.example/b',
      metadata: { keep: 'me' },
      customer_metadata: { tier: 'gold' },
    });
    const refused = await update({ success_url: 'javascript:alert(1)', metadata: { keep: 'not' } });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([{ loc: ['body', 'success_url'], msg: 'Input should be a valid URL, starting with http:// or https://', type: 'value_error' }]);
    const cleared = expectStatus(await update({ customer_metadata: null, discount_id: null, metadata: { n: 1 } }), 200);
    expect(cleared).toMatchObject({ customer_metadata: {}, discount_id: null, discount_amount: 0, total_amount: 1_500, metadata: { n: 1 }, success_url: 'https://shop.example/b', allow_discount_codes: false });
    const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.resourceId === created.id);
    expect(events.map((e) => e.type)).toEqual(['checkout.created', 'checkout.updated', 'checkout.updated']);
    const stranger = await newOrganization(t.server, 'sandbox');
    expectTypedError(await stranger.api('PATCH', `/checkouts/${created.id}`, { metadata: { stolen: true } }), 404, 'ResourceNotFound');
    expectTypedError(await stranger.api('GET', `/checkouts/${created.id}`), 404, 'ResourceNotFound');
  });

  it("keeps custom field answers: a required one may wait for the confirm, and a switch keeps the answers the new product asks", async () => {
    const field = async (slug: string) => expectStatus(await org.api('POST', '/custom-fields/', { type: 'text', slug: `${slug}-${crypto.randomUUID().slice(0, 8)}`, name: slug, properties: {} }), 201);
    const [company, size] = [await field('company'), await field('size')];
    const asking = async (fields: { id: string; required: boolean }[], name: string) =>
      expectStatus(await org.api('POST', '/products/', { name, recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }], attached_custom_fields: fields.map((f) => ({ custom_field_id: f.id, required: f.required })) }), 201);
    const both = await asking([{ id: company.id, required: true }, { id: size.id, required: false }], 'Asks both');
    const companyOnly = await asking([{ id: company.id, required: false }], 'Asks company');
    // At create, a required answer may still be missing.
    const created = expectStatus(await org.api('POST', '/checkouts/', { products: [both.id, companyOnly.id], custom_field_data: { [size.slug]: 'XL' } }), 201);
    expect(created.custom_field_data).toEqual({ [size.slug]: 'XL' });
    const buyer = (body: Record<string, unknown>) => org.publicApi('PATCH', `/checkouts/client/${created.client_secret}`, body);
    // An update may leave the required answer out too: the confirm asks for it.
    expect(expectStatus(await buyer({ custom_field_data: { [size.slug]: 'S' } }), 200).custom_field_data).toEqual({ [size.slug]: 'S' });
    const answered = expectStatus(await buyer({ custom_field_data: { [company.slug]: 'Acme', [size.slug]: 'M' } }), 200);
    expect(answered.custom_field_data).toEqual({ [company.slug]: 'Acme', [size.slug]: 'M' });
    // Switching keeps the answer the new product asks for, and drops the other.
    const switched = expectStatus(await buyer({ product_id: companyOnly.id }), 200);
    expect(switched.custom_field_data).toEqual({ [company.slug]: 'Acme' });
    // An update that neither answers nor switches leaves the answers alone.
    expect(expectStatus(await buyer({ customer_name: 'Ada' }), 200).custom_field_data).toEqual({ [company.slug]: 'Acme' });
    const back = expectStatus(await buyer({ product_id: both.id }), 200);
    expect(back.custom_field_data).toEqual({ [company.slug]: 'Acme' });
  });

  it('lists the newest first when no order is asked for', async () => {
    const own = await product(org, undefined, `Newest ${crypto.randomUUID()}`);
    const made = await madeOutOfIdOrder(t.server, async () => expectStatus(await org.api('POST', '/checkouts/', createBody([own.id])), 201).id);
    const listed = expectStatus(await org.api('GET', `/checkouts/?product_id=${own.id}&limit=100`), 200);
    expect(listed.items.map((c: { id: string }) => c.id)).toEqual([...made].reverse());
  });

  it('lists by product, customer, status and email, sorted by creation, expiry or status, and counts them', async () => {
    const other = await newOrganization(t.server, 'sandbox');
    const customer = expectStatus(await org.api('POST', '/customers/', { email: `listed-${crypto.randomUUID()}@example.com` }), 201);
    const make = async (productId: string, extra: Record<string, unknown>) => expectStatus(await org.api('POST', '/checkouts/', { products: [productId], ...extra }), 201).id as string;
    const base = Date.now();
    t.server.clock.now = new Date(base);
    let a: string, b: string, c: string;
    try {
      a = await make(first.id, { customer_email: 'Zed_100%@Example.com' });
      t.server.clock.now = new Date(base + 60_000);
      b = await make(second.id, { customer_id: customer.id });
      t.server.clock.now = new Date(base + 120_000);
      c = await make(first.id, { customer_email: 'zed_1000@example.com' });
      await make(second.id, {}).then(async (id) => expectStatus(await org.api('PATCH', `/checkouts/${id}`, { customer_email: 'x@example.com' }), 200));
    } finally {
      t.server.clock.now = null;
    }
    // Another organization's checkout of the same email is never listed.
    expectStatus(await other.api('POST', '/checkouts/', { products: [(await product(other, undefined, 'Theirs')).id], customer_email: 'zed_100%@example.com' }), 201);
    const listed = async (query: string) => {
      const page = expectStatus(await org.api('GET', `/checkouts/?${query}`), 200);
      const ids = page.items.map((item: { id: string }) => item.id).filter((id: string) => [a, b, c].includes(id));
      return { ids, total: page.pagination.total_count as number };
    };
    expect((await listed(`product_id=${second.id}&limit=100`)).ids).toEqual([b]);
    expect(await listed(`customer_id=${customer.id}`)).toEqual({ ids: [b], total: 1 });
    // The email filter matches a part, in any case, and takes % and _ as themselves.
    expect(await listed(`query=${encodeURIComponent('ZED_100%')}`)).toEqual({ ids: [a], total: 1 });
    expect(await listed(`query=zed_100&sorting=created_at`)).toEqual({ ids: [a, c], total: 2 });
    expect((await listed(`query=zed_100`)).ids).toEqual([c, a]);
    expect((await listed(`query=zed_100&sorting=-expires_at`)).ids).toEqual([c, a]);
    expect((await listed(`query=zed_100&sorting=expires_at`)).ids).toEqual([a, c]);
    expect((await listed(`status=open&product_id=${first.id}&limit=100`)).ids.sort()).toEqual([a, c].sort());
    expect((await listed(`status=expired&product_id=${first.id}`)).ids).toEqual([]);
    expectStatus(await org.api('POST', `/checkouts/client/${(await org.api('GET', `/checkouts/${b}`)).body.client_secret}/confirm`, visa()), 200);
    expect((await listed(`status=confirmed&status=succeeded&product_id=${second.id}`)).ids).toEqual([b]);
    expect((await listed(`product_id=${first.id}&product_id=${second.id}&sorting=-status&limit=100`)).ids[0]).toBe(b);
    expect((await listed(`product_id=${first.id}&product_id=${second.id}&sorting=status&limit=100`)).ids.at(-1)).toBe(b);
  });
});

describe('concurrent confirms of one checkout', () => {
  it('lets exactly one of five parallel confirms through; the other four get 403 NotOpenCheckout', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const c = await checkout(org, (await product(org)).id);
    const responses = await Promise.all(Array.from({ length: 5 }, () => org.publicApi('POST', confirmPath(c.client_secret), visa('racer@example.com'))));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses, outcomes(responses)).toEqual([200, 403, 403, 403, 403]);
    for (const refused of responses.filter((r) => r.status === 403)) expectTypedError(refused, 403, 'NotOpenCheckout');
    expect(responses.find((r) => r.status === 200)!.body).toMatchObject({ id: c.id, status: 'confirmed' });

    const orders = await ordersOf(org, c.id);
    expect(orders).toHaveLength(1);
    const { payments, jobs } = await paymentsAndJobsOf(c.id);
    expect(payments).toHaveLength(1);
    expect(jobs).toHaveLength(1);
    const events = await eventsOf(t.server, org.organizationId, 'sandbox');
    expect(events.filter((e) => e.type === 'order.created').map((e) => e.resourceId)).toEqual([orders[0].id]);
    expect(events.filter((e) => e.type === 'customer.created')).toHaveLength(1);

    await eventually(() => statusOf(org, c.id), (status) => status === 'succeeded', 'the checkout to succeed');
    expect((await eventsOf(t.server, org.organizationId, 'sandbox')).map((e) => e.type)).toEqual([
      'checkout.created',
      'customer.created',
      'order.created',
      'checkout.updated',
      'order.updated',
      'order.paid',
      'checkout.updated',
    ]);
  });

  it('creates one customer when parallel confirms give different emails', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const c = await checkout(org, (await product(org)).id);
    const responses = await Promise.all(Array.from({ length: 5 }, (_, i) => org.publicApi('POST', confirmPath(c.client_secret), visa(`racer${i}@example.com`))));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 403, 403, 403, 403]);
    const winner = responses.find((r) => r.status === 200)!.body;
    const customers = expectStatus(await org.api('GET', '/customers/'), 200).items;
    expect(customers.map((customer: { email: string }) => customer.email)).toEqual([winner.customer_email]);
    expect(await ordersOf(org, c.id)).toHaveLength(1);
  });

  it('lets exactly one through for each of several checkouts confirmed in parallel', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const productId = (await product(org)).id;
    const checkouts = await Promise.all([1, 2, 3].map(() => checkout(org, productId)));
    const responses = await Promise.all(
      checkouts.flatMap((c, i) => Array.from({ length: 5 }, () => org.publicApi('POST', confirmPath(c.client_secret), visa(`many${i}@example.com`)))),
    );
    for (const [i, c] of checkouts.entries()) {
      const mine = responses.slice(i * 5, i * 5 + 5);
      expect(mine.map((r) => r.status).sort()).toEqual([200, 403, 403, 403, 403]);
      expect(await ordersOf(org, c.id)).toHaveLength(1);
      expect((await paymentsAndJobsOf(c.id)).jobs).toHaveLength(1);
    }
    expect((await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.type === 'order.created')).toHaveLength(3);
  });
});

describe('concurrent confirms of different checkouts by one buyer', () => {
  it('confirms every checkout of an email the organization set and attaches them all to its customer', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const productId = (await product(org)).id;
    expectStatus(await org.api('POST', '/customers/', { email: 'same.buyer@example.com' }), 201);
    const checkouts = await Promise.all([1, 2, 3, 4].map(() => checkout(org, productId)));
    const responses = await Promise.all(checkouts.map((c) => org.publicApi('POST', confirmPath(c.client_secret), visa('same.buyer@example.com'))));
    expect(responses.map((r) => r.status), outcomes(responses)).toEqual([200, 200, 200, 200]);
    const customers = expectStatus(await org.api('GET', '/customers/'), 200).items;
    expect(customers.map((customer: { email: string }) => customer.email)).toEqual(['same.buyer@example.com']);
    for (const c of checkouts) {
      const orders = await eventually(() => ordersOf(org, c.id), (list) => list.length === 1 && list[0].paid, 'the order to be paid');
      expect(orders[0]).toMatchObject({ customer_id: customers[0].id });
    }
    expect((await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.type === 'customer.created').map((e) => e.resourceId)).toEqual([customers[0].id]);
  });

  it('confirms every checkout of the same external customer id, the id going to exactly one new customer', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const productId = (await product(org)).id;
    const checkouts = await Promise.all([1, 2, 3, 4].map(() => checkout(org, productId, { external_customer_id: 'crm-race' })));
    const responses = await Promise.all(checkouts.map((c, i) => org.publicApi('POST', confirmPath(c.client_secret), visa(`crm-race-${i}@example.com`))));
    expect(responses.map((r) => r.status), outcomes(responses)).toEqual([200, 200, 200, 200]);
    for (const c of checkouts) expect(await ordersOf(org, c.id)).toHaveLength(1);
    const customers = expectStatus(await org.api('GET', '/customers/?limit=100'), 200).items as { external_id: string | null }[];
    expect(customers.filter((customer) => customer.external_id === 'crm-race')).toHaveLength(1);
  });
});

describe('an Idempotency-Key on confirm', () => {
  it('replays the first 200 body for the same key and creates a single order', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const c = await checkout(org, (await product(org)).id);
    const key = `confirm-${c.id}`;
    const first = await org.publicApi('POST', confirmPath(c.client_secret), visa('idem@example.com'), { 'idempotency-key': key });
    expectStatus(first, 200);
    const second = await org.publicApi('POST', confirmPath(c.client_secret), visa('idem@example.com'), { 'idempotency-key': key });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await ordersOf(org, c.id)).toHaveLength(1);
    expect((await paymentsAndJobsOf(c.id)).jobs).toHaveLength(1);
    expect((await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.type === 'order.created')).toHaveLength(1);
  });

  it('answers a new key on a confirmed checkout with 403 NotOpenCheckout', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const c = await checkout(org, (await product(org)).id);
    expectStatus(await org.publicApi('POST', confirmPath(c.client_secret), visa(), { 'idempotency-key': `a-${c.id}` }), 200);
    expectTypedError(await org.publicApi('POST', confirmPath(c.client_secret), visa(), { 'idempotency-key': `b-${c.id}` }), 403, 'NotOpenCheckout');
    expect(await ordersOf(org, c.id)).toHaveLength(1);
  });
});

describe('the same refusals over GraphQL', () => {
  const CREATE = `mutation ($input: CheckoutCreateInput!) { core { checkoutCreate(input: $input) { id clientSecret status } } }`;
  const UPDATE = `mutation ($id: UUID!, $input: CheckoutUpdateInput!) { core { checkoutUpdate(id: $id, input: $input) { id status } } }`;
  const CLIENT_GET = `query ($s: String!) { checkoutClient(clientSecret: $s) { id status } }`;
  const CLIENT_UPDATE = `mutation ($s: String!, $input: CheckoutUpdatePublicInput!) { checkoutClientUpdate(clientSecret: $s, input: $input) { id status } }`;
  const CONFIRM = `mutation ($s: String!, $input: CheckoutConfirmInput!) { checkoutClientConfirm(clientSecret: $s, input: $input) { id status customerSessionToken } }`;

  let org: Org;
  let productId: string;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    productId = (await product(org)).id;
  });

  const failure = async (response: Promise<GqlResponse>, code: string) => expectGraphQLError(await response, code);
  async function create(input: Record<string, unknown>) {
    const { body } = await org.gql(CREATE, { input });
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    return body.data.core.checkoutCreate as { id: string; clientSecret: string };
  }
  const issueLocs = (error: { extensions: { issues: { loc: unknown }[] } }) => error.extensions.issues.map((i) => i.loc);

  it('answers a confirm without customerEmail with BAD_USER_INPUT at input.customerEmail', async () => {
    const c = await create({ products: [productId] });
    const error = await failure(org.publicGql(CONFIRM, { s: c.clientSecret, input: { confirmationTokenId: 'tok_visa' } }), 'BAD_USER_INPUT');
    expect(issueLocs(error)).toEqual([['input', 'customerEmail']]);
  });

  it('answers a confirm without a card with BAD_USER_INPUT at input.confirmationTokenId', async () => {
    const c = await create({ products: [productId] });
    const error = await failure(org.publicGql(CONFIRM, { s: c.clientSecret, input: { customerEmail: 'g@example.com' } }), 'BAD_USER_INPUT');
    expect(issueLocs(error)).toEqual([['input', 'confirmationTokenId']]);
  });

  it('answers an unknown card token with BAD_USER_INPUT at input.confirmationTokenId', async () => {
    const c = await create({ products: [productId] });
    const error = await failure(
      org.publicGql(CONFIRM, { s: c.clientSecret, input: { customerEmail: 'g@example.com', confirmationTokenId: 'tok_nope' } }),
      'BAD_USER_INPUT',
    );
    expect(issueLocs(error)).toEqual([['input', 'confirmationTokenId']]);
  });

  it('answers an archived or foreign product with BAD_USER_INPUT at its position in input.products', async () => {
    const archived = await product(org, undefined, 'GQL retired');
    expectStatus(await org.api('PATCH', `/products/${archived.id}`, { is_archived: true }), 200);
    const stranger = await newOrganization(t.server, 'sandbox');
    const foreign = await product(stranger, undefined, 'GQL foreign');
    expect(issueLocs(await failure(org.gql(CREATE, { input: { products: [archived.id] } }), 'BAD_USER_INPUT'))).toEqual([['input', 'products', 0]]);
    expect(issueLocs(await failure(org.gql(CREATE, { input: { products: [productId, foreign.id] } }), 'BAD_USER_INPUT'))).toEqual([['input', 'products', 1]]);
  });

  it('answers an unknown client secret with RESOURCE_NOT_FOUND', async () => {
    await failure(org.publicGql(CLIENT_GET, { s: 'service_c_unknown' }), 'RESOURCE_NOT_FOUND');
    await failure(org.publicGql(CONFIRM, { s: 'service_c_unknown', input: { customerEmail: 'g@example.com', confirmationTokenId: 'tok_visa' } }), 'RESOURCE_NOT_FOUND');
  });

  it('answers a second confirm and an update of a confirmed checkout with NOT_OPEN_CHECKOUT', async () => {
    const c = await create({ products: [productId] });
    const { body } = await org.publicGql(CONFIRM, { s: c.clientSecret, input: { customerEmail: 'g1@example.com', confirmationTokenId: 'tok_visa' } });
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    expect(body.data.checkoutClientConfirm).toMatchObject({ id: c.id, status: 'confirmed', customerSessionToken: expect.any(String) });
    await failure(org.publicGql(CONFIRM, { s: c.clientSecret, input: { customerEmail: 'g2@example.com', confirmationTokenId: 'tok_visa' } }), 'NOT_OPEN_CHECKOUT');
    await failure(org.publicGql(CLIENT_UPDATE, { s: c.clientSecret, input: { customerName: 'Late' } }), 'NOT_OPEN_CHECKOUT');
    await failure(org.gql(UPDATE, { id: c.id, input: { metadata: { late: true } } }), 'NOT_OPEN_CHECKOUT');
    expect(await ordersOf(org, c.id)).toHaveLength(1);
  });

  it('answers the buyer reading, updating or confirming an expired checkout with EXPIRED_CHECKOUT', async () => {
    const c = await create({ products: [productId] });
    t.server.clock.now = new Date(Date.now() + 2 * 3600_000);
    try {
      await failure(org.publicGql(CLIENT_GET, { s: c.clientSecret }), 'EXPIRED_CHECKOUT');
      await failure(org.publicGql(CLIENT_UPDATE, { s: c.clientSecret, input: { customerName: 'Late' } }), 'EXPIRED_CHECKOUT');
      await failure(org.publicGql(CONFIRM, { s: c.clientSecret, input: { customerEmail: 'late@example.com', confirmationTokenId: 'tok_visa' } }), 'EXPIRED_CHECKOUT');
      await eventually(() => statusOf(org, c.id), (status) => status === 'expired', 'the sweep to expire the checkout');
      await failure(org.gql(UPDATE, { id: c.id, input: { metadata: { late: true } } }), 'NOT_OPEN_CHECKOUT');
    } finally {
      t.server.clock.now = null;
    }
    expect(await ordersOf(org, c.id)).toEqual([]);
  });
});
