// Metered billing end to end, in sandbox, on a test clock: a monthly plan with a metered price and
// a meter_credit benefit bills each period's usage at the next renewal, past the credits, rounded
// half up and capped; events exactly at a boundary belong to the next period, and an event recorded
// after its period was billed is billed once, at the next renewal. Credits reset or roll over; two
// schedulers at once bill each period once; a cancellation at period end bills the last period's
// usage in a final order. The background job runner is stopped: the test runs the due work itself.
import type { Product } from '@polar-sh/sdk/models/components/product.js';
import type { Subscription } from '@polar-sh/sdk/models/components/subscription.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient, settleJobs, usePostgres } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { createAndConfirmCheckout } from '../helpers/purchases.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { backgroundWork } from '../../src/background.ts';
import { openDatabase } from '../../src/db/client.ts';

const start = new Date('2027-01-01T00:00:00.000Z');
const feb = new Date('2027-02-01T00:00:00.000Z');
const mar = new Date('2027-03-01T00:00:00.000Z');
const apr = new Date('2027-04-01T00:00:00.000Z');

const t = useTestServer({ stopSandboxJobs: true, clock: start });
const environment = () => t.server.kassa.environments.sandbox;
const prisma = () => environment().environment.prisma;

async function settle() {
  await settleJobs(environment().jobs);
}

/** Moves the clock without running the scheduler: events can be ingested at the boundary first. */
const clockTo = (time: Date) => (t.server.clock.now = time);

/** A meter summing the `units` of the events named `event`. */
async function meterOf(org: Org, name = 'API calls', event = 'api.call') {
  return org.polar.meters.create({ name, filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: event }] }, aggregation: { func: 'sum', property: 'units' } });
}

async function meteredPlan(org: Org, meterId: string, options: { unitAmount: string; capAmount?: number; credits?: { units: number; rollover: boolean } }): Promise<Product> {
  const product = await org.polar.products.create({
    name: `Metered ${Math.random().toString(36).slice(2, 8)}`,
    recurringInterval: 'month',
    prices: [
      { amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' },
      { amountType: 'metered_unit', meterId, unitAmount: options.unitAmount, capAmount: options.capAmount ?? null, priceCurrency: 'usd' },
    ],
  });
  if (options.credits) {
    const benefit = await org.polar.benefits.create({ type: 'meter_credit', description: 'Included calls', properties: { meterId, ...options.credits } });
    await org.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [benefit.id] } });
  }
  return product;
}

async function subscribe(org: Org, productId: string, email: string): Promise<Subscription> {
  await createAndConfirmCheckout(org, productId, email, { customerName: 'Meg Metered' });
  await settle();
  const page = await org.polar.subscriptions.list({ productId });
  const found = page.result.items.find((s) => s.customer.email === email);
  if (!found) throw new Error(`no subscription for ${email}`);
  return found;
}

/** Records usage; the clock moves to the last event first (events may not be ahead of it), without running the scheduler. */
async function use(org: Org, customerId: string, ...events: [Date, number][]) {
  const last = Math.max(...events.map(([timestamp]) => timestamp.getTime()));
  if (last > t.server.clock.now!.getTime()) clockTo(new Date(last));
  await org.polar.events.ingest({ events: events.map(([timestamp, units]) => ({ name: 'api.call', customerId, timestamp, metadata: { units } })) });
}

async function renewals(subscriptionId: string) {
  const orders = await prisma().order.findMany({ where: { subscriptionId, billingReason: 'subscription_cycle' }, orderBy: { billingPeriodStart: 'asc' }, include: { items: { orderBy: { position: 'asc' } } } });
  return orders.map((o) => ({ period: o.billingPeriodStart!.toISOString(), total: o.totalAmount, items: o.items.map((i) => [i.label, i.amount]) }));
}

describe('a monthly plan with a metered price and credits that reset', () => {
  let org: Org;
  let meterId: string;
  let subscription: Subscription;

  beforeAll(async () => {
    clockTo(start);
    org = await newOrganization(t.server, 'sandbox');
    meterId = (await meterOf(org)).id;
    const plan = await meteredPlan(org, meterId, { unitAmount: '0.5', capAmount: 5000, credits: { units: 10, rollover: false } });
    subscription = await subscribe(org, plan.id, 'metered@example.com');
  });

  it('lists the metered price with its meter on the product and the subscription; the first order bills no usage', async () => {
    expect(subscription.prices.map((p) => p.amountType)).toEqual(['fixed', 'metered_unit']);
    expect(subscription.prices[1]).toMatchObject({ unitAmount: '0.5', capAmount: 5000, meterId, meter: { id: meterId, name: 'API calls' } });
    const [first] = await prisma().order.findMany({ where: { subscriptionId: subscription.id }, include: { items: true } });
    expect(first).toMatchObject({ billingReason: 'subscription_create', totalAmount: 1000 });
    expect(first.items).toHaveLength(1);
  });

  it('credits the benefit to the customer meter when granted, with a meter.credited event', async () => {
    const meters = await org.polar.customerMeters.list({ customerId: subscription.customerId });
    expect(meters.result.items).toHaveLength(1);
    expect(meters.result.items[0]).toMatchObject({ meterId, customerId: subscription.customerId, creditedUnits: 10, consumedUnits: 0, balance: 10 });
    const credited = await org.polar.events.list({ customerId: subscription.customerId, name: 'meter.credited' });
    expect(credited.result.items.map((e) => e.metadata)).toEqual([{ meterId, units: 10, rollover: false }]);
  });

  it('bills each period’s usage at the next renewal: credits first, rounded half up, late events once, capped', async () => {
    const customer = subscription.customerId;
    await use(org, customer, [new Date('2027-01-05T00:00:00Z'), 7], [new Date('2027-01-31T23:59:59.999Z'), 6]);
    clockTo(feb);
    // Exactly at the boundary: the second period's.
    await use(org, customer, [feb, 5]);
    const live = (await org.polar.customerMeters.list({ customerId: customer })).result.items[0];
    expect(live).toMatchObject({ consumedUnits: 18, creditedUnits: 10, balance: -8 });
    // The subscription's meters: 8 units past the credits so far, at half a cent.
    expect((await org.polar.subscriptions.get({ id: subscription.id })).meters).toEqual([
      expect.objectContaining({ id: subscription.prices[1].id, meterId, consumedUnits: 18, creditedUnits: 10, amount: 4, meter: expect.objectContaining({ id: meterId, name: 'API calls' }) }),
    ]);
    // The portal shows the customer the same meters, by the Core's computation: REST (list and read) and GraphQL.
    const session = await org.polar.customerSessions.create({ customerId: customer });
    const portal = restClient(t.server.base('sandbox'), session.token);
    const portalMeter = {
      id: subscription.prices[1].id, created_at: expect.any(String), modified_at: expect.any(String), meter_id: meterId,
      consumed_units: 18, credited_units: 10, amount: 4, meter: { id: meterId, name: 'API calls', created_at: expect.any(String), modified_at: expect.any(String) },
    };
    expect((await portal('GET', `/customer-portal/subscriptions/${subscription.id}`)).body.meters).toEqual([portalMeter]);
    expect((await portal('GET', '/customer-portal/subscriptions/')).body.items.map((s: { meters: unknown }) => s.meters)).toEqual([[portalMeter]]);
    const gql = await graphqlClient(t.server.base('sandbox'), session.token)(
      `query($id: UUID!) { customerPortal { subscription(id: $id) { meters { consumedUnits creditedUnits amount meter { name } } } } }`,
      { id: subscription.id },
    );
    expect(gql.body.data.customerPortal.subscription.meters).toEqual([{ consumedUnits: 18, creditedUnits: 10, amount: 4, meter: { name: 'API calls' } }]);
    await settle();
    // 13 units, 10 of them credited: 3 × 0.5 = 1.5, rounded half up to 2.
    expect(await renewals(subscription.id)).toEqual([{ period: feb.toISOString(), total: 1002, items: [[(await productName(subscription)), 1000], ['API calls: 3 × 0.5', 2]] }]);
    // Credits reset and were granted again for the new period.
    const names = (await org.polar.events.list({ customerId: customer, source: 'system', sorting: ['timestamp'] })).result.items.map((e) => e.name);
    // The reset and the new credit share the renewal's timestamp.
    expect(names.filter((n) => n.startsWith('meter.')).sort()).toEqual(['meter.credited', 'meter.credited', 'meter.reset']);
    expect((await org.polar.customerMeters.list({ customerId: customer })).result.items[0]).toMatchObject({ consumedUnits: 5, creditedUnits: 10, balance: 5 });

    // Late: a January event recorded after January was billed is billed with February, once.
    clockTo(new Date('2027-02-10T00:00:00Z'));
    await use(org, customer, [new Date('2027-01-20T00:00:00Z'), 4], [new Date('2027-02-10T00:00:00Z'), 25]);
    clockTo(mar);
    await settle();
    // February: 5 + 25, plus January's late 4 = 34; 10 credited; 24 × 0.5 = 12.
    expect((await renewals(subscription.id))[1]).toMatchObject({ period: mar.toISOString(), total: 1012, items: [[expect.any(String), 1000], ['API calls: 24 × 0.5', 12]] });

    clockTo(new Date('2027-03-15T00:00:00Z'));
    await use(org, customer, [new Date('2027-03-15T00:00:00Z'), 20_000]);
    clockTo(apr);
    await settle();
    // 19,990 × 0.5 = 9,995, capped at 5,000.
    expect((await renewals(subscription.id))[2]).toMatchObject({ period: apr.toISOString(), total: 6000, items: [[expect.any(String), 1000], ['API calls: 19990 × 0.5', 5000]] });
    // Nothing of January is billed again.
    expect((await renewals(subscription.id)).map((r) => r.period)).toEqual([feb, mar, apr].map((d) => d.toISOString()));
  });

  it('lists the customer meter in the customer state', async () => {
    const state = await org.polar.customers.getState({ id: subscription.customerId });
    expect(state.activeMeters).toEqual([expect.objectContaining({ meterId, creditedUnits: 10, consumedUnits: 0, balance: 10 })]);
  });
});

async function productName(subscription: Subscription) {
  return subscription.product.name;
}

describe('credits that roll over', () => {
  it('keeps the unused credits into the next period', async () => {
    clockTo(start);
    const org = await newOrganization(t.server, 'sandbox');
    const meterId = (await meterOf(org)).id;
    const plan = await meteredPlan(org, meterId, { unitAmount: '2', credits: { units: 10, rollover: true } });
    const subscription = await subscribe(org, plan.id, 'rollover@example.com');
    await use(org, subscription.customerId, [new Date('2027-01-10T00:00:00Z'), 4]);
    clockTo(feb);
    await settle();
    expect((await renewals(subscription.id))[0].items[1]).toEqual(['API calls: 0 × 2', 0]);
    // 6 left, and 10 more.
    expect((await org.polar.customerMeters.list({ customerId: subscription.customerId })).result.items[0]).toMatchObject({ creditedUnits: 16 });
    const credited = await org.polar.events.list({ customerId: subscription.customerId, name: 'meter.credited', sorting: ['timestamp'] });
    expect(credited.result.items.map((e) => e.metadata)).toEqual([{ meterId, units: 10, rollover: true }, { meterId, units: 10, rollover: true }]);
    expect((await org.polar.events.list({ customerId: subscription.customerId, name: 'meter.reset' })).result.items).toHaveLength(0);
    clockTo(new Date('2027-02-05T00:00:00Z'));
    await use(org, subscription.customerId, [new Date('2027-02-05T00:00:00Z'), 20]);
    clockTo(mar);
    await settle();
    // 20 - 16 = 4 units × 2.
    expect((await renewals(subscription.id))[1]).toMatchObject({ total: 1008, items: [[expect.any(String), 1000], ['API calls: 4 × 2', 8]] });
  });
});

describe('a cancellation at period end', () => {
  it('bills the last period’s usage in a final order, charged though the subscription ended', async () => {
    clockTo(start);
    const org = await newOrganization(t.server, 'sandbox');
    const meterId = (await meterOf(org)).id;
    const plan = await meteredPlan(org, meterId, { unitAmount: '1.25' });
    const subscription = await subscribe(org, plan.id, 'leaving@example.com');
    await org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { cancelAtPeriodEnd: true } });
    await use(org, subscription.customerId, [new Date('2027-01-10T00:00:00Z'), 3]);
    clockTo(feb);
    await settle();
    const orders = await prisma().order.findMany({ where: { subscriptionId: subscription.id, billingReason: 'subscription_cycle' }, include: { items: true, payments: true } });
    expect(orders).toHaveLength(1);
    // 3 × 1.25 = 3.75, rounded half up to 4; no base price: the subscription does not go on.
    expect(orders[0]).toMatchObject({ totalAmount: 4, status: 'paid' });
    expect(orders[0].items.map((i) => [i.label, i.amount])).toEqual([['API calls: 3 × 1.25', 4]]);
    expect(orders[0].payments.map((p) => p.status)).toEqual(['succeeded']);
    expect(await prisma().refund.count({ where: { orderId: orders[0].id } })).toBe(0);
    expect((await org.polar.subscriptions.get({ id: subscription.id })).status).toBe('canceled');
  });
});

describe('two schedulers at once', () => {
  it('bill each period’s usage once', async () => {
    clockTo(start);
    const org = await newOrganization(t.server, 'sandbox');
    const meterId = (await meterOf(org)).id;
    const plan = await meteredPlan(org, meterId, { unitAmount: '1' });
    const subscriptions: Subscription[] = [];
    for (let i = 0; i < 4; i++) subscriptions.push(await subscribe(org, plan.id, `twice${i}@example.com`));
    for (const [i, s] of subscriptions.entries()) await use(org, s.customerId, [new Date('2027-01-15T00:00:00Z'), 10 + i]);
    const second = usePostgres ? await openDatabase(t.server.config.databases.sandbox) : null;
    try {
      const { environment: env } = environment();
      const logger = { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } as never;
      const runners = [env.prisma, second?.prisma ?? env.prisma].map(
        (db) => new JobRunner({ environment: env, prisma: db, now: () => t.server.clock.now!, logger }, { pollMs: 1000, batchSize: 10, lockMs: 60_000 }, backgroundWork),
      );
      clockTo(feb);
      for (let round = 0; round < 4; round++) await Promise.all(runners.map((runner) => runner.runDue()));
      await settle();
    } finally {
      await second?.close();
    }
    for (const [i, s] of subscriptions.entries()) {
      const billed = await renewals(s.id);
      expect(billed).toEqual([{ period: feb.toISOString(), total: 1010 + i, items: [[expect.any(String), 1000], [`API calls: ${10 + i} × 1`, 10 + i]] }]);
      expect(await prisma().subscriptionMeterUsage.count({ where: { subscriptionId: s.id } })).toBe(1);
    }
  });
});

describe('two subscriptions of one customer billing one meter', () => {
  it('share one customer meter, and each event is billed once: by the earliest created subscription in service when it happened', async () => {
    clockTo(start);
    const org = await newOrganization(t.server, 'sandbox');
    const meterId = (await meterOf(org)).id;
    const first = await subscribe(org, (await meteredPlan(org, meterId, { unitAmount: '1' })).id, 'two-plans@example.com');
    const hour = 3_600_000;
    clockTo(new Date(start.getTime() + hour));
    // The same customer buys a second plan on the same meter.
    const otherPlan = await meteredPlan(org, meterId, { unitAmount: '1' });
    const checkout = await org.polar.checkouts.create({ products: [otherPlan.id], customerId: first.customerId });
    await org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail: 'two-plans@example.com', confirmationTokenId: 'tok_visa' } });
    await settle();
    const [second] = (await org.polar.subscriptions.list({ productId: otherPlan.id })).result.items;
    expect(second.customerId).toBe(first.customerId);
    const customer = first.customerId;
    const at = (iso: string) => new Date(iso);
    try {
      // January: all the first's (it started first and is in service), also the event before the second started.
      await use(org, customer, [at('2027-01-01T00:30:00Z'), 2], [at('2027-01-10T00:00:00Z'), 7], [at('2027-01-20T00:00:00Z'), 5]);
      expect((await org.polar.subscriptions.get({ id: second.id })).meters).toEqual([expect.objectContaining({ consumedUnits: 0, amount: 0 })]);
      expect((await org.polar.subscriptions.get({ id: first.id })).meters).toEqual([expect.objectContaining({ consumedUnits: 14, amount: 14 })]);
      // Both renew: the first at February 1st, the second an hour later.
      clockTo(new Date(feb.getTime() + hour));
      await settle();
      expect((await renewals(first.id)).map((r) => r.items[1])).toEqual([['API calls: 14 × 1', 14]]);
      expect((await renewals(second.id)).map((r) => r.items[1])).toEqual([['API calls: 0 × 1', 0]]);
      const meters = (await org.polar.customerMeters.list({ customerId: customer })).result.items;
      expect(meters).toHaveLength(1);
      // The window follows the first: it opened at February 1st, so an event in the second's last hour of January is consumed.
      await use(org, customer, [at('2027-02-01T00:30:00Z'), 3], [at('2027-02-15T00:00:00Z'), 10]);
      expect((await org.polar.customerMeters.list({ customerId: customer })).result.items).toEqual([expect.objectContaining({ id: meters[0].id, consumedUnits: 13, creditedUnits: 0, balance: -13 })]);

      // The first ends with February: from March 1st on, the second bills the events.
      await org.polar.subscriptions.update({ id: first.id, subscriptionUpdate: { cancelAtPeriodEnd: true } });
      await use(org, customer, [at('2027-03-01T00:30:00Z'), 4]);
      clockTo(new Date(mar.getTime() + hour));
      await settle();
      expect((await renewals(first.id)).map((r) => [r.period, r.items])).toEqual([
        [feb.toISOString(), [[expect.any(String), 1000], ['API calls: 14 × 1', 14]]],
        [mar.toISOString(), [['API calls: 13 × 1', 13]]],
      ]);
      expect((await renewals(second.id)).map((r) => r.items[1])).toEqual([['API calls: 0 × 1', 0], ['API calls: 4 × 1', 4]]);
      // Every event billed once: 2 + 7 + 5 + 3 + 10 + 4.
      const billed = await prisma().subscriptionMeterUsage.aggregate({ where: { subscriptionId: { in: [first.id, second.id] } }, _sum: { billedUnits: true } });
      expect(billed._sum.billedUnits).toBe(31);
      expect((await org.polar.customerMeters.list({ customerId: customer })).result.items).toHaveLength(1);
    } finally {
      clockTo(start);
    }
  });
});

describe('meter credits granted and taken back', () => {
  const june = new Date('2027-06-01T10:00:00.000Z');
  const july = new Date('2027-07-01T00:00:00.000Z');

  const storageMeter = (org: Org) => meterOf(org, 'Storage', 'storage.used');

  async function creditBenefit(org: Org, meterId: string, units: number) {
    return org.polar.benefits.create({ type: 'meter_credit', description: 'Included storage', properties: { meterId, units, rollover: false } });
  }

  async function meterOfCustomer(org: Org, customerId: string, meterId: string) {
    return (await org.polar.customerMeters.list({ customerId, meterId })).result.items;
  }

  it('credit each one-time purchase from the moment it is made, adding to what the customer holds', async () => {
    clockTo(june);
    const org = await newOrganization(t.server, 'sandbox');
    const meterId = (await storageMeter(org)).id;
    const product = await org.polar.products.create({ name: 'Storage pack', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 500, priceCurrency: 'usd' }] });
    await org.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [(await creditBenefit(org, meterId, 20)).id] } });
    await createAndConfirmCheckout(org, product.id, 'pack@example.com');
    await settle();
    const [order] = (await org.polar.orders.list({ productId: product.id })).result.items;
    expect(order).toMatchObject({ paid: true, billingReason: 'purchase' });
    const customerId = order.customerId;
    clockTo(new Date(june.getTime() + 60_000));
    // Before the purchase: outside the window the purchase opened.
    await org.polar.events.ingest({
      events: [
        { name: 'storage.used', customerId, timestamp: new Date(june.getTime() - 3600_000), metadata: { units: 100 } },
        { name: 'storage.used', customerId, timestamp: new Date(june.getTime() + 30_000), metadata: { units: 3 } },
      ],
    });
    expect(await meterOfCustomer(org, customerId, meterId)).toEqual([expect.objectContaining({ creditedUnits: 20, consumedUnits: 3, balance: 17 })]);
    // A second purchase by the same customer (a guest's email alone would make a new one).
    await createAndConfirmCheckout(org, product.id, 'pack@example.com', { customerId });
    await settle();
    expect((await org.polar.orders.list({ productId: product.id })).result.items.map((o) => [o.customerId, o.paid])).toEqual([
      [customerId, true],
      [customerId, true],
    ]);
    expect(await meterOfCustomer(org, customerId, meterId)).toEqual([expect.objectContaining({ creditedUnits: 40, consumedUnits: 3, balance: 37 })]);
    expect((await org.polar.events.list({ customerId, name: 'meter.credited' })).result.items.map((e) => e.metadata)).toEqual([
      { meterId, units: 20, rollover: false },
      { meterId, units: 20, rollover: false },
    ]);
    expect((await org.polar.events.list({ customerId, name: 'meter.reset' })).result.items).toEqual([]);
  });

  it('open the window of a credit granted mid-period at the period start, and reset the credits when the grant is revoked', async () => {
    clockTo(july);
    const org = await newOrganization(t.server, 'sandbox');
    const meterId = (await storageMeter(org)).id;
    const plan = await org.polar.products.create({ name: 'Storage plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' }] });
    const subscription = await subscribe(org, plan.id, 'storage-plan@example.com');
    clockTo(new Date('2027-07-10T00:00:00.000Z'));
    await org.polar.events.ingest({ events: [{ name: 'storage.used', customerId: subscription.customerId, timestamp: new Date('2027-07-05T00:00:00.000Z'), metadata: { units: 4 } }] });
    expect(await meterOfCustomer(org, subscription.customerId, meterId)).toEqual([]);
    const benefit = await creditBenefit(org, meterId, 10);
    await org.polar.products.updateBenefits({ id: plan.id, productBenefitsUpdate: { benefits: [benefit.id] } });
    await settle();
    // The period began on July 1st: the usage of July 5th counts against the credit.
    expect(await meterOfCustomer(org, subscription.customerId, meterId)).toEqual([expect.objectContaining({ creditedUnits: 10, consumedUnits: 4, balance: 6 })]);
    expect((await org.polar.events.list({ customerId: subscription.customerId, name: 'meter.reset' })).result.items).toEqual([]);

    await org.polar.products.updateBenefits({ id: plan.id, productBenefitsUpdate: { benefits: [] } });
    await settle();
    expect(await meterOfCustomer(org, subscription.customerId, meterId)).toEqual([expect.objectContaining({ creditedUnits: 0, consumedUnits: 4 })]);
    expect((await org.polar.events.list({ customerId: subscription.customerId, name: 'meter.reset' })).result.items.map((e) => e.metadata)).toEqual([{ meterId }]);
  });
});

describe('customer meters sorted by consumption and balance', () => {
  it('orders every page in the database by consumed units, balance and the stored properties, and refuses unknown sorts at sorting', async () => {
    clockTo(start);
    const org = await newOrganization(t.server, 'sandbox');
    const calls = (await meterOf(org)).id;
    const uploads = (await org.polar.meters.create({ name: 'Uploads', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'upload' }] }, aggregation: { func: 'count' } })).id;
    const plan = await meteredPlan(org, calls, { unitAmount: '1', credits: { units: 10, rollover: false } });
    const uploadCredits = await org.polar.benefits.create({ type: 'meter_credit', description: 'Included uploads', properties: { meterId: uploads, units: 5, rollover: false } });
    const callCredits = (await org.polar.products.get({ id: plan.id })).benefits.map((b) => b.id);
    await org.polar.products.updateBenefits({ id: plan.id, productBenefitsUpdate: { benefits: [...callCredits, uploadCredits.id] } });
    const customers: string[] = [];
    for (const name of ['c0', 'c1', 'c2']) customers.push((await subscribe(org, plan.id, `sorted-${name}@example.com`)).customerId);
    const day = new Date('2027-01-02T00:00:00Z');
    for (const [i, [units, uploaded]] of [[30, 1], [5, 7], [12, 3]].entries()) {
      await use(org, customers[i], [day, units]);
      await org.polar.events.ingest({ events: Array.from({ length: uploaded }, () => ({ name: 'upload', customerId: customers[i], timestamp: day })) });
    }
    const label = (m: { customerId: string; meterId: string; consumedUnits: number; balance: number }) => `c${customers.indexOf(m.customerId)} ${m.meterId === calls ? 'calls' : 'uploads'}`;
    /** Every page of 2 of the organization's customer meters in that order, as labels. */
    const pages = async (sorting: string[]) => {
      const labels = [];
      for (let page = 1; page <= 3; page++) {
        const { result } = await org.polar.customerMeters.list({ sorting: sorting as never, limit: 2, page });
        expect(result.pagination).toEqual({ totalCount: 6, maxPage: 3 });
        labels.push(...result.items.map(label));
      }
      return labels;
    };
    // Consumed: calls 30, 5, 12; uploads 1, 7, 3. Balance (credits 10 calls, 5 uploads): -20, 5, -2; 4, -2, 2.
    expect(await pages(['consumed_units'])).toEqual(['c0 uploads', 'c2 uploads', 'c1 calls', 'c1 uploads', 'c2 calls', 'c0 calls']);
    expect(await pages(['-consumed_units'])).toEqual(['c0 calls', 'c2 calls', 'c1 uploads', 'c1 calls', 'c2 uploads', 'c0 uploads']);
    expect(await pages(['-balance', 'meter_name'])).toEqual(['c1 calls', 'c0 uploads', 'c2 uploads', 'c2 calls', 'c1 uploads', 'c0 calls']);
    expect(await pages(['-balance', '-meter_name'])).toEqual(['c1 calls', 'c0 uploads', 'c2 uploads', 'c1 uploads', 'c2 calls', 'c0 calls']);
    expect(await pages(['meter_name', 'balance'])).toEqual(['c0 calls', 'c2 calls', 'c1 calls', 'c1 uploads', 'c2 uploads', 'c0 uploads']);
    expect(await pages(['-credited_units', 'consumed_units'])).toEqual(['c1 calls', 'c2 calls', 'c0 calls', 'c0 uploads', 'c2 uploads', 'c1 uploads']);

    const session = await org.polar.customerSessions.create({ customerId: customers[1] });
    const portal = restClient(t.server.base('sandbox'), session.token);
    const own = async (sorting: string) => (await portal('GET', `/customer-portal/meters/?sorting=${sorting}`)).body.items.map((m: { meter_id: string; consumed_units: number }) => [m.meter_id, m.consumed_units]);
    expect(await own('consumed_units')).toEqual([[calls, 5], [uploads, 7]]);
    expect(await own('-consumed_units')).toEqual([[uploads, 7], [calls, 5]]);
    expect(await own('-balance')).toEqual([[calls, 5], [uploads, 7]]);

    for (const [client, path] of [[org.api, '/customer-meters/'], [portal, '/customer-portal/meters/']] as const) {
      const { status, body } = await client('GET', `${path}?sorting=consumed`);
      expect(status).toBe(422);
      expect(body.detail).toEqual([expect.objectContaining({ loc: ['query', 'sorting', 0] })]);
    }
  });
});

describe('metered prices refused', () => {
  let org: Org;
  let other: Org;
  let meterId: string;

  beforeAll(async () => {
    clockTo(start);
    org = await newOrganization(t.server, 'sandbox');
    other = await newOrganization(t.server, 'sandbox');
    meterId = (await meterOf(org)).id;
  });

  const fixed = { amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' };
  const create = (of: Org, metered: Record<string, unknown>, recurring: string | null = 'month') =>
    of.api('POST', '/products/', { name: 'Metered plan', recurring_interval: recurring, prices: [fixed, { amount_type: 'metered_unit', price_currency: 'usd', ...metered }] });

  it('on a one-time product, at the price', async () => {
    const { status, body } = await create(org, { meter_id: meterId, unit_amount: '1' }, null);
    expect(status).toBe(422);
    expect(body.detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(['body', 'prices', 1]);
  });

  it('with an unknown meter or another organization’s, at meter_id', async () => {
    for (const id of [crypto.randomUUID(), meterId]) {
      const { status, body } = await create(other, { meter_id: id, unit_amount: '1' });
      expect(status).toBe(422);
      expect(body.detail).toEqual([expect.objectContaining({ loc: ['body', 'prices', 1, 'meter_id'], msg: 'Meter not found.' })]);
    }
  });

  it('with a negative, zero or non-numeric unit amount, at unit_amount', async () => {
    for (const unit of ['-1', '0', 'abc', '1.0000000000001', -2]) {
      const { status, body } = await create(org, { meter_id: meterId, unit_amount: unit });
      expect(status, String(unit)).toBe(422);
      expect(body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['body', 'prices', 1, 'unit_amount']]);
    }
  });

  it('with a cap below zero, at cap_amount', async () => {
    const { status, body } = await create(org, { meter_id: meterId, unit_amount: '1', cap_amount: -1 });
    expect(status).toBe(422);
    expect(body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['body', 'prices', 1, 'cap_amount']]);
  });

  it('and nothing is written', async () => {
    expect(await prisma().product.count({ where: { organizationId: { in: [org.organizationId, other.organizationId] } } })).toBe(0);
  });

  it('keeps the unit amount exactly as given', async () => {
    const { status, body } = await create(org, { meter_id: meterId, unit_amount: '0.000000000001', cap_amount: 0 });
    expect(status, JSON.stringify(body)).toBe(201);
    expect(body.prices[1]).toMatchObject({ amount_type: 'metered_unit', unit_amount: '0.000000000001', cap_amount: 0, meter_id: meterId, meter: { id: meterId, name: 'API calls' } });
  });

  // Twenty significant digits, more than a double holds: the prices are read joined to their
  // product, as JSON, and the amount must come back as the decimal it is, not as a number.
  it('keeps every digit of a large unit amount, in the product read with its prices', async () => {
    const unit = '99999998.123456789012';
    const { status, body } = await create(org, { meter_id: meterId, unit_amount: unit });
    expect(status, JSON.stringify(body)).toBe(201);
    expect(body.prices[1].unit_amount).toBe(unit);
    expect((await org.api('GET', `/products/${body.id}`)).body.prices[1].unit_amount).toBe(unit);
    const listed = (await org.api('GET', '/products/?limit=100')).body.items.find((p: { id: string }) => p.id === body.id);
    expect(listed.prices[1].unit_amount).toBe(unit);
  });
});

describe('customer meters refused', () => {
  it('without the customer_meters:read scope (403), and another customer’s meter in the portal (404)', async () => {
    clockTo(start);
    const org = await newOrganization(t.server, 'sandbox');
    const meterId = (await meterOf(org)).id;
    const plan = await meteredPlan(org, meterId, { unitAmount: '1', credits: { units: 5, rollover: false } });
    const alice = await subscribe(org, plan.id, 'alice-meter@example.com');
    const bob = await subscribe(org, plan.id, 'bob-meter@example.com');
    const token = await tokenWithScopes(t.server, org, ['meters:read']);
    const base = t.server.base('sandbox');
    expect((await restClient(base, token)('GET', '/customer-meters/')).status).toBe(403);
    expect((await restClient(base)('GET', '/customer-meters/')).status).toBe(401);
    const bobsMeter = (await org.polar.customerMeters.list({ customerId: bob.customerId })).result.items[0];
    const session = await org.polar.customerSessions.create({ customerId: alice.customerId });
    const portal = restClient(base, session.token);
    const own = await portal('GET', '/customer-portal/meters/');
    expect(own.status).toBe(200);
    expect(own.body.items.map((m: { customer_id: string }) => m.customer_id)).toEqual([alice.customerId]);
    expect((await portal('GET', `/customer-portal/meters/${bobsMeter.id}`)).status).toBe(404);
    // Another organization's token does not reach them either.
    const other = await newOrganization(t.server, 'sandbox');
    expect((await other.api('GET', `/customer-meters/${bobsMeter.id}`)).status).toBe(404);
  });
});
