// The webhook cases of `npm run bench`, each with a receiver on 127.0.0.1 in this process (the load
// generator's, not Kassa's). The receiver verifies a sample of the requests with the official
// client's `validateEvent`; the others are counted by their `webhook-id`. Both clocks are this
// machine's.
//
// - The order pipeline: a burst of checkouts confirmed with tok_visa in sandbox, each charged by the
//   payment job, marked paid with its `order.paid` event, and that event delivered. It reports paid
//   orders per second from the burst's start to the last receipt (target: 200), the confirms per
//   second, and the time from commit (the event's `timestamp`, the outbox Event's createdAt,
//   written in the transaction that marks the order paid) to receipt (target: p99 under 500 ms).
// - The fan-out: BENCH_FANOUT_EVENTS events committed in one transaction to one endpoint; the
//   deliveries per second from the commit to the last receipt (target: 2,000).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateEvent } from '@polar-sh/sdk/webhooks';

const orders = Number(process.env.BENCH_WEBHOOK_ORDERS ?? 200);
const timeoutMs = Number(process.env.BENCH_WEBHOOK_TIMEOUT_MS ?? 120_000);
/** Every n-th request is verified with `validateEvent` (the first one always). */
const verifyEvery = Number(process.env.BENCH_WEBHOOK_VERIFY_EVERY ?? 10);
/** Checkouts created and confirmed at once. */
const concurrency = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 10);
const fanoutEvents = Number(process.env.BENCH_FANOUT_EVENTS ?? 5000);
const targets = { ordersPerSecond: 200, p99Ms: 500, deliveriesPerSecond: 2000 };
const verdict = (ok: boolean) => (ok ? 'PASS' : 'BELOW');

/** A REST client of the sandbox API at `base`, with an all-scopes token. */
function restApi(base: string, token: string) {
  return async (method: string, path: string, body?: unknown, auth = true) => {
    const response = await fetch(`${base}/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text} (BENCH_LOG_ERRORS=1 shows Kassa's error log)`);
    return JSON.parse(text);
  };
}

interface Receipt {
  committedAt: number;
  receivedAt: number;
}

/** What one run of the order pipeline measured. */
export interface PipelineRun {
  ordersPerSecond: number;
  /** Requests the receiver got beyond one per event: a webhook sent twice. */
  repeated: number;
}

/**
 * Runs the case against the sandbox API at `bases` (e.g. http://127.0.0.1:port/sandbox) with an
 * all-scopes token: one base, or several Kassa processes on one database, the checkouts spread
 * over them in turn (the token and the rows are the database's, so any process serves any call).
 */
export async function benchWebhooks(bases: string | string[], token: string): Promise<PipelineRun> {
  const servers = ([] as string[]).concat(bases);
  const api = restApi(servers[0], token);

  const receipts = new Map<string, Receipt>();
  let secret = '';
  let requests = 0;
  let verified = 0;
  let failure: Error | null = null;
  let allArrived: () => void = () => {};
  const arrived = new Promise<void>((resolve) => (allArrived = resolve));
  const receiver = createServer(async (req, res) => {
    const receivedAt = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    try {
      const id = headers['webhook-id'];
      if (!id) throw new Error('a delivery without webhook-id');
      if (requests++ % verifyEvery === 0) {
        const event = validateEvent(body, headers, secret);
        if (event.type !== 'order.paid') throw new Error(`verified an unexpected ${event.type}`);
        verified++;
      }
      const parsed = JSON.parse(body) as { type: string; timestamp: string };
      if (parsed.type !== 'order.paid') throw new Error(`received an unexpected ${parsed.type}`);
      // A redelivery of the same id keeps the first receipt: the latency is to the first arrival.
      if (!receipts.has(id)) receipts.set(id, { committedAt: Date.parse(parsed.timestamp), receivedAt });
      res.writeHead(204).end();
      if (receipts.size === orders) allArrived();
    } catch (error) {
      failure ??= error as Error;
      res.writeHead(400).end();
      allArrived();
    }
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));

  try {
    const product = await api('POST', '/products/', {
      name: 'Webhook bench',
      recurring_interval: null,
      prices: [{ amount_type: 'fixed', price_amount: 1999, price_currency: 'usd' }],
    });
    const endpoint = await api('POST', '/webhooks/endpoints', {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
      format: 'raw',
      events: ['order.paid'],
    });
    secret = endpoint.secret;

    /** Where the missing deliveries are, read through the API: the orders by status, the failed attempts. */
    const whereTheyAre = async (endpointId: string) => {
      const all = async (path: string) => {
        const items: any[] = [];
        for (let page = 1; ; page++) {
          const result = await api('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100&page=${page}`);
          items.push(...result.items);
          if (page >= result.pagination.max_page) return items;
        }
      };
      const statuses = new Map<string, number>();
      for (const order of await all('/orders/')) statuses.set(order.status, (statuses.get(order.status) ?? 0) + 1);
      const attempts = await all(`/webhooks/deliveries?endpoint_id=${endpointId}`);
      const failed = attempts.filter((a) => !a.succeeded);
      return (
        `orders by status: ${JSON.stringify(Object.fromEntries(statuses))}; ${attempts.length} delivery attempts logged, ${failed.length} failed` +
        (failed.length ? ` (e.g. ${JSON.stringify(failed[0]).slice(0, 300)})` : '')
      );
    };

    const processes = servers.length === 1 ? '' : `, spread over ${servers.length} Kassa processes on one database`;
    console.log(`\nWebhooks: ${orders} checkouts confirmed with tok_visa (${concurrency} at a time) in sandbox${processes}, order.paid delivered to a receiver on loopback\n`);
    const started = Date.now();
    let next = 0;
    const buyer = async () => {
      while (next < orders) {
        const i = next++;
        const on = restApi(servers[i % servers.length], token);
        const checkout = await on('POST', '/checkouts/', { products: [product.id] });
        await on(
          'POST',
          `/checkouts/client/${checkout.client_secret}/confirm`,
          { customer_email: `bench-${i}@example.com`, confirmation_token_id: 'tok_visa' },
          false,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, orders) }, buyer));
    const confirmed = Date.now();

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const outcome = await Promise.race([arrived, timedOut]);
    clearTimeout(timer);
    // Set by the receiver's handler, which TypeScript's narrowing does not see.
    const refused = failure as Error | null;
    if (refused) throw new Error(`the webhook receiver refused a delivery: ${refused.message}`);
    if (outcome === 'timeout') {
      throw new Error(
        `webhooks: only ${receipts.size} of ${orders} order.paid deliveries arrived within ${timeoutMs} ms (BENCH_WEBHOOK_TIMEOUT_MS); ` +
          (await whereTheyAre(endpoint.id).catch((error) => `(could not tell where the others are: ${error.message})`)),
      );
    }

    const list = [...receipts.values()];
    const latencies = list.map((r) => r.receivedAt - r.committedAt).sort((a, b) => a - b);
    const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
    const firstCommit = Math.min(...list.map((r) => r.committedAt));
    const lastReceipt = Math.max(...list.map((r) => r.receivedAt));
    const elapsed = lastReceipt - started;
    // The delivery rate: from the first order.paid commit to the last receipt.
    const deliveryWindow = lastReceipt - firstCommit;
    const ordersPerSecond = (receipts.size / elapsed) * 1000;
    console.table([
      {
        orders: receipts.size,
        'elapsed ms': elapsed,
        'orders/s': Math.round(ordersPerSecond),
        'confirms/s': Math.round((orders / Math.max(1, confirmed - started)) * 1000),
        'delivery events/s': Math.round((receipts.size / Math.max(1, deliveryWindow)) * 1000),
        'p50 ms': percentile(50),
        'p99 ms': percentile(99),
        'max ms': latencies[latencies.length - 1],
      },
    ]);
    console.log(
      `orders/s: paid orders delivered, burst start to last receipt (confirming took ${confirmed - started} ms); delivery events/s: first order.paid commit to last receipt; ` +
        `latency: event createdAt to receipt. ${requests} requests for ${receipts.size} events, ${verified} verified with validateEvent`,
    );
    console.log(`orders/s: ${Math.round(ordersPerSecond)} (target ${targets.ordersPerSecond}) ${verdict(ordersPerSecond >= targets.ordersPerSecond)}`);
    console.log(`p99 commit to receipt: ${percentile(99)} ms (target under ${targets.p99Ms}) ${verdict(percentile(99) < targets.p99Ms)}`);
    return { ordersPerSecond, repeated: requests - receipts.size };
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}

/**
 * The fan-out alone: `fanoutEvents` customer.created events committed in one transaction by the
 * target (`seed`), all to one endpoint, each about its own customer id (events of one resource are
 * delivered in order, one at a time), timed from the commit to the last receipt.
 */
export async function benchWebhookFanout(base: string, token: string, seed: (command: object) => Promise<{ committedAt: number }>): Promise<void> {
  const api = restApi(base, token);
  // A customer as the API renders it: every event's payload, each with its own id.
  const customer = await api('POST', '/customers/', { email: `fanout-${Date.now()}@example.com` });
  const received = new Set<string>();
  let lastReceipt = 0;
  let requests = 0;
  let verified = 0;
  let secret = '';
  let failure: Error | null = null;
  let allArrived: () => void = () => {};
  const arrived = new Promise<void>((resolve) => (allArrived = resolve));
  const receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      const id = req.headers['webhook-id'];
      if (typeof id !== 'string') throw new Error('a delivery without webhook-id');
      if (requests++ % (verifyEvery * 10) === 0) {
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        const event = validateEvent(Buffer.concat(chunks).toString('utf8'), headers, secret);
        if (event.type !== 'customer.created') throw new Error(`verified an unexpected ${event.type}`);
        verified++;
      }
      received.add(id);
      lastReceipt = Date.now();
      res.writeHead(204).end();
      if (received.size === fanoutEvents) allArrived();
    } catch (error) {
      failure ??= error as Error;
      res.writeHead(400).end();
      allArrived();
    }
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = await api('POST', '/webhooks/endpoints', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, format: 'raw', events: ['customer.created'] });
    secret = endpoint.secret;
    console.log(`\nWebhook fan-out: ${fanoutEvents} customer.created events committed at once in sandbox, delivered to one endpoint on loopback\n`);
    const { committedAt } = await seed({ seedEvents: { count: fanoutEvents, type: 'customer.created', data: customer } });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const outcome = await Promise.race([arrived, timedOut]);
    clearTimeout(timer);
    const refused = failure as Error | null;
    if (refused) throw new Error(`the webhook receiver refused a delivery: ${refused.message}`);
    if (outcome === 'timeout') throw new Error(`fan-out: only ${received.size} of ${fanoutEvents} deliveries arrived within ${timeoutMs} ms (BENCH_WEBHOOK_TIMEOUT_MS)`);
    const window = Math.max(1, lastReceipt - committedAt);
    const perSecond = (fanoutEvents / window) * 1000;
    console.table([{ deliveries: received.size, 'commit to last receipt ms': window, 'deliveries/s': Math.round(perSecond) }]);
    console.log(`${requests} requests for ${received.size} events, ${verified} verified with validateEvent`);
    console.log(`fan-out deliveries/s: ${Math.round(perSecond)} (target ${targets.deliveriesPerSecond}) ${verdict(perSecond >= targets.deliveriesPerSecond)}`);
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
