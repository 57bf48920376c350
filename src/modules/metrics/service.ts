// Revenue metrics: orders, subscriptions and checkouts counted per period of a date range, in a
// time zone, with totals over the range. Each family of metrics is one SQL query: a series of
// periods (generate_series over local wall-clock time, so a period starts at local midnight, week,
// month or year start whatever the daylight-saving offset) joined to the family's rows, so no row
// is ever loaded into memory. Money is integer minor units of one currency per answer.
import { timeIntervals, type TimeInterval } from '../../calendar.ts';
import type { Context } from '../../context.ts';
import { isKnownCurrency } from '../../currencies.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { ValidationIssues } from '../../graphql/errors.ts';
import { organizationFilter } from '../organizations/access.ts';

export type BillingType = 'one_time' | 'recurring';
export type MetricType = 'scalar' | 'currency' | 'percentage';

/** The earliest start date a request may ask for. */
export const minDate = '2023-01-01';
/** How many days a range may span (end minus start) for each interval: it bounds the periods of an answer. */
export const maxDays: Record<TimeInterval, number> = { hour: 7, day: 366, week: 365, month: 365 * 4, year: 365 * 10 };

/**
 * Every metric, in the order of the answer. `total` is how the range's total is made from the
 * periods: `sum` for what happens in a period (flows), `last` for a state at a period's end
 * (stocks, and running sums), `ratio` for an average or rate taken over the whole range.
 */
export const metricDefinitions = [
  { slug: 'orders', displayName: 'Orders', type: 'scalar', total: 'sum' },
  { slug: 'revenue', displayName: 'Revenue', type: 'currency', total: 'sum' },
  { slug: 'net_revenue', displayName: 'Net Revenue', type: 'currency', total: 'sum' },
  { slug: 'cumulative_revenue', displayName: 'Cumulative Revenue', type: 'currency', total: 'last' },
  { slug: 'net_cumulative_revenue', displayName: 'Net Cumulative Revenue', type: 'currency', total: 'last' },
  { slug: 'average_order_value', displayName: 'Average Order Value', type: 'currency', total: 'ratio' },
  { slug: 'net_average_order_value', displayName: 'Net Average Order Value', type: 'currency', total: 'ratio' },
  { slug: 'one_time_products', displayName: 'One-Time Products', type: 'scalar', total: 'sum' },
  { slug: 'one_time_products_revenue', displayName: 'One-Time Products Revenue', type: 'currency', total: 'sum' },
  { slug: 'one_time_products_net_revenue', displayName: 'One-Time Products Net Revenue', type: 'currency', total: 'sum' },
  { slug: 'new_subscriptions', displayName: 'New Subscriptions', type: 'scalar', total: 'sum' },
  { slug: 'new_subscriptions_revenue', displayName: 'New Subscriptions Revenue', type: 'currency', total: 'sum' },
  { slug: 'new_subscriptions_net_revenue', displayName: 'New Subscriptions Net Revenue', type: 'currency', total: 'sum' },
  { slug: 'renewed_subscriptions', displayName: 'Renewed Subscriptions', type: 'scalar', total: 'sum' },
  { slug: 'renewed_subscriptions_revenue', displayName: 'Renewed Subscriptions Revenue', type: 'currency', total: 'sum' },
  { slug: 'renewed_subscriptions_net_revenue', displayName: 'Renewed Subscriptions Net Revenue', type: 'currency', total: 'sum' },
  { slug: 'active_subscriptions', displayName: 'Active Subscriptions', type: 'scalar', total: 'last' },
  { slug: 'monthly_recurring_revenue', displayName: 'Monthly Recurring Revenue', type: 'currency', total: 'last' },
  { slug: 'committed_monthly_recurring_revenue', displayName: 'Committed Monthly Recurring Revenue', type: 'currency', total: 'last' },
  { slug: 'checkouts', displayName: 'Checkouts', type: 'scalar', total: 'sum' },
  { slug: 'succeeded_checkouts', displayName: 'Succeeded Checkouts', type: 'scalar', total: 'sum' },
  { slug: 'checkouts_conversion', displayName: 'Checkouts Conversion Rate', type: 'percentage', total: 'ratio' },
] as const satisfies readonly { slug: string; displayName: string; type: MetricType; total: 'sum' | 'last' | 'ratio' }[];

export type MetricSlug = (typeof metricDefinitions)[number]['slug'];
export type MetricValues = Record<MetricSlug, number>;

export interface MetricsPeriod extends MetricValues {
  /** The period's start: local wall-clock time in the requested zone, with that zone's offset then (ISO 8601). */
  timestamp: string;
}

export interface MetricsResult {
  periods: MetricsPeriod[];
  totals: MetricValues;
}

export interface MetricsArgs {
  startDate: string;
  endDate: string;
  interval: TimeInterval;
  timezone?: string | null;
  organizationId?: string[] | null;
  productId?: string[] | null;
  billingType?: BillingType[] | null;
  customerId?: string[] | null;
  currency?: string | null;
}

export function metricsLimits() {
  return { minDate, intervals: Object.fromEntries(timeIntervals.map((interval) => [interval, { maxDays: maxDays[interval] }])) as Record<TimeInterval, { maxDays: number }> };
}

/** Days from one calendar date to another (both `YYYY-MM-DD`). */
function daysBetween(start: string, end: string): number {
  return Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / 86_400_000);
}

/** Zone names the database confirmed; only names it lists are kept, so the set stays as small as its list. */
const knownZones = new Set<string>();

/** The database is the authority on zone names: only the IANA names it lists, not abbreviations or POSIX offsets. */
async function isKnownZone(ctx: Context, timezone: string): Promise<boolean> {
  if (knownZones.has(timezone)) return true;
  const [row] = await ctx.prisma.$queryRaw<{ known: boolean }[]>`SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = ${timezone}) AS known`;
  if (row?.known) knownZones.add(timezone);
  return Boolean(row?.known);
}

/** The request's range and zone, checked: every fault is reported at once, at its parameter. */
async function checkedRange(ctx: Context, args: MetricsArgs) {
  const issues = new ValidationIssues();
  const timezone = args.timezone ?? 'UTC';
  const currency = (args.currency ?? 'usd').toLowerCase();
  if (args.startDate < minDate) issues.add(['startDate'], `Input should be greater than or equal to ${minDate}: the earliest date metrics cover.`, 'greater_than_equal');
  if (args.endDate < args.startDate) issues.add(['endDate'], 'The end date is before the start date.', 'value_error');
  else if (daysBetween(args.startDate, args.endDate) > maxDays[args.interval]) {
    issues.add(
      ['endDate'],
      `The range spans ${daysBetween(args.startDate, args.endDate)} days; with interval ${args.interval} it may span at most ${maxDays[args.interval]} (see /v1/metrics/limits). Shorten the range or choose a longer interval.`,
      'value_error',
    );
  }
  if (!(await isKnownZone(ctx, timezone))) issues.add(['timezone'], `Unknown time zone "${timezone.slice(0, 64)}": give an IANA name such as UTC or America/New_York.`, 'value_error');
  if (!isKnownCurrency(currency)) issues.add(['currency'], `Unknown currency "${currency.slice(0, 16)}": give an ISO 4217 code such as usd.`, 'value_error');
  issues.throwIfAny();
  return { timezone, currency };
}

/** `column IN (values)` as SQL, or false for an empty list. */
function inList(column: Prisma.Sql, values: readonly string[], cast = ''): Prisma.Sql {
  if (!values.length) return Prisma.sql`FALSE`;
  return Prisma.sql`${column} IN (${Prisma.join(values.map((v) => Prisma.sql`${v}${Prisma.raw(cast)}`))})`;
}

interface Scope {
  organizations: string[];
  productIds: string[] | null;
  customerIds: string[] | null;
  recurring: boolean[] | null;
  currency: string;
}

/**
 * The periods of the range, `idx` in order. `lo` and `hi` bound what a period counts: its own
 * start and end, clipped to the range (local midnight of the start date to local midnight after
 * the end date), so a week or month period at either end counts only the days asked for.
 * Hours step in absolute time (a day of a daylight-saving change has 23 or 25 of them); days,
 * weeks, months and years step in local wall-clock time and each start is read in the zone.
 */
function periodsSql(args: MetricsArgs, timezone: string): Prisma.Sql {
  const step = Prisma.raw(`'1 ${args.interval}'::interval`);
  const unit = args.interval;
  const range = Prisma.sql`
    range AS (
      SELECT (${args.startDate}::date)::timestamp AT TIME ZONE ${timezone} AS range_start,
             ((${args.endDate}::date + 1)::timestamp) AT TIME ZONE ${timezone} AS range_end
    )`;
  const starts =
    unit === 'hour'
      ? Prisma.sql`
    starts AS (
      SELECT g AS period_start, g + ${step} AS period_end
      FROM range, generate_series(range.range_start, range.range_end - interval '1 microsecond', ${step}) AS g
    )`
      : Prisma.sql`
    starts AS (
      SELECT g AT TIME ZONE ${timezone} AS period_start, (g + ${step}) AT TIME ZONE ${timezone} AS period_end
      FROM generate_series(date_trunc(${unit}, ${args.startDate}::date::timestamp), (${args.endDate}::date)::timestamp, ${step}) AS g
    )`;
  return Prisma.sql`${range}, ${starts},
    periods AS (
      SELECT row_number() OVER (ORDER BY period_start)::int AS idx,
             to_char(period_start AT TIME ZONE ${timezone}, 'YYYY-MM-DD"T"HH24:MI:SS') AS local_start,
             extract(epoch FROM (period_start AT TIME ZONE ${timezone}) - (period_start AT TIME ZONE 'UTC'))::int AS utc_offset,
             greatest(period_start, range.range_start) AS lo,
             least(period_end, range.range_end) AS hi
      FROM starts, range
    )`;
}

/** Orders, revenue and their kinds: paid orders (refunded ones included) by when they were created. */
function ordersQuery(periods: Prisma.Sql, scope: Scope): Prisma.Sql {
  const filters = [
    inList(Prisma.sql`o.organization_id`, scope.organizations, '::uuid'),
    Prisma.sql`o.paid`,
    Prisma.sql`o.currency = ${scope.currency}`,
    ...(scope.productIds ? [inList(Prisma.sql`o.product_id`, scope.productIds, '::uuid')] : []),
    ...(scope.customerIds ? [inList(Prisma.sql`o.customer_id`, scope.customerIds, '::uuid')] : []),
    ...(scope.recurring ? [Prisma.sql`p.is_recurring IN (${Prisma.join(scope.recurring)})`] : []),
  ];
  return Prisma.sql`
    WITH ${periods},
    scoped AS (
      SELECT o.created_at, o.net_amount AS gross, o.net_amount - o.refunded_amount AS net, o.subscription_id, o.billing_reason::text AS reason
      FROM orders o JOIN products p ON p.id = o.product_id
      WHERE ${Prisma.join(filters, ' AND ')}
        AND o.created_at >= (SELECT range_start FROM range) AND o.created_at < (SELECT range_end FROM range)
    ),
    counted AS (
      SELECT pe.idx, pe.local_start, pe.utc_offset,
        count(s.created_at)::int AS orders,
        coalesce(sum(s.gross), 0)::float8 AS revenue,
        coalesce(sum(s.net), 0)::float8 AS net_revenue,
        coalesce(ceil(avg(s.gross)), 0)::float8 AS average_order_value,
        coalesce(ceil(avg(s.net)), 0)::float8 AS net_average_order_value,
        count(s.created_at) FILTER (WHERE s.subscription_id IS NULL)::int AS one_time_products,
        coalesce(sum(s.gross) FILTER (WHERE s.subscription_id IS NULL), 0)::float8 AS one_time_products_revenue,
        coalesce(sum(s.net) FILTER (WHERE s.subscription_id IS NULL), 0)::float8 AS one_time_products_net_revenue,
        coalesce(sum(s.gross) FILTER (WHERE s.reason = 'subscription_create'), 0)::float8 AS new_subscriptions_revenue,
        coalesce(sum(s.net) FILTER (WHERE s.reason = 'subscription_create'), 0)::float8 AS new_subscriptions_net_revenue,
        count(DISTINCT s.subscription_id) FILTER (WHERE s.reason = 'subscription_cycle')::int AS renewed_subscriptions,
        coalesce(sum(s.gross) FILTER (WHERE s.reason = 'subscription_cycle'), 0)::float8 AS renewed_subscriptions_revenue,
        coalesce(sum(s.net) FILTER (WHERE s.reason = 'subscription_cycle'), 0)::float8 AS renewed_subscriptions_net_revenue
      FROM periods pe LEFT JOIN scoped s ON s.created_at >= pe.lo AND s.created_at < pe.hi
      GROUP BY pe.idx, pe.local_start, pe.utc_offset
    )
    SELECT *,
      (sum(revenue) OVER (ORDER BY idx))::float8 AS cumulative_revenue,
      (sum(net_revenue) OVER (ORDER BY idx))::float8 AS net_cumulative_revenue
    FROM counted ORDER BY idx`;
}

/**
 * Subscriptions as they stood at each period's end: active when started before it and not ended
 * (or set to end) by then. MRR is each active subscription's amount per month; committed MRR
 * leaves out those whose cancellation was requested by the period's end.
 */
function subscriptionsQuery(periods: Prisma.Sql, scope: Scope): Prisma.Sql {
  const filters = [
    inList(Prisma.sql`s.organization_id`, scope.organizations, '::uuid'),
    Prisma.sql`s.started_at IS NOT NULL`,
    Prisma.sql`s.currency = ${scope.currency}`,
    ...(scope.productIds ? [inList(Prisma.sql`s.product_id`, scope.productIds, '::uuid')] : []),
    ...(scope.customerIds ? [inList(Prisma.sql`s.customer_id`, scope.customerIds, '::uuid')] : []),
    ...(scope.recurring ? [Prisma.sql`p.is_recurring IN (${Prisma.join(scope.recurring)})`] : []),
  ];
  return Prisma.sql`
    WITH ${periods},
    scoped AS (
      SELECT s.started_at, coalesce(s.ended_at, s.ends_at) AS end_at, s.canceled_at,
        CASE s.recurring_interval::text
          WHEN 'month' THEN s.amount::numeric
          WHEN 'year' THEN round(s.amount / 12.0)
          WHEN 'week' THEN round(s.amount * 52 / 12.0)
          WHEN 'day' THEN round(s.amount * 365 / 12.0)
        END AS monthly
      FROM subscriptions s JOIN products p ON p.id = s.product_id
      WHERE ${Prisma.join(filters, ' AND ')}
        AND s.started_at < (SELECT range_end FROM range)
    ),
    stood AS (
      SELECT pe.idx, s.started_at, s.monthly, s.canceled_at,
        (s.started_at IS NOT NULL AND (s.end_at IS NULL OR s.end_at >= pe.hi)) AS active,
        (s.started_at >= pe.lo) AS new
      FROM periods pe LEFT JOIN scoped s ON s.started_at < pe.hi AND (s.end_at IS NULL OR s.end_at > pe.lo)
    )
    SELECT pe.idx,
      count(*) FILTER (WHERE st.active)::int AS active_subscriptions,
      count(*) FILTER (WHERE st.new)::int AS new_subscriptions,
      coalesce(sum(st.monthly) FILTER (WHERE st.active), 0)::float8 AS monthly_recurring_revenue,
      coalesce(sum(st.monthly) FILTER (WHERE st.active AND (st.canceled_at IS NULL OR st.canceled_at >= pe.hi)), 0)::float8 AS committed_monthly_recurring_revenue
    FROM periods pe LEFT JOIN stood st ON st.idx = pe.idx
    GROUP BY pe.idx ORDER BY pe.idx`;
}

/** Checkouts by when they were created; succeeded ones by the same date. */
function checkoutsQuery(periods: Prisma.Sql, scope: Scope): Prisma.Sql {
  const offered = [
    ...(scope.productIds ? [inList(Prisma.sql`cp.product_id`, scope.productIds, '::uuid')] : []),
    ...(scope.recurring ? [Prisma.sql`p.is_recurring IN (${Prisma.join(scope.recurring)})`] : []),
  ];
  const filters = [
    inList(Prisma.sql`c.organization_id`, scope.organizations, '::uuid'),
    Prisma.sql`c.currency = ${scope.currency}`,
    ...(scope.customerIds ? [inList(Prisma.sql`c.customer_id`, scope.customerIds, '::uuid')] : []),
    ...(offered.length
      ? [Prisma.sql`EXISTS (SELECT 1 FROM checkout_products cp JOIN products p ON p.id = cp.product_id WHERE cp.checkout_id = c.id AND ${Prisma.join(offered, ' AND ')})`]
      : []),
  ];
  return Prisma.sql`
    WITH ${periods},
    scoped AS (
      SELECT c.created_at, c.status::text AS status
      FROM checkouts c
      WHERE ${Prisma.join(filters, ' AND ')}
        AND c.created_at >= (SELECT range_start FROM range) AND c.created_at < (SELECT range_end FROM range)
    )
    SELECT pe.idx,
      count(s.created_at)::int AS checkouts,
      count(s.created_at) FILTER (WHERE s.status = 'succeeded')::int AS succeeded_checkouts
    FROM periods pe LEFT JOIN scoped s ON s.created_at >= pe.lo AND s.created_at < pe.hi
    GROUP BY pe.idx ORDER BY pe.idx`;
}

/** `+HH:MM` or `-HH:MM` for an offset in seconds. */
function formatOffset(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+';
  const minutes = Math.abs(Math.round(seconds / 60));
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/** A share as a rate between 0 and 1; 0 when there is nothing to share. */
function rate(part: number, whole: number): number {
  return whole === 0 ? 0 : part / whole;
}

/** Average order value over the range: the range's revenue over its orders, rounded up to the minor unit as each period's is. */
function average(amount: number, count: number): number {
  return count === 0 ? 0 : Math.ceil(amount / count);
}

function totalsOf(periods: MetricsPeriod[]): MetricValues {
  const sum = (slug: MetricSlug) => periods.reduce((acc, period) => acc + period[slug], 0);
  const last = (slug: MetricSlug) => periods.at(-1)?.[slug] ?? 0;
  const totals = {} as MetricValues;
  for (const metric of metricDefinitions) {
    if (metric.total === 'sum') totals[metric.slug] = sum(metric.slug);
    else if (metric.total === 'last') totals[metric.slug] = last(metric.slug);
  }
  totals.average_order_value = average(totals.revenue, totals.orders);
  totals.net_average_order_value = average(totals.net_revenue, totals.orders);
  totals.checkouts_conversion = rate(totals.succeeded_checkouts, totals.checkouts);
  return totals;
}

type Row = Record<string, unknown> & { idx: number };

export async function getMetrics(ctx: Context, args: MetricsArgs): Promise<MetricsResult> {
  const { timezone, currency } = await checkedRange(ctx, args);
  const billing = args.billingType?.length ? [...new Set(args.billingType)] : null;
  const scope: Scope = {
    organizations: organizationFilter(ctx, args.organizationId).in,
    productIds: args.productId?.length ? args.productId : null,
    customerIds: args.customerId?.length ? args.customerId : null,
    recurring: billing && billing.length < 2 ? billing.map((type) => type === 'recurring') : null,
    currency,
  };
  const periods = periodsSql(args, timezone);
  // One after the other: the request's client may be a single connection.
  const orders = await ctx.prisma.$queryRaw<Row[]>(ordersQuery(periods, scope));
  const subscriptions = await ctx.prisma.$queryRaw<Row[]>(subscriptionsQuery(periods, scope));
  const checkouts = await ctx.prisma.$queryRaw<Row[]>(checkoutsQuery(periods, scope));
  const byIdx = (rows: Row[]) => new Map(rows.map((row) => [Number(row.idx), row]));
  const subscriptionRows = byIdx(subscriptions);
  const checkoutRows = byIdx(checkouts);
  const result: MetricsPeriod[] = orders.map((row) => {
    const values = { ...row, ...subscriptionRows.get(Number(row.idx)), ...checkoutRows.get(Number(row.idx)) } as Record<string, unknown>;
    const period = { timestamp: `${String(row.local_start)}${formatOffset(Number(row.utc_offset))}` } as MetricsPeriod;
    for (const metric of metricDefinitions) period[metric.slug] = Number(values[metric.slug] ?? 0);
    period.checkouts_conversion = rate(period.succeeded_checkouts, period.checkouts);
    return period;
  });
  return { periods: result, totals: totalsOf(result) };
}
