// The documented JSON of webhook deliveries: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).

export const WebhookEventWire = /* GraphQL */ `
  fragment WebhookEventWire on WebhookEvent {
    id createdAt modifiedAt lastHttpCode succeeded payload type isArchived
  }`;

export const WebhookDeliveryWire = /* GraphQL */ `
  fragment WebhookDeliveryWire on WebhookDelivery {
    id createdAt modifiedAt succeeded httpCode response durationMs webhookEvent { ...WebhookEventWire }
  } ${WebhookEventWire}`;
