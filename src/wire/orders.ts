// The documented JSON of orders: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { addressWire, customerWire } from './customers.ts';
import { priceWire, productFieldsWire } from './products.ts';
import { subscriptionFieldsWire } from './subscriptions.ts';
import { discountBaseWire } from './discounts.ts';

export const orderItemWire = 'id createdAt modifiedAt label amount taxAmount proration productPriceId';

export const OrderWire = /* GraphQL */ `
  fragment OrderWire on Order {
    id createdAt modifiedAt status paid subtotalAmount discountAmount netAmount taxAmount totalAmount
    refundedAmount refundedTaxAmount amount currency billingReason billingName billingAddress { ${addressWire} }
    isInvoiceGenerated customerId userId productId checkoutId subscriptionId subscription { ${subscriptionFieldsWire} } metadata customFieldData productPriceId
    productPrice { ${priceWire} } customer { ${customerWire} } product { ${productFieldsWire} }
    items { ${orderItemWire} } discountId discount { ${discountBaseWire} }
  }`;
