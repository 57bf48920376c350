// The process under load in `npm run bench`: Kassa with 100 seeded products and the baseline server
// on the same database, and an organization in sandbox for the webhook case (test cards pay at
// once there). It prints its addresses as one JSON line and runs until SIGTERM, so the load
// generator never shares its CPU time.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startKassa } from '../../src/server.ts';
import { bootstrapEnvironment } from '../../src/bootstrap.ts';

// The embedded database by default; BENCH_DATABASE_URL and BENCH_SANDBOX_DATABASE_URL point it at
// PostgreSQL instead (the benchmark adds rows there).
const databases = process.env.BENCH_DATABASE_URL
  ? { DATABASE_URL: process.env.BENCH_DATABASE_URL, SANDBOX_DATABASE_URL: process.env.BENCH_SANDBOX_DATABASE_URL }
  : { DATA_DIR: 'memory://' };
// BENCH_KASSA_ENV: more settings as a JSON object (the rate-limit case starts one target per variant).
const config = loadConfig({
  ...databases,
  PORT: '0',
  HOST: '127.0.0.1',
  DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE,
  JOB_POLL_INTERVAL_MS: process.env.JOB_POLL_INTERVAL_MS,
  TEST_CARD_DELAY_MS: '0',
  ...JSON.parse(process.env.BENCH_KASSA_ENV ?? '{}'),
});
// Request logs are written as in production, to a sink that discards them. BENCH_LOG_ERRORS=1
// sends the error lines to stderr instead, to learn why a request of the benchmark failed.
const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
const errorsToStderr = { write: (line: string) => (/"level":[56]0/.test(line) ? process.stderr.write(line) : true) };
const kassa = await startKassa(config, createLogger('info', process.env.BENCH_LOG_ERRORS === '1' ? errorsToStderr : discard));
const { prisma } = kassa.environments.production.environment;
const { organization_id: organizationId, organization_access_token: token } = await bootstrapEnvironment(prisma, config);
const { organization_access_token: sandboxToken } = await bootstrapEnvironment(kassa.environments.sandbox.environment.prisma, config);

await Promise.all(
  Array.from({ length: 100 }, (_, i) =>
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
  ),
);

// The baseline: the query the products list makes, with no GraphQL, routing, auth or mapping.
const baseline = createServer((_req, res) => {
  baselineList().then(
    (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(body),
    () => res.writeHead(500).end(),
  );
});
async function baselineList() {
  const where = { organizationId: { in: [organizationId] } };
  const [items, total] = await Promise.all([
    prisma.product.findMany({
      where,
      include: {
        prices: { where: { isArchived: false }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] },
        benefits: { include: { benefit: true }, orderBy: { position: 'asc' } },
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      take: 100,
    }),
    prisma.product.count({ where }),
  ]);
  return JSON.stringify({ items, pagination: { total_count: total, max_page: Math.ceil(total / 100) } });
}
await new Promise<void>((resolve) => baseline.listen(0, '127.0.0.1', resolve));

process.stdout.write(`${JSON.stringify({ kassa: kassa.url, baseline: `http://127.0.0.1:${(baseline.address() as AddressInfo).port}/`, token, sandboxToken })}\n`);
process.once('SIGTERM', async () => {
  await new Promise((resolve) => baseline.close(resolve));
  await kassa.close();
  process.exit(0);
});
