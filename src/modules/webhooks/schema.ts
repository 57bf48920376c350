import { GraphQLString } from 'graphql';
import { builder, type BuilderTypes, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import type { WebhookFormat as WebhookFormats } from '../../generated/prisma/enums.ts';
import type { EventType as EventTypes } from '../../events/outbox.ts';
import { wireExtension, wireNamedValues, wireOnlyExtension } from '../../graphql/wire-values.ts';
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
  type UnemittedEventType,
  type WebhookEndpointWithSecret,
} from './service.ts';

export const WebhookFormat = builder.enumType('WebhookFormat', {
  description: 'What an endpoint receives.',
  values: {
    raw: { description: 'The JSON event, signed by the Standard Webhooks scheme.' },
    discord: { description: 'A readable message in the format of a Discord webhook URL.' },
    slack: { description: 'A readable message in the format of a Slack webhook URL.' },
  } satisfies Record<WebhookFormats, object>,
});

/** What each type of event Kassa records says happened. */
const recordedEventDescriptions = {
  'checkout.created': 'A checkout was created',
  'checkout.updated': 'A checkout changed, its status included',
  'customer.created': 'A customer was created',
  'customer.updated': 'A customer changed',
  'customer.deleted': 'A customer was deleted',
  'order.created': 'An order was created, at checkout or on renewal',
  'order.updated': 'An order changed: paid, refunded, invoiced or edited',
  'order.paid': 'An order was paid',
  'order.refunded': 'An order was refunded, in full or in part',
  'refund.created': 'A refund was made',
  'subscription.created': 'A subscription was created',
  'subscription.updated': 'A subscription changed',
  'subscription.active': 'A subscription became active',
  'subscription.canceled': 'A subscription was canceled, at the end of its period or at once',
  'subscription.uncanceled': 'A cancellation at the end of the period was withdrawn',
  'subscription.revoked': 'A subscription ended, and its benefits with it',
  'benefit.created': 'A benefit was created',
  'benefit.updated': 'A benefit changed',
  'benefit_grant.created': 'A benefit was granted to a customer',
  'benefit_grant.updated': 'A benefit grant changed',
  'benefit_grant.revoked': "A customer's benefit grant was revoked",
  'customer.state_changed': "A customer's state changed: their active subscriptions or granted benefits",
  'organization.updated': "The organization's profile or settings changed",
  'token.leaked': "One of the organization's tokens was found published, and revoked; not in the client library's list",
  'dispute.created': "A buyer's bank disputed a payment of an order (a chargeback), as the payment processor reported it; not in the client library's list",
  'dispute.closed': "A dispute was decided: won, lost, or closed as a warning; not in the client library's list",
} satisfies Record<EventTypes, string>;

const whereWire = 'on REST and in webhooks';

export const EventType = builder.enumType('EventType', {
  description: 'A type of event Kassa records, as webhooks and the live stream deliver it.',
  values: wireNamedValues(recordedEventDescriptions, whereWire),
  extensions: wireExtension(GraphQLString),
});

// REST takes the types as the strings they were before this enum: an unknown one reaches the
// service, which refuses it with its own message, among the body's other faults.
export const WebhookEventType = builder.enumType('WebhookEventType', {
  description: 'A type of event a webhook endpoint may subscribe to: each EventType, and those of the client library Kassa records none of yet.',
  values: wireNamedValues(
    {
      ...recordedEventDescriptions,
      'refund.updated': 'A refund changed. Kassa records none yet',
      'product.created': 'A product was created. Kassa records none yet',
      'product.updated': 'A product changed. Kassa records none yet',
      'benefit_grant.cycled': 'A benefit grant was renewed for a new period. Kassa records none yet',
    } satisfies Record<EventTypes | UnemittedEventType, string>,
    whereWire,
  ),
  extensions: wireExtension(GraphQLString),
});
const restEventTypes = wireOnlyExtension((value) => !webhookEventTypes.includes(value), 'checkout.created');

// REST reads this description too, in its reference: it names the types as REST spells them.
const eventsDescription = `The event types it receives, each once, in the order given. On REST, among: ${webhookEventTypes.join(', ')}. Kassa records no ${unemittedEventTypes.join(', ')} yet.`;

type WebhookEndpointFieldBuilder = PrismaFieldBuilder<'WebhookEndpoint'>;

/** Everything about an endpoint but its secret. */
const webhookEndpointFields = (t: WebhookEndpointFieldBuilder) => ({
  id: t.exposeID('id', { description: "The endpoint's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the endpoint was created; it receives events recorded from then on.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the endpoint was last changed; null if never.' }),
  url: t.exposeString('url', { description: 'Where events are POSTed.' }),
  format: t.expose('format', { type: WebhookFormat, description: 'What the endpoint receives.' }),
  organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization whose events it receives.' }),
  events: t.field({ type: [WebhookEventType], description: eventsDescription, resolve: (endpoint) => endpoint.events as (EventTypes | UnemittedEventType)[] }),
  enabled: t.exposeBoolean('enabled', { description: 'Whether events are sent to it.' }),
  disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true, description: 'When Kassa disabled it for failing continuously; null otherwise.' }),
  disabledReason: t.exposeString('disabledReason', { nullable: true, description: 'Why Kassa disabled it, with the last failure; null otherwise.' }),
  failingSince: t.expose('failingSince', { type: 'DateTime', nullable: true, description: 'The first failure of the current run of failures; null after a success.' }),
});

export const WebhookEndpoint = builder.prismaObject('WebhookEndpoint', {
  interfaces: [Node],
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
  description: 'A new webhook endpoint.',
  fields: (t) => ({
    url: t.string({ required: true, description: 'https (http to loopback too in sandbox and the embedded setup); no private or metadata address.' }),
    format: t.field({ type: WebhookFormat, required: true, description: 'What the endpoint receives; discord and slack need a webhook URL of that service.' }),
    events: t.field({ type: [WebhookEventType], required: true, description: eventsDescription, extensions: restEventTypes }),
    secret: t.string({ description: `The signing secret, ${minSecretLength} to 1024 characters; generated when omitted.` }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
  }),
});

const WebhookEndpointUpdateInput = builder.inputType('WebhookEndpointUpdateInput', {
  description: 'Only the fields given change.',
  fields: (t) => ({
    url: t.string({ description: 'A new URL, under the same rules as at creation.' }),
    format: t.field({ type: WebhookFormat, description: 'A new format, which the URL must fit.' }),
    events: t.field({ type: [WebhookEventType], description: eventsDescription, extensions: restEventTypes }),
    secret: t.string({ description: `At least ${minSecretLength} characters.` }),
    enabled: t.boolean({ description: 'Enabling clears why and since when Kassa disabled it.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  webhookEndpoints: t.field({
    type: WebhookEndpointList,
    description: 'The webhook endpoints of the organizations the token reaches, newest first.',
    authScopes: { scope: ['webhooks:read', 'webhooks:write'] },
    args: { ...pageArgs(t.arg), organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }) },
    resolve: (_root, args, ctx, info) => listWebhookEndpoints(ctx, args, pageQuery(ctx, info)),
  }),
  webhookEndpoint: t.prismaField({
    type: 'WebhookEndpoint',
    description: 'One webhook endpoint; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: ['webhooks:read', 'webhooks:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The endpoint's id." }) },
    resolve: (query, _root, { id }, ctx) => getWebhookEndpoint(ctx, id, query),
  }),
}));

/** `webhookEndpointRotateSecret`, and under its first name, `webhookEndpointResetSecret`, deprecated. */
const rotateSecret = (t: PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, object>, deprecationReason?: string) =>
  t.prismaField({
    type: WebhookEndpointWithSecretRef,
    description: 'Replaces the signing secret with a new one, shown in this response only. RESOURCE_NOT_FOUND if the token does not reach it.',
    deprecationReason,
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The endpoint's id." }) },
    resolve: (query, _root, { id }, ctx) => resetWebhookEndpointSecret(ctx, id, query),
  });

builder.objectFields(CoreMutation, (t) => ({
  webhookEndpointCreate: t.prismaField({
    type: WebhookEndpointWithSecretRef,
    description:
      'Creates a webhook endpoint, enabled, and shows its secret once. BAD_USER_INPUT for a refused URL (not https, private or metadata address), a URL that does not fit the format, an unknown event type, or a secret too short or long.',
    authScopes: { scope: 'webhooks:write' },
    args: { input: t.arg({ type: WebhookEndpointCreateInput, required: true, description: 'The endpoint to create.' }) },
    resolve: (query, _root, { input }, ctx) => createWebhookEndpoint(ctx, input, query),
  }),
  webhookEndpointUpdate: t.prismaField({
    type: 'WebhookEndpoint',
    description: 'Changes a webhook endpoint, or enables or disables it. RESOURCE_NOT_FOUND if the token does not reach it; BAD_USER_INPUT as for webhookEndpointCreate.',
    authScopes: { scope: 'webhooks:write' },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The endpoint's id." }),
      input: t.arg({ type: WebhookEndpointUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateWebhookEndpoint(ctx, id, input, query),
  }),
  webhookEndpointRotateSecret: rotateSecret(t),
  webhookEndpointResetSecret: rotateSecret(t, 'use webhookEndpointRotateSecret'),
  webhookEndpointDelete: t.boolean({
    description:
      'Deletes the endpoint and returns true: it receives nothing more, and events still waiting for it are given up. RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The endpoint's id." }) },
    resolve: (_root, { id }, ctx) => deleteWebhookEndpoint(ctx, id),
  }),
}));

/** node(id:) answers for webhook endpoints as core.webhookEndpoint does. */
export const webhookEndpointNodeLoader: NodeLoader = { surface: 'core', model: 'webhookEndpoint', typeName: 'WebhookEndpoint', scopes: ['webhooks:read', 'webhooks:write'], load: getWebhookEndpoint };
