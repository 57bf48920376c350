import type { RestRoute } from '../route.ts';
import { wireResources } from '../../wire/resources.ts';
import { DisputeWire } from '../../wire/disputes.ts';

export const disputeRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/disputes/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $orderId: [UUID!], $status: [DisputeStatus!]) {
      core { disputes(page: $page, limit: $limit, organizationId: $organizationId, orderId: $orderId, status: $status) {
        items { ...DisputeWire } pagination { totalCount maxPage } } }
    } ${DisputeWire}`,
  },
  {
    method: 'GET',
    path: '/v1/disputes/{id}',
    operation: wireResources.dispute,
  },
];
