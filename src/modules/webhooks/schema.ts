import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { WebhookFormat as WebhookFormats } from '../../generated/prisma/enums.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  minSecretLength,
  resetWebhookEndpointSecret,
  unemittedEventTypes,
  updateWebhookEndpoint,
  webhookEventTypes,
  type WebhookEndpointWithSecret,
} from './service.ts';

export const WebhookFormat = builder.enumType(WebhookFormats, {
  name: 'WebhookFormat',
  description: 'raw: the signed JSON event; discord and slack: a readable message in that service’s webhook format.',
});

const eventsDescription = `Event types, among: ${webhookEventTypes.join(', ')}. Kassa records no ${unemittedEventTypes.join(', ')} yet.`;

type WebhookEndpointFieldBuilder = PrismaFieldBuilder<'WebhookEndpoint'>;

/** Everything about an endpoint but its secret. */
const webhookEndpointFields = (t: WebhookEndpointFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  url: t.exposeString('url'),
  format: t.expose('format', { type: WebhookFormat }),
  organizationId: t.expose('organizationId', { type: 'UUID' }),
  events: t.exposeStringList('events', { description: eventsDescription }),
  enabled: t.exposeBoolean('enabled', { description: 'Whether events are sent to it.' }),
  disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true, description: 'When Kassa disabled it for failing continuously; null otherwise.' }),
  disabledReason: t.exposeString('disabledReason', { nullable: true }),
  failingSince: t.expose('failingSince', { type: 'DateTime', nullable: true, description: 'The first failure of the current run of failures; null after a success.' }),
});

export const WebhookEndpoint = builder.prismaObject('WebhookEndpoint', {
  description: 'Where an organization receives its events, signed with the endpoint’s secret (Standard Webhooks).',
  fields: (t) => ({
    ...webhookEndpointFields(t as unknown as WebhookEndpointFieldBuilder),
    secret: t.exposeString('secretHint', { description: 'The last characters of the signing secret; the secret itself is shown only when created or reset.' }),
  }),
});

const WebhookEndpointWithSecretRef = builder.prismaObject('WebhookEndpoint', {
  variant: 'WebhookEndpointWithSecret',
  description: 'A webhook endpoint as created or after its secret was reset: the only time its secret is shown.',
  fields: (t) => ({
    ...webhookEndpointFields(t as unknown as WebhookEndpointFieldBuilder),
    secret: t.string({ description: 'The signing secret. Keep it: it is not shown again.', resolve: (endpoint) => (endpoint as WebhookEndpointWithSecret).secret }),
  }),
});

const WebhookEndpointList = listType('WebhookEndpoint', WebhookEndpoint);

const WebhookEndpointCreateInput = builder.inputType('WebhookEndpointCreateInput', {
  fields: (t) => ({
    url: t.string({ required: true, description: 'https (http to loopback too in sandbox and the embedded setup); no private or metadata address.' }),
    format: t.field({ type: WebhookFormat, required: true }),
    events: t.stringList({ required: true, description: eventsDescription }),
    secret: t.string({ description: `At least ${minSecretLength} characters; generated when omitted.` }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
  }),
});

const WebhookEndpointUpdateInput = builder.inputType('WebhookEndpointUpdateInput', {
  description: 'Only the fields given change.',
  fields: (t) => ({
    url: t.string(),
    format: t.field({ type: WebhookFormat }),
    events: t.stringList({ description: eventsDescription }),
    secret: t.string({ description: `At least ${minSecretLength} characters.` }),
    enabled: t.boolean({ description: 'Enabling clears why and since when Kassa disabled it.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  webhookEndpoints: t.field({
    type: WebhookEndpointList,
    authScopes: { scope: ['webhooks:read', 'webhooks:write'] },
    args: { ...pageArgs(t.arg), organizationId: t.arg({ type: ['UUID'] }) },
    resolve: (_root, args, ctx, info) => listWebhookEndpoints(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  webhookEndpoint: t.prismaField({
    type: 'WebhookEndpoint',
    authScopes: { scope: ['webhooks:read', 'webhooks:write'] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getWebhookEndpoint(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  webhookEndpointCreate: t.prismaField({
    type: WebhookEndpointWithSecretRef,
    authScopes: { scope: 'webhooks:write' },
    args: { input: t.arg({ type: WebhookEndpointCreateInput, required: true }) },
    resolve: (query, _root, { input }, ctx) => createWebhookEndpoint(ctx, input, query),
  }),
  webhookEndpointUpdate: t.prismaField({
    type: 'WebhookEndpoint',
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: WebhookEndpointUpdateInput, required: true }) },
    resolve: (query, _root, { id, input }, ctx) => updateWebhookEndpoint(ctx, id, input, query),
  }),
  webhookEndpointResetSecret: t.prismaField({
    type: WebhookEndpointWithSecretRef,
    description: 'Replaces the signing secret with a new one, shown in this response only.',
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => resetWebhookEndpointSecret(ctx, id, query),
  }),
  webhookEndpointDelete: t.boolean({
    description: 'Deletes the endpoint: it receives nothing more, and events still waiting for it are given up.',
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) => deleteWebhookEndpoint(ctx, id),
  }),
}));
