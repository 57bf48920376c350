// The documented JSON of discounts: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { productFieldsWire } from './products.ts';

/** What a discount takes off, by its type and duration: the fields each wire variant has. */
const termsWire = (prefix: 'Discount' | 'CheckoutDiscount') => `
  ... on ${prefix}FixedOnceForeverDuration { amount currency }
  ... on ${prefix}FixedRepeatDuration { amount currency durationInMonths }
  ... on ${prefix}PercentageOnceForeverDuration { basisPoints }
  ... on ${prefix}PercentageRepeatDuration { basisPoints durationInMonths }`;

/** A discount as a checkout carries it: what the buyer sees of it. */
export const checkoutDiscountWire = `id name code type duration ${termsWire('CheckoutDiscount')}`;
/** A discount as orders and subscriptions carry it: everything but its products. */
export const discountBaseWire = `id createdAt modifiedAt metadata name code type duration startsAt endsAt maxRedemptions redemptionsCount organizationId ${termsWire('Discount')}`;
export const discountWire = `${discountBaseWire} products { ${productFieldsWire} }`;

export const DiscountWire = /* GraphQL */ `fragment DiscountWire on Discount { ${discountWire} }`;
