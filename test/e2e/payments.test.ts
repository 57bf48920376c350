// The organization's payments (GET /v1/payments/, GET /v1/payments/{id}) through the official
// client: one row per attempt to charge an order, filtered and sorted as the client sends, read
// with payments:read only, and never another organization's.
import { randomUUID } from 'node:crypto';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import type { Order } from '@polar-sh/sdk/models/components/order.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { buy, createAndConfirmCheckout, declinedOrder, fixedProduct, paidOrderOf } from '../helpers/purchases.ts';
import { expectErrorBody, expectValidationError, graphqlData } from '../helpers/responses.ts';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { eventually, rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox', other: 'sandbox', shop: 'sandbox' } });

describe('payments', () => {
  let paid: Order;
  let declined: Order;

  beforeAll(async () => {
    const book = await fixedProduct(t.org, 'Book', 1999);
    const course = await fixedProduct(t.org, 'Course', 4900);
    paid = await buy(t.org, book.id, 'ada@example.com', 'Ada');
    declined = await declinedOrder(t.org, course.id, 'Bob@Example.com', 'Bob');
    await buy(t.other, (await fixedProduct(t.other, 'Theirs', 500)).id, 'eve@example.com');
  });

  it('lists every attempt as the client library’s Payment, newest first', async () => {
    const page = await t.org.polar.payments.list({});
    expect(page.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    const [failed, succeeded] = page.result.items;
    expect(succeeded).toEqual({
      createdAt: expect.any(Date),
      modifiedAt: expect.any(Date),
      id: expect.any(String),
      processor: 'stripe',
      status: 'succeeded',
      amount: 1999,
      currency: 'usd',
      method: 'card',
      declineReason: null,
      declineMessage: null,
      organizationId: t.org.organizationId,
      checkoutId: paid.checkoutId,
      orderId: paid.id,
      processorMetadata: {},
    });
    expect(failed).toMatchObject({ status: 'failed', amount: 4900, orderId: declined.id, declineReason: 'card_declined', declineMessage: 'The card was declined.' });
    expect(await t.org.polar.payments.get({ id: succeeded.id })).toEqual(succeeded);
  });

  it('logs a declined charge once, with its payment and reason, and a paid one not at all', async () => {
    const [failed, succeeded] = (await t.org.polar.payments.list({})).result.items;
    const ours = new Set([failed.id, succeeded.id]);
    const declines = t.server.logs
      .map((line) => JSON.parse(line) as { msg?: string; paymentId?: string; declineReason?: string })
      .filter((line) => line.msg === 'payment declined' && ours.has(line.paymentId!))
      .map(({ paymentId, declineReason }) => ({ paymentId, declineReason }));
    expect(declines).toEqual([{ paymentId: failed.id, declineReason: 'card_declined' }]);
  });

  it('filters by status, order, checkout, method and customer email, and sorts', async () => {
    const ids = async (request: Parameters<typeof t.org.polar.payments.list>[0]) => (await t.org.polar.payments.list(request)).result.items.map((p) => p.orderId);
    expect(await ids({ status: 'failed' })).toEqual([declined.id]);
    expect(await ids({ status: ['failed', 'succeeded'] })).toHaveLength(2);
    expect(await ids({ orderId: paid.id })).toEqual([paid.id]);
    expect(await ids({ checkoutId: declined.checkoutId! })).toEqual([declined.id]);
    expect(await ids({ method: 'card' })).toHaveLength(2);
    expect(await ids({ method: 'none' })).toEqual([]);
    expect(await ids({ customerEmail: 'bob@example.com' })).toEqual([declined.id]);
    expect(await ids({ sorting: ['amount'] })).toEqual([paid.id, declined.id]);
    expect(await ids({ sorting: ['-amount'] })).toEqual([declined.id, paid.id]);
    expect(await ids({ organizationId: t.other.organizationId })).toEqual([]);
  });

  it('never shows another organization’s payment: 404 by id, absent from the list', async () => {
    const theirs = (await t.other.polar.payments.list({})).result.items[0];
    expect(theirs.organizationId).toBe(t.other.organizationId);
    const error = await rejectionOf(t.org.polar.payments.get({ id: theirs.id }));
    expect(error).toBeInstanceOf(ResourceNotFound);
    expect((await t.org.polar.payments.list({})).result.items.map((p) => p.id)).not.toContain(theirs.id);
    expect(await rejectionOf(t.org.polar.payments.get({ id: randomUUID() }))).toBeInstanceOf(ResourceNotFound);
  });

  it('needs a token with payments:read', async () => {
    const anonymous = restClient(t.server.base('sandbox'));
    expectErrorBody(await anonymous('GET', '/payments/'), 401, 'Unauthorized');
    const ordersOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['orders:read']));
    expectErrorBody(await ordersOnly('GET', '/payments/'), 403, 'NotPermitted');
    expectErrorBody(await ordersOnly('GET', `/payments/${randomUUID()}`), 403, 'NotPermitted');
    const paymentsOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['payments:read']));
    expect((await paymentsOnly('GET', '/payments/')).body.pagination.total_count).toBe(2);
  });

  it('answers malformed ids and filters with a 422 naming the parameter', async () => {
    expectValidationError(await t.org.api('GET', '/payments/not-a-uuid'), ['path', 'id']);
    expectValidationError(await t.org.api('GET', '/payments/?status=refunded'), ['query', 'status', 0]);
    expectValidationError(await t.org.api('GET', '/payments/?order_id=nope'), ['query', 'order_id', 0]);
    expectValidationError(await t.org.api('GET', '/payments/?sorting=customer'), ['query', 'sorting', 0]);
    expectValidationError(await t.org.api('GET', '/payments/?limit=0'), ['query', 'limit']);
  });

  it('is on the Core GraphQL API: payments, payment(id), an order’s payments and node(id)', async () => {
    const data = await graphqlData(
      t.org.gql(`query ($id: UUID!) { core { payments(status: [failed]) { totalCount items { id status declineReason order { id } } } order(id: $id) { payments { status } } } }`, { id: declined.id }),
    );
    expect(data.core.payments.totalCount).toBe(1);
    const [payment] = data.core.payments.items;
    expect(payment).toMatchObject({ status: 'failed', declineReason: 'card_declined', order: { id: declined.id } });
    expect(data.core.order.payments).toEqual([{ status: 'failed' }]);
    const node = await graphqlData(t.org.gql(`query ($id: ID!) { node(id: $id) { ... on Payment { id amount } } }`, { id: payment.id }));
    expect(node.node).toEqual({ id: payment.id, amount: 4900 });
  });
});

/** The order of a free product, confirmed by its buyer without a payment method. */
async function freeOrder(org: Org, customerEmail: string) {
  const free = await org.polar.products.create({ name: 'Free sample', recurringInterval: null, prices: [{ amountType: 'free' }] });
  const checkout = await org.polar.checkouts.create({ products: [free.id] });
  await org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail } });
  return paidOrderOf(org, checkout.id);
}

describe('payments of every kind of method and status, filtered and sorted', () => {
  // One payment per method, made one after the other: A free (none), then cards B to E.
  const orderIds: Record<'A' | 'B' | 'C' | 'D' | 'E', string> = { A: '', B: '', C: '', D: '', E: '' };
  const failedOrderOf = async (productId: string, email: string, card: string) => {
    const checkout = await createAndConfirmCheckout(t.shop, productId, email, { card });
    await eventually(
      async () => (await t.shop.polar.payments.list({ checkoutId: checkout.id })).result.items,
      (items) => items.length === 1 && items[0].status === 'failed',
      'the payment to fail',
    );
    return (await t.shop.polar.orders.list({ checkoutId: checkout.id })).result.items[0].id;
  };

  beforeAll(async () => {
    orderIds.A = (await freeOrder(t.shop, 'free@example.com')).id;
    orderIds.B = (await buy(t.shop, (await fixedProduct(t.shop, 'Product B', 1000)).id, 'b@example.com')).id;
    orderIds.C = await failedOrderOf((await fixedProduct(t.shop, 'Product C', 2000)).id, 'c@example.com', 'tok_chargeDeclined');
    orderIds.D = await failedOrderOf((await fixedProduct(t.shop, 'Product D', 3000)).id, 'd@example.com', 'tok_delayedFailure');
    const e = await createAndConfirmCheckout(t.shop, (await fixedProduct(t.shop, 'Product E', 4000)).id, 'e@example.com', { card: 'tok_refundFail' });
    orderIds.E = (await paidOrderOf(t.shop, e.id)).id;
  });

  const names = (items: { orderId: string | null }[]) => items.map((p) => Object.entries(orderIds).find(([, id]) => id === p.orderId)![0]).join('');
  const list = async (request: Parameters<typeof t.shop.polar.payments.list>[0]) => (await t.shop.polar.payments.list(request)).result.items;

  it("reads a free order's payment as method none and a card's as card", async () => {
    const items = await list({ sorting: ['created_at'] });
    expect(items.map((p) => [p.method, p.status, p.amount])).toEqual([
      ['none', 'succeeded', 0],
      ['card', 'succeeded', 1000],
      ['card', 'failed', 2000],
      ['card', 'failed', 3000],
      ['card', 'succeeded', 4000],
    ]);
  });

  it('filters by the kind of method: card, none, or both', async () => {
    expect(names(await list({ method: 'card', sorting: ['created_at'] }))).toBe('BCDE');
    expect(names(await list({ method: 'none', sorting: ['created_at'] }))).toBe('A');
    expect(names(await list({ method: ['card', 'none'], sorting: ['created_at'] }))).toBe('ABCDE');
    const data = await graphqlData(t.shop.gql('query { core { none: payments(method: ["none"]) { totalCount items { method amount } } card: payments(method: ["card"]) { totalCount } } }'));
    expect(data.core).toEqual({ none: { totalCount: 1, items: [{ method: 'none', amount: 0 }] }, card: { totalCount: 4 } });
  });

  it('sorts newest first by default, and by creation time, status and method either way', async () => {
    expect(names(await list({}))).toBe('EDCBA');
    expect(names(await list({ sorting: ['-created_at'] }))).toBe('EDCBA');
    expect(names(await list({ sorting: ['created_at'] }))).toBe('ABCDE');
    // Methods as stored: none, tok_chargeDeclined, tok_delayedFailure, tok_refundFail, tok_visa.
    expect(names(await list({ sorting: ['method'] }))).toBe('ACDEB');
    expect(names(await list({ sorting: ['-method'] }))).toBe('BEDCA');
    // Statuses in their order (pending, succeeded, failed), then the creation time.
    expect(names(await list({ sorting: ['status', 'created_at'] }))).toBe('ABECD');
    expect(names(await list({ sorting: ['-status', '-created_at'] }))).toBe('DCEBA');
    const data = await graphqlData(t.shop.gql('query { core { payments(sorting: [method_desc]) { items { orderId } } } }'));
    expect(names(data.core.payments.items)).toBe('BEDCA');
  });

  it('answers an unknown payment with "Payment not found."', async () => {
    const missing = await t.shop.api('GET', `/payments/${randomUUID()}`);
    expect([missing.status, missing.body]).toEqual([404, { error: 'ResourceNotFound', detail: 'Payment not found.' }]);
  });
});

describe('an environment without a payment processor', () => {
  const bare = useTestServer({ env: { PRODUCTION_PAYMENT_PROCESSOR: 'none' } });

  it("records a free order's payment as made through no processor, and refuses to charge any order again", async () => {
    const org = await newOrganization(bare.server, 'production');
    const order = await freeOrder(org, 'free@example.com');
    const stored = await bare.server.kassa.environments.production.environment.prisma.payment.findMany({ where: { orderId: order.id } });
    expect(stored.map((p) => [p.processor, p.paymentMethod, p.status, p.amount])).toEqual([['none', 'none', 'succeeded', 0]]);

    const { token } = await org.polar.customerSessions.create({ customerId: order.customerId });
    const customer = restClient(bare.server.base('production'), token);
    const refused = await customer('POST', `/customer-portal/orders/${order.id}/confirm-payment`, { confirmation_token_id: 'tok_visa' });
    expect([refused.status, refused.body]).toEqual([422, { error: 'OrderNotEligibleForRetry', detail: 'No payment processor is configured for this environment.' }]);
  });

  it('lists no saved card, refuses to save one, and finds none to remove or make the default', async () => {
    const org = await newOrganization(bare.server, 'production');
    const buyer = await org.polar.customers.create({ email: 'nocards@example.com' });
    const { token } = await org.polar.customerSessions.create({ customerId: buyer.id });
    const customer = restClient(bare.server.base('production'), token);
    const cards = '/customer-portal/customers/me/payment-methods';
    const listed = await customer('GET', cards);
    expect([listed.status, listed.body]).toEqual([200, { items: [], pagination: { total_count: 0, max_page: 0 } }]);
    const saved = await customer('POST', cards, { confirmation_token_id: 'ctoken_x', set_default: true, return_url: 'https://shop.example.com/cards' });
    expect([saved.status, saved.body]).toEqual([
      400,
      {
        error: 'PaymentError',
        detail: "This environment's payment processor (none) keeps no saved payment methods: a card is given at each checkout. Saved methods need Stripe (see docs/stripe.md).",
      },
    ]);
    const removed = await customer('DELETE', `${cards}/pm_card_visa`);
    expect([removed.status, removed.body]).toEqual([404, { error: 'ResourceNotFound', detail: 'Payment method not found.' }]);
    const chosen = await graphqlClient(bare.server.base('production'), token)(`mutation { customerPortal { customerDefaultPaymentMethodUpdate(id: "pm_card_visa") { id } } }`);
    expect(chosen.body.errors?.[0]?.extensions?.code).toBe('RESOURCE_NOT_FOUND');
  });
});
