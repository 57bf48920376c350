// The documented JSON of discounts: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { productFieldsWire } from './products.ts';

/** What a discount takes off, by its type and duration: the fields each wire variant has. */
const termsWire = `
  ... on DiscountFixedOnceForeverDuration { amount currency }
  ... on DiscountFixedRepeatDuration { amount currency durationInMonths }
  ... on DiscountPercentageOnceForeverDuration { basisPoints }
  ... on DiscountPercentageRepeatDuration { basisPoints durationInMonths }`;

/** A discount as a checkout carries it: what the buyer sees of it. */
export const checkoutDiscountWire = `id name code type duration ${termsWire}`;
/** A discount as orders and subscriptions carry it: everything but its products. */
export const discountBaseWire = `id createdAt modifiedAt metadata name code type duration startsAt endsAt maxRedemptions redemptionsCount organizationId ${termsWire}`;
export const discountWire = `${discountBaseWire} products { ${productFieldsWire} }`;

export const DiscountWire = /* GraphQL */ `fragment DiscountWire on Discount { ${discountWire} }`;
