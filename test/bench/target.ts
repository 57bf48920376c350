// The process under load in `npm run bench`: Kassa with 100 seeded products and the baseline server
// on the same database, and an organization in sandbox for the webhook case (test cards pay at
// once there). With BENCH_SEED_ORDERS=1 it adds 100 customers with 1 to 3 paid orders each (199
// orders), for the nested case. It prints its addresses as one JSON line and runs until SIGTERM,
// so the load generator never shares its CPU time. For the webhook fan-out case it takes one
// command per line on stdin, `{"seedEvents":{"count","type","data"}}`: that many events recorded in
// sandbox's outbox in one transaction (each `data` with its own id), answered with a JSON line once
// committed.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startKassa } from '../../src/server.ts';
import { bootstrapEnvironment } from '../../src/bootstrap.ts';
import { eventsChannel } from '../../src/events/outbox.ts';
import type { Prisma } from '../../src/generated/prisma/client.ts';
import { createClient } from '../../src/oauth/clients.ts';
import { issueAuthorizationCode } from '../../src/oauth/grants.ts';

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
  WEBHOOK_RETRY_BASE_MS: process.env.WEBHOOK_RETRY_BASE_MS,
  TEST_CARD_DELAY_MS: '0',
  ...JSON.parse(process.env.BENCH_KASSA_ENV ?? '{}'),
});
// Request logs are written as in production, to a sink that discards them. BENCH_LOG_ERRORS=1
// sends the error lines to stderr instead, to learn why a request of the benchmark failed.
const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
const errorsToStderr = { write: (line: string) => (/"level":[56]0/.test(line) ? process.stderr.write(line) : true) };
const kassa = await startKassa(config, createLogger('info', process.env.BENCH_LOG_ERRORS === '1' ? errorsToStderr : discard));
const { prisma } = kassa.environments.production.environment;
const { organization_id: organizationId, organization_access_token: token, user_email: userEmail } = await bootstrapEnvironment(prisma, config);
const { organization_access_token: sandboxToken, organization_id: sandboxOrganizationId } = await bootstrapEnvironment(kassa.environments.sandbox.environment.prisma, config);

const products = await Promise.all(
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
      include: { prices: true },
    }),
  ),
);

if (process.env.BENCH_SEED_ORDERS === '1') await seedOrders();

/**
 * 100 customers, customer i with 1 + i % 3 paid orders of one-time products: the rows the Core
 * API's customer creation and a checkout paid at once with `tok_visa` leave (customer, checkout
 * and its product, order, line, succeeded payment), written in one transaction: going through
 * the services, 199 checkouts and their charges took about 45 s to seed on a 2-core machine. The
 * events, customer sessions and grant jobs those flows also record are left out: no list reads
 * them. Each row is a millisecond newer than the last, so newest-first orders have no ties.
 */
async function seedOrders() {
  const oneTime = products.filter((product) => !product.isRecurring);
  const start = Date.now();
  let tick = 0;
  const next = () => new Date(start + tick++);
  // As Kassa's client stamps a created row (src/db/clock.ts).
  const stamps = (at: Date) => ({ createdAt: at, modifiedAt: at });
  const customers: Prisma.CustomerCreateManyInput[] = [];
  const checkouts: Prisma.CheckoutCreateManyInput[] = [];
  const checkoutProducts: Prisma.CheckoutProductCreateManyInput[] = [];
  const orders: Prisma.OrderCreateManyInput[] = [];
  const lines: Prisma.OrderItemCreateManyInput[] = [];
  const payments: Prisma.PaymentCreateManyInput[] = [];
  for (let i = 0; i < 100; i++) {
    const email = `customer${String(i).padStart(3, '0')}@example.com`;
    const customerId = randomUUID();
    customers.push({ id: customerId, organizationId, email, activeEmail: email, name: `Customer ${i}`, metadata: {}, ...stamps(next()) });
    for (let n = 0; n <= i % 3; n++) {
      const product = oneTime[(i + n) % oneTime.length];
      const price = product.prices[0];
      const amount = price.priceAmount!;
      const [checkoutId, orderId, paymentId, createdAt] = [randomUUID(), randomUUID(), randomUUID(), next()];
      checkouts.push({
        id: checkoutId,
        organizationId,
        status: 'succeeded',
        clientSecret: `${config.tokenPrefix}_c_${randomBytes(24).toString('base64url')}`,
        expiresAt: new Date(createdAt.getTime() + 3600 * 1000),
        productId: product.id,
        productPriceId: price.id,
        amount,
        currency: price.priceCurrency,
        customerId,
        ...stamps(createdAt),
      });
      checkoutProducts.push({ checkoutId, productId: product.id, position: 0 });
      orders.push({
        id: orderId,
        organizationId,
        status: 'paid',
        paid: true,
        subtotalAmount: amount,
        netAmount: amount,
        totalAmount: amount,
        currency: price.priceCurrency,
        billingReason: 'purchase',
        customerId,
        productId: product.id,
        checkoutId,
        metadata: {},
        ...stamps(createdAt),
      });
      lines.push({ orderId, label: product.name, amount, taxAmount: 0, productPriceId: price.id, ...stamps(createdAt) });
      payments.push({
        id: paymentId,
        orderId,
        processor: 'test',
        status: 'succeeded',
        amount,
        currency: price.priceCurrency,
        paymentMethod: 'tok_visa',
        processorId: `test_ch_${paymentId.replace(/-/g, '')}`,
        processedAt: createdAt,
        createdAt,
      });
    }
  }
  await prisma.$transaction([
    prisma.customer.createMany({ data: customers }),
    prisma.checkout.createMany({ data: checkouts }),
    prisma.checkoutProduct.createMany({ data: checkoutProducts }),
    prisma.order.createMany({ data: orders }),
    prisma.orderItem.createMany({ data: lines }),
    prisma.payment.createMany({ data: payments }),
  ]);
}

// The baselines: the queries the lists make, with no GraphQL, routing, auth or mapping. And the
// ceiling: the bytes of Kassa's own REST answer for the products list, taken once and served as
// they are, with no database at all (what bare node:http does on this machine).
let ceilingBytes = '';
const baselines: Record<string, () => Promise<string>> = {
  '/products': baselineProducts,
  '/customers-orders': baselineCustomersOrders,
  '/ceiling': async () => ceilingBytes,
};
const baseline = createServer((req, res) => {
  const list = baselines[req.url ?? ''];
  if (!list) return res.writeHead(404).end();
  list().then(
    (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(body),
    () => res.writeHead(500).end(),
  );
});
async function baselineProducts() {
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
/**
 * A page of 100 customers, each with their order count and 10 newest orders, each order with its
 * lines and their prices: the columns the nested case's GraphQL query asks for, and no others.
 */
async function baselineCustomersOrders() {
  const where = { organizationId: { in: [organizationId] }, deletedAt: null };
  const [items, total] = await Promise.all([
    prisma.customer.findMany({
      where,
      select: {
        id: true,
        email: true,
        name: true,
        orders: {
          select: {
            id: true,
            createdAt: true,
            status: true,
            totalAmount: true,
            currency: true,
            items: { select: { id: true, label: true, amount: true, productPriceId: true }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] },
          },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: 10,
        },
        _count: { select: { orders: true } },
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      take: 100,
    }),
    prisma.customer.count({ where }),
  ]);
  return JSON.stringify({ items, pagination: { total_count: total, max_page: Math.ceil(total / 100) } });
}
await new Promise<void>((resolve) => baseline.listen(0, '127.0.0.1', resolve));
ceilingBytes = await (await fetch(`${kassa.url}/v1/products/?limit=100`, { headers: { authorization: `Bearer ${token}` } })).text();

/** Records `count` events in sandbox's outbox in one transaction, announced at its commit as a service's would be. */
async function seedEvents({ count, type, data }: { count: number; type: string; data: Record<string, unknown> }) {
  const db = kassa.environments.sandbox.environment.prisma;
  const now = new Date();
  const rows = Array.from({ length: count }, () => {
    const id = randomUUID();
    return { organizationId: sandboxOrganizationId, type, resourceId: id, data: { ...data, id }, createdAt: now };
  });
  await db.$transaction(
    async (tx) => {
      for (let from = 0; from < rows.length; from += 1000) await tx.event.createMany({ data: rows.slice(from, from + 1000) });
      await tx.$executeRaw`SELECT pg_notify(${eventsChannel}, '')`;
    },
    { timeout: 120_000 },
  );
  return { seeded: count, committedAt: Date.now() };
}
createInterface({ input: process.stdin }).on('line', (line) => {
  const command = JSON.parse(line) as { seedEvents?: Parameters<typeof seedEvents>[0] };
  if (!command.seedEvents) return;
  seedEvents(command.seedEvents).then(
    (answer) => process.stdout.write(`${JSON.stringify(answer)}\n`),
    (error) => process.stdout.write(`${JSON.stringify({ error: String(error) })}\n`),
  );
});


const oauth = Number(process.env.BENCH_OAUTH_CODES ?? 0) > 0 ? await seedOAuth(Number(process.env.BENCH_OAUTH_CODES)) : undefined;
process.stdout.write(`${JSON.stringify({ kassa: kassa.url, baseline: `http://127.0.0.1:${(baseline.address() as AddressInfo).port}`, token, sandboxToken, oauth })}\n`);

/**
 * For the oauth case: a confidential client (authorization code with PKCE, refresh tokens) and
 * `count` codes issued to the bootstrap user for it, as the consent page issues them, written one
 * per line to a file whose path is returned with the client's credentials. Codes live 5 minutes.
 */
async function seedOAuth(count: number) {
  const { environment } = kassa.environments.production;
  const user = await prisma.user.findUniqueOrThrow({ where: { email: userEmail } });
  const redirectUri = 'http://127.0.0.1:9/callback';
  const { client, clientSecret } = await createClient(environment, user.id, {
    clientName: 'Bench client',
    redirectUris: [redirectUri],
    scopes: ['openid', 'profile', 'email'],
    tokenEndpointAuthMethod: 'client_secret_basic',
    grantTypes: ['authorization_code', 'refresh_token'],
    responseTypes: ['code'],
    clientUri: null,
    logoUri: null,
    tosUri: null,
    policyUri: null,
  });
  const verifier = randomBytes(32).toString('base64url');
  const request = {
    client,
    redirectUri,
    state: null,
    scopes: ['openid', 'profile', 'email'] as const,
    subType: 'user' as const,
    nonce: null,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    codeChallengeMethod: 'S256' as const,
    prompts: [],
    maxAge: null,
  };
  const codes: string[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, () =>
        issueAuthorizationCode(environment, { ...request, scopes: [...request.scopes] }, { userId: user.id, organizationId: null, authTime: new Date() }, new Date()),
      ),
    );
    codes.push(...batch);
  }
  const codesFile = join(tmpdir(), `kassa-bench-codes-${process.pid}.txt`);
  writeFileSync(codesFile, codes.join('\n'));
  return { clientId: client.clientId, clientSecret, redirectUri, verifier, codesFile };
}
process.once('SIGTERM', async () => {
  await new Promise((resolve) => baseline.close(resolve));
  await kassa.close();
  process.exit(0);
});
