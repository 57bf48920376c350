// The payment job: charges an order's pending payment through the environment's processor, then
// in one transaction records the outcome, moves the order and checkout on, and writes the events.
// The charge itself runs outside any transaction, so a subscription may end (be revoked) while it
// is under way. The outcome is recorded under the subscription's row lock: a charge that went
// through for a subscription that has ended by then is refunded in full in that same transaction,
// so an ended subscription never keeps a charge made after it ended.
import { systemContext } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { recordEvents } from '../../events/outbox.ts';
import type { Order } from '../../generated/prisma/client.ts';
import { job, type JobContext } from '../../jobs/runner.ts';
import type { ChargeResult } from './processor.ts';
import { recordOrderEvents } from '../orders/events.ts';
import { scheduleGrantSync } from '../benefits/grants.ts';
import { refundOrder } from '../refunds/service.ts';
import { settleSubscriptionOrder, subscriptionEnded } from '../subscriptions/service.ts';

type PendingPayment = NonNullable<Awaited<ReturnType<typeof pendingPayment>>>;

async function pendingPayment(job: JobContext, paymentId: string) {
  const payment = await job.prisma.payment.findUnique({ where: { id: paymentId }, include: { order: { include: { subscription: true } } } });
  return payment?.status === 'pending' ? payment : null;
}

/** Records a charge's outcome in one transaction: the payment, the order, its subscription and checkout, and their events. */
async function recordOutcome(job: JobContext, payment: PendingPayment, result: ChargeResult) {
  const ctx = systemContext(job.environment, job.prisma, payment.order.organizationId, job.now, `payment:${payment.id}`);
  await job.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    // The order row lock orders this against any other change to the order (a refund, another runner).
    await db.$queryRaw`SELECT id FROM orders WHERE id = ${payment.orderId}::uuid FOR UPDATE`;
    const { count } = await db.payment.updateMany({
      where: { id: payment.id, status: 'pending' },
      data: {
        status: result.status,
        processorId: result.processorId,
        declineReason: result.status === 'failed' ? result.declineReason : null,
        processedAt: job.now(),
      },
    });
    if (count === 0) return;
    const checkoutId = payment.order.checkoutId;
    // Locked after the order, as settleSubscriptionOrder does: a revocation under way is waited for, a committed one is seen.
    const subscription = await lockedSubscription(db, payment.order);
    if (result.status === 'succeeded') {
      const paid = await db.order.update({ where: { id: payment.orderId }, data: { status: 'paid', paid: true } });
      await recordOrderEvents(ctx, db, ['order.updated', 'order.paid'], payment.order);
      if (payment.order.billingReason === 'purchase') await scheduleGrantSync(ctx, db, { orderId: payment.orderId });
      if (subscription && subscriptionEnded(subscription) && paid.netAmount > paid.refundedAmount) {
        await refundOrder(ctx, db, paid, {
          amount: paid.netAmount - paid.refundedAmount,
          reason: 'other',
          comment: 'Charged while the subscription was ending: refunded automatically.',
        });
      }
    }
    await settleSubscriptionOrder(ctx, db, payment.order, result.status);
    if (checkoutId) {
      await db.checkout.update({ where: { id: checkoutId }, data: { status: result.status === 'succeeded' ? 'succeeded' : 'failed' } });
      await recordEvents(ctx, db, ['checkout.updated'], { organizationId: payment.order.organizationId, resourceId: checkoutId, resource: 'checkout' });
    }
  });
  if (result.status === 'failed') job.logger.info({ paymentId: payment.id, declineReason: result.declineReason }, 'payment declined');
}

/** The order's subscription, if any, locked until the transaction ends. */
async function lockedSubscription(db: Db, order: Order) {
  if (!order.subscriptionId) return null;
  await db.$executeRaw`SELECT id FROM subscriptions WHERE id = ${order.subscriptionId}::uuid FOR UPDATE`;
  return db.subscription.findUniqueOrThrow({ where: { id: order.subscriptionId } });
}

async function charge(job: JobContext, payment: PendingPayment): Promise<ChargeResult> {
  // A subscription that ended after this payment was scheduled is not charged for.
  if (payment.order.subscription && subscriptionEnded(payment.order.subscription)) {
    return { status: 'failed', processorId: 'not-charged', declineReason: 'subscription_ended' };
  }
  // Nothing to charge needs no processor: free orders are paid where none is configured.
  if (payment.amount === 0) return { status: 'succeeded', processorId: 'free' };
  const processor = job.environment.paymentProcessor;
  if (!processor) throw new Error('No payment processor is configured for this environment.');
  return processor.charge({ paymentId: payment.id, amount: payment.amount, currency: payment.currency, paymentMethod: payment.paymentMethod });
}

export const chargeJob = job<{ paymentId: string }>(
  'payment.charge',
  async ({ paymentId }, job) => {
    const payment = await pendingPayment(job, paymentId);
    if (!payment) return;
    await recordOutcome(job, payment, await charge(job, payment));
  },
  {
    maxAttempts: 8,
    // A charge that could not be made after every attempt failed: the order, its checkout or
    // subscription move on as after a decline instead of waiting for ever.
    async onGiveUp({ paymentId }, job) {
      const payment = await pendingPayment(job, paymentId);
      if (payment) await recordOutcome(job, payment, { status: 'failed', processorId: 'not-charged', declineReason: 'processing_error' });
    },
  },
);
