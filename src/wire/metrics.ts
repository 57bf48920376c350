// The documented JSON of metrics: every period, the totals and what each metric is, and the
// limits of a request (see wire/shape.ts for the snake_case mapping).

/** Every metric, by its GraphQL field name: periods and totals carry a value of each, `metrics` its definition. */
const metricFields = `orders revenue netRevenue cumulativeRevenue netCumulativeRevenue averageOrderValue netAverageOrderValue
  oneTimeProducts oneTimeProductsRevenue oneTimeProductsNetRevenue newSubscriptions newSubscriptionsRevenue
  newSubscriptionsNetRevenue renewedSubscriptions renewedSubscriptionsRevenue renewedSubscriptionsNetRevenue
  activeSubscriptions monthlyRecurringRevenue committedMonthlyRecurringRevenue checkouts succeededCheckouts checkoutsConversion`;

const definitions = metricFields
  .split(/\s+/)
  .map((field) => `${field} { slug displayName type }`)
  .join(' ');

export const MetricsResponseWire = /* GraphQL */ `fragment MetricsResponseWire on MetricsResponse {
  periods { timestamp ${metricFields} }
  totals { ${metricFields} }
  metrics { ${definitions} }
}`;

export const MetricsLimitsWire = /* GraphQL */ `fragment MetricsLimitsWire on MetricsLimits {
  minDate intervals { hour { maxDays } day { maxDays } week { maxDays } month { maxDays } year { maxDays } }
}`;
