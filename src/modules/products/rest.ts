import type { RestRoute } from '../../rest/routes.ts';
import { defineWireConstants } from '../../rest/wire.ts';
import { benefitWire } from '../benefits/rest.ts';

// Media files and custom fields are not modelled; the wire format still carries them. Products
// embedded without their benefits (in orders) carry none.
defineWireConstants('Product', { benefits: [], medias: [], attached_custom_fields: [] });

/** The REST shape of a price, for the selections of every resource that carries one. */
export const priceWire = `
  id createdAt modifiedAt amountType isArchived productId type recurringInterval
  ... on ProductPriceFixed { priceCurrency priceAmount }
  ... on ProductPriceCustom { priceCurrency minimumAmount maximumAmount presetAmount }`;

/** A product's own fields without its metadata, as its buyers see them. */
export const productPublicFieldsWire = 'id createdAt modifiedAt name description recurringInterval isRecurring isArchived organizationId';
/** A product without its prices, as orders carry it. */
export const productFieldsWire = `${productPublicFieldsWire} metadata`;
export const productWire = `${productFieldsWire} prices { ${priceWire} } benefits { ${benefitWire} }`;

const ProductWire = /* GraphQL */ `fragment ProductWire on Product { ${productWire} }`;

export const productRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/products/',
    operation: `query ($page: Int, $limit: Int, $id: [UUID!], $organizationId: [UUID!], $query: String, $isArchived: Boolean,
        $isRecurring: Boolean, $metadata: JSONObject, $sorting: [ProductSortOrder!]) {
      core { products(page: $page, limit: $limit, id: $id, organizationId: $organizationId, query: $query, isArchived: $isArchived,
          isRecurring: $isRecurring, metadata: $metadata, sorting: $sorting) {
        items { ...ProductWire } pagination { totalCount maxPage } } }
    } ${ProductWire}`,
  },
  {
    method: 'POST',
    path: '/v1/products/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: ProductCreateInput!) { core { productCreate(input: $input) { ...ProductWire } } } ${ProductWire}`,
  },
  {
    method: 'GET',
    path: '/v1/products/{id}',
    operation: `query ($id: UUID!) { core { product(id: $id) { ...ProductWire } } } ${ProductWire}`,
  },
  {
    method: 'POST',
    path: '/v1/products/{id}/benefits',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: ProductBenefitsInput!) { core { productBenefitsUpdate(id: $id, input: $input) { ...ProductWire } } } ${ProductWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/products/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: ProductUpdateInput!) { core { productUpdate(id: $id, input: $input) { ...ProductWire } } } ${ProductWire}`,
  },
];
