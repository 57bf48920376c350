import type { RestRoute } from '../route.ts';
import { ProductWire } from '../../wire/products.ts';

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
