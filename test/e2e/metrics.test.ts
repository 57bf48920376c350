// Metrics end to end, on a test clock: one-time purchases (some refunded, one in euros), a monthly
// and a yearly subscription (a renewal, a cancellation at period end, a revocation), checkouts left
// open or declined, in a shop, a rival shop and a sandbox shop. Every period and total the API
// answers is checked against the same metrics computed here from the rows themselves, in UTC and
// in America/New_York across the change to daylight-saving time on 2027-03-14, filtered by
// product, customer and billing type. Then the attacker's side and bad input.
import fc from 'fast-check';
import { RFCDate } from '@polar-sh/sdk/types/rfcdate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import { restClient, settleJobs } from '../helpers/server.ts';
import { tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { createAndConfirmCheckout, fixedProduct } from '../helpers/purchases.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer({
  stopSandboxJobs: true,
  clock: new Date('2027-03-01T12:00:00Z'),
  env: { PRODUCTION_PAYMENT_PROCESSOR: 'test' },
  organizations: { shop: 'production', rival: 'production', sandboxShop: 'sandbox' },
});

const environment = (name: EnvironmentName) => t.server.kassa.environments[name];
const prisma = (name: EnvironmentName = 'production') => environment(name).environment.prisma;

async function settle(name: EnvironmentName) {
  await settleJobs(environment(name).jobs);
}

async function at(iso: string, name: EnvironmentName = 'production') {
  t.server.clock.now = new Date(iso);
  await settle(name);
}

/** A purchase confirmed with a card at the clock's time, settled; the checkout's id. */
async function purchase(org: Org, productId: string, email: string, card = 'tok_visa'): Promise<string> {
  const checkout = await createAndConfirmCheckout(org, productId, email, { customerName: email.split('@')[0], card });
  await settle(org.environment);
  return checkout.id;
}

async function orderOfCheckout(org: Org, checkoutId: string) {
  return prisma(org.environment).order.findFirstOrThrow({ where: { checkoutId } });
}

// ---- The same metrics, computed from the rows ----

type Values = Record<string, number>;
interface Bucket {
  lo: number;
  hi: number;
}
interface Filters {
  productId?: string[];
  customerId?: string[];
  billingType?: ('one_time' | 'recurring')[];
  currency?: string;
}

/** Local midnight of a calendar date in a time zone, as an instant. */
function localMidnight(date: string, timeZone: string): number {
  const [y, m, d] = date.split('-').map(Number);
  const guess = Date.UTC(y, m - 1, d);
  const offsetAt = (instant: number) => {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
        .formatToParts(new Date(instant))
        .map((p) => [p.type, p.value]),
    );
    return Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second) - instant;
  };
  const first = guess - offsetAt(guess);
  return guess - offsetAt(first);
}

const daysBetween = (start: string, end: string) => Math.round((Date.parse(end) - Date.parse(start)) / 86_400_000);
/** The next calendar date, `YYYY-MM-DD` (a year past 9999 has more digits). */
function nextDay(date: string): string {
  const [y, m, d] = date.split('-').map(Number);
  const next = new Date(Date.UTC(y, m - 1, d + 1));
  return `${next.getUTCFullYear()}-${String(next.getUTCMonth() + 1).padStart(2, '0')}-${String(next.getUTCDate()).padStart(2, '0')}`;
}

/** The periods' bounds, from the answer's timestamps, clipped to the range. */
function bucketsOf(timestamps: string[], startDate: string, endDate: string, timeZone: string): Bucket[] {
  const rangeStart = localMidnight(startDate, timeZone);
  const rangeEnd = localMidnight(nextDay(endDate), timeZone);
  return timestamps.map((timestamp, i) => ({
    lo: Math.max(Date.parse(timestamp), rangeStart),
    hi: i + 1 < timestamps.length ? Date.parse(timestamps[i + 1]) : rangeEnd,
  }));
}

const monthly = (amount: number, interval: string) =>
  interval === 'month' ? amount : interval === 'year' ? Math.round(amount / 12) : interval === 'week' ? Math.round((amount * 52) / 12) : Math.round((amount * 365) / 12);

async function expectedMetrics(org: Org, buckets: Bucket[], filters: Filters = {}): Promise<{ periods: Values[]; totals: Values }> {
  const db = prisma(org.environment);
  const currency = filters.currency ?? 'usd';
  const recurringWanted = filters.billingType?.length === 1 ? filters.billingType[0] === 'recurring' : null;
  const keep = (row: { productId: string; customerId: string | null; product: { isRecurring: boolean } }) =>
    (!filters.productId || filters.productId.includes(row.productId)) &&
    (!filters.customerId || (row.customerId !== null && filters.customerId.includes(row.customerId))) &&
    (recurringWanted === null || row.product.isRecurring === recurringWanted);
  const orders = (await db.order.findMany({ where: { organizationId: org.organizationId }, include: { product: true } })).filter((o) => o.paid && o.currency === currency && keep(o));
  const subscriptions = (await db.subscription.findMany({ where: { organizationId: org.organizationId }, include: { product: true } })).filter(
    (s) => s.startedAt && s.currency === currency && keep(s),
  );
  const checkouts = (await db.checkout.findMany({ where: { organizationId: org.organizationId }, include: { products: { include: { product: true } } } })).filter(
    (c) =>
      c.currency === currency &&
      (!filters.customerId || (c.customerId !== null && filters.customerId.includes(c.customerId))) &&
      (!filters.productId && recurringWanted === null
        ? true
        : c.products.some((cp) => (!filters.productId || filters.productId.includes(cp.productId)) && (recurringWanted === null || cp.product.isRecurring === recurringWanted))),
  );

  const inside = (time: Date, b: Bucket) => time.getTime() >= b.lo && time.getTime() < b.hi;
  const sum = (values: number[]) => values.reduce((a, v) => a + v, 0);
  const avg = (values: number[]) => (values.length ? Math.ceil(sum(values) / values.length) : 0);
  let cumulative = 0;
  let netCumulative = 0;
  const periods = buckets.map((b) => {
    const os = orders.filter((o) => inside(o.createdAt, b));
    const gross = os.map((o) => o.netAmount);
    const net = os.map((o) => o.netAmount - o.refundedAmount);
    const oneTime = os.filter((o) => o.subscriptionId === null);
    const created = os.filter((o) => o.billingReason === 'subscription_create');
    const renewals = os.filter((o) => o.billingReason === 'subscription_cycle');
    cumulative += sum(gross);
    netCumulative += sum(net);
    const endOf = (s: (typeof subscriptions)[number]) => s.endedAt ?? s.endsAt;
    const active = subscriptions.filter((s) => s.startedAt!.getTime() < b.hi && (endOf(s) === null || endOf(s)!.getTime() >= b.hi));
    const started = subscriptions.filter((s) => inside(s.startedAt!, b) && (endOf(s) === null || endOf(s)!.getTime() > b.lo));
    const cs = checkouts.filter((c) => inside(c.createdAt, b));
    const succeeded = cs.filter((c) => c.status === 'succeeded').length;
    return {
      orders: os.length,
      revenue: sum(gross),
      net_revenue: sum(net),
      cumulative_revenue: cumulative,
      net_cumulative_revenue: netCumulative,
      average_order_value: avg(gross),
      net_average_order_value: avg(net),
      one_time_products: oneTime.length,
      one_time_products_revenue: sum(oneTime.map((o) => o.netAmount)),
      one_time_products_net_revenue: sum(oneTime.map((o) => o.netAmount - o.refundedAmount)),
      new_subscriptions: started.length,
      new_subscriptions_revenue: sum(created.map((o) => o.netAmount)),
      new_subscriptions_net_revenue: sum(created.map((o) => o.netAmount - o.refundedAmount)),
      renewed_subscriptions: new Set(renewals.map((o) => o.subscriptionId)).size,
      renewed_subscriptions_revenue: sum(renewals.map((o) => o.netAmount)),
      renewed_subscriptions_net_revenue: sum(renewals.map((o) => o.netAmount - o.refundedAmount)),
      active_subscriptions: active.length,
      monthly_recurring_revenue: sum(active.map((s) => monthly(s.amount, s.recurringInterval))),
      committed_monthly_recurring_revenue: sum(active.filter((s) => s.canceledAt === null || s.canceledAt.getTime() >= b.hi).map((s) => monthly(s.amount, s.recurringInterval))),
      checkouts: cs.length,
      succeeded_checkouts: succeeded,
      checkouts_conversion: cs.length ? succeeded / cs.length : 0,
    };
  });
  const total = (slug: string) => sum(periods.map((p) => (p as Values)[slug]));
  const last = (slug: string) => (periods.at(-1) as Values | undefined)?.[slug] ?? 0;
  const totals: Values = {};
  for (const slug of Object.keys(periods[0])) totals[slug] = total(slug);
  for (const slug of ['cumulative_revenue', 'net_cumulative_revenue', 'active_subscriptions', 'monthly_recurring_revenue', 'committed_monthly_recurring_revenue']) totals[slug] = last(slug);
  totals.average_order_value = totals.orders ? Math.ceil(totals.revenue / totals.orders) : 0;
  totals.net_average_order_value = totals.orders ? Math.ceil(totals.net_revenue / totals.orders) : 0;
  totals.checkouts_conversion = totals.checkouts ? totals.succeeded_checkouts / totals.checkouts : 0;
  return { periods, totals };
}

interface Query extends Filters {
  startDate: string;
  endDate: string;
  interval: string;
  timezone?: string;
}

function queryString(q: Query): string {
  const params = new URLSearchParams({ start_date: q.startDate, end_date: q.endDate, interval: q.interval });
  if (q.timezone) params.set('timezone', q.timezone);
  if (q.currency) params.set('currency', q.currency);
  for (const id of q.productId ?? []) params.append('product_id', id);
  for (const id of q.customerId ?? []) params.append('customer_id', id);
  for (const type of q.billingType ?? []) params.append('billing_type', type);
  return params.toString();
}

/** Asks the API and checks every period and total against the rows. */
async function checkAgainstRows(org: Org, q: Query) {
  const response = await org.api('GET', `/metrics/?${queryString(q)}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  const { periods, totals } = response.body as { periods: (Values & { timestamp: string })[]; totals: Values };
  const buckets = bucketsOf(
    periods.map((p) => p.timestamp),
    q.startDate,
    q.endDate,
    q.timezone ?? 'UTC',
  );
  const expected = await expectedMetrics(org, buckets, q);
  periods.forEach((period, i) => {
    const { timestamp, ...values } = period;
    expect(values, `period ${timestamp}`).toEqual(expected.periods[i]);
  });
  expect(totals).toEqual(expected.totals);
  return response.body as { periods: (Values & { timestamp: string })[]; totals: Values };
}

const ids = {} as {
  ebook: string;
  plan: string;
  yearly: string;
  euroBook: string;
  alice: string;
  bob: string;
  carol: string;
  monthlySubscription: string;
  yearlySubscription: string;
};

beforeAll(async () => {
  await environment('production').jobs.stop();
  const { shop, rival, sandboxShop } = t;
  t.server.clock.now = new Date('2027-03-01T12:00:00Z');
  ids.ebook = (await fixedProduct(shop, 'Ebook', 1000)).id;
  ids.plan = (await fixedProduct(shop, 'Monthly plan', 500, 'month')).id;
  ids.yearly = (await fixedProduct(shop, 'Yearly plan', 12000, 'year')).id;
  ids.euroBook = (await shop.polar.products.create({ name: 'Livre', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 900, priceCurrency: 'eur' }] })).id;
  const rivalBook = (await fixedProduct(rival, 'Rival ebook', 700)).id;
  const sandboxBook = (await fixedProduct(sandboxShop, 'Sandbox ebook', 300)).id;

  await at('2027-03-12T15:00:00Z');
  await purchase(shop, ids.ebook, 'alice@example.com');
  // 23:30 on March 12 in New York, already March 13 in UTC.
  await at('2027-03-13T04:30:00Z');
  await purchase(shop, ids.ebook, 'bob@example.com');
  await at('2027-03-13T12:00:00Z');
  await purchase(rival, rivalBook, 'mallory@example.com');
  await purchase(sandboxShop, sandboxBook, 'sandra@example.com');
  // 01:30 EST, half an hour before clocks go forward; then 04:30 EDT.
  await at('2027-03-14T06:30:00Z');
  await purchase(shop, ids.plan, 'alice@example.com');
  await at('2027-03-14T08:30:00Z');
  await purchase(shop, ids.yearly, 'carol@example.com');
  await at('2027-03-15T12:00:00Z');
  const partly = await orderOfCheckout(shop, await purchase(shop, ids.ebook, 'carol@example.com'));
  const wholly = await orderOfCheckout(shop, await purchase(shop, ids.ebook, 'bob@example.com'));
  await shop.polar.refunds.create({ orderId: partly.id, reason: 'customer_request', amount: 400 });
  await shop.polar.refunds.create({ orderId: wholly.id, reason: 'customer_request', amount: 1000 });
  await settle('production');
  await at('2027-03-15T13:00:00Z');
  await shop.polar.checkouts.create({ products: [ids.ebook] });
  await at('2027-03-16T10:00:00Z');
  await createAndConfirmCheckout(shop, ids.ebook, 'dave@example.com', { card: 'tok_chargeDeclined' });
  await settle('production');
  await at('2027-03-16T11:00:00Z');
  await purchase(shop, ids.euroBook, 'alice@example.com');

  // A buyer's typed email makes a customer per checkout (it is not verified), so a customer is
  // named by a purchase: Alice by her monthly plan, Carol by her yearly one, Bob by his refunded ebook.
  const subscriptions = await prisma().subscription.findMany({ where: { organizationId: shop.organizationId } });
  const monthly = subscriptions.find((s) => s.productId === ids.plan)!;
  const yearly = subscriptions.find((s) => s.productId === ids.yearly)!;
  ids.monthlySubscription = monthly.id;
  ids.yearlySubscription = yearly.id;
  ids.alice = monthly.customerId;
  ids.carol = yearly.customerId;
  ids.bob = wholly.customerId;

  // The monthly plan renews on April 14; the yearly one is canceled at its period's end on
  // April 20; the monthly one is revoked on April 21.
  await at('2027-04-14T07:00:00Z');
  await at('2027-04-20T12:00:00Z');
  await shop.polar.subscriptions.update({ id: ids.yearlySubscription, subscriptionUpdate: { cancelAtPeriodEnd: true } });
  await at('2027-04-21T12:00:00Z');
  await shop.polar.subscriptions.revoke({ id: ids.monthlySubscription });
  await at('2027-04-25T12:00:00Z');
}, 240_000);

describe('metrics against the rows', () => {
  it('the shop bought what the scenario says: seven paid usd orders, two refunds, one renewal', async () => {
    const orders = await prisma().order.findMany({ where: { organizationId: t.shop.organizationId }, orderBy: { createdAt: 'asc' } });
    expect(orders.filter((o) => o.paid && o.currency === 'usd')).toHaveLength(7);
    expect(orders.filter((o) => o.billingReason === 'subscription_cycle' && o.paid)).toHaveLength(1);
    expect(orders.map((o) => o.refundedAmount).filter(Boolean).sort()).toEqual([1000, 400]);
    expect(orders.filter((o) => !o.paid)).toHaveLength(1);
  });

  it('per UTC day: every period and the totals match the rows, and the totals are the scenario', async () => {
    const body = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'day' });
    expect(body.periods).toHaveLength(47);
    expect(body.periods[0].timestamp).toBe('2027-03-10T00:00:00+00:00');
    const day = (date: string) => body.periods.find((p) => p.timestamp.startsWith(date))!;
    expect(day('2027-03-12').orders).toBe(1);
    expect(day('2027-03-13').orders).toBe(1);
    expect(body.totals).toMatchObject({
      orders: 7,
      revenue: 4 * 1000 + 500 + 12000 + 500,
      net_revenue: 4 * 1000 + 500 + 12000 + 500 - 400 - 1000,
      cumulative_revenue: 17000,
      average_order_value: Math.ceil(17000 / 7),
      one_time_products: 4,
      new_subscriptions: 2,
      new_subscriptions_revenue: 12500,
      renewed_subscriptions: 1,
      renewed_subscriptions_revenue: 500,
      active_subscriptions: 1,
      monthly_recurring_revenue: 1000,
      committed_monthly_recurring_revenue: 0,
      checkouts: 8,
      succeeded_checkouts: 6,
      checkouts_conversion: 6 / 8,
    });
    expect(day('2027-04-15')).toMatchObject({ active_subscriptions: 2, monthly_recurring_revenue: 1500, committed_monthly_recurring_revenue: 1500 });
    expect(day('2027-04-20')).toMatchObject({ active_subscriptions: 2, monthly_recurring_revenue: 1500, committed_monthly_recurring_revenue: 500 });
    expect(day('2027-04-21')).toMatchObject({ active_subscriptions: 1, monthly_recurring_revenue: 1000, committed_monthly_recurring_revenue: 0 });
  });

  it('per New York day across the change to daylight-saving time: local midnights, the late order on March 12', async () => {
    const body = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'day', timezone: 'America/New_York' });
    const stamps = body.periods.map((p) => p.timestamp);
    expect(stamps.slice(3, 6)).toEqual(['2027-03-13T00:00:00-05:00', '2027-03-14T00:00:00-05:00', '2027-03-15T00:00:00-04:00']);
    const day = (date: string) => body.periods.find((p) => p.timestamp.startsWith(date))!;
    expect(day('2027-03-12').orders).toBe(2);
    expect(day('2027-03-13').orders).toBe(0);
    expect(day('2027-03-14').new_subscriptions).toBe(2);
  });

  it('per New York hour: the day clocks go forward has 23 hours, and each hour matches the rows', async () => {
    const body = await checkAgainstRows(t.shop, { startDate: '2027-03-12', endDate: '2027-03-15', interval: 'hour', timezone: 'America/New_York' });
    expect(body.periods).toHaveLength(4 * 24 - 1);
    const stamps = body.periods.map((p) => p.timestamp);
    expect(stamps).toContain('2027-03-14T01:00:00-05:00');
    expect(stamps).not.toContain('2027-03-14T02:00:00-05:00');
    expect(stamps[stamps.indexOf('2027-03-14T01:00:00-05:00') + 1]).toBe('2027-03-14T03:00:00-04:00');
    expect(body.periods.find((p) => p.timestamp === '2027-03-12T23:00:00-05:00')!.orders).toBe(1);
  });

  it('per week, month and year in New York and in Tokyo: whole periods clipped to the range', async () => {
    const weeks = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'week', timezone: 'America/New_York' });
    expect(weeks.periods[0].timestamp).toBe('2027-03-08T00:00:00-05:00');
    expect(weeks.periods.at(-1)!.timestamp).toBe('2027-04-19T00:00:00-04:00');
    const months = await checkAgainstRows(t.shop, { startDate: '2027-03-13', endDate: '2027-04-25', interval: 'month', timezone: 'America/New_York' });
    expect(months.periods.map((p) => p.timestamp)).toEqual(['2027-03-01T00:00:00-05:00', '2027-04-01T00:00:00-04:00']);
    // The range starts on March 13 in New York: the orders of March 12, one at 23:30 there, are outside it.
    expect(months.totals.orders).toBe(5);
    const years = await checkAgainstRows(t.shop, { startDate: '2026-06-01', endDate: '2027-12-31', interval: 'year', timezone: 'Asia/Tokyo' });
    expect(years.periods.map((p) => p.timestamp)).toEqual(['2026-01-01T00:00:00+09:00', '2027-01-01T00:00:00+09:00']);
    await checkAgainstRows(t.shop, { startDate: '2027-03-12', endDate: '2027-03-18', interval: 'day', timezone: 'Asia/Kolkata' });
  });

  it('filtered by product, customer and billing type, every period matches the rows', async () => {
    const ebook = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'day', productId: [ids.ebook] });
    expect(ebook.totals).toMatchObject({ orders: 4, new_subscriptions: 0, active_subscriptions: 0, checkouts: 6, succeeded_checkouts: 4 });
    const plans = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'week', timezone: 'America/New_York', productId: [ids.plan, ids.yearly] });
    expect(plans.totals).toMatchObject({ orders: 3, new_subscriptions: 2, one_time_products: 0 });
    const alice = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'day', timezone: 'America/New_York', customerId: [ids.alice] });
    expect(alice.totals).toMatchObject({ orders: 2, revenue: 1000, new_subscriptions: 1, renewed_subscriptions: 1, active_subscriptions: 0, checkouts: 1 });
    await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'day', customerId: [ids.bob, ids.carol] });
    const oneTime = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'day', billingType: ['one_time'] });
    expect(oneTime.totals).toMatchObject({ orders: 4, new_subscriptions: 0, monthly_recurring_revenue: 0 });
    const recurring = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'month', billingType: ['recurring'] });
    expect(recurring.totals).toMatchObject({ orders: 3, one_time_products: 0 });
    const both = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'day', billingType: ['one_time', 'recurring'] });
    expect(both.totals.orders).toBe(7);
  });

  it('counts one currency: usd unless asked, and the euro order only in eur', async () => {
    const euros = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'month', currency: 'eur' });
    expect(euros.totals).toMatchObject({ orders: 1, revenue: 900, checkouts: 1, active_subscriptions: 0 });
  });

  it('far dates and zones whose clocks change at midnight or by half an hour answer every period, in order', async () => {
    const cases: [string, string, string, string][] = [
      ['9999-12-25', '9999-12-31', 'day', 'UTC'],
      ['2027-04-01', '2027-04-06', 'day', 'America/Santiago'],
      ['2027-09-03', '2027-09-06', 'day', 'America/Santiago'],
      ['2027-04-03', '2027-04-04', 'hour', 'Australia/Lord_Howe'],
      ['2027-10-30', '2027-11-02', 'hour', 'Europe/London'],
    ];
    for (const [startDate, endDate, interval, timezone] of cases) {
      const body = await checkAgainstRows(t.shop, { startDate, endDate, interval, timezone });
      const starts = body.periods.map((p) => Date.parse(p.timestamp));
      expect(starts, `${timezone} ${interval}`).toEqual([...starts].sort((a, b) => a - b));
      expect(new Set(starts).size).toBe(starts.length);
      if (interval === 'day') expect(body.periods).toHaveLength(daysBetween(startDate, endDate) + 1);
    }
  });

  it('an unknown product counts nothing', async () => {
    const body = await checkAgainstRows(t.shop, { startDate: '2027-03-10', endDate: '2027-04-25', interval: 'day', productId: ['00000000-0000-4000-8000-000000000000'] });
    expect(body.totals.orders).toBe(0);
    expect(body.periods).toHaveLength(47);
  });
});

describe('the official client and GraphQL', () => {
  it('metrics.get and metrics.limits answer in production and in sandbox, each shop its own', async () => {
    const range = { startDate: new RFCDate('2027-03-10'), endDate: new RFCDate('2027-03-20'), interval: 'day' as const };
    const shop = await t.shop.polar.metrics.get({ ...range, timezone: 'America/New_York' });
    expect(shop.periods).toHaveLength(11);
    expect(shop.totals.orders).toBe(6);
    expect(shop.metrics.revenue).toEqual({ slug: 'revenue', displayName: 'Revenue', type: 'currency' });
    expect(shop.metrics.checkoutsConversion.type).toBe('percentage');
    const rival = await t.rival.polar.metrics.get(range);
    expect(rival.totals).toMatchObject({ orders: 1, revenue: 700, activeSubscriptions: 0 });
    const sandbox = await t.sandboxShop.polar.metrics.get({ ...range, organizationId: t.sandboxShop.organizationId });
    expect(sandbox.totals).toMatchObject({ orders: 1, revenue: 300 });
    for (const org of [t.shop, t.sandboxShop]) {
      const limits = await org.polar.metrics.limits();
      expect(limits.minDate.toString()).toBe('2023-01-01');
      expect(limits.intervals).toEqual({ hour: { maxDays: 7 }, day: { maxDays: 366 }, week: { maxDays: 365 }, month: { maxDays: 1460 }, year: { maxDays: 3650 } });
    }
  });

  it('core.metrics answers the same as REST', async () => {
    const { body } = await t.shop.gql(
      `query { core { metrics(startDate: "2027-03-10", endDate: "2027-04-25", interval: day, timezone: "America/New_York") { periods { timestamp orders } totals { revenue netRevenue checkoutsConversion } metrics { orders { slug displayName type } } } metricsLimits { minDate } } }`,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data.core.metrics.totals).toEqual({ revenue: 17000, netRevenue: 15600, checkoutsConversion: 0.75 });
    expect(body.data.core.metrics.periods[2]).toEqual({ timestamp: '2027-03-12T00:00:00-05:00', orders: 2 });
    expect(body.data.core.metrics.metrics.orders).toEqual({ slug: 'orders', displayName: 'Orders', type: 'scalar' });
    expect(body.data.core.metricsLimits.minDate).toBe('2023-01-01');
  });
});

describe('who may read metrics', () => {
  const path = '/metrics/?start_date=2027-03-10&end_date=2027-04-25&interval=day';

  it('no token: 401', async () => {
    expect((await t.shop.publicApi('GET', path)).status).toBe(401);
    expect((await t.shop.publicApi('GET', '/metrics/limits')).status).toBe(401);
  });

  it('a token without metrics:read: 403', async () => {
    const token = await tokenWithScopes(t.server, t.shop, ['orders:read', 'subscriptions:read']);
    const api = restClient(t.server.base('production'), token);
    expect((await api('GET', path)).status).toBe(403);
    expect((await api('GET', '/metrics/limits')).status).toBe(403);
    const only = restClient(t.server.base('production'), await tokenWithScopes(t.server, t.shop, ['metrics:read']));
    expect((await only('GET', path)).body.totals.orders).toBe(7);
  });

  it("another organization's token never counts the shop's rows, even when it names the shop", async () => {
    const own = await t.rival.api('GET', path);
    expect(own.body.totals).toMatchObject({ orders: 1, revenue: 700 });
    const named = await t.rival.api('GET', `${path}&organization_id=${t.shop.organizationId}`);
    expect(named.status).toBe(200);
    expect(named.body.totals).toMatchObject({ orders: 0, revenue: 0, checkouts: 0, active_subscriptions: 0 });
    const customer = await t.rival.api('GET', `${path}&customer_id=${ids.alice}`);
    expect(customer.body.totals.orders).toBe(0);
  });

  it('a token is unknown in the other environment, and the sandbox shop sees only sandbox', async () => {
    const sandbox = restClient(t.server.base('sandbox'), t.shop.token);
    expect((await sandbox('GET', path)).status).toBe(401);
    const production = restClient(t.server.base('production'), t.sandboxShop.token);
    expect((await production('GET', path)).status).toBe(401);
    const own = await t.sandboxShop.api('GET', path);
    expect(own.body.totals).toMatchObject({ orders: 1, revenue: 300 });
  });
});

describe('bad input is a 422 naming the parameter', () => {
  const cases: [string, string, string][] = [
    ['end before start', 'start_date=2027-03-10&end_date=2027-03-09&interval=day', 'end_date'],
    ['an unknown interval', 'start_date=2027-03-10&end_date=2027-03-11&interval=fortnight', 'interval'],
    ['an unknown time zone', 'start_date=2027-03-10&end_date=2027-03-11&interval=day&timezone=Mars/Olympus_Mons', 'timezone'],
    ['a time zone abbreviation', 'start_date=2027-03-10&end_date=2027-03-11&interval=day&timezone=%2B03', 'timezone'],
    ['hours over more than 7 days', 'start_date=2027-03-01&end_date=2027-03-09&interval=hour', 'end_date'],
    ['days over more than 366 days', 'start_date=2025-01-01&end_date=2026-01-03&interval=day', 'end_date'],
    ['a start before the earliest date', 'start_date=2022-12-31&end_date=2023-01-02&interval=day', 'start_date'],
    ['a malformed start date', 'start_date=10/03/2027&end_date=2027-03-11&interval=day', 'start_date'],
    ['a date that does not exist', 'start_date=2027-02-29&end_date=2027-03-11&interval=day', 'start_date'],
    ['a malformed end date', 'start_date=2027-03-10&end_date=soon&interval=day', 'end_date'],
    ['a missing start date', 'end_date=2027-03-11&interval=day', 'start_date'],
    ['a malformed product id', 'start_date=2027-03-10&end_date=2027-03-11&interval=day&product_id=ebook', 'product_id'],
    ['an unknown billing type', 'start_date=2027-03-10&end_date=2027-03-11&interval=day&billing_type=lifetime', 'billing_type'],
    ['an unknown currency', 'start_date=2027-03-10&end_date=2027-03-11&interval=day&currency=xyz', 'currency'],
  ];
  for (const [what, query, parameter] of cases) {
    it(what, async () => {
      const { status, body } = await t.shop.api('GET', `/metrics/?${query}`);
      expect(status).toBe(422);
      expect(body.detail.map((issue: { loc: unknown[] }) => issue.loc.slice(0, 2))).toContainEqual(['query', parameter]);
    });
  }

  it('any range within the limits answers 200 with every period, and any beyond them a 422: never a 500', async () => {
    const limits: Record<string, number> = { hour: 7, day: 366, week: 365, month: 1460, year: 3650 };
    const zones = ['UTC', 'America/New_York', 'Europe/London', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/Santiago', 'Pacific/Kiritimati'];
    await fc.assert(
      fc.asyncProperty(
        fc.date({ min: new Date('2023-01-01'), max: new Date('2035-12-31'), noInvalidDate: true }),
        fc.constantFrom('hour', 'day', 'week', 'month', 'year'),
        fc.oneof(fc.integer({ min: -2, max: 10 }), fc.integer({ min: 0, max: 4000 })),
        fc.constantFrom(...zones),
        async (start, interval, span, timezone) => {
          const startDate = start.toISOString().slice(0, 10);
          const endDate = new Date(start.getTime() + span * 86_400_000).toISOString().slice(0, 10);
          const { status, body } = await t.shop.api('GET', `/metrics/?${queryString({ startDate, endDate, interval, timezone })}`);
          if (span < 0 || span > limits[interval]) {
            expect(status).toBe(422);
            expect(body.detail[0].loc).toEqual(['query', 'end_date']);
            return;
          }
          expect(status, JSON.stringify(body).slice(0, 300)).toBe(200);
          const starts = body.periods.map((p: { timestamp: string }) => Date.parse(p.timestamp));
          expect(new Set(starts).size).toBe(starts.length);
          expect(starts).toEqual([...starts].sort((a: number, b: number) => a - b));
          if (interval === 'day') expect(starts).toHaveLength(span + 1);
          if (interval === 'hour') expect(Math.abs(starts.length - (span + 1) * 24)).toBeLessThanOrEqual(2);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the client library throws HTTPValidationError for a range over the limit', async () => {
    const error = await t.shop.polar.metrics.get({ startDate: new RFCDate('2027-03-01'), endDate: new RFCDate('2027-03-20'), interval: 'hour' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0].loc).toEqual(['query', 'end_date']);
  });
});
