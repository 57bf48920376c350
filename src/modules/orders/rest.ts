import type { RestRoute } from '../../rest/routes.ts';
import { defineWireConstants } from '../../rest/wire.ts';
import { addressWire, customerWire } from '../customers/rest.ts';
import { priceWire, productFieldsWire } from '../products/rest.ts';
import { subscriptionFieldsWire } from '../subscriptions/rest.ts';

// Discounts and custom fields are not modelled; orders carry them empty.
defineWireConstants('Order', { discount_id: null, discount: null, custom_field_data: {} });

export const orderItemWire = 'id createdAt modifiedAt label amount taxAmount proration productPriceId';

export const OrderWire = /* GraphQL */ `
  fragment OrderWire on Order {
    id createdAt modifiedAt status paid subtotalAmount discountAmount netAmount taxAmount totalAmount
    refundedAmount refundedTaxAmount amount currency billingReason billingName billingAddress { ${addressWire} }
    isInvoiceGenerated customerId userId productId checkoutId subscriptionId subscription { ${subscriptionFieldsWire} } metadata productPriceId
    productPrice { ${priceWire} } customer { ${customerWire} } product { ${productFieldsWire} }
    items { ${orderItemWire} }
  }`;

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
    operation: `query ($id: UUID!) { core { order(id: $id) { ...OrderWire } } } ${OrderWire}`,
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
