// Stripe's webhook events for an environment whose processor is Stripe, at
// POST /v1/integrations/stripe/webhook (and /sandbox/v1/…, with the sandbox account's secret).
//
// - The Stripe-Signature header is checked over the exact bytes received with the endpoint's
//   signing secret (STRIPE_WEBHOOK_SECRET), five minutes' tolerance: a forged, altered or replayed
//   event changes nothing (400). So does an event of the other mode (live in sandbox, test in production).
// - Each event is applied once: its id is recorded in the transaction that applies it, so a
//   second delivery, or two at once, find it and change nothing.
// - Events may come in any order: each carries the whole object, and an effect is applied only
//   from the state it finds (a payment settles once; a dispute keeps Stripe's latest state).
// - An event about a payment this environment does not have is refused (404), nothing recorded.
import type Stripe from 'stripe';
import { systemContext, type Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import { enqueueJob, type JobContext } from '../jobs/runner.ts';
import type { Logger } from '../logger.ts';
import { applyDispute } from '../modules/disputes/service.ts';
import { applyChargeOutcome, pendingPayment } from '../modules/payments/charge.ts';
import { chargeResultOf, intentFits, StripePaymentProcessor } from '../modules/payments/stripe.ts';
import { reverseRefund } from '../modules/refunds/reversals.ts';

export interface StripeWebhookRequest {
  body: Buffer;
  /** The Stripe-Signature header. */
  signature: string | undefined;
  requestId: string;
}

export type StripeWebhookAnswer = { status: number; body: unknown };

const answer = (status: number, body: unknown): StripeWebhookAnswer => ({ status, body });
const refusal = (status: number, error: string, detail: string) => answer(status, { error, detail });

/** A tx-scoped effect of one event; `null` when the event is about nothing this environment has. */
type Effect = (db: Db) => Promise<void>;

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const idOf = (value: string | { id: string } | null | undefined): string | undefined => (typeof value === 'string' ? value : value?.id);

export async function receiveStripeWebhook(environment: Environment, request: StripeWebhookRequest, now: () => Date, logger: Logger): Promise<StripeWebhookAnswer> {
  const processor = environment.paymentProcessor;
  if (!(processor instanceof StripePaymentProcessor)) return refusal(404, 'NotFound', 'This environment does not take payments through Stripe.');
  if (!request.signature) return refusal(400, 'InvalidSignature', 'The Stripe-Signature header is missing: only Stripe sends events here.');
  let event: Stripe.Event;
  try {
    event = processor.verifyWebhook(request.body, request.signature);
  } catch {
    return refusal(
      400,
      'InvalidSignature',
      "The Stripe-Signature header does not match the body, or was made more than five minutes ago. If Stripe sent it, check that STRIPE_WEBHOOK_SECRET is this endpoint's signing secret.",
    );
  }
  // Signed, but not an event (a signature over some other JSON): nothing to apply.
  const shaped = event as unknown as { id?: unknown; type?: unknown; data?: { object?: unknown } } | null;
  if (typeof shaped?.id !== 'string' || typeof shaped.type !== 'string' || typeof shaped.data?.object !== 'object' || shaped.data.object === null) {
    return refusal(400, 'InvalidEvent', 'The body is not a Stripe event: it needs an id, a type and data.object.');
  }
  // Production takes live keys only and sandbox test keys only: an event of the other mode (an
  // endpoint registered in the wrong mode, a secret shared between the two) is not this environment's.
  const livemode = environment.name === 'production';
  if (event.livemode !== livemode) {
    return refusal(400, 'InvalidEvent', `This is a ${event.livemode ? 'live' : 'test'}-mode event; ${environment.name} takes ${livemode ? 'live' : 'test'}-mode events only. Check the endpoint's mode in Stripe's Dashboard.`);
  }
  const job: JobContext = { environment, prisma: environment.prisma, now, logger: logger.child({ stripeEvent: event.id, type: event.type, requestId: request.requestId }) };
  if (await environment.prisma.processorEvent.findUnique({ where: { id: event.id } })) return answer(200, { received: true, duplicate: true });

  const effect = await effectOf(job, processor, event);
  if (effect === 'ignored') return answer(200, { received: true, ignored: true });
  if (effect === null) return refusal(404, 'NotFound', `No payment in this environment matches ${event.type} ${idOf(event.data.object as { id: string }) ?? ''}: nothing was changed.`);
  try {
    await environment.prisma.$transaction(async (tx) => {
      const db = tx as Db;
      await db.processorEvent.create({ data: { id: event.id, type: event.type, createdAt: now() } });
      await effect(db);
    });
  } catch (error) {
    // The same event delivered twice at once: the other delivery applied it.
    if ((error as { code?: string }).code === 'P2002') return answer(200, { received: true, duplicate: true });
    throw error;
  }
  job.logger.info('stripe event applied');
  return answer(200, { received: true });
}

async function effectOf(job: JobContext, processor: StripePaymentProcessor, event: Stripe.Event): Promise<Effect | 'ignored' | null> {
  switch (event.type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed':
    case 'payment_intent.canceled':
      return paymentSettled(job, event.data.object);
    case 'charge.refunded':
      return refundsSettled(job, idOf(event.data.object.payment_intent), null);
    case 'charge.refund.updated':
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed':
      return refundChanged(job, event.data.object);
    case 'charge.dispute.created':
    case 'charge.dispute.updated':
    case 'charge.dispute.closed':
    case 'charge.dispute.funds_withdrawn':
    case 'charge.dispute.funds_reinstated':
      return disputeChanged(job, processor, event.data.object);
    default:
      return 'ignored';
  }
}

/** The payment a PaymentIntent was made for: by the id Kassa put in its metadata, or by its own id. */
async function paymentOf(job: JobContext, intentId: string | undefined, metadata: Stripe.Metadata | null | undefined) {
  const paymentId = metadata?.kassa_payment_id;
  if (paymentId && uuid.test(paymentId)) {
    const payment = await job.prisma.payment.findUnique({ where: { id: paymentId } });
    if (payment && (!payment.processorId || payment.processorId === intentId)) return payment;
  }
  if (!intentId) return null;
  return job.prisma.payment.findFirst({ where: { processorId: intentId } });
}

async function paymentSettled(job: JobContext, intent: Stripe.PaymentIntent): Promise<Effect | 'ignored' | null> {
  const payment = await paymentOf(job, intent.id, intent.metadata);
  if (!payment) return null;
  // Kassa makes a payment's PaymentIntent for its amount in its currency: one for another amount
  // (made elsewhere, naming the payment in its metadata) neither pays nor fails it.
  if (!intentFits(intent, payment)) {
    job.logger.warn({ paymentId: payment.id, paymentIntent: intent.id }, 'a PaymentIntent names a payment it is not for: not applied');
    return null;
  }
  const result = chargeResultOf(intent);
  if (result.status !== 'succeeded' && result.status !== 'failed') return 'ignored';
  return async (db) => {
    const pending = await pendingPayment(db, payment.id);
    // Settled already (by the payment job, reconciliation or an earlier event): nothing to do.
    if (pending) await applyChargeOutcome(job, db, pending, result);
  };
}

/** Refunds of the payment that wait for the bank: their job asks Stripe where they are now. */
async function refundsSettled(job: JobContext, intentId: string | undefined, refundId: string | null): Promise<Effect | null> {
  const payment = intentId ? await job.prisma.payment.findFirst({ where: { processorId: intentId } }) : null;
  if (!payment) return null;
  return async (db) => {
    const pending = await db.refund.findMany({
      where: { orderId: payment.orderId, status: 'pending', ...(refundId && uuid.test(refundId) ? { id: refundId } : {}) },
      select: { id: true },
    });
    for (const refund of pending) await enqueueJob(db, 'refund.process', { refundId: refund.id }, job.now());
  };
}

/**
 * A refund of Kassa's changed at Stripe: one the bank failed after reporting it succeeded is
 * reversed; pending ones are asked about again.
 */
async function refundChanged(job: JobContext, refund: Stripe.Refund): Promise<Effect | null> {
  const refundId = refund.metadata?.kassa_refund_id;
  if (!(refund.status === 'failed' || refund.status === 'canceled') || !refundId || !uuid.test(refundId)) return refundsSettled(job, idOf(refund.payment_intent), refundId ?? null);
  const known = await job.prisma.refund.findUnique({ where: { id: refundId }, select: { status: true, organizationId: true, processorId: true } });
  if (!known) return null;
  if (known.status === 'pending') return refundsSettled(job, idOf(refund.payment_intent), refundId);
  // Only the Stripe refund Kassa recorded for it: another one naming it in its metadata (made
  // outside Kassa, of another charge) is a refund Kassa did not make, and reverses nothing.
  if (known.processorId !== refund.id) return refundsSettled(job, idOf(refund.payment_intent), null);
  return async (db) => {
    const ctx = systemContext(job.environment, db, known.organizationId, job.now, `stripe:${refund.id}`);
    if (await reverseRefund(ctx, db, refundId)) job.logger.warn({ refundId, stripeRefund: refund.id, failureReason: refund.failure_reason }, 'refund failed at the bank after it succeeded: reversed');
  };
}

const disputeStatuses = new Set(['needs_response', 'under_review', 'won', 'lost', 'warning_closed']);

async function disputeChanged(job: JobContext, processor: StripePaymentProcessor, dispute: Stripe.Dispute): Promise<Effect | null> {
  const payment = await paymentOf(job, idOf(dispute.payment_intent), null);
  if (!payment) return null;
  const order = await job.prisma.order.findUnique({ where: { id: payment.orderId }, select: { organizationId: true } });
  if (!order) return null;
  // Stripe's warning_needs_response / warning_under_review are inquiries: open, as far as the merchant goes.
  const status = disputeStatuses.has(dispute.status) ? dispute.status : dispute.status === 'warning_under_review' ? 'under_review' : 'needs_response';
  const closed = status === 'won' || status === 'lost' || status === 'warning_closed';
  return async (db) => {
    const ctx = systemContext(job.environment, db, order.organizationId, job.now, `stripe:${dispute.id}`);
    await applyDispute(ctx, db, {
      orderId: payment.orderId,
      processorId: dispute.id,
      status: status as 'needs_response' | 'under_review' | 'won' | 'lost' | 'warning_closed',
      reason: dispute.reason,
      amount: processor.kassaAmount(dispute.amount, dispute.currency),
      currency: dispute.currency,
      closedAt: closed ? job.now() : null,
    });
  };
}
