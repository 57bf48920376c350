// The documented JSON of products: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { benefitWire } from './benefits.ts';
import { attachedCustomFieldWire } from './custom-fields.ts';

/** The REST shape of a price, for the selections of every resource that carries one. */
export const priceWire = `
  id createdAt modifiedAt amountType isArchived productId type recurringInterval
  ... on ProductPriceFixed { priceCurrency priceAmount }
  ... on ProductPriceCustom { priceCurrency minimumAmount maximumAmount presetAmount }
  ... on ProductPriceMeteredUnit { priceCurrency unitAmount capAmount meterId meter { id name } }`;

/** A product's own fields without its metadata, as its buyers see them. */
export const productPublicFieldsWire = 'id createdAt modifiedAt name description recurringInterval isRecurring isArchived organizationId';
/** A product without its prices, as orders carry it. */
export const productFieldsWire = `${productPublicFieldsWire} metadata`;
export const productWire = `${productFieldsWire} prices { ${priceWire} } benefits { ${benefitWire} } attachedCustomFields { ${attachedCustomFieldWire} }`;

export const ProductWire = /* GraphQL */ `fragment ProductWire on Product { ${productWire} }`;
