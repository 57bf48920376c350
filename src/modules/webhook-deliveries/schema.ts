import { builder } from '../../graphql/builder.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import type { EventType as EventTypes } from '../../events/outbox.ts';
import { EventType } from '../webhooks/schema.ts';
import { listWebhookDeliveries, listWebhookEvents, redeliverWebhookEvent } from './service.ts';

export const WebhookEvent = builder.prismaObject('WebhookEvent', {
  description: 'One event on its way to one webhook endpoint. Its id is the `webhook-id` header, the same on every attempt.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'The event\'s id for this endpoint: the `webhook-id` header.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the event was queued for the endpoint.' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the event was last changed (by an attempt); null if never.' }),
    type: t.field({ type: EventType, description: 'The event type, such as order_paid (`order.paid` on REST).', resolve: (event) => event.type as EventTypes }),
    payload: t.exposeString('payload', { nullable: true, description: 'The exact body sent.' }),
    succeeded: t.exposeBoolean('succeeded', { nullable: true, description: 'Null while deliveries go on; true once delivered; false once given up.' }),
    lastHttpCode: t.exposeInt('lastHttpCode', { nullable: true, description: 'The HTTP status of the last attempt; null before one, or when no answer came.' }),
    attempts: t.exposeInt('attempts', { description: 'How many attempts were made.' }),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true, description: 'When the next attempt is due; null when none is.' }),
    isArchived: t.boolean({ description: 'Whether the payload was archived away. Kassa keeps every payload: always false.', resolve: () => false }),
    endpointId: t.expose('endpointId', { type: 'UUID', description: 'The endpoint it is sent to.' }),
    organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization whose event it is.' }),
    endpoint: t.relation('endpoint', { description: 'The endpoint it is sent to.' }),
  }),
});

export const WebhookDelivery = builder.prismaObject('WebhookDelivery', {
  description: 'One attempt to deliver a webhook event, as the receiver answered it.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: "The attempt's id." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the attempt was made.' }),
    modifiedAt: t.field({ type: 'DateTime', nullable: true, description: 'An attempt never changes: always null.', resolve: () => null }),
    succeeded: t.exposeBoolean('succeeded', { description: 'The receiver answered 2xx within the timeout.' }),
    httpCode: t.exposeInt('httpCode', { nullable: true, description: "The receiver's HTTP status; null when no answer came (timeout, refused connection)." }),
    response: t.exposeString('response', { nullable: true, description: "The first 2 KB of the receiver's answer, or what went wrong before one came." }),
    durationMs: t.exposeInt('durationMs', { description: 'How long the attempt took, in milliseconds.' }),
    endpointId: t.expose('endpointId', { type: 'UUID', description: 'The endpoint it was sent to.' }),
    webhookEvent: t.relation('webhookEvent', { description: 'The event delivered.' }),
  }),
});

const WebhookDeliveryList = listType('WebhookDelivery', WebhookDelivery);
const WebhookEventList = listType('WebhookEvent', WebhookEvent);

builder.objectFields(CoreQuery, (t) => ({
  webhookDeliveries: t.field({
    type: WebhookDeliveryList,
    description: 'Every delivery attempt, newest first.',
    authScopes: { scope: ['webhooks:read', 'webhooks:write'] },
    args: {
      ...pageArgs(t.arg),
      endpointId: t.arg({ type: ['UUID'], description: 'Only attempts to these endpoints.' }),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
    },
    resolve: (_root, args, ctx, info) => listWebhookDeliveries(ctx, args, pageQuery(ctx, info)),
  }),
  webhookEvents: t.field({
    type: WebhookEventList,
    description: 'Events sent or to be sent to endpoints, newest first.',
    authScopes: { scope: ['webhooks:read', 'webhooks:write'] },
    args: {
      ...pageArgs(t.arg),
      endpointId: t.arg({ type: ['UUID'], description: 'Only events for these endpoints.' }),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      succeeded: t.arg.boolean({ description: 'true: delivered; false: given up.' }),
    },
    resolve: (_root, args, ctx, info) => listWebhookEvents(ctx, args, pageQuery(ctx, info)),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  webhookEventRedeliver: t.prismaField({
    type: 'WebhookEvent',
    description:
      'Sends the event again now, with the same webhook-id, whether it was delivered, given up or still retrying. RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The event's id (WebhookEvent.id)." }) },
    resolve: (query, _root, { id }, ctx) => redeliverWebhookEvent(ctx, id, query),
  }),
}));
