// The documented JSON of subscriptions: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { majorUnits } from '../currencies.ts';
import { customerWire } from './customers.ts';
import { priceWire, productWire } from './products.ts';
import { discountBaseWire } from './discounts.ts';
import { meterWire } from './usage.ts';

/** A subscription's own fields without its metadata, as its customer sees them. */
export const subscriptionPublicFieldsWire = `
  id createdAt modifiedAt amount currency recurringInterval status currentPeriodStart currentPeriodEnd cancelAtPeriodEnd
  canceledAt startedAt endsAt endedAt customerId productId checkoutId customerCancellationReason customerCancellationComment`;
/** A subscription's own fields, with its metadata. */
export const subscriptionFieldsWire = `${subscriptionPublicFieldsWire} metadata customFieldData discountId`;

export const SubscriptionWire = /* GraphQL */ `
  fragment SubscriptionWire on Subscription {
    ${subscriptionFieldsWire}
    customer { ${customerWire} } product { ${productWire} } prices { ${priceWire} } priceId price { ${priceWire} }
    discount { ${discountBaseWire} }
    meters { id createdAt modifiedAt consumedUnits creditedUnits amount meterId meter { ${meterWire} } }
  }`;

// The subscriptions export (GET /v1/subscriptions/export): the columns of the original service's
// CSV, each cell from the selection below. Price is in major units of the currency, as typed.
export const SubscriptionExportWire = /* GraphQL */ `
  fragment SubscriptionExportWire on Subscription {
    createdAt status amount currency recurringInterval customer { email } product { name }
  }`;

/** Statuses the list's `active` filter counts as active: the export's Active column agrees with it. */
const activeStatuses = ['active', 'trialing', 'past_due'];

interface ExportedSubscription {
  createdAt: string;
  status: string;
  amount: number;
  currency: string;
  recurringInterval: string;
  customer: { email: string };
  product: { name: string };
}

export const subscriptionExportColumns = [
  { header: 'Email', cell: (s: ExportedSubscription) => s.customer.email },
  { header: 'Created At', cell: (s: ExportedSubscription) => s.createdAt },
  { header: 'Active', cell: (s: ExportedSubscription) => activeStatuses.includes(s.status) },
  { header: 'Product', cell: (s: ExportedSubscription) => s.product.name },
  { header: 'Price', cell: (s: ExportedSubscription) => majorUnits(s.amount, s.currency) },
  { header: 'Currency', cell: (s: ExportedSubscription) => s.currency },
  { header: 'Interval', cell: (s: ExportedSubscription) => s.recurringInterval },
] as const;
