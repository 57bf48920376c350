import type { RestRoute } from '../route.ts';
import { wireResources } from '../../wire/resources.ts';
import { SubscriptionExportWire, subscriptionExportColumns, SubscriptionWire } from '../../wire/subscriptions.ts';

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
  // Before /v1/subscriptions/{id}, which it would also match.
  {
    method: 'GET',
    path: '/v1/subscriptions/export',
    operation: `query ($organizationId: [UUID!], $after: String) {
      core { subscriptions(organizationId: $organizationId, first: 100, after: $after) {
        items { ...SubscriptionExportWire } pageInfo { hasNextPage endCursor } } }
    } ${SubscriptionExportWire}`,
    csv: { cursor: 'after', columns: subscriptionExportColumns, filename: 'kassa-subscriptions.csv' },
  },
  {
    method: 'GET',
    path: '/v1/subscriptions/{id}',
    operation: wireResources.subscription,
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
