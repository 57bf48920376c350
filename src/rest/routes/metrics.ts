import type { RestRoute } from '../route.ts';
import { MetricsLimitsWire, MetricsResponseWire } from '../../wire/metrics.ts';

export const metricsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/metrics/',
    operation: `query ($startDate: Date!, $endDate: Date!, $interval: TimeInterval!, $timezone: String, $organizationId: [UUID!], $productId: [UUID!],
        $billingType: [ProductBillingType!], $customerId: [UUID!], $currency: String) {
      core { metrics(startDate: $startDate, endDate: $endDate, interval: $interval, timezone: $timezone, organizationId: $organizationId,
        productId: $productId, billingType: $billingType, customerId: $customerId, currency: $currency) { ...MetricsResponseWire } }
    } ${MetricsResponseWire}`,
  },
  {
    method: 'GET',
    path: '/v1/metrics/limits',
    operation: `query { core { metricsLimits { ...MetricsLimitsWire } } } ${MetricsLimitsWire}`,
  },
];
