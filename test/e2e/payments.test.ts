// The organization's payments (GET /v1/payments/, GET /v1/payments/{id}) through the official
// client: one row per attempt to charge an order, filtered and sorted as the client sends, read
// with payments:read only, and never another organization's.
import { randomUUID } from 'node:crypto';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import type { Order } from '@polar-sh/sdk/models/components/order.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes } from '../helpers/organizations.ts';
import { buy, declinedOrder, fixedProduct } from '../helpers/purchases.ts';
import { expectErrorBody, expectValidationError, graphqlData } from '../helpers/responses.ts';
import { restClient } from '../helpers/server.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox', other: 'sandbox' } });

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
