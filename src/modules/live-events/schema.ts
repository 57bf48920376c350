// The organization's events, live: a GraphQL subscription (served over SSE by graphql-yoga) of
// every event committed from the moment of subscribing, of the organizations the token reaches.
// Nothing is replayed: a client that needs what it missed lists the events (`core.webhookEvents`)
// or receives them by webhook.
import { builder } from '../../graphql/builder.ts';
import { NotPermittedError } from '../../graphql/errors.ts';
import type { PrincipalKind } from '../../graphql/builder.ts';
import type { LiveEvent as LiveEventShape } from '../../events/live.ts';
import type { EventType as EventTypes } from '../../events/outbox.ts';
import { EventType } from '../webhooks/schema.ts';
import { organizationFilter } from '../organizations/access.ts';
import type { Context } from '../../context.ts';
import { principalStillLive } from '../../auth/principals.ts';

const LiveEvent = builder.objectRef<LiveEventShape>('LiveEvent').implement({
  description: 'An event as it is recorded: the same type and data a webhook endpoint receives.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "The event's id, one per change; each endpoint's WebhookEvent has its own." }),
    type: t.field({ type: EventType, description: 'The event type, such as order_paid.', resolve: (event) => event.type as EventTypes }),
    timestamp: t.field({ type: 'DateTime', description: 'When the change was recorded.', resolve: (event) => event.timestamp }),
    organizationId: t.field({ type: 'UUID', description: 'The organization whose event it is.', resolve: (event) => event.organizationId }),
    resourceId: t.field({ type: 'UUID', nullable: true, description: 'The resource that changed; null for an event about no one resource.', resolve: (event) => event.resourceId }),
    data: t.field({ type: 'JSONObject', description: 'The resource at the moment of the change, as the REST API renders it.', resolve: (event) => event.data }),
  }),
});

/**
 * The stream, ended before the first event that arrives after its token was revoked or expired:
 * the stream was authorized once, at its start, and must not outlive the token.
 */
function untilSignedOut(stream: AsyncIterableIterator<LiveEventShape>, ctx: Context): AsyncIterableIterator<LiveEventShape> {
  const done = { done: true as const, value: undefined };
  return {
    async next() {
      const result = await stream.next();
      if (result.done || (await principalStillLive(ctx.environment, ctx.principal, ctx.now()))) return result;
      await stream.return?.();
      return done;
    },
    async return() {
      await stream.return?.();
      return done;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

builder.subscriptionField('coreEvents', (t) =>
  t.field({
    type: LiveEvent,
    description: 'The events of the organizations the token reaches, live from now on (over SSE: send the operation with `Accept: text/event-stream`).',
    authScopes: { $all: { principal: ['organization', 'user', 'system'] as PrincipalKind[], scope: ['webhooks:read', 'webhooks:write'] } },
    args: {
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations (among those the token reaches).' }),
      types: t.arg({ type: [EventType], description: 'Only these event types; every type when omitted or empty.' }),
    },
    subscribe: (_root, args, ctx) => {
      const organizations = new Set(organizationFilter(ctx, args.organizationId).in);
      if (organizations.size === 0) throw new NotPermittedError('The token reaches none of these organizations.');
      const types = args.types?.length ? new Set<string>(args.types) : null;
      const stream = ctx.environment.live.subscribe((event) => organizations.has(event.organizationId) && (types === null || types.has(event.type)));
      return untilSignedOut(stream, ctx);
    },
    resolve: (event) => event,
  }),
);
