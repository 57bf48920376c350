import type { RestRoute } from '../route.ts';
import { wireResources } from '../../wire/resources.ts';
import { CheckoutWire, CheckoutPublicWire, CheckoutConfirmedWire } from '../../wire/checkouts.ts';

export const checkoutRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/checkouts/client/{client_secret}',
    operation: `query ($clientSecret: String!) { checkoutClient(clientSecret: $clientSecret) { ...CheckoutPublicWire } } ${CheckoutPublicWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/checkouts/client/{client_secret}',
    body: 'input',
    operation: `mutation ($clientSecret: String!, $input: CheckoutUpdatePublicInput!) {
      checkoutClientUpdate(clientSecret: $clientSecret, input: $input) { ...CheckoutPublicWire } } ${CheckoutPublicWire}`,
  },
  {
    method: 'POST',
    path: '/v1/checkouts/client/{client_secret}/confirm',
    body: 'input',
    operation: `mutation ($clientSecret: String!, $input: CheckoutConfirmInput!) {
      checkoutClientConfirm(clientSecret: $clientSecret, input: $input) { ...CheckoutConfirmedWire } } ${CheckoutConfirmedWire}`,
  },
  {
    method: 'GET',
    path: '/v1/checkouts/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $productId: [UUID!], $customerId: [UUID!], $status: [CheckoutStatus!],
        $query: String, $sorting: [CheckoutSortOrder!]) {
      core { checkouts(page: $page, limit: $limit, organizationId: $organizationId, productId: $productId, customerId: $customerId,
          status: $status, query: $query, sorting: $sorting) { items { ...CheckoutWire } pagination { totalCount maxPage } } }
    } ${CheckoutWire}`,
  },
  {
    method: 'POST',
    path: '/v1/checkouts/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: CheckoutCreateInput!) { core { checkoutCreate(input: $input) { ...CheckoutWire } } } ${CheckoutWire}`,
  },
  {
    method: 'GET',
    path: '/v1/checkouts/{id}',
    operation: wireResources.checkout,
  },
  {
    method: 'PATCH',
    path: '/v1/checkouts/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: CheckoutUpdateInput!) { core { checkoutUpdate(id: $id, input: $input) { ...CheckoutWire } } } ${CheckoutWire}`,
  },
];
