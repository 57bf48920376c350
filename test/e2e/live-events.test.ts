// The GraphQL subscription `coreEvents`: the organization's events, live over SSE as graphql-yoga
// serves it, published by the webhook worker once their dispatch has committed. Only the
// organizations the token reaches, only to tokens with a webhooks scope, never across environments;
// and, with Redis, from the process that dispatched them to subscribers on any process.
import { once } from 'node:events';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveEvent } from '../../src/events/live.ts';
import { createLogger } from '../../src/logger.ts';
import { startKassa, type Kassa } from '../../src/server.ts';
import { newOrganization, tokenWithScopes } from '../helpers/organizations.ts';
import { buy, fixedProduct } from '../helpers/purchases.ts';
import { startTestServer, usePostgres, type TestServer } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';
import { hasRedis, startRedis, type TestRedis } from '../helpers/redis.ts';

const subscription = 'subscription ($types: [EventType!], $organizationId: [UUID!]) { coreEvents(types: $types, organizationId: $organizationId) { id type timestamp organizationId resourceId data } }';

interface Stream {
  status: number;
  contentType: string | null;
  /** Every `next` payload received so far. */
  results: { data?: { coreEvents: LiveEvent } | null; errors?: { message: string; extensions?: { code?: string } }[] }[];
  /** Resolves when the server completes the stream. */
  completed: Promise<void>;
  close(): void;
}

/** Opens the subscription over SSE (POST, `Accept: text/event-stream`), as a browser's fetch would. */
async function openStream(base: string, token: string | undefined, variables: Record<string, unknown> = {}, query = subscription): Promise<Stream> {
  const abort = new AbortController();
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const results: Stream['results'] = [];
  const completed = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(message)?.[1];
          const data = message.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
          if (event === 'next' && data) results.push(JSON.parse(data));
          if (event === 'complete') return;
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  return { status: response.status, contentType: response.headers.get('content-type'), results, completed, close: () => abort.abort() };
}

const eventsOf = (stream: Stream) => stream.results.flatMap((r) => (r.data?.coreEvents ? [r.data.coreEvents] : []));

async function refusal(stream: Stream) {
  await stream.completed;
  expect(eventsOf(stream)).toEqual([]);
  return stream.results[0]?.errors?.[0]?.extensions?.code;
}

describe('coreEvents in one process', () => {
  const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '20', JOB_POLL_INTERVAL_MS: '20' } });

  it('streams a paid order to its organization only, and nothing across environments', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const other = await newOrganization(t.server, 'sandbox');
    const stream = await openStream(t.server.base('sandbox'), org.token);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const paidOnly = await openStream(t.server.base('sandbox'), org.token, { types: ['order_paid'] });
    const otherStream = await openStream(t.server.base('sandbox'), other.token);
    // What production's stream carries, whoever asks: sandbox's events never reach it.
    const production: LiveEvent[] = [];
    const productionStream = t.server.kassa.environments.production.environment.live.subscribe(() => true);
    void (async () => {
      for await (const event of productionStream) production.push(event);
    })();

    const product = await fixedProduct(org);
    const order = await buy(org, product.id, 'live@example.com');
    const paid = await eventually(
      async () => eventsOf(stream).find((e) => e.type === 'order_paid'),
      (e) => e !== undefined,
      'order.paid on the stream',
    );
    expect(paid).toMatchObject({ organizationId: org.organizationId, resourceId: order.id });
    expect(paid!.data).toMatchObject({ id: order.id, status: 'paid', paid: true, total_amount: 1999 });
    const stored = await t.server.kassa.environments.sandbox.environment.prisma.event.findUniqueOrThrow({ where: { id: paid!.id } });
    expect(paid!.data).toEqual(stored.data);
    expect(new Date(paid!.timestamp).getTime()).toBe(stored.createdAt.getTime());
    // Every event of the purchase, in the order recorded, and the filtered stream only order.paid.
    const types = eventsOf(stream).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['order_created', 'order_paid']));
    expect(types.indexOf('order_created')).toBeLessThan(types.indexOf('order_paid'));
    await eventually(async () => eventsOf(paidOnly), (events) => events.length > 0, 'order.paid on the filtered stream');
    expect(eventsOf(paidOnly).map((e) => e.type)).toEqual(['order_paid']);

    // A marker recorded after the purchase, for the other organization and in production: once each
    // has arrived, anything of the purchase that was going to reach those streams has too.
    const otherMarker = (await other.api('POST', '/customers/', { email: 'other-marker@example.com' })).body;
    await eventually(async () => eventsOf(otherStream), (events) => events.some((e) => e.resourceId === otherMarker.id), 'the marker on the other stream');
    expect(eventsOf(otherStream).map((e) => [e.type, e.resourceId])).toEqual([['customer_created', otherMarker.id]]);
    const productionOrg = await newOrganization(t.server, 'production');
    const productionMarker = (await productionOrg.api('POST', '/customers/', { email: 'production-marker@example.com' })).body;
    await eventually(async () => production, (events) => events.some((e) => e.resourceId === productionMarker.id), 'the marker on the production stream');
    expect(production.map((e) => e.organizationId)).toEqual(production.map(() => productionOrg.organizationId));
    await productionStream.return?.();
    for (const s of [stream, paidOnly, otherStream]) s.close();
  });

  it('ends a stream whose token is revoked before it carries another event', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const token = await tokenWithScopes(t.server, org, ['webhooks:read'], 'live stream');
    const stream = await openStream(t.server.base('sandbox'), token);
    expect((await org.api('POST', '/customers/', { email: 'before@example.com' })).status).toBe(201);
    await eventually(async () => eventsOf(stream), (events) => events.length === 1, 'customer.created on the stream');

    const row = await t.server.kassa.environments.sandbox.environment.prisma.organizationAccessToken.findFirstOrThrow({
      where: { organizationId: org.organizationId, comment: 'live stream' },
    });
    const revoked = await org.gql('mutation ($id: UUID!) { core { organizationAccessTokenRevoke(id: $id) { id } } }', { id: row.id });
    expect(revoked.body.errors).toBeUndefined();
    expect((await org.api('POST', '/customers/', { email: 'after@example.com' })).status).toBe(201);
    await stream.completed;
    expect(eventsOf(stream).map((e) => (e.data as { email: string }).email)).toEqual(['before@example.com']);
  });

  it('filters by types written in the document or in a variable of another name', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const literal = await openStream(t.server.base('sandbox'), org.token, {}, 'subscription { coreEvents(types: [customer_updated]) { type resourceId } }');
    const renamed = await openStream(t.server.base('sandbox'), org.token, { only: ['customer_updated'] }, 'subscription ($only: [EventType!]) { coreEvents(types: $only) { type resourceId } }');
    const customer = (await org.api('POST', '/customers/', { email: 'filtered@example.com' })).body;
    expect((await org.api('PATCH', `/customers/${customer.id}`, { name: 'Filtered' })).status).toBe(200);
    for (const stream of [literal, renamed]) {
      await eventually(async () => eventsOf(stream), (events) => events.length > 0, 'customer.updated on the filtered stream');
      expect(eventsOf(stream)).toEqual([{ type: 'customer_updated', resourceId: customer.id }]);
      stream.close();
    }
  });

  it('refuses a type the schema does not name, such as the wire spelling, before opening the stream', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    for (const types of [['order.paid'], ['order_paid', 'order_shipped']]) {
      const stream = await openStream(t.server.base('sandbox'), org.token, { types });
      expect(stream.status).toBe(200);
      await stream.completed;
      expect(stream.results).toEqual([{ errors: [expect.objectContaining({ message: expect.stringContaining('EventType'), extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) })] }]);
    }
  });

  it('refuses a variable of the wrong type with BAD_USER_INPUT before opening the stream', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const stream = await openStream(t.server.base('sandbox'), org.token, { organizationId: ['not-an-id'] });
    expect(stream.status).toBe(200);
    await stream.completed;
    expect(stream.results).toEqual([{ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) })] }]);
  });

  it('streams nothing of an organization the token does not reach', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const other = await newOrganization(t.server, 'sandbox');
    const stream = await openStream(t.server.base('sandbox'), org.token, { organizationId: [other.organizationId] });
    expect(await refusal(stream)).toBe('NOT_PERMITTED');
  });

  it('refuses no token, a customer token and a token without a webhooks scope', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    expect(await refusal(await openStream(t.server.base('sandbox'), undefined))).toBe('UNAUTHENTICATED');

    const customer = (await org.api('POST', '/customers/', { email: 'portal@example.com' })).body;
    const session = await org.api('POST', '/customer-sessions/', { customer_id: customer.id });
    expect(session.status).toBe(201);
    expect(await refusal(await openStream(t.server.base('sandbox'), session.body.token))).toBe('NOT_PERMITTED');

    const ordersOnly = await tokenWithScopes(t.server, org, ['orders:read']);
    expect(await refusal(await openStream(t.server.base('sandbox'), ordersOnly))).toBe('NOT_PERMITTED');

    const readOnly = await tokenWithScopes(t.server, org, ['webhooks:read']);
    const allowed = await openStream(t.server.base('sandbox'), readOnly);
    expect(allowed.status).toBe(200);
    const marker = (await org.api('POST', '/customers/', { email: 'allowed-marker@example.com' })).body;
    await eventually(async () => eventsOf(allowed), (events) => events.some((e) => e.resourceId === marker.id), 'the marker on the allowed stream');
    expect(allowed.results.filter((r) => r.errors)).toEqual([]);
    allowed.close();
  });

  it('ends open streams when the server shuts down, so shutdown does not wait for them', async () => {
    // A shutdown that waited for the stream would take the whole ten-minute timeout; one that ends
    // it takes as long as closing the databases, which on a loaded machine can be several seconds.
    const own = await startTestServer({ SHUTDOWN_TIMEOUT_MS: '600000' });
    const org = await newOrganization(own, 'sandbox');
    const stream = await openStream(own.base('sandbox'), org.token);
    expect(stream.status).toBe(200);
    const started = Date.now();
    await own.close();
    await stream.completed;
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 180_000); // a server of its own: starting it is the slow part
});

describe('open streams are capped, per organization, user or customer and per process', () => {
  const t = useTestServer({ env: { LIVE_STREAMS_PER_PRINCIPAL: '2', LIVE_STREAMS_PER_PROCESS: '3' } });

  /** Asks for a stream that is expected to be refused: the status and the JSON body. */
  async function refusedStream(token: string) {
    const response = await fetch(`${t.server.base('sandbox')}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: subscription }),
    });
    return { status: response.status, contentType: response.headers.get('content-type'), body: (await response.json()) as { errors: { message: string; extensions: { code: string; limit: { name: string; max: number } } }[] } };
  }

  /** Opens a stream once a slot is free again (slots come back when the server sees the close). */
  async function streamOnceFree(token: string): Promise<Stream> {
    let opened: Stream | undefined;
    await eventually(
      async () => {
        const stream = await openStream(t.server.base('sandbox'), token);
        if (stream.status === 200) opened = stream;
        else await stream.completed;
        return stream.status;
      },
      (status) => status === 200,
      'a slot to be free',
    );
    return opened!;
  }

  it('refuses a third stream of one organization with 429 saying what to do, whichever of its tokens asks; closing one frees its slot', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const first = await openStream(t.server.base('sandbox'), org.token);
    const second = await openStream(t.server.base('sandbox'), org.token);
    expect([first.status, second.status]).toEqual([200, 200]);
    const refused = await refusedStream(org.token);
    expect(refused.status).toBe(429);
    expect(refused.contentType).toMatch(/^application\/json/);
    expect(refused.body.errors[0].extensions).toEqual({ code: 'TOO_MANY_STREAMS', limit: { name: 'streams_per_principal', max: 2 } });
    expect(refused.body.errors[0].message).toContain('at most 2 per organization');
    expect(refused.body.errors[0].message).toContain('Close a stream you no longer read');
    // Another token of the same organization counts against the same slots.
    expect((await refusedStream(await tokenWithScopes(t.server, org, ['webhooks:read']))).status).toBe(429);
    first.close();
    const third = await streamOnceFree(org.token);
    second.close();
    third.close();
  });

  it('gives back the slot of a client that disconnects abruptly', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const body = JSON.stringify({ query: subscription });
    const socket = connect(Number(new URL(t.server.url).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `POST /sandbox/v1/graphql HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: text/event-stream\r\nauthorization: Bearer ${org.token}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const [head] = (await once(socket, 'data')) as [Buffer];
    expect(head.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
    const other = await openStream(t.server.base('sandbox'), org.token);
    expect(other.status).toBe(200);
    expect((await refusedStream(org.token)).status).toBe(429);
    socket.resetAndDestroy();
    const again = await streamOnceFree(org.token);
    other.close();
    again.close();
    expect(t.server.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50)).toEqual([]);
  });

  it('refuses every holder once the process holds its maximum, until a stream closes', async () => {
    const one = await newOrganization(t.server, 'sandbox');
    const two = await newOrganization(t.server, 'sandbox');
    const held = [await streamOnceFree(one.token), await streamOnceFree(one.token), await streamOnceFree(two.token)];
    expect(held.map((s) => s.status)).toEqual([200, 200, 200]);
    const refused = await refusedStream(two.token);
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].extensions.limit).toEqual({ name: 'streams_per_process', max: 3 });
    expect(refused.body.errors[0].message).toContain('on this server');
    held[0].close();
    const freed = await streamOnceFree(two.token);
    for (const stream of [...held.slice(1), freed]) stream.close();
  });
});

// Dispatch runs in one process at a time per database: Redis carries its events to the others.
describe.runIf(usePostgres && hasRedis)('coreEvents across two processes on one database, through Redis', () => {
  let redis: TestRedis;
  let redisUrl: string;
  let server: TestServer;
  let other: Kassa;
  beforeAll(async () => {
    redis = await startRedis();
    redisUrl = redis.url;
    server = await startTestServer({ TEST_CARD_DELAY_MS: '20', JOB_POLL_INTERVAL_MS: '20', REDIS_URL: redisUrl });
    const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
    other = await startKassa({ ...server.config }, createLogger('info', discard));
  });
  afterAll(async () => {
    await other?.close();
    await server?.close();
    redis?.stop();
  });

  it('delivers an event dispatched by one process to a subscriber on the other', async () => {
    // Only this process dispatches: the other's worker is stopped.
    await other.environments.sandbox.webhooks.stop();
    const org = await newOrganization(server, 'sandbox');
    const stream = await openStream(`${other.url}/sandbox/v1`, org.token, { types: ['order_paid'] });
    expect(stream.status).toBe(200);
    const probe = new Redis(redisUrl);
    await eventually(async () => (await probe.pubsub('NUMSUB', 'kassa:sandbox:events'))[1] as number, (n) => n >= 1, 'the other process to listen on Redis');
    probe.disconnect();
    const product = await fixedProduct(org);
    const order = await buy(org, product.id, 'redis@example.com');
    await eventually(async () => eventsOf(stream), (events) => events.length === 1, 'order.paid on the other process');
    expect(eventsOf(stream)[0]).toMatchObject({ type: 'order_paid', organizationId: org.organizationId, resourceId: order.id, data: { id: order.id, status: 'paid' } });
    stream.close();
  });
});
