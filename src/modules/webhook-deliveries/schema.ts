import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder } from '../../graphql/builder.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { listWebhookDeliveries, listWebhookEvents, redeliverWebhookEvent } from './service.ts';

export const WebhookEvent = builder.prismaObject('WebhookEvent', {
  description: 'One event on its way to one webhook endpoint. Its id is the `webhook-id` header, the same on every attempt.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
    type: t.exposeString('type'),
    payload: t.exposeString('payload', { nullable: true, description: 'The exact body sent.' }),
    succeeded: t.exposeBoolean('succeeded', { nullable: true, description: 'Null while deliveries go on; true once delivered; false once given up.' }),
    lastHttpCode: t.exposeInt('lastHttpCode', { nullable: true }),
    attempts: t.exposeInt('attempts'),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true, description: 'When the next attempt is due; null when none is.' }),
    isArchived: t.boolean({ resolve: () => false }),
    endpointId: t.expose('endpointId', { type: 'UUID' }),
    organizationId: t.expose('organizationId', { type: 'UUID' }),
    endpoint: t.relation('endpoint'),
  }),
});

export const WebhookDelivery = builder.prismaObject('WebhookDelivery', {
  description: 'One attempt to deliver a webhook event, as the receiver answered it.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.field({ type: 'DateTime', nullable: true, resolve: () => null }),
    succeeded: t.exposeBoolean('succeeded', { description: 'The receiver answered 2xx within the timeout.' }),
    httpCode: t.exposeInt('httpCode', { nullable: true }),
    response: t.exposeString('response', { nullable: true, description: "The first 2 KB of the receiver's answer, or what went wrong before one came." }),
    durationMs: t.exposeInt('durationMs'),
    endpointId: t.expose('endpointId', { type: 'UUID' }),
    webhookEvent: t.relation('webhookEvent'),
  }),
});

const WebhookDeliveryList = listType('WebhookDelivery', WebhookDelivery);
const WebhookEventList = listType('WebhookEvent', WebhookEvent);

builder.objectFields(CoreQuery, (t) => ({
  webhookDeliveries: t.field({
    type: WebhookDeliveryList,
    description: 'Every delivery attempt, newest first.',
    authScopes: { scope: ['webhooks:read', 'webhooks:write'] },
    args: { ...pageArgs(t.arg), endpointId: t.arg({ type: ['UUID'] }), organizationId: t.arg({ type: ['UUID'] }) },
    resolve: (_root, args, ctx, info) => listWebhookDeliveries(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  webhookEvents: t.field({
    type: WebhookEventList,
    description: 'Events sent or to be sent to endpoints, newest first.',
    authScopes: { scope: ['webhooks:read', 'webhooks:write'] },
    args: {
      ...pageArgs(t.arg),
      endpointId: t.arg({ type: ['UUID'] }),
      organizationId: t.arg({ type: ['UUID'] }),
      succeeded: t.arg.boolean({ description: 'true: delivered; false: given up.' }),
    },
    resolve: (_root, args, ctx, info) => listWebhookEvents(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  webhookEventRedeliver: t.prismaField({
    type: 'WebhookEvent',
    description: 'Sends the event again now, with the same webhook-id, whether it was delivered, given up or still retrying.',
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => redeliverWebhookEvent(ctx, id, query),
  }),
}));
