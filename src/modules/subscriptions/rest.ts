import type { RestRoute } from '../../rest/routes.ts';
import { defineWireConstants } from '../../rest/wire.ts';
import { customerWire } from '../customers/rest.ts';
import { priceWire, productWire } from '../products/rest.ts';

// Discounts, custom fields and meters are not modelled; subscriptions carry them empty.
defineWireConstants('Subscription', { discount_id: null, discount: null, custom_field_data: {}, meters: [] });

/** A subscription's own fields without its metadata, as its customer sees them. */
export const subscriptionPublicFieldsWire = `
  id createdAt modifiedAt amount currency recurringInterval status currentPeriodStart currentPeriodEnd cancelAtPeriodEnd
  canceledAt startedAt endsAt endedAt customerId productId checkoutId customerCancellationReason customerCancellationComment`;
/** A subscription's own fields, with its metadata. */
export const subscriptionFieldsWire = `${subscriptionPublicFieldsWire} metadata`;

const SubscriptionWire = /* GraphQL */ `
  fragment SubscriptionWire on Subscription {
    ${subscriptionFieldsWire}
    customer { ${customerWire} } product { ${productWire} } prices { ${priceWire} } priceId price { ${priceWire} }
  }`;

export const subscriptionRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/subscriptions/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $productId: [UUID!], $customerId: [UUID!], $externalCustomerId: [String!],
        $discountId: [UUID!], $active: Boolean, $metadata: JSONObject, $sorting: [SubscriptionSortOrder!]) {
      core { subscriptions(page: $page, limit: $limit, organizationId: $organizationId, productId: $productId, customerId: $customerId,
          externalCustomerId: $externalCustomerId, discountId: $discountId, active: $active, metadata: $metadata, sorting: $sorting) {
        items { ...SubscriptionWire } pagination { totalCount maxPage } } }
    } ${SubscriptionWire}`,
  },
  {
    method: 'GET',
    path: '/v1/subscriptions/{id}',
    operation: `query ($id: UUID!) { core { subscription(id: $id) { ...SubscriptionWire } } } ${SubscriptionWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/subscriptions/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: SubscriptionUpdateInput!) { core { subscriptionUpdate(id: $id, input: $input) { ...SubscriptionWire } } } ${SubscriptionWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/subscriptions/{id}',
    operation: `mutation ($id: UUID!) { core { subscriptionRevoke(id: $id) { ...SubscriptionWire } } } ${SubscriptionWire}`,
  },
];
