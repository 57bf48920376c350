// `npm run bench`: loopback load on `GET /v1/products/?limit=100` (100 products seeded) through REST,
// the same query in GraphQL, and a baseline — a bare node:http handler making the same Prisma query
// (the products with their prices and benefits, and the count) on the same database, without
// authentication — all served by one child process while this one generates the load. Each
// surface is reported as a ratio to the baseline, so the figure is Kassa's own overhead whatever
// the machine. Target: REST and GraphQL each at least 0.8.
// Then the rate limiter's overhead: the same list without limits, with the in-memory store and
// with Redis, as ratios to no limits.
// Every response of a measured run must be 200: anything else stops the bench.
// Then the webhook case (./webhooks.ts): a burst of paid orders in sandbox to their order.paid
// deliveries at a loopback receiver, in events/s and p50/p99 from commit to receipt.
// BENCH_CASES selects the cases (comma-separated: products, ratelimits, webhooks; all by default).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { benchWebhooks } from './webhooks.ts';
import { hasRedis, startRedis } from '../helpers/redis.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const target = 0.8;
const knownCases = ['products', 'ratelimits', 'webhooks'];
const cases = new Set((process.env.BENCH_CASES ?? knownCases.join(',')).split(',').map((c) => c.trim()));
for (const name of cases) if (!knownCases.includes(name)) throw new Error(`BENCH_CASES: unknown case ${name} (${knownCases.join(', ')})`);

interface Target {
  kassa: string;
  baseline: string;
  token: string;
  sandboxToken: string;
  stop(): void;
}

/** Starts a target process (./target.ts) with more Kassa settings, and reads its addresses. */
async function startTarget(kassaEnv: Record<string, string> = {}): Promise<Target> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./target.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_KASSA_ENV: JSON.stringify(kassaEnv) },
  });
  const addresses = await new Promise<Omit<Target, 'stop'>>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
    child.once('exit', (code) => reject(new Error(`the benchmark target exited with ${code}`)));
  });
  return { ...addresses, stop: () => child.kill('SIGTERM') };
}

// Limits stay on, as in production, with budgets no benchmark reaches: every request is counted
// and every GraphQL operation's cost taken from its points bucket, none is refused.
const unreachedBudgets = {
  RATE_LIMITS: 'on',
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_IP_PER_SECOND: '1000000',
  GRAPHQL_POINTS_MAXIMUM: '100000000',
  GRAPHQL_POINTS_RESTORE_RATE: '100000000',
};
const targets: Target[] = [];
const addresses = await startTarget(unreachedBudgets);
targets.push(addresses);

const graphqlQuery = `query { core { products(limit: 100) { items {
  id createdAt modifiedAt name description recurringInterval isRecurring isArchived organizationId metadata
  prices { id createdAt modifiedAt amountType isArchived productId type recurringInterval
    ... on ProductPriceFixed { priceCurrency priceAmount }
    ... on ProductPriceCustom { priceCurrency minimumAmount maximumAmount presetAmount } }
  benefits { id createdAt modifiedAt type description selectable deletable organizationId metadata }
} pagination { totalCount maxPage } } } }`;

interface Surface {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** The products list through REST and GraphQL on a target, and the target's baseline. */
function surfacesOf(target: Omit<Target, 'stop'>): Record<'baseline' | 'rest' | 'graphql', Surface> {
  const auth = { authorization: `Bearer ${target.token}` };
  return {
    baseline: { url: target.baseline, method: 'GET', headers: {} },
    rest: { url: `${target.kassa}/v1/products/?limit=100`, method: 'GET', headers: auth },
    graphql: { url: `${target.kassa}/v1/graphql`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: graphqlQuery }) },
  };
}

const surfaces = surfacesOf(addresses);

async function load(name: string, surface: Surface, duration = seconds) {
  const check = await fetch(surface.url, { method: surface.method, headers: surface.headers, body: surface.body });
  const payload = await check.json();
  const count = payload.items?.length ?? payload.data?.core?.products?.items?.length;
  if (check.status !== 200 || count !== 100) throw new Error(`${name} did not return 100 products (status ${check.status})`);
  const result = await autocannon({ ...surface, connections, duration });
  const statuses = Object.keys(result.statusCodeStats ?? {});
  if (result.non2xx || result.errors || result.timeouts || statuses.some((status) => status !== '200')) {
    throw new Error(
      `${name}: every response must be 200; got statuses ${JSON.stringify(result.statusCodeStats)}, ${result.non2xx} non-2xx, ` +
        `${result.errors} errors, ${result.timeouts} timeouts (BENCH_LOG_ERRORS=1 shows Kassa's error log)`,
    );
  }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

type Measure = Awaited<ReturnType<typeof load>>;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const summary = (list: Measure[]) => ({
  rps: list.reduce((sum, r) => sum + r.rps, 0) / list.length,
  p50: median(list.map((r) => r.p50)),
  p99: median(list.map((r) => r.p99)),
});

/** Warms every case up, then measures them in interleaved rounds, so a drift in the machine's speed weighs on all alike. */
async function measure(cases: Record<string, Surface>) {
  for (const [name, surface] of Object.entries(cases)) await load(name, surface, 2);
  const runs: Record<string, Measure[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, surface] of Object.entries(cases)) runs[name].push(await load(name, surface));
  }
  return Object.fromEntries(Object.entries(runs).map(([name, list]) => [name, summary(list)]));
}

function printRatios(results: Record<string, ReturnType<typeof summary>>, baselineOf: (name: string) => string, column: string) {
  console.table(
    Object.entries(results).map(([name, r]) => ({
      case: name,
      'req/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      [column]: Number((r.rps / results[baselineOf(name)].rps).toFixed(2)),
    })),
  );
}

async function benchProducts() {
  console.log(`GET products (limit=100, 100 seeded), ${connections} connections, ${rounds} rounds of ${seconds}s per surface, on loopback\n`);
  const results = await measure(surfaces);
  printRatios(results, () => 'baseline', 'ratio to baseline');
  for (const name of ['rest', 'graphql'] as const) {
    const ratio = results[name].rps / results.baseline.rps;
    console.log(`${name}: ${ratio.toFixed(2)} of baseline (target ${target}) ${ratio >= target ? 'ok' : 'BELOW TARGET'}`);
  }
}

/**
 * The rate limiter's overhead: the same products list on targets without limits, with the
 * in-memory store and with Redis, each surface reported as a ratio to the same surface without
 * limits. The budgets are set high enough that nothing is refused, so every request is counted
 * as in production and none is turned away.
 */
async function benchRateLimits() {
  const redis = hasRedis ? await startRedis() : null;
  const variants: Record<string, Record<string, string>> = { off: { RATE_LIMITS: 'off' }, memory: unreachedBudgets };
  if (redis) variants.redis = { ...unreachedBudgets, REDIS_URL: redis.url };
  else console.log('redis-server is not installed: the Redis variant is left out.');
  try {
    const cases: Record<string, Surface> = {};
    for (const [variant, env] of Object.entries(variants)) {
      const started = await startTarget(env);
      targets.push(started);
      const { rest, graphql } = surfacesOf(started);
      cases[`rest, limits ${variant}`] = rest;
      cases[`graphql, limits ${variant}`] = graphql;
    }
    console.log(`\nRate limiter overhead: GET products (limit=100) without limits, in memory${redis ? ' and in Redis' : ''}, ${rounds} rounds of ${seconds}s\n`);
    printRatios(await measure(cases), (name) => name.replace(/limits \w+$/, 'limits off'), 'ratio to no limits');
  } finally {
    redis?.stop();
  }
}

try {
  if (cases.has('products')) await benchProducts();
  if (cases.has('ratelimits')) await benchRateLimits();
  if (cases.has('webhooks')) await benchWebhooks(`${addresses.kassa}/sandbox`, addresses.sandboxToken);
} finally {
  for (const target of targets) target.stop();
}
