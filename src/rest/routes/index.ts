// Every REST route Kassa serves, one table per resource. Order matters where paths overlap: a
// table lists its fixed paths before the `{id}` paths they would also match.
import type { RestRoute } from '../route.ts';
import { benefitRoutes } from './benefits.ts';
import { checkoutLinkRoutes } from './checkout-links.ts';
import { checkoutRoutes } from './checkouts.ts';
import { customerPortalRoutes } from './customer-portal.ts';
import { customerSessionRoutes } from './customer-sessions.ts';
import { customerRoutes } from './customers.ts';
import { customFieldRoutes } from './custom-fields.ts';
import { discountRoutes } from './discounts.ts';
import { disputeRoutes } from './disputes.ts';
import { fileRoutes } from './files.ts';
import { licenseKeyRoutes } from './license-keys.ts';
import { metricsRoutes } from './metrics.ts';
import { orderRoutes } from './orders.ts';
import { organizationRoutes } from './organizations.ts';
import { paymentRoutes } from './payments.ts';
import { productRoutes } from './products.ts';
import { refundRoutes } from './refunds.ts';
import { subscriptionRoutes } from './subscriptions.ts';
import { usageRoutes } from './usage.ts';
import { webhookDeliveryRoutes } from './webhook-deliveries.ts';
import { webhookEndpointRoutes } from './webhooks.ts';

export const restRoutes: RestRoute[] = [
  ...organizationRoutes,
  ...productRoutes,
  ...customerRoutes,
  ...customerSessionRoutes,
  ...checkoutRoutes,
  ...checkoutLinkRoutes,
  ...orderRoutes,
  ...refundRoutes,
  ...disputeRoutes,
  ...paymentRoutes,
  ...discountRoutes,
  ...customFieldRoutes,
  ...benefitRoutes,
  ...subscriptionRoutes,
  ...licenseKeyRoutes,
  ...usageRoutes,
  ...fileRoutes,
  ...customerPortalRoutes,
  ...webhookEndpointRoutes,
  ...webhookDeliveryRoutes,
  ...metricsRoutes,
];
