// Disputes (chargebacks): a buyer's bank taking a payment back, as the payment processor reports
// it. Kassa does not open or answer disputes; it keeps the processor's latest word on each one,
// on its order, and tells the organization.
//
// The processor's events arrive in any order and may arrive twice, and each carries the whole
// dispute. So applying one is idempotent and never goes back: a dispute moves from needs_response
// to under_review to closed (won, lost or warning_closed), and a report behind what is stored
// (a `created` delivered after `closed`) changes nothing. What is recorded, in the transaction of
// the change, with order.updated for the order first:
// - dispute.created once, when the row is made, whatever state it is first seen in;
// - dispute.closed once, when the status first becomes a closed one (with dispute.created if the
//   dispute is first seen closed);
// - any other change (open to under review, a new amount or reason) updates the row and records
//   order.updated alone: the order's disputes changed, and no event type of its own is promised.
// A report that changes nothing records nothing.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Dispute, DisputeStatus, Prisma } from '../../generated/prisma/client.ts';
import { recordEvents, type EventType } from '../../events/outbox.ts';
import { ResourceNotFoundError } from '../../graphql/errors.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { organizationFilter } from '../organizations/access.ts';
import { recordOrderEvents } from '../orders/events.ts';

const disputeResource = 'dispute';

/** The dispute as the processor reports it: the whole of it, in every event. */
export interface ProcessorDispute {
  orderId: string;
  /** The processor's id of the dispute (`dp_…`): one row per dispute. */
  processorId: string;
  status: DisputeStatus;
  /** The bank's reason, as the processor names it. */
  reason: string;
  /** The disputed amount, in minor units of `currency`. */
  amount: number;
  currency: string;
  /** When the dispute was decided; null while it is open. */
  closedAt: Date | null;
}

export interface DisputeListArgs extends PageArgs {
  organizationId?: string[] | null;
  orderId?: string[] | null;
  status?: DisputeStatus[] | null;
}

export const closedDisputeStatuses: readonly DisputeStatus[] = ['won', 'lost', 'warning_closed'];

/** How far along a dispute is: a report never moves a stored dispute to a lower stage. */
function stage(status: DisputeStatus): number {
  return closedDisputeStatuses.includes(status) ? 2 : status === 'under_review' ? 1 : 0;
}

/** Whether `report` says anything the stored dispute does not. */
function changes(stored: Dispute, report: ProcessorDispute): boolean {
  return (
    stored.status !== report.status ||
    stored.reason !== report.reason ||
    stored.amount !== report.amount ||
    stored.currency !== report.currency ||
    stored.closedAt?.getTime() !== report.closedAt?.getTime()
  );
}

/**
 * Applies the processor's report of a dispute, in the caller's transaction `db` (the processor's
 * webhook, with a system context for the order's organization): creates the dispute or brings it
 * up to the report, unless the report is behind what is stored, and records the events above.
 * The order's row lock orders it against any other report of the dispute and any other change
 * to the order. Returns the dispute as stored after.
 */
export async function applyDispute(ctx: Context, db: Db, dispute: ProcessorDispute): Promise<Dispute> {
  await db.$queryRaw`SELECT id FROM orders WHERE id = ${dispute.orderId}::uuid FOR UPDATE`;
  const order = await db.order.findFirst({ where: { id: dispute.orderId, organizationId: organizationFilter(ctx) } });
  if (!order) throw new ResourceNotFoundError('Order not found.');
  const report = { status: dispute.status, reason: dispute.reason, amount: dispute.amount, currency: dispute.currency, closedAt: dispute.closedAt };
  const stored = await db.dispute.findUnique({ where: { processorId: dispute.processorId } });
  if (stored && stored.orderId !== order.id) throw new Error(`Dispute ${dispute.processorId} is on order ${stored.orderId}, not ${order.id}.`);

  const events: EventType[] = [];
  let current: Dispute;
  if (!stored) {
    current = await db.dispute.create({
      data: { organizationId: order.organizationId, orderId: order.id, processorId: dispute.processorId, ...report, createdAt: ctx.now() },
    });
    events.push('dispute.created');
    if (stage(current.status) === 2) events.push('dispute.closed');
  } else if (stage(dispute.status) >= stage(stored.status) && changes(stored, dispute)) {
    current = await db.dispute.update({ where: { id: stored.id }, data: { ...report, modifiedAt: ctx.now() } });
    if (stage(current.status) === 2 && stage(stored.status) < 2) events.push('dispute.closed');
  } else {
    return stored;
  }
  await recordOrderEvents(ctx, db, ['order.updated'], order);
  if (events.length) await recordEvents(ctx, db, events, { organizationId: order.organizationId, resourceId: current.id, resource: disputeResource });
  return current;
}

export async function getDispute(ctx: Context, id: string, query: object) {
  const dispute = await ctx.prisma.dispute.findFirst({ ...query, where: { id, organizationId: organizationFilter(ctx) } });
  if (!dispute) throw new ResourceNotFoundError('Dispute not found.');
  return dispute;
}

/** The disputes the token reaches, newest first. */
export async function listDisputes(ctx: Context, args: DisputeListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.DisputeWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.orderId?.length ? { orderId: { in: args.orderId } } : {}),
    ...(args.status?.length ? { status: { in: args.status } } : {}),
  };
  const [items, total] = await Promise.all([
    ctx.prisma.dispute.findMany({ ...query, where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...window }),
    ctx.prisma.dispute.count({ where }),
  ]);
  return toPage(items, total, args);
}
