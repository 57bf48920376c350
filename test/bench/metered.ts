// The metered case of `npm run bench`: one renewal sweep over BENCH_METERED_SUBSCRIPTIONS monthly
// subscriptions (10,000 by default) with a fixed price, a metered price and a meter_credit grant,
// each customer with BENCH_METERED_EVENTS events (5 by default) in the period. It runs Kassa in this
// process, on the embedded database or BENCH_DATABASE_URL, with the job runner polling once a
// minute (the seeded periods end a day from now in real time, so it renews none of them), seeds the
// rows directly, then times renewSubscriptions on a clock set to the period's end:
// each subscription's usage read past its credits, its order with the metered item, the credits
// cycled. It checks that every subscription got exactly one renewal order with the expected amount.
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startKassa } from '../../src/server.ts';
import { bootstrapEnvironment } from '../../src/bootstrap.ts';
import { renewSubscriptions } from '../../src/modules/subscriptions/service.ts';
import type { Db } from '../../src/db/client.ts';

const subscriptionCount = Number(process.env.BENCH_METERED_SUBSCRIPTIONS ?? 10_000);
const eventsPerCustomer = Number(process.env.BENCH_METERED_EVENTS ?? 5);

export async function benchMetered(): Promise<void> {
  const databases = process.env.BENCH_DATABASE_URL
    ? { DATABASE_URL: process.env.BENCH_DATABASE_URL, SANDBOX_DATABASE_URL: process.env.BENCH_SANDBOX_DATABASE_URL }
    : { DATA_DIR: 'memory://' };
  const config = loadConfig({ ...databases, PORT: '0', HOST: '127.0.0.1', JOB_POLL_INTERVAL_MS: '60000', TEST_CARD_DELAY_MS: '0' });
  const logger = createLogger('info', new Writable({ write: (_chunk, _encoding, done) => done() }));
  const kassa = await startKassa(config, logger);
  try {
    const { environment } = kassa.environments.production;
    const prisma = environment.prisma;
    const { organization_id: organizationId } = await bootstrapEnvironment(prisma, config);
    // A period that ends in a day of real time: the idle runner would not renew it anyway.
    const periodStart = new Date(Date.now() - 29 * 86_400_000);
    const periodEnd = new Date(Date.now() + 86_400_000);
    const meter = await prisma.meter.create({
      data: { organizationId, name: 'API calls', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api.call' }] }, aggregation: { func: 'sum', property: 'units' } },
    });
    const product = await prisma.product.create({
      data: {
        organizationId,
        name: 'Metered plan',
        isRecurring: true,
        recurringInterval: 'month',
        priceAmountType: 'fixed',
        priceAmount: 1000,
        prices: {
          create: [
            { amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd', recurringInterval: 'month', position: 0 },
            { amountType: 'metered_unit', meterId: meter.id, unitAmount: '0.5', priceCurrency: 'usd', recurringInterval: 'month', position: 1 },
          ],
        },
      },
      include: { prices: { orderBy: { position: 'asc' } } },
    });
    const benefit = await prisma.benefit.create({ data: { organizationId, type: 'meter_credit', description: 'Included calls', properties: { meter_id: meter.id, units: 10, rollover: false } } });

    console.log(`\nMetered renewals: ${subscriptionCount} subscriptions, ${eventsPerCustomer} events each, 10 units credited\n`);
    const seeded = performance.now();
    for (let from = 0; from < subscriptionCount; from += 1000) {
      const ids = Array.from({ length: Math.min(1000, subscriptionCount - from) }, (_, i) => from + i);
      const customers = ids.map((i) => ({ id: crypto.randomUUID(), organizationId, email: `metered-${i}@example.com` }));
      const subscriptions = customers.map((c) => ({
        id: crypto.randomUUID(), organizationId, customerId: c.id, productId: product.id, status: 'active' as const, amount: 1000, currency: 'usd',
        recurringInterval: 'month' as const, currentPeriodStart: periodStart, currentPeriodEnd: periodEnd, startedAt: periodStart, paymentMethod: 'tok_visa',
      }));
      await prisma.customer.createMany({ data: customers });
      await prisma.subscription.createMany({ data: subscriptions });
      await prisma.subscriptionPrice.createMany({ data: subscriptions.flatMap((s) => product.prices.map((p) => ({ subscriptionId: s.id, productPriceId: p.id, position: p.position }))) });
      await prisma.benefitGrant.createMany({
        data: subscriptions.map((s) => ({ organizationId, benefitId: benefit.id, customerId: s.customerId, subscriptionId: s.id, scopeId: s.id, grantedAt: periodStart })),
      });
      await prisma.customerMeter.createMany({ data: customers.map((c) => ({ organizationId, customerId: c.id, meterId: meter.id, creditedUnits: 10, windowStart: periodStart })) });
      await prisma.usageEvent.createMany({
        data: customers.flatMap((c) =>
          Array.from({ length: eventsPerCustomer }, (_, k) => ({ organizationId, customerId: c.id, name: 'api.call', timestamp: new Date(periodStart.getTime() + (k + 1) * 3_600_000), metadata: { units: 3 } })),
        ),
      });
    }
    console.log(`seeded in ${((performance.now() - seeded) / 1000).toFixed(1)}s`);

    const started = performance.now();
    await renewSubscriptions({ environment, prisma: prisma as Db, now: () => new Date(periodEnd.getTime() + 1000), logger });
    const elapsed = (performance.now() - started) / 1000;

    // 3 units per event past the 10 credited, at half a cent, rounded half up.
    const billable = Math.max(0, eventsPerCustomer * 3 - 10);
    const expected = 1000 + Math.floor(billable * 0.5 + 0.5);
    const orders = await prisma.order.groupBy({ by: ['totalAmount'], where: { organizationId, billingReason: 'subscription_cycle' }, _count: true });
    if (orders.length !== 1 || orders[0].totalAmount !== expected || orders[0]._count !== subscriptionCount) {
      throw new Error(`metered renewals: expected ${subscriptionCount} orders of ${expected}, got ${JSON.stringify(orders)}`);
    }
    console.table([{ case: 'metered renewals', subscriptions: subscriptionCount, seconds: Number(elapsed.toFixed(1)), 'renewals/s': Math.round(subscriptionCount / elapsed) }]);
  } finally {
    await kassa.close();
  }
}
