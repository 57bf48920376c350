// Refunds end to end, in sandbox: money returned on a paid order, in parts or whole, never more
// than the order's net amount, even when refunds race each other. Through the official client
// (@polar-sh/sdk), whose schemas parse every response, through REST, and through GraphQL. Orders
// are bought through a checkout with a test card and polled for until paid; a refund is created
// pending and the refund job then settles it, so its outcome is polled for too.
import { randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { RefundAmountTooHigh } from '@polar-sh/sdk/models/errors/refundamounttoohigh.js';
import { RefundedAlready } from '@polar-sh/sdk/models/errors/refundedalready.js';
import { ResponseValidationError } from '@polar-sh/sdk/models/errors/responsevalidationerror.js';
import type { Order } from '@polar-sh/sdk/models/components/order.js';
import type { Refund } from '@polar-sh/sdk/models/components/refund.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventsOf, newOrganization, type Org } from '../helpers/organizations.ts';
import { buy, createAndConfirmCheckout, declinedOrder, fixedProduct, ordersOfCheckout, paidOrderOf } from '../helpers/purchases.ts';
import { expectStatus, graphqlData, graphqlFailure } from '../helpers/responses.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { requestScope } from '../../src/logger.ts';
import { eventually, rejectionOf, sleep } from '../helpers/waiting.ts';
import { enqueueJob } from '../../src/jobs/runner.ts';
import type { RefundRequest } from '../../src/modules/payments/processor.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '300' } });
beforeAll(async () => {
  // The tests tell which transaction wrote an event by its row's xmin; dispatching an event to
  // webhooks updates the row, so the webhook workers are kept out of this file.
  await Promise.all(Object.values(t.server.kassa.environments).map((served) => served.webhooks.stop()));
});

const sandbox = () => t.server.kassa.environments.sandbox;
const prisma = () => sandbox().environment.prisma;

/** The organization's events with the id of the transaction that wrote each (PostgreSQL's xmin). */
async function eventTransactions(organizationId: string) {
  return prisma().$queryRaw<{ sequence: string; type: string; xmin: string }[]>`
    SELECT sequence::text AS sequence, type, xmin::text AS xmin FROM events WHERE organization_id = ${organizationId}::uuid ORDER BY events.sequence`;
}

/** What an order's refunds look like in the database. */
async function storedRefunds(orderId: string) {
  return prisma().refund.findMany({ where: { orderId }, orderBy: { createdAt: 'asc' } });
}

/** Waits until every refund of the order has succeeded, through the SDK list. */
async function refundsSettled(org: Org, orderId: string, count: number): Promise<Refund[]> {
  const page = await eventually(
    () => org.polar.refunds.list({ orderId, limit: 100 }),
    (p) => p.result.items.length === count && p.result.items.every((r) => r.status === 'succeeded'),
    'the refunds to succeed',
  );
  return page.result.items;
}

/**
 * Runs `call` with the clock of requests set to `at`, while the job runner (outside any request)
 * keeps the real time: a refund created this way has its job due at `at`, so it stays pending.
 */
async function withRequestClockAt<T>(at: Date, call: () => Promise<T>): Promise<T> {
  Object.defineProperty(t.server.clock, 'now', { configurable: true, enumerable: true, get: () => (requestScope.getStore() ? at : null), set: () => {} });
  try {
    return await call();
  } finally {
    Object.defineProperty(t.server.clock, 'now', { configurable: true, enumerable: true, writable: true, value: null });
  }
}

/** A refund body over REST. */
const refundBody = (orderId: string, amount: number, reason = 'customer_request') => ({ order_id: orderId, reason, amount });

/** The refund as GET /v1/refunds/{id} returns it, without the fields the refund job moves on. */
function stable(refund: Record<string, unknown>) {
  const { status: _status, modified_at: _modifiedAt, ...rest } = refund;
  return rest;
}

// ---------------------------------------------------------------------------------------------
// The official client and REST
// ---------------------------------------------------------------------------------------------

describe('refunds through the official SDK and REST in sandbox', () => {
  describe('refunding an order of 1999 in two parts', () => {
    let org: Org;
    let order: Order;
    let eventsBefore: number;
    let first: Refund;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Refundable ebook');
      order = await buy(org, product.id, 'two-parts@example.com');
      eventsBefore = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
    });

    it('refunds 500 of the order: 200 with the refund, pending, and the order partially refunded by 500', async () => {
      const created = await org.polar.refunds.create({ orderId: order.id, reason: 'customer_request', amount: 500, metadata: { ticket: 'T-1' } });
      expect(created).toBeDefined();
      first = created!;
      expect(first).toMatchObject({
        id: uuid,
        status: 'pending',
        reason: 'customer_request',
        amount: 500,
        taxAmount: 0,
        currency: 'usd',
        organizationId: org.organizationId,
        orderId: order.id,
        customerId: order.customerId,
        subscriptionId: null,
        revokeBenefits: false,
        metadata: { ticket: 'T-1' },
      });
      expect(first.createdAt).toBeInstanceOf(Date);
      const seen = await org.polar.orders.get({ id: order.id });
      expect(seen).toMatchObject({ status: 'partially_refunded', paid: true, refundedAmount: 500, refundedTaxAmount: 0, netAmount: 1999 });
    });

    it('then settles the refund: it becomes succeeded', async () => {
      const [settled] = await refundsSettled(org, order.id, 1);
      expect(settled).toMatchObject({ id: first.id, status: 'succeeded', amount: 500 });
      const rest = expectStatus(await org.api('GET', `/refunds/${first.id}`), 200);
      expect(rest).toMatchObject({ id: first.id, status: 'succeeded', amount: 500, order_id: order.id });
      // Settling a refund changes nothing more on the order.
      expect(await org.polar.orders.get({ id: order.id })).toMatchObject({ status: 'partially_refunded', refundedAmount: 500 });
    });

    it('records order.updated, order.refunded and refund.created, in that order and in the same transaction', async () => {
      const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).slice(eventsBefore);
      expect(events.map((e) => [e.type, e.resourceId])).toEqual([
        ['order.updated', order.id],
        ['order.refunded', order.id],
        ['refund.created', first.id],
      ]);
      const transactions = (await eventTransactions(org.organizationId)).slice(eventsBefore);
      expect(transactions.map((t) => t.type)).toEqual(['order.updated', 'order.refunded', 'refund.created']);
      expect(new Set(transactions.map((t) => t.xmin)).size).toBe(1);
      // Written by the transaction that made the refund: not the one that paid the order before.
      const earlier = (await eventTransactions(org.organizationId)).slice(0, eventsBefore);
      expect(earlier.map((t) => t.xmin)).not.toContain(transactions[0].xmin);
    });

    it('records the order events with the order as GET /v1/orders/{id} returns it, partially refunded', async () => {
      const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).slice(eventsBefore, eventsBefore + 2);
      const rest = expectStatus(await org.api('GET', `/orders/${order.id}`), 200);
      expect(rest).toMatchObject({ status: 'partially_refunded', refunded_amount: 500 });
      expect(events[0].data).toEqual(rest);
      expect(events[1].data).toEqual(rest);
    });

    it('records refund.created with the refund as GET /v1/refunds/{id} returns it, pending at the time', async () => {
      const created = (await eventsOf(t.server, org.organizationId, 'sandbox')).find((e) => e.type === 'refund.created')!;
      const data = created.data as Record<string, unknown>;
      expect(data.status).toBe('pending');
      const rest = expectStatus(await org.api('GET', `/refunds/${first.id}`), 200);
      expect(data).toMatchObject({ id: first.id, amount: 500, order_id: order.id, reason: 'customer_request', currency: 'usd', customer_id: order.customerId });
      expect(stable(data)).toEqual(stable(rest));
    });

    it('refuses 1500 when only 1499 remains: 400 RefundAmountTooHigh, and nothing changes', async () => {
      const orderBefore = expectStatus(await org.api('GET', `/orders/${order.id}`), 200);
      const eventCount = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const error = await rejectionOf(org.polar.refunds.create({ orderId: order.id, reason: 'customer_request', amount: 1500 }));
      expect(error).toBeInstanceOf(RefundAmountTooHigh);
      expect(error).not.toBeInstanceOf(ResponseValidationError);
      expect((error as RefundAmountTooHigh).statusCode).toBe(400);
      expect((error as RefundAmountTooHigh).error).toBe('RefundAmountTooHigh');
      const rest = await org.api('POST', '/refunds/', refundBody(order.id, 1500));
      expect(rest.status).toBe(400);
      expect(rest.body).toEqual({ error: 'RefundAmountTooHigh', detail: expect.stringContaining('1499') });
      expect(expectStatus(await org.api('GET', `/orders/${order.id}`), 200)).toEqual(orderBefore);
      expect((await storedRefunds(order.id)).map((r) => r.id)).toEqual([first.id]);
      expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(eventCount);
    });

    it('refunds the remaining 1499: the order becomes refunded, with refunded_amount 1999', async () => {
      const eventCount = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const rest = await org.api('POST', '/refunds/', refundBody(order.id, 1499, 'satisfaction_guarantee'));
      expect(rest.status).toBe(200);
      expect(rest.headers.get('content-type')).toMatch(/^application\/json/);
      expect(rest.body).toMatchObject({ id: uuid, status: 'pending', amount: 1499, reason: 'satisfaction_guarantee', order_id: order.id, created_at: datetime });
      const seen = await org.polar.orders.get({ id: order.id });
      expect(seen).toMatchObject({ status: 'refunded', paid: true, refundedAmount: 1999, netAmount: 1999 });
      const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).slice(eventCount);
      expect(events.map((e) => [e.type, e.resourceId])).toEqual([
        ['order.updated', order.id],
        ['order.refunded', order.id],
        ['refund.created', rest.body.id],
      ]);
      expect(events[1].data).toMatchObject({ status: 'refunded', refunded_amount: 1999 });
      await refundsSettled(org, order.id, 2);
    });

    it('refuses any further refund: 403 RefundedAlready, and nothing changes', async () => {
      const eventCount = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const error = await rejectionOf(org.polar.refunds.create({ orderId: order.id, reason: 'customer_request', amount: 1 }));
      expect(error).toBeInstanceOf(RefundedAlready);
      expect((error as RefundedAlready).statusCode).toBe(403);
      expect((error as RefundedAlready).error).toBe('RefundedAlready');
      for (const amount of [1, 5000]) {
        const rest = await org.api('POST', '/refunds/', refundBody(order.id, amount));
        expect(rest.status).toBe(403);
        expect(rest.body).toEqual({ error: 'RefundedAlready', detail: expect.any(String) });
        expect(rest.body.detail.length).toBeGreaterThan(0);
      }
      expect(await storedRefunds(order.id)).toHaveLength(2);
      expect(await org.polar.orders.get({ id: order.id })).toMatchObject({ status: 'refunded', refundedAmount: 1999 });
      expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(eventCount);
    });
  });

  describe('refunds that are not valid', () => {
    let org: Org;
    let order: Order;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Invalid refunds ebook');
      order = await buy(org, product.id, 'invalid-refunds@example.com');
    });

    it.each([
      ['zero', 0],
      ['negative', -100],
    ])('refuses a %s amount with 422 naming the amount, creating nothing', async (_case, amount) => {
      const eventCount = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const error = await rejectionOf(org.polar.refunds.create({ orderId: order.id, reason: 'customer_request', amount }));
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).statusCode).toBe(422);
      expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'amount'] })]);
      const rest = await org.api('POST', '/refunds/', refundBody(order.id, amount));
      expect(rest.status).toBe(422);
      expect(rest.body).toEqual({ detail: [{ loc: ['body', 'amount'], msg: 'Input should be greater than or equal to 1', type: 'greater_than_equal' }] });
      expect(await storedRefunds(order.id)).toEqual([]);
      expect(await org.polar.orders.get({ id: order.id })).toMatchObject({ status: 'paid', refundedAmount: 0 });
      expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(eventCount);
    });

    it('refuses to refund a free order with 422 naming order_id, as there is nothing to give back', async () => {
      const free = await org.polar.products.create({ name: 'Free sample', recurringInterval: null, prices: [{ amountType: 'free' }] });
      const checkout = await org.polar.checkouts.create({ products: [free.id] });
      await org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail: 'free-refund@example.com' } });
      const [paid] = await eventually(() => ordersOfCheckout(org, checkout.id), (items) => items.length === 1 && items[0].paid, 'the free order to be paid');
      const rest = await org.api('POST', '/refunds/', refundBody(paid.id, 1));
      expect(rest.status).toBe(422);
      expect(rest.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'order_id'], msg: expect.stringContaining('free') })]);
      expect(await storedRefunds(paid.id)).toEqual([]);
    });

    it('refuses to refund an unpaid order with 422 naming order_id', async () => {
      const product = await fixedProduct(org, 'Declined refund ebook');
      const unpaid = await declinedOrder(org, product.id, 'unpaid-refund@example.com');
      const error = await rejectionOf(org.polar.refunds.create({ orderId: unpaid.id, reason: 'customer_request', amount: 100 }));
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'order_id'] })]);
      const rest = await org.api('POST', '/refunds/', refundBody(unpaid.id, 100));
      expect(rest.status).toBe(422);
      expect(rest.body).toEqual({ detail: [{ loc: ['body', 'order_id'], msg: expect.stringMatching(/not paid/i), type: expect.any(String) }] });
      expect(await storedRefunds(unpaid.id)).toEqual([]);
      expect(await org.polar.orders.get({ id: unpaid.id })).toMatchObject({ status: 'pending', paid: false, refundedAmount: 0 });
    });

    it('refuses an unknown order with 422 naming order_id', async () => {
      const unknown = randomUUID();
      const error = await rejectionOf(org.polar.refunds.create({ orderId: unknown, reason: 'customer_request', amount: 100 }));
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'order_id'] })]);
      const rest = await org.api('POST', '/refunds/', refundBody(unknown, 100));
      expect(rest.status).toBe(422);
      expect(rest.body).toEqual({ detail: [{ loc: ['body', 'order_id'], msg: 'Order not found.', type: expect.any(String) }] });
      expect(await storedRefunds(unknown)).toEqual([]);
    });

    it("refuses another organization's order with 422 naming order_id, creating no refund", async () => {
      const stranger = await newOrganization(t.server, 'sandbox');
      const strangerEvents = (await eventsOf(t.server, stranger.organizationId, 'sandbox')).length;
      const ownerEvents = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const error = await rejectionOf(stranger.polar.refunds.create({ orderId: order.id, reason: 'fraudulent', amount: 100 }));
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'order_id'] })]);
      const rest = await stranger.api('POST', '/refunds/', refundBody(order.id, 100));
      expect(rest.status).toBe(422);
      // Word for word what an order that does not exist gets: the answer does not tell it exists.
      expect(rest.body).toEqual({ detail: [{ loc: ['body', 'order_id'], msg: 'Order not found.', type: expect.any(String) }] });
      expect(await storedRefunds(order.id)).toEqual([]);
      expect(await org.polar.orders.get({ id: order.id })).toMatchObject({ status: 'paid', refundedAmount: 0 });
      expect(await eventsOf(t.server, stranger.organizationId, 'sandbox')).toHaveLength(strangerEvents);
      expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(ownerEvents);
      expect((await stranger.polar.refunds.list({})).result.items).toEqual([]);
    });

    it('refuses a comment over 1000 characters with 422 naming the comment, creating nothing', async () => {
      const rest = await org.api('POST', '/refunds/', { ...refundBody(order.id, 100), comment: 'x'.repeat(1001) });
      expect(rest.status).toBe(422);
      expect(rest.body).toEqual({ detail: [{ loc: ['body', 'comment'], msg: 'String should have at most 1000 characters', type: 'string_too_long' }] });
      expect(await storedRefunds(order.id)).toEqual([]);
      const longest = await org.api('POST', '/refunds/', { ...refundBody(order.id, 100), comment: 'x'.repeat(1000) });
      expect(longest.status).toBe(200);
      expect((await storedRefunds(order.id)).map((r) => r.comment?.length)).toEqual([1000]);
    });

    it("refuses revoke_benefits on a subscription's order with 422 naming it: the benefits end with the subscription", async () => {
      const monthly = await fixedProduct(org, 'Monthly newsletter', 500, 'month');
      const renewal = await buy(org, monthly.id, 'subscriber-refund@example.com');
      expect(renewal.billingReason).toBe('subscription_create');
      const refused = await org.api('POST', '/refunds/', { ...refundBody(renewal.id, 100), revoke_benefits: true });
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({
        detail: [{ loc: ['body', 'revoke_benefits'], msg: 'The benefits of a subscription end with it: revoke the subscription instead (DELETE /v1/subscriptions/{id}).', type: expect.any(String) }],
      });
      expect(await storedRefunds(renewal.id)).toEqual([]);
      // Without it, the subscription's order is refunded as any other.
      expect((await org.api('POST', '/refunds/', refundBody(renewal.id, 100))).status).toBe(200);
    });

    it("answers 404 for a refund that does not exist and for another organization's, in the same words", async () => {
      const created = await org.api('POST', '/refunds/', refundBody(order.id, 1));
      expect(created.status).toBe(200);
      const stranger = await newOrganization(t.server, 'sandbox');
      for (const [client, id] of [
        [org, randomUUID()],
        [stranger, created.body.id],
      ] as const) {
        const answer = await client.api('GET', `/refunds/${id}`);
        expect(answer.status).toBe(404);
        expect(answer.body).toEqual({ error: 'ResourceNotFound', detail: 'Refund not found.' });
      }
    });
  });

  describe('concurrent refunds of one order of 1999', () => {
    let org: Org;
    let order: Order;
    let eventsBefore: number;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Contested ebook');
      order = await buy(org, product.id, 'contested@example.com');
      eventsBefore = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
    });

    it('lets exactly 3 of 6 parallel refunds of 500 through, the other 3 getting 400 RefundAmountTooHigh', async () => {
      const responses = await Promise.all(Array.from({ length: 6 }, () => org.api('POST', '/refunds/', refundBody(order.id, 500))));
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses, JSON.stringify(responses.map((r) => r.body))).toEqual([200, 200, 200, 400, 400, 400]);
      for (const r of responses.filter((r) => r.status === 400)) expect(r.body).toEqual({ error: 'RefundAmountTooHigh', detail: expect.any(String) });
      const ok = responses.filter((r) => r.status === 200).map((r) => r.body);
      expect(ok.map((r) => r.amount)).toEqual([500, 500, 500]);
      expect(await org.polar.orders.get({ id: order.id })).toMatchObject({ status: 'partially_refunded', refundedAmount: 1500 });
      const stored = await storedRefunds(order.id);
      expect(stored.map((r) => r.id).sort()).toEqual(ok.map((r) => r.id).sort());
      expect(stored.reduce((sum, r) => sum + r.amount, 0)).toBe(1500);
    });

    it('lets exactly one of 5 parallel refunds of 499 through, refunding the order in full', async () => {
      const responses = await Promise.all(Array.from({ length: 5 }, () => org.api('POST', '/refunds/', refundBody(order.id, 499))));
      const ok = responses.filter((r) => r.status === 200);
      expect(ok, JSON.stringify(responses.map((r) => [r.status, r.body]))).toHaveLength(1);
      expect(ok[0].body).toMatchObject({ amount: 499, status: 'pending', order_id: order.id });
      for (const r of responses.filter((r) => r.status !== 200)) {
        expect([400, 403]).toContain(r.status);
        expect(r.body).toEqual({ error: r.status === 400 ? 'RefundAmountTooHigh' : 'RefundedAlready', detail: expect.any(String) });
      }
      expect(await org.polar.orders.get({ id: order.id })).toMatchObject({ status: 'refunded', refundedAmount: 1999 });
      const stored = await storedRefunds(order.id);
      expect(stored).toHaveLength(4);
      expect(stored.reduce((sum, r) => sum + r.amount, 0)).toBe(1999);
    });

    it('never had the refunded amount exceed the net amount, and recorded three events per refund', async () => {
      const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).slice(eventsBefore);
      expect(events.filter((e) => e.type === 'refund.created')).toHaveLength(4);
      expect(events.filter((e) => e.type === 'order.refunded')).toHaveLength(4);
      expect(events.filter((e) => e.type === 'order.updated')).toHaveLength(4);
      const refundedAmounts = events.filter((e) => e.type === 'order.refunded').map((e) => (e.data as { refunded_amount: number }).refunded_amount);
      expect(refundedAmounts).toEqual([500, 1000, 1500, 1999]);
      for (const amount of refundedAmounts) expect(amount).toBeLessThanOrEqual(1999);
      const transactions = (await eventTransactions(org.organizationId)).slice(eventsBefore);
      for (let i = 0; i < transactions.length; i += 3) {
        expect(transactions.slice(i, i + 3).map((t) => t.type)).toEqual(['order.updated', 'order.refunded', 'refund.created']);
        expect(new Set(transactions.slice(i, i + 3).map((t) => t.xmin)).size).toBe(1);
      }
      const settled = await refundsSettled(org, order.id, 4);
      expect(settled.reduce((sum, r) => sum + r.amount, 0)).toBe(1999);
      expect(await org.polar.orders.get({ id: order.id })).toMatchObject({ status: 'refunded', refundedAmount: 1999 });
    });
  });

  describe('listing refunds', () => {
    let org: Org;
    let aliceOrder: Order;
    let bobOrder: Order;
    let small: Refund;
    let large: Refund;
    let bobs: Refund;
    let waiting: Refund;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Listed ebook', 5_000);
      [aliceOrder, bobOrder] = await Promise.all([buy(org, product.id, 'alice-refunds@example.com'), buy(org, product.id, 'bob-refunds@example.com')]);
      small = (await org.polar.refunds.create({ orderId: aliceOrder.id, reason: 'duplicate', amount: 300 }))!;
      large = (await org.polar.refunds.create({ orderId: aliceOrder.id, reason: 'other', amount: 1_200 }))!;
      bobs = (await org.polar.refunds.create({ orderId: bobOrder.id, reason: 'service_disruption', amount: 700 }))!;
      await refundsSettled(org, aliceOrder.id, 2);
      await refundsSettled(org, bobOrder.id, 1);
      // A refund whose job is not due yet: created an hour ahead, it stays pending until the clock gets there.
      const anHourAhead = new Date(Date.now() + 3600_000);
      waiting = (await withRequestClockAt(anHourAhead, () => org.polar.refunds.create({ orderId: bobOrder.id, reason: 'customer_request', amount: 50 })))!;
      expect(waiting.createdAt.getTime()).toBe(anHourAhead.getTime());
    });
    afterAll(async () => {
      // Let the waiting refund settle, so nothing is left under way.
      t.server.clock.now = new Date(Date.now() + 2 * 3600_000);
      try {
        await eventually(() => org.api('GET', `/refunds/${waiting.id}`), (r) => r.body?.status === 'succeeded', 'the waiting refund to succeed');
      } finally {
        t.server.clock.now = null;
      }
    });

    const ids = (items: { id: string }[]) => items.map((r) => r.id);

    it('lists every refund of the organization, newest first by default', async () => {
      const page = await org.polar.refunds.list({});
      expect(ids(page.result.items)).toEqual([waiting.id, bobs.id, large.id, small.id]);
      expect(page.result.pagination.totalCount).toBe(4);
    });

    it('filters by order_id', async () => {
      expect(ids((await org.polar.refunds.list({ orderId: aliceOrder.id })).result.items).sort()).toEqual([small.id, large.id].sort());
      expect(ids((await org.polar.refunds.list({ orderId: bobOrder.id })).result.items).sort()).toEqual([bobs.id, waiting.id].sort());
      const rest = expectStatus(await org.api('GET', `/refunds/?order_id=${bobOrder.id}&order_id=${aliceOrder.id}`), 200);
      expect(rest.items).toHaveLength(4);
    });

    it('filters by id', async () => {
      const rest = expectStatus(await org.api('GET', `/refunds/?id=${small.id}&id=${bobs.id}`), 200);
      expect(ids(rest.items).sort()).toEqual([small.id, bobs.id].sort());
      expect(rest.pagination.total_count).toBe(2);
    });

    it('filters by customer_id', async () => {
      expect(ids((await org.polar.refunds.list({ customerId: aliceOrder.customerId })).result.items).sort()).toEqual([small.id, large.id].sort());
      const rest = expectStatus(await org.api('GET', `/refunds/?customer_id=${bobOrder.customerId}`), 200);
      expect(ids(rest.items).sort()).toEqual([bobs.id, waiting.id].sort());
      expect(rest.items.every((r: any) => r.customer_id === bobOrder.customerId)).toBe(true);
    });

    it('filters by succeeded, leaving out the refund still pending', async () => {
      expect(expectStatus(await org.api('GET', `/refunds/${waiting.id}`), 200).status).toBe('pending');
      const succeeded = await org.polar.refunds.list({ succeeded: true });
      expect(ids(succeeded.result.items).sort()).toEqual([small.id, large.id, bobs.id].sort());
      expect(succeeded.result.items.every((r) => r.status === 'succeeded')).toBe(true);
      const notSucceeded = expectStatus(await org.api('GET', '/refunds/?succeeded=false'), 200);
      expect(ids(notSucceeded.items)).toEqual([waiting.id]);
      const combined = await org.polar.refunds.list({ succeeded: true, customerId: bobOrder.customerId });
      expect(ids(combined.result.items)).toEqual([bobs.id]);
    });

    it('sorts by amount, ascending and descending', async () => {
      const ascending = await org.polar.refunds.list({ sorting: ['amount'] });
      expect(ascending.result.items.map((r) => r.amount)).toEqual([50, 300, 700, 1_200]);
      const descending = await org.polar.refunds.list({ sorting: ['-amount'] });
      expect(descending.result.items.map((r) => r.amount)).toEqual([1_200, 700, 300, 50]);
      const rest = expectStatus(await org.api('GET', '/refunds/?sorting=-amount&limit=2'), 200);
      expect(rest.items.map((r: any) => r.amount)).toEqual([1_200, 700]);
      expect(rest.pagination).toEqual({ total_count: 4, max_page: 2 });
    });

    it("does not list another organization's refunds, even filtered by its order", async () => {
      const stranger = await newOrganization(t.server, 'sandbox');
      expect((await stranger.polar.refunds.list({})).result.items).toEqual([]);
      expect((await stranger.polar.refunds.list({ orderId: aliceOrder.id })).result.items).toEqual([]);
      expect((await stranger.api('GET', `/refunds/${small.id}`)).status).toBe(404);
    });
  });

  describe('an Idempotency-Key on POST /v1/refunds/', () => {
    it('creates one refund for two requests with the same key, replaying the first answer', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Idempotent ebook');
      const order = await buy(org, product.id, 'idempotent-refund@example.com');
      const key = `refund-${randomUUID()}`;
      const first = await org.api('POST', '/refunds/', refundBody(order.id, 400), { 'idempotency-key': key });
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const eventCount = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const second = await org.api('POST', '/refunds/', refundBody(order.id, 400), { 'idempotency-key': key });
      expect(second.status).toBe(200);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toEqual(first.body);
      expect((await storedRefunds(order.id)).map((r) => r.id)).toEqual([first.body.id]);
      expect(await org.polar.orders.get({ id: order.id })).toMatchObject({ status: 'partially_refunded', refundedAmount: 400 });
      expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(eventCount);
      // Another key is another refund.
      const third = await org.api('POST', '/refunds/', refundBody(order.id, 400), { 'idempotency-key': `refund-${randomUUID()}` });
      expect(third.status).toBe(200);
      expect(third.body.id).not.toBe(first.body.id);
      expect(await org.polar.orders.get({ id: order.id })).toMatchObject({ refundedAmount: 800 });
      await refundsSettled(org, order.id, 2);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// GraphQL
// ---------------------------------------------------------------------------------------------

describe('refunds through GraphQL in sandbox', () => {
  const CREATE = 'mutation ($input: RefundCreateInput!) { core { refundCreate(input: $input) { id status amount taxAmount orderId customerId reason currency } } }';
  const LIST = 'query ($orderId: [UUID!], $succeeded: Boolean) { core { refunds(orderId: $orderId, succeeded: $succeeded, limit: 100) { items { id status amount } pagination { totalCount } } } }';
  const ORDER = 'query ($id: UUID!) { core { order(id: $id) { id status paid netAmount refundedAmount } } }';

  describe('refunding an order of 1999 in two parts', () => {
    let org: Org;
    let order: Order;
    let first: any;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'GraphQL refundable');
      order = await buy(org, product.id, 'gql-refunds@example.com');
    });

    it('refunds 800: the refund pending, then succeeded, and the order partially refunded', async () => {
      first = (await graphqlData(org.gql(CREATE, { input: { orderId: order.id, reason: 'customer_request', amount: 800 } }))).core.refundCreate;
      expect(first).toEqual({ id: uuid, status: 'pending', amount: 800, taxAmount: 0, orderId: order.id, customerId: order.customerId, reason: 'customer_request', currency: 'usd' });
      expect((await graphqlData(org.gql(ORDER, { id: order.id }))).core.order).toEqual({ id: order.id, status: 'partially_refunded', paid: true, netAmount: 1999, refundedAmount: 800 });
      const listed = await eventually(
        async () => (await graphqlData(org.gql(LIST, { orderId: [order.id] }))).core.refunds,
        (page) => page.items.length === 1 && page.items[0].status === 'succeeded',
        'the refund to succeed',
      );
      expect(listed.items).toEqual([{ id: first.id, status: 'succeeded', amount: 800 }]);
    });

    it('refuses more than the 1199 that remain: REFUND_AMOUNT_TOO_HIGH, nothing changed', async () => {
      const error = await graphqlFailure(org.gql(CREATE, { input: { orderId: order.id, reason: 'customer_request', amount: 1200 } }), 'REFUND_AMOUNT_TOO_HIGH', 400);
      expect(error.message).toContain('1199');
      expect((await graphqlData(org.gql(ORDER, { id: order.id }))).core.order.refundedAmount).toBe(800);
      expect((await graphqlData(org.gql(LIST, { orderId: [order.id] }))).core.refunds.pagination.totalCount).toBe(1);
    });

    it('refuses a zero or negative amount: BAD_USER_INPUT at input.amount', async () => {
      for (const amount of [0, -1]) {
        const error = await graphqlFailure(org.gql(CREATE, { input: { orderId: order.id, reason: 'customer_request', amount } }), 'BAD_USER_INPUT', 422);
        expect(error.extensions.issues).toEqual([{ loc: ['input', 'amount'], msg: expect.any(String), type: expect.any(String) }]);
      }
      expect((await graphqlData(org.gql(LIST, { orderId: [order.id] }))).core.refunds.pagination.totalCount).toBe(1);
    });

    it('refunds the remaining 1199: the order refunded in full', async () => {
      const second = (await graphqlData(org.gql(CREATE, { input: { orderId: order.id, reason: 'other', amount: 1199 } }))).core.refundCreate;
      expect(second).toMatchObject({ status: 'pending', amount: 1199 });
      expect((await graphqlData(org.gql(ORDER, { id: order.id }))).core.order).toMatchObject({ status: 'refunded', refundedAmount: 1999 });
    });

    it('refuses any further refund: REFUNDED_ALREADY', async () => {
      await graphqlFailure(org.gql(CREATE, { input: { orderId: order.id, reason: 'customer_request', amount: 1 } }), 'REFUNDED_ALREADY', 403);
      expect((await graphqlData(org.gql(LIST, { orderId: [order.id] }))).core.refunds.pagination.totalCount).toBe(2);
    });
  });

  describe('refunds of orders that cannot be refunded', () => {
    it('refuses an unpaid, an unknown and a foreign order with BAD_USER_INPUT at input.orderId', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const stranger = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'GraphQL unrefundable');
      const unpaid = await declinedOrder(org, product.id, 'gql-unpaid-refund@example.com');
      const paid = await buy(org, product.id, 'gql-paid-refund@example.com');
      for (const [client, orderId] of [
        [org.gql, unpaid.id],
        [org.gql, randomUUID()],
        [stranger.gql, paid.id],
      ] as const) {
        const error = await graphqlFailure(client(CREATE, { input: { orderId, reason: 'customer_request', amount: 100 } }), 'BAD_USER_INPUT', 422);
        expect(error.extensions.issues).toEqual([{ loc: ['input', 'orderId'], msg: expect.any(String), type: expect.any(String) }]);
      }
      expect(await storedRefunds(unpaid.id)).toEqual([]);
      expect(await storedRefunds(paid.id)).toEqual([]);
      expect((await graphqlData(org.gql(ORDER, { id: paid.id }))).core.order).toMatchObject({ status: 'paid', refundedAmount: 0 });
    });
  });

  describe('concurrent refunds', () => {
    it('never refund more than the net amount: of 4 parallel refunds of 700 on 1999, exactly 2 pass', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'GraphQL contested');
      const order = await buy(org, product.id, 'gql-contested@example.com');
      const responses = await Promise.all(Array.from({ length: 4 }, () => org.gql(CREATE, { input: { orderId: order.id, reason: 'customer_request', amount: 700 } })));
      const passed = responses.filter((r) => !r.body.errors);
      const refused = responses.filter((r) => r.body.errors);
      expect(passed, JSON.stringify(responses.map((r) => r.body))).toHaveLength(2);
      for (const r of refused) expect(r.body.errors![0].extensions.code).toBe('REFUND_AMOUNT_TOO_HIGH');
      expect((await graphqlData(org.gql(ORDER, { id: order.id }))).core.order).toMatchObject({ status: 'partially_refunded', refundedAmount: 1400 });
      const listed = (await graphqlData(org.gql(LIST, { orderId: [order.id] }))).core.refunds;
      expect(listed.items.map((r: any) => r.amount)).toEqual([700, 700]);
    });
  });
});

describe('tax on refunds, and refunds the bank refuses, in sandbox', () => {
  /** Puts `tax` on a paid order of 1999, as a checkout with tax would have: the tax comes on top of the net amount. */
  async function taxOrder(orderId: string, tax: number) {
    await prisma().order.update({ where: { id: orderId }, data: { taxAmount: tax, totalAmount: 1999 + tax } });
  }

  /** The order as REST returns it, reduced to what refunds move. */
  async function refundState(org: Org, orderId: string) {
    const { body } = await org.api('GET', `/orders/${orderId}`);
    return { status: body.status, refunded_amount: body.refunded_amount, refunded_tax_amount: body.refunded_tax_amount };
  }

  it('returns tax in proportion, rounded down, and the last refund takes the tax that remains: 0, 125, 250, then 125 of 500', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const product = await fixedProduct(org, 'Taxed ebook');
    const order = await buy(org, product.id, 'taxed@example.com');
    await taxOrder(order.id, 500);
    const taxes: number[] = [];
    // 3 × 500 / 1999 is 0.75 of a cent: rounded down, as every part but the last is.
    for (const amount of [3, 500, 1000, 496]) {
      const created = await org.api('POST', '/refunds/', refundBody(order.id, amount));
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      taxes.push(created.body.tax_amount);
    }
    expect(taxes).toEqual([0, 125, 250, 125]);
    expect(await refundState(org, order.id)).toEqual({ status: 'refunded', refunded_amount: 1999, refunded_tax_amount: 500 });
    await refundsSettled(org, order.id, 4);
    expect(await refundState(org, order.id)).toEqual({ status: 'refunded', refunded_amount: 1999, refunded_tax_amount: 500 });
  });

  describe('an order paid with tok_refundFail, whose bank refuses every refund', () => {
    let org: Org;
    let order: Order;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Unrefundable ebook');
      const checkout = await createAndConfirmCheckout(org, product.id, 'refund-fail@example.com', { card: 'tok_refundFail' });
      order = await paidOrderOf(org, checkout.id);
      await taxOrder(order.id, 400);
    });

    /** Waits for the refund job to have tried every refund of the order. */
    const refundsTried = (count: number) =>
      eventually(
        () => storedRefunds(order.id),
        (refunds) => refunds.length === count && refunds.every((r) => r.status !== 'pending'),
        'the refunds to be tried',
      );

    it('records the refund as failed and gives its amount and tax back to the order, with an order.updated event', async () => {
      const eventsBefore = (await eventsOf(t.server, org.organizationId, 'sandbox')).map((e) => e.type);
      const created = await org.api('POST', '/refunds/', refundBody(order.id, 500));
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ status: 'pending', amount: 500, tax_amount: 100 });
      expect(await refundState(org, order.id)).toEqual({ status: 'partially_refunded', refunded_amount: 500, refunded_tax_amount: 100 });

      const [refund] = await refundsTried(1);
      expect(refund).toMatchObject({ status: 'failed', amount: 500, taxAmount: 100 });
      expect(refund.processorId).toMatch(/^test_re_/);
      expect(await refundState(org, order.id)).toEqual({ status: 'paid', refunded_amount: 0, refunded_tax_amount: 0 });
      expect((await org.api('GET', `/refunds/${refund.id}`)).body).toMatchObject({ status: 'failed' });
      const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).map((e) => e.type);
      expect(events.slice(eventsBefore.length)).toEqual(['order.updated', 'order.refunded', 'refund.created', 'order.updated']);
    });

    it('gives back the benefits a refused refund with revoke_benefits had taken away', async () => {
      const benefit = expectStatus(await org.api('POST', '/benefits/', { type: 'custom', description: 'Reading group', properties: { note: 'Welcome' } }), 201);
      const product = await fixedProduct(org, 'Ebook with a reading group');
      expectStatus(await org.api('POST', `/products/${product.id}/benefits`, { benefits: [benefit.id] }), 200);
      const checkout = await createAndConfirmCheckout(org, product.id, 'refund-fail-benefits@example.com', { card: 'tok_refundFail' });
      const bought = await paidOrderOf(org, checkout.id);
      const granted = () => org.api('GET', `/customers/${bought.customerId}/state`).then((r) => r.body.granted_benefits.map((g: { benefit_id: string }) => g.benefit_id));
      await eventually(granted, (ids) => ids.includes(benefit.id), 'the benefit to be granted');

      const refund = expectStatus(await org.api('POST', '/refunds/', { order_id: bought.id, reason: 'customer_request', amount: 1999, revoke_benefits: true }), 200);
      expect(refund.revoke_benefits).toBe(true);
      const grantEvents = async () => {
        const grant = await prisma().benefitGrant.findFirstOrThrow({ where: { benefitId: benefit.id, customerId: bought.customerId } });
        return (await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.resourceId === grant.id).map((e) => e.type);
      };
      // The bank takes TEST_CARD_DELAY_MS to refuse: the refund's grant sync revokes the benefit first.
      await eventually(grantEvents, (types) => types.includes('benefit_grant.revoked'), 'the benefit to be revoked');
      await eventually(
        () => prisma().refund.findUniqueOrThrow({ where: { id: refund.id } }),
        (stored) => stored.status === 'failed',
        'the refund to be refused',
      );
      // The refusal schedules another sync, which grants the benefit again.
      expect(await eventually(grantEvents, (types) => types.length === 3, 'the benefit to be granted again')).toEqual([
        'benefit_grant.created',
        'benefit_grant.revoked',
        'benefit_grant.created',
      ]);
      expect(await granted()).toEqual([benefit.id]);
    });

    it('lets the whole order be refunded again, the refund taking all of its tax, and gives two refused refunds back in turn', async () => {
      const parts = await Promise.all([org.api('POST', '/refunds/', refundBody(order.id, 700)), org.api('POST', '/refunds/', refundBody(order.id, 1299))]);
      expect(parts.map((r) => r.status)).toEqual([200, 200]);
      // The first to take the order's lock gets its share rounded down; the other was the last
      // part, and takes the tax that remained.
      const taxes = Object.fromEntries(parts.map((r) => [r.body.amount, r.body.tax_amount]));
      expect([{ 700: 140, 1299: 260 }, { 700: 141, 1299: 259 }]).toContainEqual(taxes);
      const [failed, ...tried] = await refundsTried(3);
      expect([failed, ...tried].map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
      expect(await refundState(org, order.id)).toEqual({ status: 'paid', refunded_amount: 0, refunded_tax_amount: 0 });
    });

    it('gives a refused refund back once when two jobs process it at once, and settles no other refund', async () => {
      const environment = t.server.kassa.environments.sandbox.environment;
      const anHourAhead = new Date(Date.now() + 3600_000);
      // A bystander: another order's refund, whose job is an hour away, stays pending throughout.
      const other = await buy(org, (await fixedProduct(org, 'Bystander ebook')).id, 'bystander@example.com');
      const bystander = await withRequestClockAt(anHourAhead, () => org.api('POST', '/refunds/', refundBody(other.id, 100)));
      const refund = await withRequestClockAt(anHourAhead, () => org.api('POST', '/refunds/', refundBody(order.id, 300)));
      expect([bystander.status, refund.status]).toEqual([200, 200]);
      await enqueueJob(prisma(), 'refund.process', { refundId: refund.body.id }, anHourAhead);
      const requests: RefundRequest[] = [];
      const processor = environment.paymentProcessor!;
      const refundThroughProcessor = processor.refund;
      processor.refund = (request) => {
        requests.push(request);
        return refundThroughProcessor.call(processor, request);
      };
      try {
        const jobs = await prisma().job.updateMany({
          where: { kind: 'refund.process', completedAt: null, payload: { path: ['refundId'], equals: refund.body.id } },
          data: { runAt: new Date() },
        });
        expect(jobs.count).toBe(2);
        await sandbox().jobs.runDue();
        const unfinished = () => prisma().job.count({ where: { kind: 'refund.process', completedAt: null, payload: { path: ['refundId'], equals: refund.body.id } } });
        await eventually(unfinished, (left) => left === 0, 'both jobs to finish');
        // A job that comes after the refund has its outcome leaves it, and the processor, alone.
        const asked = requests.length;
        await enqueueJob(prisma(), 'refund.process', { refundId: refund.body.id }, new Date());
        await sandbox().jobs.runDue();
        await eventually(unfinished, (left) => left === 0, 'the late job to finish');
        expect(requests).toHaveLength(asked);
      } finally {
        processor.refund = refundThroughProcessor;
      }
      expect((await prisma().refund.findUniqueOrThrow({ where: { id: refund.body.id } })).status).toBe('failed');
      expect(await refundState(org, order.id)).toEqual({ status: 'paid', refunded_amount: 0, refunded_tax_amount: 0 });
      expect((await prisma().refund.findUniqueOrThrow({ where: { id: bystander.body.id } })).status).toBe('pending');
      expect(await refundState(org, other.id)).toEqual({ status: 'partially_refunded', refunded_amount: 100, refunded_tax_amount: 0 });
      // The processor is asked with the charge it made, the refund's own id as idempotency key.
      const payment = await prisma().payment.findFirstOrThrow({ where: { orderId: order.id, status: 'succeeded' } });
      expect(requests.length).toBeGreaterThan(0);
      for (const request of requests) {
        expect(request).toEqual({ refundId: refund.body.id, chargeId: payment.processorId, amount: 300, currency: 'usd', paymentMethod: 'tok_refundFail' });
      }
      expect(payment.processorId).toMatch(/^test_ch_/);
    });
  });
});
