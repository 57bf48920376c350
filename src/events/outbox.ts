// The outbox: events are written by the transaction that makes the change they describe.
import type { Context } from '../context.ts';
import type { Db } from '../db/client.ts';
import { enqueueJob } from '../jobs/runner.ts';
import type { WireResource } from '../wire/resources.ts';

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
  'organization.updated',
  // Not in the client library's list: reaches only endpoints that subscribe to it by name.
  'token.leaked',
  // Not in the client library's list either: chargebacks the payment processor reports.
  'dispute.created',
  'dispute.closed',
] as const;
export type EventType = (typeof eventTypes)[number];

/** The resource an event is about, rendered by name (wire/resources.ts) as its payload. */
export interface EventSubject {
  organizationId: string;
  resource: WireResource;
  resourceId: string;
}

/**
 * The events that may call for an email (modules/emails/jobs.ts decides which): each gets an
 * `email.event` job in the transaction that records it, so the email goes out after the change
 * commits, and never for a change that rolled back.
 */
const emailedEventTypes: ReadonlySet<EventType> = new Set(['order.paid', 'subscription.active', 'subscription.canceled', 'subscription.revoked', 'subscription.updated']);

/** Whether an event may call for an email: a subscription update only when a payment left it past due. */
function mayCallForEmail(type: EventType, data: object): boolean {
  if (!emailedEventTypes.has(type)) return false;
  return type !== 'subscription.updated' || (data as { status?: unknown }).status === 'past_due';
}

/** Announced (NOTIFY) by every transaction that records events: the webhook workers wake at its commit. */
export const eventsChannel = 'kassa_events';

async function insertEvent(ctx: Context, tx: Db, type: EventType, organizationId: string, resourceId: string, data: object): Promise<void> {
  const event = await tx.event.create({ data: { organizationId, type, resourceId, data, createdAt: ctx.now() }, select: { id: true } });
  if (mayCallForEmail(type, data)) await enqueueJob(tx, 'email.event', { eventId: event.id }, ctx.now(), `email.event:${event.id}`);
}

/** Records one event whose payload the caller made, in the caller's transaction `tx`. */
export async function recordEvent(ctx: Context, tx: Db, type: EventType, organizationId: string, resourceId: string, data: object): Promise<void> {
  await insertEvent(ctx, tx, type, organizationId, resourceId, data);
  await tx.$executeRaw`SELECT pg_notify(${eventsChannel}, '')`;
}

/** The documented JSON of `subject` as `tx` sees it: what a GET of it would return. */
export function renderSubject(ctx: Context, tx: Db, subject: EventSubject): Promise<unknown> {
  return ctx.environment.wire(ctx, tx, subject.organizationId, subject.resource, subject.resourceId);
}

/** Records events about one resource, rendered once, in the caller's transaction `tx`. */
export async function recordEvents(ctx: Context, tx: Db, types: EventType[], subject: EventSubject, data?: unknown): Promise<void> {
  const payload = data ?? (await renderSubject(ctx, tx, subject));
  for (const type of types) await insertEvent(ctx, tx, type, subject.organizationId, subject.resourceId, payload as object);
  await tx.$executeRaw`SELECT pg_notify(${eventsChannel}, '')`;
}
