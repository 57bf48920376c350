import type { RestRoute } from '../route.ts';
import { PaymentWire } from '../../wire/payments.ts';

export const paymentRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/payments/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $checkoutId: [UUID!], $orderId: [UUID!], $status: [PaymentStatus!],
        $method: [String!], $customerEmail: [String!], $sorting: [PaymentSortOrder!]) {
      core { payments(page: $page, limit: $limit, organizationId: $organizationId, checkoutId: $checkoutId, orderId: $orderId, status: $status,
          method: $method, customerEmail: $customerEmail, sorting: $sorting) {
        items { ...PaymentWire } pagination { totalCount maxPage } } }
    } ${PaymentWire}`,
  },
  {
    method: 'GET',
    path: '/v1/payments/{id}',
    operation: `query ($id: UUID!) { core { payment(id: $id) { ...PaymentWire } } } ${PaymentWire}`,
  },
];
