import type { RestRoute } from '../route.ts';
import { CustomerSessionWire } from '../../wire/customer-sessions.ts';

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
