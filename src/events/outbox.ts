// The outbox: events are written by the transaction that makes the change they describe.
import type { Context } from '../context.ts';
import type { Db } from '../db/client.ts';
import { renderWire } from '../rest/render.ts';

export const eventTypes = [
  'checkout.created',
  'checkout.updated',
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'order.created',
  'order.updated',
  'order.paid',
  'order.refunded',
  'refund.created',
  'subscription.created',
  'subscription.updated',
  'subscription.active',
  'subscription.canceled',
  'subscription.uncanceled',
  'subscription.revoked',
  'benefit.created',
  'benefit.updated',
  'benefit_grant.created',
  'benefit_grant.updated',
  'benefit_grant.revoked',
  'customer.state_changed',
  // Not in the client library's list: reaches only endpoints that subscribe to it by name.
  'token.leaked',
] as const;
export type EventType = (typeof eventTypes)[number];

export type EventSubject = {
  organizationId: string;
  resourceId: string;
} & (
  /** The GET route that renders the resource, e.g. `GET /v1/customers/{id}`. */
  | { route: string }
  /** For a payload no GET route returns as such: a query with an `$id` variable, rendered like a route. */
  | { operation: string }
);

/** Records one event whose payload the caller made, in the caller's transaction `tx`. */
export async function recordEvent(ctx: Context, tx: Db, type: EventType, organizationId: string, resourceId: string, data: object): Promise<void> {
  await tx.event.create({ data: { organizationId, type, resourceId, data, createdAt: ctx.now() } });
}

/** Records events about one resource, rendered once, in the caller's transaction `tx`. */
export async function recordEvents(ctx: Context, tx: Db, types: EventType[], subject: EventSubject, data?: unknown): Promise<void> {
  const payload =
    data ?? (await renderWire(ctx, tx, subject.organizationId, 'route' in subject ? subject.route : { operation: subject.operation }, { id: subject.resourceId }));
  for (const type of types) await recordEvent(ctx, tx, type, subject.organizationId, subject.resourceId, payload as object);
}
