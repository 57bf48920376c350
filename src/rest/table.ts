// Every REST route Kassa serves, one list per resource module.
import { customerRoutes } from '../modules/customers/rest.ts';
import { productRoutes } from '../modules/products/rest.ts';
import { orderRoutes } from '../modules/orders/rest.ts';
import { checkoutRoutes } from '../modules/checkouts/rest.ts';
import { refundRoutes } from '../modules/refunds/rest.ts';
import { benefitRoutes } from '../modules/benefits/rest.ts';
import { subscriptionRoutes } from '../modules/subscriptions/rest.ts';
import { licenseKeyRoutes } from '../modules/license-keys/rest.ts';
import { fileRoutes } from '../modules/files/rest.ts';
import { customerSessionRoutes } from '../modules/customer-sessions/rest.ts';
import { customerPortalRoutes } from '../modules/customer-portal/rest.ts';
import { webhookEndpointRoutes } from '../modules/webhooks/rest.ts';
import { webhookDeliveryRoutes } from '../modules/webhook-deliveries/rest.ts';
import type { RestRoute } from './routes.ts';

export const restRoutes: RestRoute[] = [...productRoutes, ...customerRoutes, ...customerSessionRoutes, ...checkoutRoutes, ...orderRoutes, ...refundRoutes, ...benefitRoutes, ...subscriptionRoutes, ...licenseKeyRoutes, ...fileRoutes, ...customerPortalRoutes, ...webhookEndpointRoutes, ...webhookDeliveryRoutes];
