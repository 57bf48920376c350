// The documented JSON of checkout links: the selections REST responses render it from (see
// wire/shape.ts for the mapping).
import { discountBaseWire } from './discounts.ts';
import { productWire } from './products.ts';

export const checkoutLinkWire = `
  id createdAt modifiedAt metadata paymentProcessor clientSecret url successUrl label allowDiscountCodes requireBillingAddress
  discountId organizationId products { ${productWire} } discount { ${discountBaseWire} }`;

export const CheckoutLinkWire = /* GraphQL */ `fragment CheckoutLinkWire on CheckoutLink { ${checkoutLinkWire} }`;
