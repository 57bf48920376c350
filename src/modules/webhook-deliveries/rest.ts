import type { RestRoute } from '../../rest/routes.ts';

const WebhookEventWire = /* GraphQL */ `
  fragment WebhookEventWire on WebhookEvent {
    id createdAt modifiedAt lastHttpCode succeeded payload type isArchived
  }`;

const WebhookDeliveryWire = /* GraphQL */ `
  fragment WebhookDeliveryWire on WebhookDelivery {
    id createdAt modifiedAt succeeded httpCode response durationMs webhookEvent { ...WebhookEventWire }
  } ${WebhookEventWire}`;

export const webhookDeliveryRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/webhooks/deliveries',
    operation: `query ($page: Int, $limit: Int, $endpointId: [UUID!], $organizationId: [UUID!]) {
      core { webhookDeliveries(page: $page, limit: $limit, endpointId: $endpointId, organizationId: $organizationId) {
        items { ...WebhookDeliveryWire } pagination { totalCount maxPage } } }
    } ${WebhookDeliveryWire}`,
  },
  {
    method: 'POST',
    path: '/v1/webhooks/events/{id}/redeliver',
    status: 202,
    operation: `mutation ($id: UUID!) { core { webhookEventRedeliver(id: $id) { ...WebhookEventWire } } } ${WebhookEventWire}`,
  },
];
