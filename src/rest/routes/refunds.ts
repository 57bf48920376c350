import type { RestRoute } from '../route.ts';
import { wireResources } from '../../wire/resources.ts';
import { RefundWire } from '../../wire/refunds.ts';

export const refundRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/refunds/',
    operation: `query ($page: Int, $limit: Int, $id: [UUID!], $organizationId: [UUID!], $orderId: [UUID!], $customerId: [UUID!],
        $succeeded: Boolean, $sorting: [RefundSortOrder!]) {
      core { refunds(page: $page, limit: $limit, id: $id, organizationId: $organizationId, orderId: $orderId, customerId: $customerId,
          succeeded: $succeeded, sorting: $sorting) { items { ...RefundWire } pagination { totalCount maxPage } } }
    } ${RefundWire}`,
  },
  // 200 with the refund, not 201: the client library hands its caller the refund only on a 200.
  {
    method: 'POST',
    path: '/v1/refunds/',
    body: 'input',
    status: 200,
    operation: `mutation ($input: RefundCreateInput!) { core { refundCreate(input: $input) { ...RefundWire } } } ${RefundWire}`,
  },
  {
    method: 'GET',
    path: '/v1/refunds/{id}',
    operation: wireResources.refund,
  },
];
