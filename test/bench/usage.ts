// The usage case of `npm run bench`: ingestion and a meter's quantities at volume, in production.
// First BENCH_USAGE_EVENTS events (1,000,000 by default) are ingested in batches of 1000 through
// `POST /v1/events/ingest`, BENCH_USAGE_CONCURRENCY batches in flight at once, spread over
// BENCH_USAGE_CUSTOMERS customers and the twelve months of 2025, four in five named `api.call`
// with a `tokens` number, the rest `storage`: it reports events per second over the whole
// ingestion and the p50/p99 of a batch. Then a meter (sum of tokens over `api.call`) is asked
// for one customer's quantities over one month by day,
// `GET /v1/meters/{id}/quantities?customer_id=…&interval=day`, under load for BENCH_SECONDS: it
// reports requests per second and p50/p99. A check first asserts that the answer's total is the
// sum this process computed from what it sent. Every response must be 200.
// Targets (PASS/BELOW beside each figure): at least 20,000 events/s on PostgreSQL (the embedded
// database is measured for comparison), quantities p99 under 100 ms on both, and the server's
// resident memory flat while it ingests on PostgreSQL (sampled every second: the second half of the
// run peaks within 64 MB of the first half's peak; the embedded bench database lives in memory, so
// there the process grows with the events it stores and the curve is only printed).
import autocannon from 'autocannon';
import { databaseName, onPostgres, verdict } from './targets.ts';

const totalEvents = Number(process.env.BENCH_USAGE_EVENTS ?? 1_000_000);
const customerCount = Number(process.env.BENCH_USAGE_CUSTOMERS ?? 1000);
const concurrency = Number(process.env.BENCH_USAGE_CONCURRENCY ?? 4);
const batchSize = 1000;

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];

/** The n-th event of the run, the same on every run: its customer (by index), name, time and tokens. */
function eventAt(n: number) {
  const customer = (n * 7919) % customerCount;
  const name = n % 5 === 4 ? 'storage' : 'api.call';
  // Spread over 2025: a prime stride through the year's seconds.
  const second = (n * 104_729) % (365 * 24 * 3600);
  return { customer, name, timestamp: new Date(Date.UTC(2025, 0, 1) + second * 1000), tokens: (n % 97) + 1 };
}

/** Runs the case against the production API at `base` (http://127.0.0.1:port) with an all-scopes token. */
export async function benchUsage(base: string, token: string, seconds: number, connections: number, rssMb: () => number): Promise<void> {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)} (BENCH_LOG_ERRORS=1 shows Kassa's error log)`);
    return JSON.parse(text);
  };

  const customers: string[] = [];
  for (let i = 0; i < customerCount; i += 20) {
    const made = await Promise.all(
      Array.from({ length: Math.min(20, customerCount - i) }, (_, j) => api('POST', '/customers/', { email: `usage-${i + j}-${Date.now()}@example.com` })),
    );
    customers.push(...made.map((c: { id: string }) => c.id));
  }

  console.log(`\nUsage: ${totalEvents} events in batches of ${batchSize}, ${concurrency} batches in flight, over ${customerCount} customers\n`);
  const batches = Math.ceil(totalEvents / batchSize);
  const latencies: number[] = [];
  let next = 0;
  // The server's memory while it ingests, sampled every second: it must not grow with the events.
  const rss = [rssMb()];
  const sampler = setInterval(() => rss.push(rssMb()), 1000);
  const started = performance.now();
  const worker = async () => {
    while (next < batches) {
      const batch = next++;
      const events = [];
      for (let n = batch * batchSize; n < Math.min(totalEvents, (batch + 1) * batchSize); n++) {
        const e = eventAt(n);
        events.push({ name: e.name, customer_id: customers[e.customer], timestamp: e.timestamp.toISOString(), metadata: e.name === 'api.call' ? { tokens: e.tokens } : { bytes: e.tokens * 1024 } });
      }
      const sent = performance.now();
      const answer = await api('POST', '/events/ingest', { events });
      latencies.push(performance.now() - sent);
      if (answer.inserted !== events.length) throw new Error(`batch ${batch}: ${answer.inserted} of ${events.length} inserted`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker)).finally(() => clearInterval(sampler));
  const elapsed = (performance.now() - started) / 1000;
  rss.push(rssMb());
  // The heap rises and falls with the collector: memory is flat when the second half of the run
  // peaks no higher than the first (a leak would lift every later peak).
  const half = Math.max(1, Math.floor(rss.length / 2));
  const firstHalf = Math.max(...rss.slice(0, half));
  const secondHalf = Math.max(...rss.slice(half));
  console.table([
    {
      case: 'ingest',
      events: totalEvents,
      seconds: Number(elapsed.toFixed(1)),
      'events/s': Math.round(totalEvents / elapsed),
      'batch p50 ms': Math.round(percentile(latencies, 50)),
      'batch p99 ms': Math.round(percentile(latencies, 99)),
      'RSS MB start/peak/end': `${rss[0]}/${Math.max(...rss)}/${rss[rss.length - 1]}`,
      database: databaseName,
      // The target is set for PostgreSQL on a 2-core machine.
      ...verdict(Math.round(totalEvents / elapsed), onPostgres ? { atLeast: 20_000 } : null),
    },
  ]);

  console.log(`RSS over the ingestion (MB, one sample a second): ${rss.join(' ')}`);
  console.table([{ case: 'ingest memory', 'first half peak MB': firstHalf, 'second half peak MB': secondHalf, ...verdict(secondHalf, onPostgres ? { atMost: firstHalf + 64 } : null) }]);

  const meter = await api('POST', '/meters/', {
    name: 'Tokens',
    filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api.call' }] },
    aggregation: { func: 'sum', property: 'tokens' },
  });
  const customer = 0;
  const month = { start: new Date(Date.UTC(2025, 5, 1)), end: new Date(Date.UTC(2025, 6, 1) - 1) };
  let expected = 0;
  let matching = 0;
  for (let n = 0; n < totalEvents; n++) {
    const e = eventAt(n);
    if (e.customer === customer && e.name === 'api.call' && e.timestamp >= month.start && e.timestamp <= month.end) {
      expected += e.tokens;
      matching++;
    }
  }
  const path = `/v1/meters/${meter.id}/quantities?customer_id=${customers[customer]}&interval=day&start_timestamp=${month.start.toISOString()}&end_timestamp=${month.end.toISOString()}`;
  const answer = await api('GET', path.slice('/v1'.length));
  if (answer.total !== expected || answer.quantities.length !== 30) {
    throw new Error(`quantities: total ${answer.total} over ${answer.quantities.length} days, expected ${expected} over 30`);
  }
  const result = await autocannon({ url: `${base}${path}`, headers, connections, duration: seconds });
  if (result.non2xx || result.errors || result.timeouts) throw new Error(`quantities: every response must be 200; got ${JSON.stringify(result.statusCodeStats)}`);
  console.log(`\nMeter quantities: one customer (${matching} matching events), June 2025 by day, among ${totalEvents} events; ${connections} connections for ${seconds}s\n`);
  console.table([
    { case: 'quantities', 'req/s': Math.round(result.requests.average), 'p50 ms': result.latency.p50, 'p99 ms': result.latency.p99, database: databaseName, ...verdict(result.latency.p99, { atMost: 100 }) },
  ]);
}
