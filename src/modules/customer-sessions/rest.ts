import type { RestRoute } from '../../rest/routes.ts';
import { customerWire } from '../customers/rest.ts';

const CustomerSessionWire = /* GraphQL */ `
  fragment CustomerSessionWire on CustomerSessionCreated {
    id createdAt modifiedAt token expiresAt customerPortalUrl customerId customerExternalId customer { ${customerWire} }
  }`;

export const customerSessionRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/customer-sessions/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: CustomerSessionCreateInput!) { core { customerSessionCreate(input: $input) { ...CustomerSessionWire } } } ${CustomerSessionWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/customer-sessions/{id}',
    status: 204,
    operation: `mutation ($id: UUID!) { core { customerSessionRevoke(id: $id) { id } } }`,
  },
];
