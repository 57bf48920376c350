import type { RestRoute } from '../route.ts';
import { wireResources } from '../../wire/resources.ts';
import { DiscountWire } from '../../wire/discounts.ts';

export const discountRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/discounts/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $query: String, $sorting: [DiscountSortOrder!]) {
      core { discounts(page: $page, limit: $limit, organizationId: $organizationId, query: $query, sorting: $sorting) {
        items { ...DiscountWire } pagination { totalCount maxPage } } }
    } ${DiscountWire}`,
  },
  {
    method: 'POST',
    path: '/v1/discounts/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: DiscountCreateInput!) { core { discountCreate(input: $input) { ...DiscountWire } } } ${DiscountWire}`,
  },
  {
    method: 'GET',
    path: '/v1/discounts/{id}',
    operation: wireResources.discount,
  },
  {
    method: 'PATCH',
    path: '/v1/discounts/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: DiscountUpdateInput!) { core { discountUpdate(id: $id, input: $input) { ...DiscountWire } } } ${DiscountWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/discounts/{id}',
    status: 204,
    operation: `mutation ($id: UUID!) { core { discountDelete(id: $id) } }`,
  },
];
