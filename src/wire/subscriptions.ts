// The documented JSON of subscriptions: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { customerWire } from './customers.ts';
import { priceWire, productWire } from './products.ts';
import { discountBaseWire } from './discounts.ts';

/** A subscription's own fields without its metadata, as its customer sees them. */
export const subscriptionPublicFieldsWire = `
  id createdAt modifiedAt amount currency recurringInterval status currentPeriodStart currentPeriodEnd cancelAtPeriodEnd
  canceledAt startedAt endsAt endedAt customerId productId checkoutId customerCancellationReason customerCancellationComment`;
/** A subscription's own fields, with its metadata. */
export const subscriptionFieldsWire = `${subscriptionPublicFieldsWire} metadata discountId`;

export const SubscriptionWire = /* GraphQL */ `
  fragment SubscriptionWire on Subscription {
    ${subscriptionFieldsWire}
    customer { ${customerWire} } product { ${productWire} } prices { ${priceWire} } priceId price { ${priceWire} }
    discount { ${discountBaseWire} }
  }`;
