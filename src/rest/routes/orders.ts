import type { RestRoute } from '../route.ts';
import { wireResources } from '../../wire/resources.ts';
import { OrderWire } from '../../wire/orders.ts';

export const orderRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/orders/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $productId: [UUID!], $customerId: [UUID!], $checkoutId: [UUID!],
        $productBillingType: [ProductBillingType!], $status: [OrderStatus!], $createdAfter: DateTime, $createdBefore: DateTime,
        $metadata: JSONObject, $sorting: [OrderSortOrder!]) {
      core { orders(page: $page, limit: $limit, organizationId: $organizationId, productId: $productId, customerId: $customerId,
          checkoutId: $checkoutId, productBillingType: $productBillingType, status: $status, createdAfter: $createdAfter,
          createdBefore: $createdBefore, metadata: $metadata, sorting: $sorting) {
        items { ...OrderWire } pagination { totalCount maxPage } } }
    } ${OrderWire}`,
  },
  {
    method: 'GET',
    path: '/v1/orders/{id}',
    operation: wireResources.order,
  },
  // 202 with a JSON body: the client library needs one (it answers the order as now invoiced).
  {
    method: 'POST',
    path: '/v1/orders/{id}/invoice',
    status: 202,
    operation: `mutation ($id: UUID!) { core { orderInvoiceGenerate(id: $id) { ...OrderWire } } } ${OrderWire}`,
  },
  {
    method: 'GET',
    path: '/v1/orders/{id}/invoice',
    operation: `query ($id: UUID!) { core { orderInvoice(id: $id) { url } } }`,
  },
  {
    method: 'PATCH',
    path: '/v1/orders/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: OrderUpdateInput!) { core { orderUpdate(id: $id, input: $input) { ...OrderWire } } } ${OrderWire}`,
  },
];
