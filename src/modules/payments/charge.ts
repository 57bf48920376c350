// The payment job: charges an order's pending payment through the environment's processor, then
// in one transaction records the outcome, moves the order and checkout on, and writes the events.
// The charge itself runs outside any transaction, so a subscription may end (be revoked) while it
// is under way. The outcome is recorded under the subscription's row lock: a charge that went
// through for a subscription that has ended by then is refunded in full in that same transaction,
// so an ended subscription never keeps a charge made after it ended.
//
// A charge the processor has not settled (the buyer must authenticate, the bank is slow) leaves
// the payment pending with the processor's id. The processor's webhook settles it
// (applyChargeOutcome), and a reconciliation job asks the processor about it after a while, so a
// lost webhook loses nothing.
import { systemContext } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { recordEvents } from '../../events/outbox.ts';
import type { Order } from '../../generated/prisma/client.ts';
import { enqueueJob, job, type JobContext } from '../../jobs/runner.ts';
import type { ChargeRequest, ChargeResult, SettledCharge } from './processor.ts';
import { recordOrderEvents } from '../orders/events.ts';
import { scheduleGrantSync } from '../benefits/grants.ts';
import { refundOrder } from '../refunds/service.ts';
import { declineMessage } from './service.ts';
import { settleSubscriptionOrder, subscriptionEnded } from '../subscriptions/service.ts';
import { billsFinalUsage } from '../subscriptions/metered.ts';

export type PendingPayment = NonNullable<Awaited<ReturnType<typeof pendingPayment>>>;

/** A payment still waiting for its outcome, with what charging it needs; null once settled. */
export async function pendingPayment(db: Db, paymentId: string) {
  const payment = await db.payment.findUnique({ where: { id: paymentId }, include: { order: { include: { subscription: true, customer: true } } } });
  return payment?.status === 'pending' ? payment : null;
}

const settled = (result: ChargeResult): result is SettledCharge => result.status === 'succeeded' || result.status === 'failed';

/** Records what the processor answered: a settled charge's outcome, or an unsettled charge's state. */
async function recordResult(job: JobContext, payment: PendingPayment, result: ChargeResult) {
  if (settled(result)) {
    await job.prisma.$transaction((tx) => applyChargeOutcome(job, tx as Db, payment, result));
    if (result.status === 'failed') job.logger.info({ paymentId: payment.id, declineReason: result.declineReason }, 'payment declined');
    return;
  }
  const recorded = await job.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await db.$queryRaw`SELECT id FROM orders WHERE id = ${payment.orderId}::uuid FOR UPDATE`;
    const { count } = await db.payment.updateMany({ where: { id: payment.id, status: 'pending' }, data: { processorId: result.processorId } });
    if (count === 0) return false;
    await rememberSaved(db, payment, result);
    const checkoutId = payment.order.checkoutId;
    if (checkoutId) {
      // What the buyer's page needs to finish the payment (Stripe.js handleNextAction takes the secret).
      const processorMetadata = result.status === 'requires_action' ? { intent_status: result.status, intent_client_secret: result.clientSecret } : { intent_status: result.status };
      await db.checkout.update({ where: { id: checkoutId }, data: { processorMetadata } });
      await recordEvents(systemContext(job.environment, db, payment.order.organizationId, job.now, `payment:${payment.id}`), db, ['checkout.updated'], {
        organizationId: payment.order.organizationId,
        resourceId: checkoutId,
        resource: 'checkout',
      });
    }
    await enqueueReconciliation(job, db, payment.id, 0);
    return true;
  });
  if (recorded) job.environment.metrics.payment('pending');
}

/** Keeps what the processor saved for later charges: its customer, and the method renewals use. */
async function rememberSaved(db: Db, payment: PendingPayment, result: ChargeResult) {
  if (result.processorCustomerId && result.processorCustomerId !== payment.order.customer.processorCustomerId) {
    await db.customer.update({ where: { id: payment.order.customerId }, data: { processorCustomerId: result.processorCustomerId } });
  }
  if (result.status === 'succeeded' && result.savedPaymentMethod && payment.order.subscriptionId) {
    await db.subscription.update({ where: { id: payment.order.subscriptionId }, data: { paymentMethod: result.savedPaymentMethod } });
  }
}

/**
 * Applies a settled charge in the caller's transaction: the payment, the order, its subscription
 * and checkout, and their events. A payment already settled is left as it is (false).
 */
export async function applyChargeOutcome(job: JobContext, db: Db, payment: PendingPayment, result: SettledCharge): Promise<boolean> {
  const ctx = systemContext(job.environment, db, payment.order.organizationId, job.now, `payment:${payment.id}`);
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
  if (count === 0) return false;
  await rememberSaved(db, payment, result);
  const checkoutId = payment.order.checkoutId;
  // Locked after the order, as settleSubscriptionOrder does: a revocation under way is waited for, a committed one is seen.
  const subscription = await lockedSubscription(db, payment.order);
  if (result.status === 'succeeded') {
    const paid = await db.order.update({ where: { id: payment.orderId }, data: { status: 'paid', paid: true } });
    await recordOrderEvents(ctx, db, ['order.updated', 'order.paid'], payment.order);
    if (payment.order.billingReason === 'purchase') await scheduleGrantSync(ctx, db, { orderId: payment.orderId });
    if (subscription && subscriptionEnded(subscription) && paid.netAmount > paid.refundedAmount && !(await billsFinalUsage(db, paid.id))) {
      await refundOrder(ctx, db, paid, {
        amount: paid.netAmount - paid.refundedAmount,
        reason: 'other',
        comment: 'Charged while the subscription was ending: refunded automatically.',
      });
    }
  }
  await settleSubscriptionOrder(ctx, db, payment.order, result.status);
  if (checkoutId) {
    await db.checkout.update({
      where: { id: checkoutId },
      // A declined buyer's page says why, and offers to try another card (checkouts/retry.ts).
      data: result.status === 'succeeded' ? { status: 'succeeded', processorMetadata: {} } : { status: 'failed', processorMetadata: { decline_message: declineMessage(result.declineReason)! } },
    });
    await recordEvents(ctx, db, ['checkout.updated'], { organizationId: payment.order.organizationId, resourceId: checkoutId, resource: 'checkout' });
  }
  // Counted by the job and by the processor's webhook alike; last, so only a failed commit can follow.
  job.environment.metrics.payment(result.status);
  return true;
}

/** The order's subscription, if any, locked until the transaction ends. */
async function lockedSubscription(db: Db, order: Order) {
  if (!order.subscriptionId) return null;
  await db.$executeRaw`SELECT id FROM subscriptions WHERE id = ${order.subscriptionId}::uuid FOR UPDATE`;
  return db.subscription.findUniqueOrThrow({ where: { id: order.subscriptionId } });
}

function chargeRequest(payment: PendingPayment): ChargeRequest {
  const { order } = payment;
  return {
    paymentId: payment.id,
    amount: payment.amount,
    currency: payment.currency,
    paymentMethod: payment.paymentMethod,
    customer: { id: order.customerId, email: order.customer.email, name: order.customer.name, processorCustomerId: order.customer.processorCustomerId },
    // A subscription's first payment keeps the method for its renewals, which the buyer is not there for.
    saveForLater: order.billingReason === 'subscription_create',
    offSession: order.billingReason === 'subscription_cycle',
  };
}

async function charge(job: JobContext, payment: PendingPayment): Promise<ChargeResult> {
  // A subscription that ended after this payment was scheduled is not charged for, but for the
  // usage of its last period, which it owes (subscriptions/metered.ts).
  if (payment.order.subscription && subscriptionEnded(payment.order.subscription) && !(await billsFinalUsage(job.prisma as Db, payment.orderId))) {
    return { status: 'failed', processorId: 'not-charged', declineReason: 'subscription_ended' };
  }
  // Nothing to charge needs no processor: free orders are paid where none is configured.
  if (payment.amount === 0) return { status: 'succeeded', processorId: 'free' };
  const processor = job.environment.paymentProcessor;
  if (!processor) throw new Error('No payment processor is configured for this environment.');
  return processor.charge(chargeRequest(payment));
}

export const chargeJob = job<{ paymentId: string }>(
  'payment.charge',
  async ({ paymentId }, job) => {
    const payment = await pendingPayment(job.prisma, paymentId);
    if (!payment) return;
    await recordResult(job, payment, await charge(job, payment));
  },
  {
    maxAttempts: 8,
    // A charge that could not be made after every attempt: a processor that can be asked later is
    // (the charge may have gone through with its answer lost); otherwise the order, its checkout
    // or subscription move on as after a decline instead of waiting for ever.
    async onGiveUp({ paymentId }, job) {
      const payment = await pendingPayment(job.prisma, paymentId);
      if (!payment) return;
      if (job.environment.paymentProcessor?.lookUp) return enqueueReconciliation(job, job.prisma, paymentId, 0);
      await recordResult(job, payment, { status: 'failed', processorId: 'not-charged', declineReason: 'processing_error' });
    },
  },
);

// Reconciliation: a payment the processor has not settled is asked about after
// PAYMENT_RECONCILE_AFTER_SECONDS, then at doubling intervals up to six hours. One left waiting
// for the buyer to authenticate for a day is cancelled at the processor and fails.
const maxReconcileIntervalMs = 6 * 3600_000;
const abandonAfterMs = 24 * 3600_000;

async function enqueueReconciliation(job: JobContext, db: Db, paymentId: string, check: number) {
  const wait = Math.min(maxReconcileIntervalMs, job.environment.config.paymentReconcileAfterMs * 2 ** check);
  await enqueueJob(db, 'payment.reconcile', { paymentId, check }, new Date(job.now().getTime() + wait));
}

export const reconcileJob = job<{ paymentId: string; check?: number }>(
  'payment.reconcile',
  async ({ paymentId, check = 0 }, job) => {
    const payment = await pendingPayment(job.prisma, paymentId);
    const processor = job.environment.paymentProcessor;
    if (!payment || !processor?.lookUp) return;
    const found = await processor.lookUp({ paymentId, processorId: payment.processorId, amount: payment.amount, currency: payment.currency });
    if (!found) {
      // The processor never saw the charge: make it now (the payment id keeps it to one charge).
      await enqueueJob(job.prisma, 'payment.charge', { paymentId }, job.now());
      return;
    }
    if (settled(found)) return recordResult(job, payment, found);
    const abandoned = job.now().getTime() - payment.createdAt.getTime() >= abandonAfterMs;
    if (abandoned && found.status === 'requires_action' && processor.cancel) {
      const after = await processor.cancel(found.processorId);
      if (settled(after)) return recordResult(job, payment, after);
    }
    await enqueueReconciliation(job, job.prisma, paymentId, check + 1);
  },
  { maxAttempts: 8 },
);
