import type { RestRoute } from '../route.ts';
import { WebhookEventWire, WebhookDeliveryWire } from '../../wire/webhook-deliveries.ts';

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
