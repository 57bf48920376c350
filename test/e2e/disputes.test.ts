// Disputes end to end, in sandbox: a chargeback the payment processor reports is recorded on its
// order, kept at the processor's latest word however its reports arrive (twice, or `closed`
// before `created`), told once as dispute.created and once as dispute.closed, and read through
// GraphQL and REST by the organization alone. The processor's webhook is not part of Kassa yet, so
// the tests apply its reports as it will: `applyDispute` in a transaction, as Kassa itself for the
// order's organization.
import { randomUUID } from 'node:crypto';
import type { Order } from '@polar-sh/sdk/models/components/order.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/context.ts';
import type { Db } from '../../src/db/client.ts';
import { applyDispute, type ProcessorDispute } from '../../src/modules/disputes/service.ts';
import { eventsOf, tokenWithScopes } from '../helpers/organizations.ts';
import { buy, fixedProduct } from '../helpers/purchases.ts';
import { expectErrorBody, expectStatus, expectValidationError, graphqlData, graphqlFailure } from '../helpers/responses.ts';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { eventually, sleep } from '../helpers/waiting.ts';
import { datetime } from '../helpers/matchers.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0', JOB_POLL_INTERVAL_MS: '20' }, organizations: { org: 'sandbox', other: 'sandbox' } });

const sandbox = () => t.server.kassa.environments.sandbox.environment;

/** Applies a report of the processor as its webhook will: in one transaction, as Kassa for the organization. */
async function report(organizationId: string, dispute: ProcessorDispute) {
  const environment = sandbox();
  return environment.prisma.$transaction((tx) =>
    applyDispute(systemContext(environment, tx as Db, organizationId, () => new Date(), `test:${dispute.processorId}`), tx as Db, dispute),
  );
}

const opened = (orderId: string, processorId: string): ProcessorDispute => ({
  orderId,
  processorId,
  status: 'needs_response',
  reason: 'fraudulent',
  amount: 1999,
  currency: 'usd',
  closedAt: null,
});
const closedAt = new Date('2031-02-03T04:05:06.000Z');

/** The organization's events since `from`, as type and resource id. */
async function eventsSince(organizationId: string, from: number) {
  return (await eventsOf(t.server, organizationId, 'sandbox')).slice(from).map((e): [string, string | null] => [e.type, e.resourceId]);
}

const DISPUTE = `query ($id: UUID!) { core { dispute(id: $id) {
  __typename id createdAt modifiedAt status reason amount currency closedAt organizationId orderId order { id } } } }`;
const DISPUTES = `query ($orderId: [UUID!], $status: [DisputeStatus!], $first: Int, $after: String) { core {
  disputes(orderId: $orderId, status: $status, first: $first, after: $after) {
    items { id status } pagination { totalCount maxPage } edges { cursor node { id } } pageInfo { hasNextPage endCursor } totalCount } } }`;
const ORDER_DISPUTES = `query ($id: UUID!) { core { order(id: $id) { id disputes { id status } } } }`;

let receiver: Receiver;
let order: Order;
let reversedOrder: Order;
let eventsBefore: number;
beforeAll(async () => {
  receiver = await startReceiver('signature');
  const endpoint = expectStatus(
    await t.org.api('POST', '/webhooks/endpoints', { url: receiver.url, format: 'raw', events: ['dispute.created', 'dispute.closed'] }),
    201,
  );
  receiver.secret = endpoint.secret;
  const product = await fixedProduct(t.org, 'Contested ebook');
  order = await buy(t.org, product.id, 'disputed@example.com');
  reversedOrder = await buy(t.org, product.id, 'reversed@example.com');
  eventsBefore = (await eventsOf(t.server, t.org.organizationId, 'sandbox')).length;
});
afterAll(() => receiver?.close());

/** The dispute events the receiver got, as type and dispute id, once `count` arrived (and a moment for any extra one). */
async function delivered(count: number) {
  const receipts = await eventually(async () => receiver.receipts, (r) => r.length >= count, `${count} deliveries`);
  await sleep(200);
  expect(receipts.every((r) => r.refused === null)).toBe(true);
  return receipts.map((r) => [r.event.type, r.event.data.id]);
}

describe('a dispute reported in order, each report twice', () => {
  let disputeId: string;

  it('records the first report as a dispute on the order, needing a response, with order.updated and dispute.created', async () => {
    const first = await report(t.org.organizationId, opened(order.id, 'dp_in_order'));
    disputeId = first.id;
    expect(first).toMatchObject({ orderId: order.id, organizationId: t.org.organizationId, status: 'needs_response', closedAt: null });
    expect(await eventsSince(t.org.organizationId, eventsBefore)).toEqual([
      ['order.updated', order.id],
      ['dispute.created', disputeId],
    ]);
  });

  it('changes nothing and records nothing on the same report again', async () => {
    const count = (await eventsOf(t.server, t.org.organizationId, 'sandbox')).length;
    const again = await report(t.org.organizationId, opened(order.id, 'dp_in_order'));
    expect(again.id).toBe(disputeId);
    expect(await eventsSince(t.org.organizationId, count)).toEqual([]);
  });

  it('moves it to under_review with order.updated alone', async () => {
    const count = (await eventsOf(t.server, t.org.organizationId, 'sandbox')).length;
    const reviewed = await report(t.org.organizationId, { ...opened(order.id, 'dp_in_order'), status: 'under_review' });
    expect(reviewed.status).toBe('under_review');
    expect(await eventsSince(t.org.organizationId, count)).toEqual([['order.updated', order.id]]);
  });

  it('closes it as lost with order.updated and dispute.closed, once however often it is reported', async () => {
    const count = (await eventsOf(t.server, t.org.organizationId, 'sandbox')).length;
    const lost = { ...opened(order.id, 'dp_in_order'), status: 'lost' as const, closedAt };
    await report(t.org.organizationId, lost);
    await report(t.org.organizationId, lost);
    expect(await eventsSince(t.org.organizationId, count)).toEqual([
      ['order.updated', order.id],
      ['dispute.closed', disputeId],
    ]);
  });

  it('ignores a report behind the stored one: an open dispute reported late stays lost', async () => {
    const count = (await eventsOf(t.server, t.org.organizationId, 'sandbox')).length;
    const kept = await report(t.org.organizationId, { ...opened(order.id, 'dp_in_order'), status: 'under_review' });
    expect(kept).toMatchObject({ id: disputeId, status: 'lost', closedAt });
    expect(await eventsSince(t.org.organizationId, count)).toEqual([]);
  });

  it('keeps one row for the dispute', async () => {
    expect(await sandbox().prisma.dispute.count({ where: { processorId: 'dp_in_order' } })).toBe(1);
  });

  it('records its events with the dispute as GET /v1/disputes/{id} returned it then', async () => {
    const events = (await eventsOf(t.server, t.org.organizationId, 'sandbox')).filter((e) => e.resourceId === disputeId);
    const rest = expectStatus(await t.org.api('GET', `/disputes/${disputeId}`), 200);
    expect(events.map((e) => e.type)).toEqual(['dispute.created', 'dispute.closed']);
    expect(events[1].data).toEqual(rest);
    expect(events[0].data).toEqual({ ...rest, status: 'needs_response', closed_at: null, modified_at: expect.any(String) });
  });
});

describe('a dispute whose closing is reported before its opening', () => {
  let disputeId: string;

  it('records the closing as a dispute made closed: one row, won, with dispute.created and dispute.closed', async () => {
    const count = (await eventsOf(t.server, t.org.organizationId, 'sandbox')).length;
    const won = await report(t.org.organizationId, { ...opened(reversedOrder.id, 'dp_reversed'), status: 'won', closedAt });
    disputeId = won.id;
    expect(won).toMatchObject({ status: 'won', closedAt });
    expect(await eventsSince(t.org.organizationId, count)).toEqual([
      ['order.updated', reversedOrder.id],
      ['dispute.created', disputeId],
      ['dispute.closed', disputeId],
    ]);
  });

  it('then takes the late opening, and the closing again, as nothing new', async () => {
    const count = (await eventsOf(t.server, t.org.organizationId, 'sandbox')).length;
    await report(t.org.organizationId, opened(reversedOrder.id, 'dp_reversed'));
    await report(t.org.organizationId, { ...opened(reversedOrder.id, 'dp_reversed'), status: 'won', closedAt });
    expect(await eventsSince(t.org.organizationId, count)).toEqual([]);
    const stored = await sandbox().prisma.dispute.findMany({ where: { processorId: 'dp_reversed' } });
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ id: disputeId, status: 'won', closedAt });
  });
});

describe('webhooks', () => {
  it('delivers dispute.created and dispute.closed exactly once per dispute, with the dispute as data', async () => {
    const disputes = await sandbox().prisma.dispute.findMany({ where: { orderId: { in: [order.id, reversedOrder.id] } } });
    const inOrder = disputes.find((d) => d.orderId === order.id)!.id;
    const reversed = disputes.find((d) => d.orderId === reversedOrder.id)!.id;
    const got = await delivered(4);
    expect(got).toHaveLength(4);
    expect(got).toEqual(
      expect.arrayContaining([
        ['dispute.created', inOrder],
        ['dispute.closed', inOrder],
        ['dispute.created', reversed],
        ['dispute.closed', reversed],
      ]),
    );
    // Events of one resource reach an endpoint in the order they happened.
    expect(got.filter(([, id]) => id === reversed).map(([type]) => type)).toEqual(['dispute.created', 'dispute.closed']);
    const closed = receiver.receipts.find((r) => r.event.type === 'dispute.closed' && r.event.data.id === reversed)!;
    expect(closed.event.data).toEqual(expectStatus(await t.org.api('GET', `/disputes/${reversed}`), 200));
  });
});

describe('reading disputes', () => {
  let lost: string;
  let won: string;
  let secondOnOrder: string;
  beforeAll(async () => {
    const stored = await sandbox().prisma.dispute.findMany({ where: { orderId: { in: [order.id, reversedOrder.id] } } });
    lost = stored.find((d) => d.processorId === 'dp_in_order')!.id;
    won = stored.find((d) => d.processorId === 'dp_reversed')!.id;
    // A second dispute of the first order, reported later: the order lists it first.
    await sleep(5);
    secondOnOrder = (await report(t.org.organizationId, { ...opened(order.id, 'dp_second'), amount: 500, reason: 'duplicate' })).id;
  });

  it('GET /v1/disputes/{id}: the documented JSON, snake_case, without metadata', async () => {
    const body = expectStatus(await t.org.api('GET', `/disputes/${lost}`), 200);
    expect(body).toEqual({
      id: lost,
      created_at: datetime,
      modified_at: datetime,
      status: 'lost',
      reason: 'fraudulent',
      amount: 1999,
      currency: 'usd',
      order_id: order.id,
      closed_at: closedAt.toISOString(),
    });
  });

  it('GET /v1/disputes/: newest first, filtered by order_id and status, paged by page and limit', async () => {
    const all = expectStatus(await t.org.api('GET', '/disputes/'), 200);
    expect(all.items.map((d: { id: string }) => d.id)).toEqual([secondOnOrder, won, lost]);
    expect(all.pagination).toEqual({ total_count: 3, max_page: 1 });
    const ofOrder = expectStatus(await t.org.api('GET', `/disputes/?order_id=${order.id}`), 200);
    expect(ofOrder.items.map((d: { id: string }) => d.id)).toEqual([secondOnOrder, lost]);
    const open = expectStatus(await t.org.api('GET', '/disputes/?status=needs_response&status=under_review'), 200);
    expect(open.items.map((d: { id: string }) => d.id)).toEqual([secondOnOrder]);
    const page2 = expectStatus(await t.org.api('GET', '/disputes/?limit=2&page=2'), 200);
    expect(page2).toEqual({ items: [expect.objectContaining({ id: lost, order_id: order.id })], pagination: { total_count: 3, max_page: 2 } });
  });

  it('core.dispute, core.disputes and Order.disputes in GraphQL', async () => {
    const one = (await graphqlData(t.org.gql(DISPUTE, { id: won }))).core.dispute;
    expect(one).toEqual({
      __typename: 'Dispute',
      id: won,
      createdAt: expect.any(String),
      modifiedAt: expect.any(String),
      status: 'won',
      reason: 'fraudulent',
      amount: 1999,
      currency: 'usd',
      closedAt: closedAt.toISOString(),
      organizationId: t.org.organizationId,
      orderId: reversedOrder.id,
      order: { id: reversedOrder.id },
    });
    const list = (await graphqlData(t.org.gql(DISPUTES, { orderId: [order.id], first: 1 }))).core.disputes;
    expect(list).toMatchObject({ items: [{ id: secondOnOrder, status: 'needs_response' }], totalCount: 2, pageInfo: { hasNextPage: true } });
    const next = (await graphqlData(t.org.gql(DISPUTES, { orderId: [order.id], first: 1, after: list.pageInfo.endCursor }))).core.disputes;
    expect(next.items).toEqual([{ id: lost, status: 'lost' }]);
    const closed = (await graphqlData(t.org.gql(DISPUTES, { status: ['won', 'lost', 'warning_closed'] }))).core.disputes;
    expect(closed.items.map((d: { id: string }) => d.id)).toEqual([won, lost]);
    const ofOrder = (await graphqlData(t.org.gql(ORDER_DISPUTES, { id: order.id }))).core.order;
    expect(ofOrder.disputes).toEqual([
      { id: secondOnOrder, status: 'needs_response' },
      { id: lost, status: 'lost' },
    ]);
    const node = await graphqlData(t.org.gql(`query ($id: ID!) { node(id: $id) { __typename id ... on Dispute { status } } }`, { id: won }));
    expect(node.node).toEqual({ __typename: 'Dispute', id: won, status: 'won' });
  });

  it('reads them with orders:read alone; refuses a token without an orders scope with 403', async () => {
    const ordersOnly = await tokenWithScopes(t.server, t.org, ['orders:read']);
    expect(expectStatus(await restClient(t.server.base('sandbox'), ordersOnly)('GET', `/disputes/${lost}`), 200).id).toBe(lost);
    const productsOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['products:read']));
    expectErrorBody(await productsOnly('GET', `/disputes/${lost}`), 403, 'NotPermitted');
    expectErrorBody(await productsOnly('GET', '/disputes/'), 403, 'NotPermitted');
  });

  it("leaves Order.disputes null, with NOT_PERMITTED, to a token that reached the order through a refund", async () => {
    const refund = expectStatus(await t.org.api('POST', '/refunds/', { order_id: order.id, reason: 'other', amount: 1 }), 200);
    const refundsOnly = graphqlClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['refunds:read']));
    const response = await refundsOnly(`query ($id: UUID!) { core { refund(id: $id) { order { id disputes { id } } } } }`, { id: refund.id });
    expect(response.body.data.core.refund.order).toEqual({ id: order.id, disputes: null });
    expect(response.body.errors!.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(['NOT_PERMITTED']);
  });

  it("answers 404 for a dispute that does not exist and for another organization's, in the same words", async () => {
    for (const [org, id] of [
      [t.org, randomUUID()],
      [t.other, lost],
    ] as const) {
      const answer = await org.api('GET', `/disputes/${id}`);
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ error: 'ResourceNotFound', detail: 'Dispute not found.' });
      await graphqlFailure(org.gql(DISPUTE, { id }), 'RESOURCE_NOT_FOUND');
    }
    await graphqlFailure(t.other.gql(`query ($id: ID!) { node(id: $id) { id } }`, { id: lost }), 'RESOURCE_NOT_FOUND');
  });

  it("does not list another organization's disputes, even filtered by its order", async () => {
    expect(expectStatus(await t.other.api('GET', '/disputes/'), 200)).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    expect(expectStatus(await t.other.api('GET', `/disputes/?order_id=${order.id}`), 200).items).toEqual([]);
    expect((await graphqlData(t.other.gql(DISPUTES, { orderId: [order.id] }))).core.disputes.totalCount).toBe(0);
  });

  it('refuses a malformed id or order_id with 422 naming it', async () => {
    expectValidationError(await t.org.api('GET', '/disputes/not-a-uuid'), ['path', 'id']);
    expectValidationError(await t.org.api('GET', '/disputes/?order_id=not-a-uuid'), ['query', 'order_id', 0]);
    expectValidationError(await t.org.api('GET', '/disputes/?status=reversed'), ['query', 'status', 0]);
  });

  it("refuses the disputed order's customer on the Core API, and shows them none in the portal", async () => {
    const session = expectStatus(await t.org.api('POST', '/customer-sessions/', { customer_id: order.customerId }), 201);
    const customerApi = restClient(t.server.base('sandbox'), session.token);
    for (const path of [`/disputes/${lost}`, '/disputes/', `/disputes/?order_id=${order.id}`]) {
      expect([401, 403], path).toContain((await customerApi('GET', path)).status);
    }
    await graphqlFailure(graphqlClient(t.server.base('sandbox'), session.token)(DISPUTE, { id: lost }), 'NOT_PERMITTED');
    await graphqlFailure(graphqlClient(t.server.base('sandbox'), session.token)(`query ($id: ID!) { node(id: $id) { id } }`, { id: lost }), 'RESOURCE_NOT_FOUND');
    const portalOrder = expectStatus(await customerApi('GET', `/customer-portal/orders/${order.id}`), 200);
    expect(JSON.stringify(portalOrder)).not.toMatch(/dispute/i);
  });
});

describe('two reports of one dispute at once', () => {
  it('make one row, closed, and dispute.created and dispute.closed once each', async () => {
    const raced = await buy(t.org, (await fixedProduct(t.org, 'Raced ebook')).id, 'raced@example.com');
    const count = (await eventsOf(t.server, t.org.organizationId, 'sandbox')).length;
    await Promise.all([report(t.org.organizationId, opened(raced.id, 'dp_raced')), report(t.org.organizationId, { ...opened(raced.id, 'dp_raced'), status: 'lost', closedAt })]);
    const stored = await sandbox().prisma.dispute.findMany({ where: { processorId: 'dp_raced' } });
    expect(stored).toMatchObject([{ status: 'lost', closedAt }]);
    const types = (await eventsSince(t.org.organizationId, count)).map(([type]) => type);
    expect(types.filter((type) => type.startsWith('dispute.')).sort()).toEqual(['dispute.closed', 'dispute.created']);
  });
});

describe('a report for an order the organization does not have', () => {
  it('is refused and records nothing', async () => {
    const count = (await eventsOf(t.server, t.other.organizationId, 'sandbox')).length;
    await expect(report(t.other.organizationId, opened(order.id, 'dp_foreign'))).rejects.toThrow('Order not found.');
    expect(await sandbox().prisma.dispute.count({ where: { processorId: 'dp_foreign' } })).toBe(0);
    expect(await eventsOf(t.server, t.other.organizationId, 'sandbox')).toHaveLength(count);
  });
});
