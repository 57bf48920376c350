// Assembles the schema: each resource module registers its types and fields on the builder, and
// the resources that node(id:) reaches are listed here, each by its module's loader.
import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.ts';
import './roots.ts';
import { nodeFields } from './node.ts';
import '../modules/users/schema.ts';
import { organizationNodeLoader } from '../modules/organizations/schema.ts';
import '../modules/personal-access-tokens/schema.ts';
import '../modules/oauth-clients/schema.ts';
import { productNodeLoader } from '../modules/products/schema.ts';
import { customerNodeLoader } from '../modules/customers/schema.ts';
import '../modules/customer-sessions/schema.ts';
import { orderNodeLoader } from '../modules/orders/schema.ts';
import { checkoutNodeLoader } from '../modules/checkouts/schema.ts';
import { checkoutLinkNodeLoader } from '../modules/checkout-links/schema.ts';
import { refundNodeLoader } from '../modules/refunds/schema.ts';
import { disputeNodeLoader } from '../modules/disputes/schema.ts';
import { paymentNodeLoader } from '../modules/payments/schema.ts';
import { discountNodeLoader } from '../modules/discounts/schema.ts';
import { customFieldNodeLoader } from '../modules/custom-fields/schema.ts';
import { benefitGrantNodeLoader, benefitNodeLoader } from '../modules/benefits/schema.ts';
import { subscriptionNodeLoader } from '../modules/subscriptions/schema.ts';
import { licenseKeyNodeLoader } from '../modules/license-keys/schema.ts';
import '../modules/files/schema.ts';
import { webhookEndpointNodeLoader } from '../modules/webhooks/schema.ts';
import '../modules/webhook-deliveries/schema.ts';
import '../modules/live-events/schema.ts';
import { eventNodeLoader, meterNodeLoader } from '../modules/usage/schema.ts';
import '../modules/metrics/schema.ts';
import { customerMeterNodeLoader } from '../modules/usage/customer-meters-schema.ts';
import { customerBenefitGrantNodeLoader, customerLicenseKeyNodeLoader, customerOrderNodeLoader, customerSubscriptionNodeLoader } from '../modules/customer-portal/schema.ts';

nodeFields([
  organizationNodeLoader,
  productNodeLoader,
  customerNodeLoader,
  orderNodeLoader,
  checkoutNodeLoader,
  checkoutLinkNodeLoader,
  refundNodeLoader,
  disputeNodeLoader,
  paymentNodeLoader,
  discountNodeLoader,
  customFieldNodeLoader,
  benefitNodeLoader,
  benefitGrantNodeLoader,
  subscriptionNodeLoader,
  licenseKeyNodeLoader,
  webhookEndpointNodeLoader,
  customerOrderNodeLoader,
  customerSubscriptionNodeLoader,
  customerBenefitGrantNodeLoader,
  customerLicenseKeyNodeLoader,
  meterNodeLoader,
  customerMeterNodeLoader,
  eventNodeLoader,
]);

export const schema = builder.toSchema();

/** The schema as committed in schema.graphql: the contract clients and tools read. */
export function printContract(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
