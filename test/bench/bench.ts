// `npm run bench`: loopback load on `GET /v1/products/?limit=100` (100 products seeded) through REST,
// the same query in GraphQL, and a baseline — a bare node:http handler making the same Prisma query
// (the products with their prices and benefits, and the count) on the same database, without
// authentication — all served by one child process while this one generates the load. Each
// surface is reported as a ratio to the baseline, so the figure is Kassa's own overhead whatever
// the machine. Target: REST and GraphQL each at least 0.8.
// Then the webhook case (./webhooks.ts): a burst of paid orders in sandbox to their order.paid
// deliveries at a loopback receiver, in events/s and p50/p99 from commit to receipt.
// BENCH_CASES selects the cases (comma-separated: products, webhooks; both by default).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { benchWebhooks } from './webhooks.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const target = 0.8;
const cases = new Set((process.env.BENCH_CASES ?? 'products,webhooks').split(',').map((c) => c.trim()));
for (const name of cases) if (name !== 'products' && name !== 'webhooks') throw new Error(`BENCH_CASES: unknown case ${name} (products, webhooks)`);

const child = spawn(process.execPath, ['--import', 'tsx', new URL('./target.ts', import.meta.url).pathname], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: process.env,
});
const addresses: { kassa: string; baseline: string; token: string; sandboxToken: string } = await new Promise((resolve, reject) => {
  createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
  child.once('exit', (code) => reject(new Error(`the benchmark target exited with ${code}`)));
});

const graphqlQuery = `query { core { products(limit: 100) { items {
  id createdAt modifiedAt name description recurringInterval isRecurring isArchived organizationId metadata
  prices { id createdAt modifiedAt amountType isArchived productId type recurringInterval
    ... on ProductPriceFixed { priceCurrency priceAmount }
    ... on ProductPriceCustom { priceCurrency minimumAmount maximumAmount presetAmount } }
  benefits { id createdAt modifiedAt type description selectable deletable organizationId metadata }
} pagination { totalCount maxPage } } } }`;

const auth = { authorization: `Bearer ${addresses.token}` };
const surfaces = {
  baseline: { url: addresses.baseline, method: 'GET' as const, headers: {} },
  rest: { url: `${addresses.kassa}/v1/products/?limit=100`, method: 'GET' as const, headers: auth },
  graphql: {
    url: `${addresses.kassa}/v1/graphql`,
    method: 'POST' as const,
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ query: graphqlQuery }),
  },
};

async function load(name: keyof typeof surfaces, duration = seconds) {
  const surface = surfaces[name];
  const check = await fetch(surface.url, { method: surface.method, headers: surface.headers, body: 'body' in surface ? surface.body : undefined });
  const payload = await check.json();
  const count = payload.items?.length ?? payload.data?.core?.products?.items?.length;
  if (check.status !== 200 || count !== 100) throw new Error(`${name} did not return 100 products (status ${check.status})`);
  const result = await autocannon({ ...surface, connections, duration });
  if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

async function benchProducts() {
  console.log(`GET products (limit=100, 100 seeded), ${connections} connections, ${rounds} rounds of ${seconds}s per surface, on loopback\n`);
  // Warm-up: the database caches and the JIT, on every surface, before anything is measured.
  for (const name of ['baseline', 'rest', 'graphql'] as const) await load(name, 2);
  // Rounds interleave the surfaces, so a drift in the machine's speed weighs on all three alike.
  const runs: Record<'baseline' | 'rest' | 'graphql', Awaited<ReturnType<typeof load>>[]> = { baseline: [], rest: [], graphql: [] };
  for (let round = 0; round < rounds; round++) {
    for (const name of ['baseline', 'rest', 'graphql'] as const) runs[name].push(await load(name));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const summary = (list: Awaited<ReturnType<typeof load>>[]) => ({
    rps: list.reduce((sum, r) => sum + r.rps, 0) / list.length,
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
  });
  const results = { baseline: summary(runs.baseline), rest: summary(runs.rest), graphql: summary(runs.graphql) };
  console.table(
    Object.entries(results).map(([surface, r]) => ({
      surface,
      'req/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'ratio to baseline': Number((r.rps / results.baseline.rps).toFixed(2)),
    })),
  );
  for (const name of ['rest', 'graphql'] as const) {
    const ratio = results[name].rps / results.baseline.rps;
    console.log(`${name}: ${ratio.toFixed(2)} of baseline (target ${target}) ${ratio >= target ? 'ok' : 'BELOW TARGET'}`);
  }
}

try {
  if (cases.has('products')) await benchProducts();
  if (cases.has('webhooks')) await benchWebhooks(`${addresses.kassa}/sandbox`, addresses.sandboxToken);
} finally {
  child.kill('SIGTERM');
}
