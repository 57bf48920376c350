import { GraphQLError, Kind } from 'graphql';
import type { Scope } from '../../auth/scopes.ts';
import { builder } from '../../graphql/builder.ts';
import { CoreQuery } from '../../graphql/roots.ts';
import { timeIntervals } from '../../calendar.ts';
import { TimeInterval } from '../../graphql/time-interval.ts';
import { ProductBillingType } from '../orders/schema.ts';
import { getMetrics, maxDays, metricDefinitions, metricsLimits, minDate, type MetricsPeriod, type MetricsResult, type MetricType as MetricTypes, type MetricValues } from './service.ts';

const camelCase = (slug: string) => slug.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
const read = { scope: 'metrics:read' satisfies Scope as Scope };

/** A calendar date, `YYYY-MM-DD`, that exists. */
function parseDate(value: unknown): string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) throw new GraphQLError('Input should be a valid date in the format YYYY-MM-DD.');
  const parsed = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value) throw new GraphQLError(`Input should be a valid date: ${value} does not exist.`);
  return value;
}

export const DateScalar = builder.scalarType('Date', {
  description: 'A calendar date, ISO 8601 `YYYY-MM-DD`, with no time or zone.',
  serialize: (value) => value as string,
  parseValue: parseDate,
  parseLiteral: (node) => {
    if (node.kind !== Kind.STRING) throw new GraphQLError('Input should be a valid date in the format YYYY-MM-DD.');
    return parseDate(node.value);
  },
});


const MetricType = builder.enumType('MetricType', {
  description: 'How a metric value reads.',
  values: {
    scalar: { description: 'A count.' },
    currency: { description: 'An amount in minor units of the answer\'s currency (cents for usd).' },
    percentage: { description: 'A rate from 0 to 1.' },
  } satisfies Record<MetricTypes, object>,
});

type MetricDefinition = (typeof metricDefinitions)[number];

const Metric = builder.objectRef<MetricDefinition>('Metric').implement({
  description: 'What a metric is: its slug (its field name on the wire), its name for people and how its values read.',
  fields: (t) => ({
    slug: t.exposeString('slug', { description: 'The field name of the metric in periods and totals, snake_case.' }),
    displayName: t.exposeString('displayName', { description: 'Its name, for people.' }),
    type: t.field({ type: MetricType, description: 'scalar, currency or percentage.', resolve: (m) => m.type }),
  }),
});

/** What each metric counts, for its field description. */
const meaning: Record<MetricDefinition['slug'], string> = {
  orders: 'Paid orders (refunded ones included) created in the period.',
  revenue: 'Their net amounts (after discount, before tax), refunds not taken off.',
  net_revenue: 'Their net amounts less what was refunded of them.',
  cumulative_revenue: 'Revenue from the start of the range to the end of the period.',
  net_cumulative_revenue: 'Net revenue from the start of the range to the end of the period.',
  average_order_value: 'Revenue per order, rounded up to the minor unit; 0 without orders.',
  net_average_order_value: 'Net revenue per order, rounded up to the minor unit; 0 without orders.',
  one_time_products: 'Orders of one-time purchases (no subscription).',
  one_time_products_revenue: 'Revenue of one-time purchases.',
  one_time_products_net_revenue: 'Net revenue of one-time purchases.',
  new_subscriptions: 'Subscriptions started in the period.',
  new_subscriptions_revenue: "Revenue of subscriptions' first orders (billing reason subscription_create).",
  new_subscriptions_net_revenue: "Net revenue of subscriptions' first orders.",
  renewed_subscriptions: 'Subscriptions with a renewal order (billing reason subscription_cycle) in the period.',
  renewed_subscriptions_revenue: 'Revenue of renewal orders.',
  renewed_subscriptions_net_revenue: 'Net revenue of renewal orders.',
  active_subscriptions: "Subscriptions active at the period's end: started, and not ended or set to end by then.",
  monthly_recurring_revenue: 'The monthly amount of the active subscriptions (yearly / 12, weekly * 52 / 12, daily * 365 / 12, each rounded), at their list price.',
  committed_monthly_recurring_revenue: "Monthly recurring revenue of the active subscriptions whose cancellation was not requested by the period's end.",
  checkouts: 'Checkouts created in the period.',
  succeeded_checkouts: 'Of those, the ones that succeeded.',
  checkouts_conversion: 'Succeeded checkouts over checkouts, 0 to 1; 0 without checkouts.',
};

/** The range total of each metric, as the totals type describes it. */
const totalRule: Record<MetricDefinition['total'], string> = {
  sum: 'The sum over the periods.',
  last: "The last period's value.",
  ratio: 'Taken over the whole range, not averaged over periods.',
};

function valueFields<T extends MetricValues>(t: PothosSchemaTypes.ObjectFieldBuilder<PothosSchemaTypes.ExtendDefaultTypes<object>, T>, totals: boolean) {
  return Object.fromEntries(
    metricDefinitions.map((metric) => [
      camelCase(metric.slug),
      t.float({
        description: `${meaning[metric.slug]}${totals ? ` ${totalRule[metric.total]}` : ''}${metric.type === 'currency' ? ' In minor units; a whole number.' : ''}`,
        resolve: (values) => values[metric.slug],
      }),
    ]),
  );
}

const MetricPeriod = builder.objectRef<MetricsPeriod>('MetricPeriod').implement({
  description: 'The metrics of one period of the range.',
  fields: (t) => ({
    timestamp: t.exposeString('timestamp', {
      description: "The period's start in the requested time zone, ISO 8601 with the zone's offset then: 2027-03-14T00:00:00-05:00.",
    }),
    ...valueFields(t as never, false),
  }),
});

const MetricsTotals = builder.objectRef<MetricValues>('MetricsTotals').implement({
  description: 'The metrics over the whole range.',
  fields: (t) => valueFields(t as never, true),
});

const Metrics = builder.objectRef<object>('Metrics').implement({
  description: 'What each metric is, by slug.',
  fields: (t) =>
    Object.fromEntries(
      metricDefinitions.map((metric) => [camelCase(metric.slug), t.field({ type: Metric, description: metric.displayName, resolve: () => metric })]),
    ),
});

const MetricsResponse = builder.objectRef<MetricsResult>('MetricsResponse').implement({
  description: 'Metrics per period of a range, their totals, and what each metric is.',
  fields: (t) => ({
    periods: t.field({ type: [MetricPeriod], description: 'Every period of the range, in order, each present even when nothing happened in it.', resolve: (r) => r.periods }),
    totals: t.field({ type: MetricsTotals, description: 'The metrics over the range.', resolve: (r) => r.totals }),
    metrics: t.field({ type: Metrics, description: 'What each metric is.', resolve: () => ({}) }),
  }),
});

const MetricsIntervalLimit = builder.objectRef<{ maxDays: number }>('MetricsIntervalLimit').implement({
  description: 'The limit of one interval.',
  fields: (t) => ({ maxDays: t.exposeInt('maxDays', { description: 'How many days (end date minus start date) a range may span.' }) }),
});

const MetricsIntervalsLimits = builder.objectRef<ReturnType<typeof metricsLimits>['intervals']>('MetricsIntervalsLimits').implement({
  description: 'The limit of each interval.',
  fields: (t) =>
    Object.fromEntries(
      timeIntervals.map((interval) => [interval, t.field({ type: MetricsIntervalLimit, description: `The limit of the ${interval} interval.`, resolve: (limits) => limits[interval] })]),
    ),
});

const MetricsLimits = builder.objectRef<ReturnType<typeof metricsLimits>>('MetricsLimits').implement({
  description: 'What a metrics request may ask for.',
  fields: (t) => ({
    minDate: t.field({ type: DateScalar, description: 'The earliest start date.', resolve: (limits) => limits.minDate }),
    intervals: t.field({ type: MetricsIntervalsLimits, description: 'How long a range each interval allows.', resolve: (limits) => limits.intervals }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  metrics: t.field({
    type: MetricsResponse,
    description:
      'Orders, revenue, subscriptions and checkouts of the organizations the token reaches, per period from startDate to endDate (whole local days) in a time zone, with totals. Amounts are in minor units of one currency (usd unless `currency` says otherwise): rows in other currencies are not counted.',
    authScopes: read,
    args: {
      startDate: t.arg({ type: DateScalar, required: true, description: `The first day, in the time zone; not before ${minDate}.` }),
      endDate: t.arg({ type: DateScalar, required: true, description: 'The last day, in the time zone; not before startDate, and within the interval\'s limit (metricsLimits).' }),
      interval: t.arg({ type: TimeInterval, required: true, description: `The length of the periods. A range may span at most ${Object.entries(maxDays).map(([interval, days]) => `${days} days by ${interval}`).join(', ')}.` }),
      timezone: t.arg.string({ description: 'An IANA time zone name, such as America/New_York; UTC when omitted.' }),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      productId: t.arg({ type: ['UUID'], description: 'Only orders and subscriptions of these products, and checkouts offering one of them.' }),
      billingType: t.arg({ type: [ProductBillingType], description: 'Only one-time or recurring products; both when omitted or both given.' }),
      customerId: t.arg({ type: ['UUID'], description: 'Only these customers.' }),
      currency: t.arg.string({ description: 'The ISO 4217 currency counted, lowercase; usd when omitted.' }),
    },
    resolve: (_root, args, ctx) => getMetrics(ctx, args as Parameters<typeof getMetrics>[1]),
  }),
  metricsLimits: t.field({
    type: MetricsLimits,
    description: 'The earliest start date and the longest range of each interval a metrics request may ask for.',
    authScopes: read,
    resolve: () => metricsLimits(),
  }),
}));
