import type { RestRoute } from '../route.ts';
import { wireResources } from '../../wire/resources.ts';
import { CustomerWire, CustomerStateWire } from '../../wire/customers.ts';

const byId = '$id: UUID!';
const byExternalId = '$externalId: String!';

// The external-id routes come first: /v1/customers/external/{external_id} must not be read as a
// customer whose id is "external".
export const customerRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customers/external/{external_id}/state',
    operation: `query (${byExternalId}) { core { customerState(externalId: $externalId) { ...CustomerStateWire } } } ${CustomerStateWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customers/external/{external_id}',
    operation: `query (${byExternalId}) { core { customerByExternalId(externalId: $externalId) { ...CustomerWire } } } ${CustomerWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/customers/external/{external_id}',
    body: 'input',
    operation: `mutation (${byExternalId}, $input: CustomerUpdateInput!) { core { customerUpdate(externalId: $externalId, input: $input) { ...CustomerWire } } } ${CustomerWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/customers/external/{external_id}',
    status: 204,
    operation: `mutation (${byExternalId}) { core { customerDelete(externalId: $externalId) } }`,
  },
  {
    method: 'GET',
    path: '/v1/customers/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $email: String, $query: String, $metadata: JSONObject, $sorting: [CustomerSortOrder!]) {
      core { customers(page: $page, limit: $limit, organizationId: $organizationId, email: $email, query: $query, metadata: $metadata, sorting: $sorting) {
        items { ...CustomerWire } pagination { totalCount maxPage } } }
    } ${CustomerWire}`,
  },
  {
    method: 'POST',
    path: '/v1/customers/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: CustomerCreateInput!) { core { customerCreate(input: $input) { ...CustomerWire } } } ${CustomerWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customers/{id}/state',
    operation: wireResources.customer_state,
  },
  {
    method: 'GET',
    path: '/v1/customers/{id}',
    operation: wireResources.customer,
  },
  {
    method: 'PATCH',
    path: '/v1/customers/{id}',
    body: 'input',
    operation: `mutation (${byId}, $input: CustomerUpdateInput!) { core { customerUpdate(id: $id, input: $input) { ...CustomerWire } } } ${CustomerWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/customers/{id}',
    status: 204,
    operation: `mutation (${byId}) { core { customerDelete(id: $id) } }`,
  },
];
