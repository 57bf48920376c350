import type { RestRoute } from '../route.ts';
import { CheckoutLinkWire } from '../../wire/checkout-links.ts';

export const checkoutLinkRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/checkout-links/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $productId: [UUID!], $sorting: [CheckoutLinkSortOrder!]) {
      core { checkoutLinks(page: $page, limit: $limit, organizationId: $organizationId, productId: $productId, sorting: $sorting) {
        items { ...CheckoutLinkWire } pagination { totalCount maxPage } } }
    } ${CheckoutLinkWire}`,
  },
  {
    method: 'POST',
    path: '/v1/checkout-links/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: CheckoutLinkCreateInput!) { core { checkoutLinkCreate(input: $input) { ...CheckoutLinkWire } } } ${CheckoutLinkWire}`,
  },
  {
    method: 'GET',
    path: '/v1/checkout-links/{id}',
    operation: `query ($id: UUID!) { core { checkoutLink(id: $id) { ...CheckoutLinkWire } } } ${CheckoutLinkWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/checkout-links/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: CheckoutLinkUpdateInput!) { core { checkoutLinkUpdate(id: $id, input: $input) { ...CheckoutLinkWire } } } ${CheckoutLinkWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/checkout-links/{id}',
    status: 204,
    operation: `mutation ($id: UUID!) { core { checkoutLinkDelete(id: $id) } }`,
  },
];
