// Events about an order, recorded in the transaction that changed it. Apart from the order's
// service, so the services that change orders (subscriptions, payments, refunds, invoices) record
// them without importing the rules that create orders.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { recordEvents, type EventType } from '../../events/outbox.ts';

export async function recordOrderEvents(ctx: Context, db: Db, types: EventType[], order: { id: string; organizationId: string }) {
  await recordEvents(ctx, db, types, { organizationId: order.organizationId, resourceId: order.id, resource: 'order' });
}
