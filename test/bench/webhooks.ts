// The webhook case of `npm run bench`: a burst of paid orders in sandbox, and their `order.paid`
// deliveries at a receiver on 127.0.0.1 in this process (the load generator's, not Kassa's). It
// reports the deliveries per second over the burst and the time from commit (the event's
// `timestamp`, the outbox Event's createdAt, written in the transaction that marks the order paid)
// to receipt. Both clocks are this machine's. The receiver verifies a sample of the requests with
// the official client's `validateEvent`; the others are counted by their `webhook-id`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateEvent } from '@polar-sh/sdk/webhooks';

const orders = Number(process.env.BENCH_WEBHOOK_ORDERS ?? 200);
const timeoutMs = Number(process.env.BENCH_WEBHOOK_TIMEOUT_MS ?? 120_000);
/** Every n-th request is verified with `validateEvent` (the first one always). */
const verifyEvery = Number(process.env.BENCH_WEBHOOK_VERIFY_EVERY ?? 10);
/** Checkouts created and confirmed at once. */
const concurrency = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 10);

interface Receipt {
  committedAt: number;
  receivedAt: number;
}

/** Runs the case against the sandbox API at `base` (e.g. http://127.0.0.1:port/sandbox) with an all-scopes token. */
export async function benchWebhooks(base: string, token: string): Promise<void> {
  const api = async (method: string, path: string, body?: unknown, auth = true) => {
    const response = await fetch(`${base}/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text} (BENCH_LOG_ERRORS=1 shows Kassa's error log)`);
    return JSON.parse(text);
  };

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

    console.log(`\nWebhooks: ${orders} checkouts confirmed with tok_visa (${concurrency} at a time) in sandbox, order.paid delivered to a receiver on loopback\n`);
    const started = Date.now();
    let next = 0;
    const buyer = async () => {
      while (next < orders) {
        const i = next++;
        const checkout = await api('POST', '/checkouts/', { products: [product.id] });
        await api(
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
    console.table([
      {
        events: receipts.size,
        'elapsed ms': elapsed,
        'events/s': Math.round((receipts.size / elapsed) * 1000),
        'delivery events/s': Math.round((receipts.size / Math.max(1, deliveryWindow)) * 1000),
        'p50 ms': percentile(50),
        'p99 ms': percentile(99),
        'max ms': latencies[latencies.length - 1],
      },
    ]);
    console.log(
      `elapsed: burst start to last receipt (confirming took ${confirmed - started} ms); delivery events/s: first order.paid commit to last receipt; ` +
        `latency: event createdAt to receipt. ${requests} requests for ${receipts.size} events, ${verified} verified with validateEvent`,
    );
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
