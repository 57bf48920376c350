// `npm run bench`: loopback load against one server with 100 products, through REST, GraphQL, and a
// baseline — a bare node:http handler making the same Prisma query on the same database — in the
// same run. Each surface is reported as a ratio to the baseline, so the figure is Kassa's own
// overhead whatever the machine. Target: REST and GraphQL each at least 0.8.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import autocannon from 'autocannon';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startKassa } from '../../src/server.ts';
import { bootstrapEnvironment } from '../../src/bootstrap.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const target = 0.8;

const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
const config = loadConfig({ ...process.env, DATA_DIR: process.env.BENCH_DATA_DIR ?? 'memory://', PORT: '0', HOST: '127.0.0.1' });
const kassa = await startKassa(config, createLogger('info', discard));
const { prisma } = kassa.environments.production.environment;
const { organization_id: organizationId, organization_access_token: token } = await bootstrapEnvironment(prisma, config);

const products = [];
for (let i = 0; i < 100; i++) {
  products.push(
    prisma.product.create({
      data: {
        organizationId,
        name: `Product ${String(i).padStart(3, '0')}`,
        description: 'A product seeded for the benchmark',
        isRecurring: i % 2 === 0,
        recurringInterval: i % 2 === 0 ? 'month' : null,
        metadata: { seeded: true, index: i },
        priceAmountType: 'fixed',
        priceAmount: 1000 + i,
        prices: { create: { amountType: 'fixed', priceAmount: 1000 + i, priceCurrency: 'usd', recurringInterval: i % 2 === 0 ? 'month' : null } },
      },
    }),
  );
}
await Promise.all(products);

// The baseline: the query the products list makes, with no GraphQL, routing, auth or mapping.
const baseline = createServer(async (_req, res) => {
  const where = { organizationId: { in: [organizationId] } };
  const [items, total] = await Promise.all([
    prisma.product.findMany({
      where,
      include: { prices: { where: { isArchived: false }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] } },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      take: 100,
    }),
    prisma.product.count({ where }),
  ]);
  const body = JSON.stringify({ items, pagination: { total_count: total, max_page: Math.ceil(total / 100) } });
  res.writeHead(200, { 'content-type': 'application/json' }).end(body);
});
await new Promise<void>((resolve) => baseline.listen(0, '127.0.0.1', resolve));
const baselineUrl = `http://127.0.0.1:${(baseline.address() as AddressInfo).port}/`;

const graphqlQuery = `query { core { products(limit: 100) { items {
  id createdAt modifiedAt name description recurringInterval isRecurring isArchived organizationId metadata
  prices { id createdAt modifiedAt amountType isArchived productId type recurringInterval
    ... on ProductPriceFixed { priceCurrency priceAmount }
    ... on ProductPriceCustom { priceCurrency minimumAmount maximumAmount presetAmount } }
} pagination { totalCount maxPage } } } }`;

const surfaces = {
  baseline: { url: baselineUrl, method: 'GET' as const },
  rest: { url: `${kassa.url}/v1/products/?limit=100`, method: 'GET' as const, headers: { authorization: `Bearer ${token}` } },
  graphql: {
    url: `${kassa.url}/v1/graphql`,
    method: 'POST' as const,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: graphqlQuery }),
  },
};

async function load(name: keyof typeof surfaces) {
  const surface = surfaces[name];
  const check = await fetch(surface.url, { method: surface.method, headers: 'headers' in surface ? surface.headers : {}, body: 'body' in surface ? surface.body : undefined });
  const payload = await check.json();
  const count = payload.items?.length ?? payload.data?.core?.products?.items?.length;
  if (check.status !== 200 || count !== 100) throw new Error(`${name} did not return 100 products (status ${check.status})`);
  const result = await autocannon({ ...surface, connections, duration: seconds });
  if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

console.log(`GET products (limit=100, 100 seeded), ${connections} connections, ${seconds}s per surface, on loopback\n`);
await load('baseline'); // warms the database and the JIT before anything is measured
const results = { baseline: await load('baseline'), rest: await load('rest'), graphql: await load('graphql') };
const rows = Object.entries(results).map(([name, r]) => ({
  surface: name,
  'req/s': r.rps.toFixed(0),
  'p50 ms': r.p50,
  'p99 ms': r.p99,
  'ratio to baseline': (r.rps / results.baseline.rps).toFixed(2),
}));
console.table(rows);
for (const name of ['rest', 'graphql'] as const) {
  const ratio = results[name].rps / results.baseline.rps;
  console.log(`${name}: ${ratio.toFixed(2)} of baseline (target ${target}) ${ratio >= target ? 'ok' : 'BELOW TARGET'}`);
}

baseline.close();
await kassa.close();
