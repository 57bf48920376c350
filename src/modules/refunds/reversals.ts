// A refund the bank hands back after it had succeeded: a card that cannot take money back (closed,
// expired) makes Stripe fail a refund it first reported as succeeded (`refund.failed`). The refund
// becomes failed and its amount, with its tax, is refundable on the order again, in one transaction
// with the order's event, as when the processor refuses a refund at once (refundJob).
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { recordOrderEvents } from '../orders/events.ts';
import { scheduleGrantSync } from '../benefits/grants.ts';

/** Reverses a succeeded refund in the caller's transaction; false when it is not a succeeded refund of the context's organization. */
export async function reverseRefund(ctx: Context, db: Db, refundId: string): Promise<boolean> {
  const refund = await db.refund.findUnique({ where: { id: refundId } });
  if (!refund || refund.status !== 'succeeded') return false;
  // The order row lock orders this against refunds being made or settled on the same order.
  await db.$queryRaw`SELECT id FROM orders WHERE id = ${refund.orderId}::uuid FOR UPDATE`;
  const { count } = await db.refund.updateMany({ where: { id: refundId, status: 'succeeded' }, data: { status: 'failed' } });
  if (count === 0) return false;
  const order = await db.order.findUniqueOrThrow({ where: { id: refund.orderId } });
  const refundedAmount = order.refundedAmount - refund.amount;
  await db.order.update({
    where: { id: order.id },
    data: {
      refundedAmount,
      refundedTaxAmount: order.refundedTaxAmount - refund.taxAmount,
      status: refundedAmount === 0 ? 'paid' : refundedAmount >= order.netAmount ? 'refunded' : 'partially_refunded',
    },
  });
  await recordOrderEvents(ctx, db, ['order.updated'], order);
  if (refund.revokeBenefits) await scheduleGrantSync(ctx, db, { orderId: order.id });
  return true;
}
