import type { RestRoute } from '../route.ts';
import { WebhookEndpointWire, WebhookEndpointWithSecretWire } from '../../wire/webhooks.ts';

export const webhookEndpointRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/webhooks/endpoints',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!]) {
      core { webhookEndpoints(page: $page, limit: $limit, organizationId: $organizationId) { items { ...WebhookEndpointWire } pagination { totalCount maxPage } } }
    } ${WebhookEndpointWire}`,
  },
  {
    method: 'POST',
    path: '/v1/webhooks/endpoints',
    body: 'input',
    status: 201,
    operation: `mutation ($input: WebhookEndpointCreateInput!) { core { webhookEndpointCreate(input: $input) { ...WebhookEndpointWithSecretWire } } } ${WebhookEndpointWithSecretWire}`,
  },
  {
    method: 'GET',
    path: '/v1/webhooks/endpoints/{id}',
    operation: `query ($id: UUID!) { core { webhookEndpoint(id: $id) { ...WebhookEndpointWire } } } ${WebhookEndpointWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/webhooks/endpoints/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: WebhookEndpointUpdateInput!) { core { webhookEndpointUpdate(id: $id, input: $input) { ...WebhookEndpointWire } } } ${WebhookEndpointWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/webhooks/endpoints/{id}',
    status: 204,
    operation: `mutation ($id: UUID!) { core { webhookEndpointDelete(id: $id) } }`,
  },
  {
    method: 'PATCH',
    path: '/v1/webhooks/endpoints/{id}/secret',
    operation: `mutation ($id: UUID!) { core { webhookEndpointRotateSecret(id: $id) { ...WebhookEndpointWithSecretWire } } } ${WebhookEndpointWithSecretWire}`,
  },
];
