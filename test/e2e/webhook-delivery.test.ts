// Webhook delivery end to end, in sandbox: events recorded by the API go out to a real receiver on
// 127.0.0.1 that verifies every request with the official client's `validateEvent`. The background
// webhook worker is stopped; each test runs the due work itself (`deliver`) and moves the test
// clock, so retries, backoff and the disabling of a failing endpoint are deterministic. The clock
// stays within minutes of real time: receivers refuse signatures more than 5 minutes off.
import { randomBytes, randomUUID } from 'node:crypto';
import { validateEvent, WebhookVerificationError } from '@polar-sh/sdk/webhooks';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebhookWorker } from '../../src/webhooks/worker.ts';
import { encryptSecret } from '../../src/webhooks/secrets.ts';
import { restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { buy, fixedProduct } from '../helpers/purchases.ts';
import { expectStatus } from '../helpers/responses.ts';
import { rejectionOf } from '../helpers/waiting.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const SECOND = 1000;
const retryBaseMs = 1000;
const disableAfterMs = 60 * SECOND;
const timeoutMs = 1000;
const maxAttempts = 6;

const t = useTestServer({
  env: {
    WEBHOOK_RETRY_BASE_MS: String(retryBaseMs),
    WEBHOOK_DISABLE_AFTER_MS: String(disableAfterMs),
    WEBHOOK_TIMEOUT_MS: String(timeoutMs),
    WEBHOOK_MAX_ATTEMPTS: String(maxAttempts),
    TEST_CARD_DELAY_MS: '20',
  },
  resetClockAfterEach: true,
});
const receivers: Receiver[] = [];

beforeAll(async () => {
  await sandbox().webhooks.stop();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

const sandbox = () => t.server.kassa.environments.sandbox;
const prisma = () => sandbox().environment.prisma;

/** Runs the due webhook work until none is left at the current time. */
async function deliver() {
  while ((await sandbox().webhooks.runDue()) > 0);
}

/** Freezes the test clock at `now` (real time unless told) and returns it. */
function freeze(now = new Date()) {
  t.server.clock.now = now;
  return now;
}

function advance(ms: number) {
  t.server.clock.now = new Date(t.server.clock.now!.getTime() + ms);
}

async function receiver(verify: 'event' | 'signature' = 'event') {
  const started = await startReceiver(verify);
  receivers.push(started);
  return started;
}

/** An endpoint of the organization at the receiver, created over REST; the receiver learns its secret. */
async function endpoint(org: Org, to: Receiver, events: string[]) {
  const created = expectStatus(await org.api('POST', '/webhooks/endpoints', { url: to.url, format: 'raw', events }), 201);
  to.secret = created.secret;
  return created as { id: string; secret: string };
}

/** An endpoint row written directly, for what the API refuses to save: chat formats at a loopback receiver, refused addresses. */
async function storedEndpoint(org: Org, url: string, events: string[], format: 'raw' | 'discord' | 'slack' = 'raw', to?: Receiver) {
  const secret = `whsec_test_${randomUUID()}`;
  if (to) to.secret = secret;
  return prisma().webhookEndpoint.create({
    data: {
      organizationId: org.organizationId,
      url,
      format,
      events,
      secretCiphertext: await encryptSecret(sandbox().environment, secret),
      secretHint: secret.slice(-4),
      createdAt: t.server.clock.now ?? new Date(),
    },
  });
}

async function newCustomer(org: Org, email: string) {
  return expectStatus(await org.api('POST', '/customers/', { email }), 201) as { id: string };
}

async function webhookEvents(endpointId: string) {
  return prisma().webhookEvent.findMany({ where: { endpointId }, orderBy: { sequence: 'asc' }, include: { deliveries: { orderBy: { createdAt: 'asc' } } } });
}

function expectAllVerified(to: Receiver) {
  expect(to.receipts.filter((r) => r.refused).map((r) => r.refused)).toEqual([]);
}

describe('a paid order', () => {
  let org: Org;
  let to: Receiver;
  let orderId: string;
  let endpointId: string;

  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    to = await receiver();
    endpointId = (await endpoint(org, to, ['order.created', 'order.updated', 'order.paid'])).id;
    const product = await fixedProduct(org, 'Ebook', 1999);
    orderId = (await buy(org, product.id, 'buyer@example.com', 'Ada Buyer')).id;
    await deliver();
  });

  it('reaches the receiver as order.created, order.updated and order.paid, each verified and parsed by validateEvent', async () => {
    expectAllVerified(to);
    expect(to.receipts.map((r) => r.event.type)).toEqual(['order.created', 'order.updated', 'order.paid']);
    for (const receipt of to.receipts) {
      expect(receipt.event.data.id).toBe(orderId);
      expect(receipt.event.timestamp).toBeInstanceOf(Date);
      expect(receipt.headers['content-type']).toBe('application/json');
      expect(receipt.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    const paid = to.receipts[2].event.data;
    expect([paid.status, paid.paid, paid.totalAmount, paid.currency, paid.customer.email]).toEqual(['paid', true, 1999, 'usd', 'buyer@example.com']);
    expect(to.receipts[0].event.data.paid).toBe(false);
  });

  it('carries the event as GET /v1/orders/{id} rendered it, and a webhook-id per event', async () => {
    const body = JSON.parse(to.receipts[2].body);
    expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data']);
    expect(body.data).toEqual(expectStatus(await org.api('GET', `/orders/${orderId}`), 200));
    const events = await webhookEvents(endpointId);
    expect(to.receipts.map((r) => r.id)).toEqual(events.map((e) => e.id));
    expect(events.map((e) => [e.succeeded, e.attempts, e.nextAttemptAt])).toEqual(Array(3).fill([true, 1, null]));
  });

  it('shows each attempt in the delivery log through the official client, newest first', async () => {
    const page = await org.polar.webhooks.listWebhookDeliveries({ endpointId });
    const items = page.result.items;
    expect(items.map((d) => [d.webhookEvent.type, d.succeeded, d.httpCode, d.response])).toEqual([
      ['order.paid', true, 200, 'ok'],
      ['order.updated', true, 200, 'ok'],
      ['order.created', true, 200, 'ok'],
    ]);
    expect(items[0].webhookEvent.payload).toBe(to.receipts[2].body);
    expect(page.result.pagination).toEqual({ totalCount: 3, maxPage: 1 });
    const rest = expectStatus(await org.api('GET', `/webhooks/deliveries?endpoint_id=${endpointId}&limit=1&page=3`), 200);
    expect(rest.items[0]).toEqual({
      id: expect.any(String),
      created_at: expect.any(String),
      modified_at: null,
      succeeded: true,
      http_code: 200,
      response: 'ok',
      duration_ms: expect.any(Number),
      webhook_event: {
        id: to.receipts[0].id,
        created_at: expect.any(String),
        modified_at: expect.any(String),
        last_http_code: 200,
        succeeded: true,
        payload: to.receipts[0].body,
        type: 'order.created',
        is_archived: false,
      },
    });
  });

  it('is rejected by the verifier when forged, tampered with or replayed late', async () => {
    const { body, headers } = to.receipts[2];
    expect(validateEvent(body, headers, to.secret).type).toBe('order.paid');
    const forgedSecret = `whsec_${'x'.repeat(40)}`;
    expect(() => validateEvent(body, headers, forgedSecret)).toThrow(WebhookVerificationError);
    const tampered = body.replace('"total_amount":1999', '"total_amount":1');
    expect(tampered).not.toBe(body);
    expect(() => validateEvent(tampered, headers, to.secret)).toThrow(WebhookVerificationError);
    // Another event's signature does not vouch for this body.
    expect(() => validateEvent(body, { ...headers, 'webhook-id': to.receipts[0].id }, to.secret)).toThrow(WebhookVerificationError);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Number(headers['webhook-timestamp']) * SECOND + 6 * 60 * SECOND);
      expect(() => validateEvent(body, headers, to.secret)).toThrow(/too old/);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a receiver that fails', () => {
  it('its first 3 attempts still gets the event, with the same webhook-id, and the 4 attempts are logged', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    to.answer = (_receipt, nth) => (nth <= 3 ? { status: 503, body: 'maintenance' } : 200);
    const { id: endpointId } = await endpoint(org, to, ['customer.created']);
    const start = freeze();
    const customer = await newCustomer(org, 'retried@example.com');
    await deliver();
    expect(to.receipts).toHaveLength(1);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [event] = await webhookEvents(endpointId);
      expect([event.attempts, event.succeeded, event.lastHttpCode]).toEqual([attempt, null, 503]);
      // Backoff: the base doubled after each failure, ±20%.
      const wait = event.nextAttemptAt!.getTime() - t.server.clock.now!.getTime();
      expect(wait).toBeGreaterThanOrEqual(0.8 * retryBaseMs * 2 ** (attempt - 1));
      expect(wait).toBeLessThanOrEqual(1.2 * retryBaseMs * 2 ** (attempt - 1));
      advance(wait - 1);
      await deliver();
      expect(to.receipts, 'nothing is sent before the retry is due').toHaveLength(attempt);
      advance(1);
      await deliver();
      expect(to.receipts).toHaveLength(attempt + 1);
    }
    expectAllVerified(to);
    expect(new Set(to.receipts.map((r) => r.id)).size).toBe(1);
    expect(to.receipts.map((r) => r.event.data.id)).toEqual(Array(4).fill(customer.id));
    expect(Number(to.receipts[3].headers['webhook-timestamp'])).toBe(Math.floor(t.server.clock.now!.getTime() / SECOND));
    expect(t.server.clock.now!.getTime() - start.getTime()).toBeLessThan(10 * SECOND);

    const log = expectStatus(await org.api('GET', `/webhooks/deliveries?endpoint_id=${endpointId}`), 200);
    expect(log.items.map((d: any) => [d.succeeded, d.http_code, d.response, d.webhook_event.id])).toEqual([
      [true, 200, 'ok', to.receipts[0].id],
      [false, 503, 'maintenance', to.receipts[0].id],
      [false, 503, 'maintenance', to.receipts[0].id],
      [false, 503, 'maintenance', to.receipts[0].id],
    ]);
    const [event] = await webhookEvents(endpointId);
    expect([event.succeeded, event.attempts, event.nextAttemptAt]).toEqual([true, 4, null]);
  });

  it('every time is given up after the last attempt', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    to.answer = () => 500;
    const { id: endpointId } = await endpoint(org, to, ['customer.created']);
    freeze();
    await newCustomer(org, 'unlucky@example.com');
    await deliver();
    for (let i = 1; i < maxAttempts; i++) {
      advance(1.2 * retryBaseMs * 2 ** (i - 1));
      await deliver();
    }
    expect(to.receipts).toHaveLength(maxAttempts);
    const [event] = await webhookEvents(endpointId);
    expect([event.succeeded, event.attempts, event.nextAttemptAt, event.deliveries.length]).toEqual([false, maxAttempts, null, maxAttempts]);
    advance(3600 * SECOND);
    await deliver();
    expect(to.receipts).toHaveLength(maxAttempts);
  });

  it('that cannot be reached, or answers too slowly, counts as a failed attempt', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const slow = await receiver();
    slow.answer = () => 'hang';
    const closed = await receiver();
    await closed.close();
    const { id: slowId } = await endpoint(org, slow, ['customer.created']);
    const { id: closedId } = await endpoint(org, closed, ['customer.created']);
    freeze();
    await newCustomer(org, 'nobody-home@example.com');
    await deliver();
    const [timedOut] = (await webhookEvents(slowId))[0].deliveries;
    expect([timedOut.succeeded, timedOut.httpCode, timedOut.response]).toEqual([false, null, `Timed out: no complete answer within ${timeoutMs} ms.`]);
    expect(timedOut.durationMs).toBeGreaterThanOrEqual(timeoutMs - 50);
    const [refused] = (await webhookEvents(closedId))[0].deliveries;
    expect([refused.succeeded, refused.httpCode, refused.response]).toEqual([false, null, 'Connection failed: ECONNREFUSED']);
    for (const id of [slowId, closedId]) expectStatus(await org.api('DELETE', `/webhooks/endpoints/${id}`), 204);
  });

  it('keeps only the first 2 KB of a long answer', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    to.answer = () => ({ status: 400, body: `a\u0000b${'é'.repeat(1500)}` });
    const { id: endpointId } = await endpoint(org, to, ['customer.created']);
    freeze();
    await newCustomer(org, 'chatty@example.com');
    await deliver();
    const [delivery] = (await webhookEvents(endpointId))[0].deliveries;
    expect(delivery.httpCode).toBe(400);
    expect(Buffer.byteLength(delivery.response!)).toBeLessThanOrEqual(2048 + 2);
    expect(delivery.response!.startsWith(`ab${'é'.repeat(1000)}`)).toBe(true);
    expectStatus(await org.api('DELETE', `/webhooks/endpoints/${endpointId}`), 204);
  });
});

describe('an endpoint failing continuously', () => {
  it('is disabled once it has failed for the configured period, visibly, and its events wait until it is enabled again', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    to.answer = () => 500;
    const { id: endpointId } = await endpoint(org, to, ['customer.created', 'customer.updated']);
    const start = freeze();
    const first = await newCustomer(org, 'first@example.com');
    await deliver();
    // Retries every few seconds, then a new event every 10 s: every attempt fails.
    while (t.server.clock.now!.getTime() - start.getTime() < disableAfterMs - 10 * SECOND) {
      advance(10 * SECOND);
      await org.api('PATCH', `/customers/${first.id}`, { name: `Name at ${t.server.clock.now!.toISOString()}` });
      await deliver();
      expect(expectStatus(await org.api('GET', `/webhooks/endpoints/${endpointId}`), 200).enabled).toBe(true);
    }
    const failingSince = (await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } })).failingSince;
    expect(failingSince).toEqual(start);
    advance(10 * SECOND);
    await deliver();
    const record = expectStatus(await org.api('GET', `/webhooks/endpoints/${endpointId}`), 200);
    expect(record).toMatchObject({ enabled: false, disabled_at: t.server.clock.now!.toISOString(), failing_since: start.toISOString() });
    expect(record.disabled_reason).toContain('HTTP 500');

    const attempts = to.receipts.length;
    await newCustomer(org, 'while-disabled@example.com');
    advance(120 * SECOND);
    await deliver();
    expect(to.receipts).toHaveLength(attempts);
    const pending = await prisma().webhookEvent.count({ where: { endpointId, succeeded: null } });
    expect(pending).toBeGreaterThan(0);

    to.answer = () => 204;
    expectStatus(await org.api('PATCH', `/webhooks/endpoints/${endpointId}`, { enabled: true }), 200);
    await deliver();
    expect(await prisma().webhookEvent.count({ where: { endpointId, succeeded: null } })).toBe(0);
    expect(to.receipts.length).toBe(attempts + pending);
    // Events recorded while it was disabled were not for it.
    expect(to.receipts.some((r) => r.event?.data.email === 'while-disabled@example.com')).toBe(false);
    expect((await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } })).failingSince).toBeNull();
    expectAllVerified(to);
  });

  it('starts its failure run afresh after a success', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    const { id: endpointId } = await endpoint(org, to, ['customer.created']);
    freeze();
    to.answer = () => 500;
    await newCustomer(org, 'flaky1@example.com');
    await deliver();
    expect((await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } })).failingSince).toEqual(t.server.clock.now);
    to.answer = () => 200;
    advance(2 * retryBaseMs);
    await deliver();
    expect((await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } })).failingSince).toBeNull();
  });
});

describe('the events of one resource', () => {
  it('reach each endpoint in the order they were recorded, while other resources go on', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    const { id: endpointId } = await endpoint(org, to, ['customer.created', 'customer.updated']);
    freeze();
    const held = await newCustomer(org, 'held@example.com');
    to.answer = (receipt, nth) => (receipt.event?.type === 'customer.created' && receipt.event.data.id === held.id && nth === 1 ? 500 : 200);
    for (const name of ['One', 'Two', 'Three']) expectStatus(await org.api('PATCH', `/customers/${held.id}`, { name }), 200);
    const other = await newCustomer(org, 'other@example.com');
    await deliver();
    // The held customer's creation failed; its updates wait behind it, the other customer does not.
    expect(to.receipts.map((r) => [r.event.type, r.event.data.id]).sort()).toEqual(
      [
        ['customer.created', held.id],
        ['customer.created', other.id],
      ].sort(),
    );
    advance(2 * retryBaseMs);
    await deliver();
    expectAllVerified(to);
    const ofHeld = to.receipts.filter((r) => r.event.data.id === held.id);
    expect(ofHeld.map((r) => [r.event.type, r.event.data.name])).toEqual([
      ['customer.created', null],
      ['customer.created', null],
      ['customer.updated', 'One'],
      ['customer.updated', 'Two'],
      ['customer.updated', 'Three'],
    ]);
    expect(await prisma().webhookEvent.count({ where: { endpointId, succeeded: true } })).toBe(5);
  });
});

describe('which endpoints get an event', () => {
  it('those of its organization subscribed to its type, enabled, not deleted, and existing when it was recorded', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const stranger = await newOrganization(t.server, 'sandbox');
    const [subscribed, otherType, disabled, deleted, late, foreign] = await Promise.all(Array.from({ length: 6 }, () => receiver()));
    await endpoint(org, subscribed, ['customer.created']);
    await endpoint(org, otherType, ['order.paid']);
    const { id: disabledId } = await endpoint(org, disabled, ['customer.created']);
    expectStatus(await org.api('PATCH', `/webhooks/endpoints/${disabledId}`, { enabled: false }), 200);
    const { id: deletedId } = await endpoint(org, deleted, ['customer.created']);
    expectStatus(await org.api('DELETE', `/webhooks/endpoints/${deletedId}`), 204);
    await endpoint(stranger, foreign, ['customer.created']);
    const customer = await newCustomer(org, 'dispatched@example.com');
    await endpoint(org, late, ['customer.created']);
    await deliver();
    expect(subscribed.receipts.map((r) => r.event.data.id)).toEqual([customer.id]);
    for (const nobody of [otherType, disabled, deleted, late, foreign]) expect(nobody.receipts).toEqual([]);
    expect(await prisma().event.count({ where: { organizationId: org.organizationId, dispatchedAt: null } })).toBe(0);
  });
});

describe('a delivery cut short', () => {
  it('by a process killed mid-send is made again once its claim lapses, and nothing is lost', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    to.answer = (_receipt, nth) => (nth === 1 ? 'hang' : 200);
    const { id: endpointId } = await endpoint(org, to, ['customer.created']);
    freeze();
    const customer = await newCustomer(org, 'survivor@example.com');
    // A second worker whose process dies while the receiver holds its request: from then on it
    // reaches the database no more, as a killed process would not.
    let dead = false;
    const { environment } = sandbox();
    const mortal = new Proxy(environment.prisma, {
      get(target, property) {
        if (dead) throw new Error('the process is gone');
        return Reflect.get(target, property);
      },
    });
    const quiet = { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } as never;
    const doomed = new WebhookWorker({ environment, prisma: mortal, now: () => t.server.clock.now!, logger: quiet }, { pollMs: 60_000, dispatchBatch: 100, concurrency: 5 });
    const sending = doomed.runDue().catch(() => {});
    await vi.waitFor(() => expect(to.hanging).toHaveLength(1));
    dead = true;
    to.hanging[0].socket?.destroy();
    await sending;

    const [claimed] = await webhookEvents(endpointId);
    expect([claimed.succeeded, claimed.deliveries.length]).toEqual([null, 0]);
    // The claim still holds: no other worker takes the attempt over yet.
    await deliver();
    expect(to.receipts).toHaveLength(1);
    advance(timeoutMs + 30 * SECOND);
    await deliver();
    expect(to.receipts).toHaveLength(2);
    expectAllVerified(to);
    expect(to.receipts[1].id).toBe(to.receipts[0].id);
    expect(to.receipts[1].event.data.id).toBe(customer.id);
    const [delivered] = await webhookEvents(endpointId);
    expect([delivered.succeeded, delivered.deliveries.map((d) => d.httpCode)]).toEqual([true, [200]]);
  });

  it('by a graceful stop is not cut: the stop waits for the attempt in flight and records it', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    to.answer = () => 'hang';
    const { id: endpointId } = await endpoint(org, to, ['customer.created']);
    await newCustomer(org, 'graceful@example.com');
    const { environment } = sandbox();
    const quiet = { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } as never;
    const worker = new WebhookWorker({ environment, prisma: environment.prisma, now: () => new Date(), logger: quiet }, { pollMs: 10, dispatchBatch: 100, concurrency: 5 });
    worker.start();
    await vi.waitFor(() => expect(to.hanging).toHaveLength(1));
    const stopped = worker.stop();
    setTimeout(() => to.hanging[0].writeHead(200).end('late but fine'), 200);
    await stopped;
    const [event] = await webhookEvents(endpointId);
    expect([event.succeeded, event.deliveries.map((d) => d.response)]).toEqual([true, ['late but fine']]);
  });

  it('by a graceful stop hands back an attempt claimed ahead and not yet started: unsent, not counted, made at once by the next worker', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    to.answer = () => (to.receipts.length === 1 ? 'hang' : 200);
    const { id: endpointId } = await endpoint(org, to, ['customer.created']);
    await newCustomer(org, 'first-in-line@example.com');
    await newCustomer(org, 'second-in-line@example.com');
    const { environment } = sandbox();
    const quiet = { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } as never;
    // One request at a time: the second event waits in the worker's queue, claimed.
    const worker = new WebhookWorker({ environment, prisma: environment.prisma, now: () => new Date(), logger: quiet }, { pollMs: 10, dispatchBatch: 100, concurrency: 1 });
    worker.start();
    await vi.waitFor(() => expect(to.hanging).toHaveLength(1));
    await vi.waitFor(async () => expect((await webhookEvents(endpointId)).map((e) => e.attempts)).toEqual([1, 1]));
    const stopped = worker.stop();
    setTimeout(() => to.hanging[0].writeHead(200).end(), 200);
    await stopped;

    expect(to.receipts).toHaveLength(1);
    const [sent, waiting] = await webhookEvents(endpointId);
    expect([sent.succeeded, sent.deliveries.length]).toEqual([true, 1]);
    expect([waiting.succeeded, waiting.attempts, waiting.lockedUntil, waiting.deliveries.length]).toEqual([null, 0, null, 0]);
    // No claim to wait out: the next worker sends it now, as its first attempt.
    await deliver();
    expect(to.receipts.map((r) => r.id)).toEqual([sent.id, waiting.id]);
    expectAllVerified(to);
    const [, delivered] = await webhookEvents(endpointId);
    expect([delivered.succeeded, delivered.attempts, delivered.deliveries.map((d) => d.httpCode)]).toEqual([true, 1, [200]]);
  });
});

describe('redelivery', () => {
  let org: Org;
  let to: Receiver;
  let endpointId: string;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    to = await receiver();
    endpointId = (await endpoint(org, to, ['customer.created'])).id;
    await newCustomer(org, 'again@example.com');
    await deliver();
  });

  it('sends a delivered event again now, with the same webhook-id, through the official client', async () => {
    const [event] = await webhookEvents(endpointId);
    expect(event.succeeded).toBe(true);
    await org.polar.webhooks.redeliverWebhookEvent({ id: event.id });
    await deliver();
    expect(to.receipts.map((r) => r.id)).toEqual([event.id, event.id]);
    expectAllVerified(to);
    const [after] = await webhookEvents(endpointId);
    expect([after.succeeded, after.attempts, after.deliveries.length]).toEqual([true, 2, 2]);
  });

  it('answers 202 with the event over REST and gives a given-up event a new attempt', async () => {
    const [event] = await webhookEvents(endpointId);
    await prisma().webhookEvent.update({ where: { id: event.id }, data: { succeeded: false, nextAttemptAt: null } });
    const response = await org.api('POST', `/webhooks/events/${event.id}/redeliver`);
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ id: event.id, succeeded: null, type: 'customer.created' });
    await deliver();
    expect(to.of(event.id)).toHaveLength(3);
    expect((await webhookEvents(endpointId))[0].succeeded).toBe(true);
  });

  it('over GraphQL, with the events and deliveries of the organization', async () => {
    const [event] = await webhookEvents(endpointId);
    const { body } = await org.gql(
      `mutation ($id: UUID!) { core { webhookEventRedeliver(id: $id) { id succeeded nextAttemptAt } } }`,
      { id: event.id },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data.core.webhookEventRedeliver).toMatchObject({ id: event.id, succeeded: null });
    await deliver();
    const listed = await org.gql(
      `query ($e: [UUID!]) { core {
        webhookEvents(endpointId: $e) { items { id attempts succeeded } pagination { totalCount } }
        webhookDeliveries(endpointId: $e, limit: 2) { items { succeeded httpCode durationMs webhookEvent { id endpoint { id url } } } pagination { totalCount maxPage } }
      } }`,
      { e: [endpointId] },
    );
    expect(listed.body.errors).toBeUndefined();
    expect(listed.body.data.core.webhookEvents).toEqual({ items: [{ id: event.id, attempts: 4, succeeded: true }], pagination: { totalCount: 1 } });
    expect(listed.body.data.core.webhookDeliveries.pagination).toEqual({ totalCount: 4, maxPage: 2 });
    expect(listed.body.data.core.webhookDeliveries.items[0]).toEqual({
      succeeded: true,
      httpCode: 200,
      durationMs: expect.any(Number),
      webhookEvent: { id: event.id, endpoint: { id: endpointId, url: to.url } },
    });
    expect(to.of(event.id)).toHaveLength(4);
  });
});

describe('another organization', () => {
  let owner: Org;
  let endpointId: string;
  let eventId: string;
  beforeAll(async () => {
    owner = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    endpointId = (await endpoint(owner, to, ['customer.created'])).id;
    await newCustomer(owner, 'private@example.com');
    await deliver();
    eventId = to.receipts[0].id;
  });

  it('sees none of its deliveries or events, even by naming its endpoint or organization', async () => {
    const stranger = await newOrganization(t.server, 'sandbox');
    for (const query of ['', `?endpoint_id=${endpointId}`, `?organization_id=${owner.organizationId}`]) {
      const listed = expectStatus(await stranger.api('GET', `/webhooks/deliveries${query}`), 200);
      expect(listed, query).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    }
    const { body } = await stranger.gql(`{ core { webhookEvents { pagination { totalCount } } } }`);
    expect(body.data.core.webhookEvents.pagination.totalCount).toBe(0);
    expect(expectStatus(await owner.api('GET', '/webhooks/deliveries'), 200).pagination.total_count).toBe(1);
  });

  it('cannot redeliver its events: 404, as for an id that does not exist', async () => {
    const stranger = await newOrganization(t.server, 'sandbox');
    const foreign = await stranger.api('POST', `/webhooks/events/${eventId}/redeliver`);
    const unknown = await stranger.api('POST', `/webhooks/events/${randomUUID()}/redeliver`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    expect(await rejectionOf(stranger.polar.webhooks.redeliverWebhookEvent({ id: eventId }))).toBeInstanceOf(ResourceNotFound);
    const event = await prisma().webhookEvent.findUniqueOrThrow({ where: { id: eventId } });
    expect([event.succeeded, event.nextAttemptAt]).toEqual([true, null]);
  });

  it('and tokens without the webhooks scopes, or none, are refused', async () => {
    const readOnly = await tokenWithScopes(t.server, owner, ['webhooks:read']);
    const productsOnly = await tokenWithScopes(t.server, owner, ['products:read']);
    const base = t.server.base('sandbox');
    expect((await restClient(base, readOnly)('GET', '/webhooks/deliveries')).status).toBe(200);
    expect((await restClient(base, readOnly)('POST', `/webhooks/events/${eventId}/redeliver`)).status).toBe(403);
    expect((await restClient(base, productsOnly)('GET', '/webhooks/deliveries')).status).toBe(403);
    expect((await restClient(base)('GET', '/webhooks/deliveries')).status).toBe(401);
  });

  it('bad input is answered 422 naming the parameter', async () => {
    const limit = await owner.api('GET', '/webhooks/deliveries?limit=0');
    expect(limit.status).toBe(422);
    expect(limit.body.detail[0].loc).toEqual(['query', 'limit']);
    const endpoint = await owner.api('GET', '/webhooks/deliveries?endpoint_id=nope');
    expect(endpoint.status).toBe(422);
    expect(endpoint.body.detail[0].loc[1]).toBe('endpoint_id');
    const id = await owner.api('POST', '/webhooks/events/nope/redeliver');
    expect(id.status).toBe(422);
    expect(id.body.detail[0].loc).toEqual(['path', 'id']);
  });
});

describe('a destination', () => {
  it('at a refused address is not contacted, and the failed delivery is logged', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    freeze();
    const metadata = await storedEndpoint(org, 'http://169.254.169.254/latest/meta-data/', ['customer.created']);
    const mapped = await storedEndpoint(org, 'http://[::ffff:10.0.0.1]:8080/hook', ['customer.created']);
    await newCustomer(org, 'ssrf@example.com');
    await deliver();
    const log = expectStatus(await org.api('GET', '/webhooks/deliveries'), 200);
    const byEndpoint = Object.fromEntries(log.items.map((d: any) => [d.webhook_event.id, d]));
    const [toMetadata] = await webhookEvents(metadata.id);
    const [toMapped] = await webhookEvents(mapped.id);
    expect(byEndpoint[toMetadata.id]).toMatchObject({ succeeded: false, http_code: null, response: '169.254.169.254 is a cloud metadata address: not delivered' });
    expect(byEndpoint[toMapped.id]).toMatchObject({ succeeded: false, http_code: null, response: '::ffff:a00:1 is a private or reserved address: not delivered' });
    expect(byEndpoint[toMetadata.id].duration_ms).toBe(0);
  });
});

describe('an endpoint whose secret cannot be decrypted', () => {
  it('is sent nothing unsigned, and the failed attempt is logged', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const to = await receiver();
    const stored = await storedEndpoint(org, to.url, ['customer.created'], 'raw', to);
    await prisma().webhookEndpoint.update({ where: { id: stored.id }, data: { secretCiphertext: new Uint8Array(randomBytes(48)) } });
    await newCustomer(org, 'unsigned@example.com');
    await deliver();
    expect(to.receipts).toEqual([]);
    const [event] = await webhookEvents(stored.id);
    expect(event.deliveries.map((d) => [d.succeeded, d.httpCode, d.response])).toEqual([
      [false, null, 'The signing secret cannot be decrypted (was SECRETS_KEY changed?); reset the secret: not delivered'],
    ]);
  });
});

describe('discord and slack endpoints', () => {
  it('receive a readable message in those services’ formats, still signed', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const discord = await receiver('signature');
    const slack = await receiver('signature');
    await storedEndpoint(org, discord.url, ['order.paid'], 'discord', discord);
    await storedEndpoint(org, slack.url, ['order.paid'], 'slack', slack);
    const product = await fixedProduct(org, 'Course', 4900);
    const order = await buy(org, product.id, 'student@example.com', 'Stu Dent');
    await deliver();
    expectAllVerified(discord);
    expectAllVerified(slack);
    expect(discord.receipts).toHaveLength(1);
    expect(discord.receipts[0].event).toEqual({
      content: 'Order paid: $49.00 · student@example.com',
      embeds: [
        {
          title: 'Order paid',
          description: '$49.00 · student@example.com',
          fields: [
            { name: 'Amount', value: '$49.00', inline: true },
            { name: 'Customer', value: 'student@example.com', inline: true },
            { name: 'Product', value: 'Course', inline: true },
            { name: 'Status', value: 'paid', inline: true },
            { name: 'Billing reason', value: 'purchase', inline: true },
            { name: 'ID', value: order.id, inline: true },
          ],
          timestamp: expect.any(String),
        },
      ],
      allowed_mentions: { parse: [] },
    });
    expect(slack.receipts).toHaveLength(1);
    const message = slack.receipts[0].event;
    expect(message.text).toBe('Order paid: $49.00 · student@example.com');
    expect(message.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Order paid' } });
    expect(message.blocks[2].fields).toContainEqual({ type: 'mrkdwn', text: '*Amount*\n$49.00' });
    expect(message.blocks[2].fields).toContainEqual({ type: 'mrkdwn', text: `*ID*\n${order.id}` });
  });
});
