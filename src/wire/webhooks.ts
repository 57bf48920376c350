// The documented JSON of webhooks: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).

// The paths have no trailing slash: the client library calls them so.
const webhookEndpointWire = 'id createdAt modifiedAt url format secret organizationId events enabled disabledAt disabledReason failingSince';
export const WebhookEndpointWire = /* GraphQL */ `fragment WebhookEndpointWire on WebhookEndpoint { ${webhookEndpointWire} }`;
export const WebhookEndpointWithSecretWire = /* GraphQL */ `fragment WebhookEndpointWithSecretWire on WebhookEndpointWithSecret { ${webhookEndpointWire} }`;
