// Payments: one row per attempt to charge an order. Every attempt starts here, pending, with its
// payment.charge job enqueued in the same transaction (a checkout's confirm, a renewal, a
// customer's retry from the portal); the job settles it (charge.ts). The organization reads them
// (Core); the customer reads the status of their own order's latest one and may retry a failed
// one with another method.
//
// Invariant: an order has at most one pending payment. Every writer holds the order's row lock
// when it checks for one and creates one (the retry below; the renewal sweep counts in-flight
// payments under its subscription claim), so two charges of one order never run at once.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { PaymentStatus, Prisma } from '../../generated/prisma/client.ts';
import { reach } from '../../auth/reach.ts';
import { KassaError, RequestValidationError, ResourceNotFoundError, ValidationIssues } from '../../graphql/errors.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { sortingOrderBy } from '../../graphql/sorting.ts';
import { enqueueJob } from '../../jobs/runner.ts';
import { organizationFilter } from '../organizations/access.ts';
import { subscriptionEnded } from '../subscriptions/status.ts';
import { unknownPaymentMethod } from './processor.ts';

export const paymentSortProperties = ['created_at', 'status', 'amount', 'method'] as const;

export const paymentAlreadyInProgress = () =>
  new KassaError('A payment of this order is being processed: wait for its outcome before trying again.', 'PAYMENT_ALREADY_IN_PROGRESS', 409, 'PaymentAlreadyInProgress');
export const orderNotEligibleForRetry = (detail = 'This order cannot be paid again.') => new KassaError(detail, 'ORDER_NOT_ELIGIBLE_FOR_RETRY', 422, 'OrderNotEligibleForRetry');

/**
 * Schedules a charge of `order` with `paymentMethod`, in the caller's transaction: a pending
 * payment of the order's total, and the job that charges it once the transaction commits.
 */
export async function chargeOrder(ctx: Context, db: Db, order: { id: string; totalAmount: number; currency: string }, paymentMethod: string) {
  const processor = ctx.environment.paymentProcessor;
  const payment = await db.payment.create({
    data: { orderId: order.id, processor: processor?.name ?? 'none', amount: order.totalAmount, currency: order.currency, paymentMethod },
  });
  await enqueueJob(db, 'payment.charge', { paymentId: payment.id }, ctx.now());
  return payment;
}

// ---- How a payment reads ----

/** The kind of method: every token Kassa charges is a card's; a free order's payment charged none. */
export function paymentMethodKind(paymentMethod: string): 'card' | 'none' {
  return paymentMethod === 'none' ? 'none' : 'card';
}

const declineMessages: Record<string, string> = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  incorrect_cvc: "The card's security code is incorrect.",
  processing_error: 'An error occurred while processing the card. Try again later.',
  authentication_required: 'The bank asks the cardholder to authenticate this payment.',
  authentication_abandoned: 'The cardholder did not finish authenticating the payment.',
  canceled: 'The payment was canceled.',
  subscription_ended: 'The subscription had ended: nothing was charged.',
};

/** What a decline reason means, in a sentence for the buyer; null for no decline. */
export function declineMessage(reason: string | null): string | null {
  if (!reason) return null;
  return declineMessages[reason] ?? 'The payment was declined.';
}

// ---- Core: the organization's payments ----

export interface PaymentListArgs extends PageArgs {
  organizationId?: string[] | null;
  checkoutId?: string[] | null;
  orderId?: string[] | null;
  status?: PaymentStatus[] | null;
  method?: string[] | null;
  customerEmail?: string[] | null;
  sorting?: string[] | null;
}

function methodWhere(methods: string[]): Prisma.PaymentWhereInput {
  const kinds: Prisma.PaymentWhereInput[] = [];
  if (methods.includes('card')) kinds.push({ paymentMethod: { not: 'none' } });
  if (methods.includes('none')) kinds.push({ paymentMethod: 'none' });
  return { OR: kinds };
}

export async function listPayments(ctx: Context, args: PaymentListArgs, query: object) {
  const where: Prisma.PaymentWhereInput = {
    AND: [
      { order: { organizationId: organizationFilter(ctx, args.organizationId) } },
      args.checkoutId?.length ? { order: { checkoutId: { in: args.checkoutId } } } : {},
      args.orderId?.length ? { orderId: { in: args.orderId } } : {},
      args.status?.length ? { status: { in: args.status } } : {},
      args.method?.length ? methodWhere(args.method) : {},
      args.customerEmail?.length ? { OR: args.customerEmail.map((email) => ({ order: { customer: { email: { equals: email, mode: 'insensitive' as const } } } })) } : {},
    ],
  };
  const orderBy = sortingOrderBy<(typeof paymentSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-created_at'], (property, sort) => {
    switch (property) {
      case 'created_at':
        return { createdAt: sort };
      case 'status':
        return { status: sort };
      case 'amount':
        return { amount: sort };
      case 'method':
        return { paymentMethod: sort };
    }
  });
  const [items, total] = await Promise.all([
    ctx.prisma.payment.findMany({ ...query, where, orderBy: orderBy as Prisma.PaymentOrderByWithRelationInput[], ...pageWindow(args) }),
    ctx.prisma.payment.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getPayment(ctx: Context, id: string, query: object) {
  const payment = await ctx.prisma.payment.findFirst({ ...query, where: { id, order: { organizationId: organizationFilter(ctx) } } });
  if (!payment) throw new ResourceNotFoundError('Payment not found.');
  return payment;
}

// ---- The Customer Portal: the payment of the customer's own order ----

/** Where the payment of the customer's order stands: its latest attempt, with the decline in words. */
export async function orderPaymentStatus(ctx: Context, orderId: string) {
  const order = await ctx.prisma.order.findFirst({
    where: { AND: [reach(ctx).order, { id: orderId }] },
    include: { payments: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: { status: true, declineReason: true } } },
  });
  if (!order) throw new ResourceNotFoundError('Order not found.');
  // An order is paid once and a retry starts only when nothing is in flight, so a success or a
  // pending payment outranks any failure: payments made within one millisecond (or at one frozen
  // test-clock instant) share their creation time and cannot be told apart by it.
  const outcome = order.payments.find((p) => p.status === 'succeeded') ?? order.payments.find((p) => p.status === 'pending') ?? order.payments[0];
  if (!outcome) return { status: order.paid ? 'succeeded' : 'pending', error: null };
  // Only a failed payment has a decline reason (charge.ts records one on failure alone).
  return { status: outcome.status, error: declineMessage(outcome.declineReason) };
}

export interface OrderPaymentConfirmInput {
  confirmationTokenId?: string | null;
  paymentMethodId?: string | null;
}

/** Refuses a saved method that is not on the processor's record of the order's customer, before anything is written. */
async function checkSavedMethodOfCustomer(ctx: Context, orderId: string, paymentMethodId: string) {
  const order = await ctx.prisma.order.findFirst({ where: { AND: [reach(ctx).order, { id: orderId }] }, select: { customer: { select: { processorCustomerId: true } } } });
  if (!order) throw new ResourceNotFoundError('Order not found.');
  let problem: string | null;
  try {
    problem = await ctx.environment.paymentProcessor!.checkRenewalMethod!(paymentMethodId, order.customer.processorCustomerId);
  } catch {
    throw new KassaError('The payment processor could not be reached: nothing was charged. Try again in a moment.', 'PAYMENT_PROCESSOR_UNAVAILABLE', 503, 'PaymentProcessorUnavailable');
  }
  if (problem) throw RequestValidationError.at(['input', 'paymentMethodId'], 'Unknown payment method: it is not one of your saved payment methods.');
}

/**
 * The customer pays their unpaid order again with another method: a new pending payment, charged
 * by the payment job like any other. Refused, with nothing written, when the order is paid or
 * refunded, when its subscription has ended (the charge would not be made), or while a payment of
 * it is still pending.
 */
export async function retryOrderPayment(ctx: Context, orderId: string, input: OrderPaymentConfirmInput) {
  const processor = ctx.environment.paymentProcessor;
  const paymentMethod = input.confirmationTokenId ?? input.paymentMethodId ?? null;
  const issues = new ValidationIssues();
  if (!paymentMethod) issues.add(['input', 'confirmationTokenId'], 'Field required: a confirmation token or a saved payment method id', 'missing');
  else if (input.confirmationTokenId && input.paymentMethodId) issues.add(['input', 'paymentMethodId'], 'Give either a confirmation token or a saved payment method id, not both.');
  else if (processor && !processor.acceptsPaymentMethod(paymentMethod)) {
    issues.add(['input', input.confirmationTokenId ? 'confirmationTokenId' : 'paymentMethodId'], processor.checkPaymentMethod ? 'Unknown payment method: pass a ConfirmationToken (ctoken_…) or a saved PaymentMethod (pm_…).' : unknownPaymentMethod);
  }
  issues.throwIfAny();
  // Asked before the transaction: the processor is across the network. Its tokens are single-use.
  const tokenProblem = input.confirmationTokenId && processor?.checkPaymentMethod ? await processor.checkPaymentMethod(input.confirmationTokenId) : null;
  if (tokenProblem) throw RequestValidationError.at(['input', 'confirmationTokenId'], tokenProblem);
  if (!processor) throw orderNotEligibleForRetry('No payment processor is configured for this environment.');
  // A saved method must be one of the order's customer's own: another customer's card is not theirs to charge.
  if (input.paymentMethodId && processor.checkRenewalMethod) await checkSavedMethodOfCustomer(ctx, orderId, input.paymentMethodId);

  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await db.$queryRaw`SELECT id FROM orders WHERE id = ${orderId}::uuid FOR UPDATE`;
    const order = await db.order.findFirst({ where: { AND: [reach(ctx).order, { id: orderId }] }, include: { subscription: true } });
    if (!order) throw new ResourceNotFoundError('Order not found.');
    // Unpaid exactly while pending: a charge marks it paid, and refunds only ever follow that.
    if (order.status !== 'pending') throw orderNotEligibleForRetry(`This order is ${order.status}: there is nothing left to pay.`);
    if (order.subscription && subscriptionEnded(order.subscription)) throw orderNotEligibleForRetry('The subscription this order bills has ended: it is no longer charged.');
    if ((await db.payment.count({ where: { orderId, status: 'pending' } })) > 0) throw paymentAlreadyInProgress();
    // A processor's one-time tokens (those it checks) are spent by the payment that took them.
    if (input.confirmationTokenId && processor.checkPaymentMethod && (await db.payment.count({ where: { paymentMethod: input.confirmationTokenId } })) > 0) {
      throw RequestValidationError.at(['input', 'confirmationTokenId'], 'This confirmation token was used already: make a new one.');
    }
    await chargeOrder(ctx, db, order, paymentMethod!);
    return { status: 'pending', clientSecret: null, error: null };
  });
}
