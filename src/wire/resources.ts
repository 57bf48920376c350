// The resources Kassa renders by name, for webhook payloads and live events: each is the operation
// that reads one by id, the same one its REST GET route runs, so an event's `data` is exactly
// what a GET of the resource returns at that moment.
import { benefitGrantWire, BenefitWire, benefitWire } from './benefits.ts';
import { CheckoutWire } from './checkouts.ts';
import { CustomerStateWire, CustomerWire } from './customers.ts';
import { DiscountWire } from './discounts.ts';
import { DisputeWire } from './disputes.ts';
import { OrderWire } from './orders.ts';
import { OrganizationWire } from './organizations.ts';
import { RefundWire } from './refunds.ts';
import { SubscriptionWire } from './subscriptions.ts';

export const wireResources = {
  benefit: `query ($id: UUID!) { core { benefit(id: $id) { ...BenefitWire } } } ${BenefitWire}`,
  // A grant as listed, with its benefit (the webhook shape); no GET route returns it as such.
  benefit_grant: `query ($id: UUID!) { core { benefitGrant(id: $id) { ${benefitGrantWire} benefit { ${benefitWire} } } } }`,
  checkout: `query ($id: UUID!) { core { checkout(id: $id) { ...CheckoutWire } } } ${CheckoutWire}`,
  customer: `query ($id: UUID!) { core { customer(id: $id) { ...CustomerWire } } } ${CustomerWire}`,
  customer_state: `query ($id: UUID!) { core { customerState(id: $id) { ...CustomerStateWire } } } ${CustomerStateWire}`,
  discount: `query ($id: UUID!) { core { discount(id: $id) { ...DiscountWire } } } ${DiscountWire}`,
  dispute: `query ($id: UUID!) { core { dispute(id: $id) { ...DisputeWire } } } ${DisputeWire}`,
  order: `query ($id: UUID!) { core { order(id: $id) { ...OrderWire } } } ${OrderWire}`,
  organization: `query ($id: UUID!) { core { organization(id: $id) { ...OrganizationWire } } } ${OrganizationWire}`,
  refund: `query ($id: UUID!) { core { refund(id: $id) { ...RefundWire } } } ${RefundWire}`,
  subscription: `query ($id: UUID!) { core { subscription(id: $id) { ...SubscriptionWire } } } ${SubscriptionWire}`,
} as const;

/** A resource that can be rendered by name: `order`, `customer_state`, … */
export type WireResource = keyof typeof wireResources;
