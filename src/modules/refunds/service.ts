// Refunds. Creating one locks the order, checks what remains refundable, reserves the amount on
// the order and records order.updated, order.refunded and refund.created in one transaction; the
// processor is called by the refund job. Concurrent refunds therefore never return more than the
// order's net amount.
import type { Context } from '../../context.ts';
import { systemContext } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Order, Prisma, RefundReason } from '../../generated/prisma/client.ts';
import { recordEvents } from '../../events/outbox.ts';
import { KassaError, RequestValidationError, ResourceNotFoundError, ValidationIssues } from '../../graphql/errors.ts';
import type { Metadata } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { sortingOrderBy } from '../../graphql/sorting.ts';
import { enqueueJob, job } from '../../jobs/runner.ts';
import { organizationFilter } from '../organizations/access.ts';
import { recordOrderEvents } from '../orders/events.ts';
import { scheduleGrantSync } from '../benefits/grants.ts';

export const refundSortProperties = ['created_at', 'amount'] as const;
const refundResource = 'refund';

export const refundAmountTooHigh = (refundable: number) =>
  new KassaError(`The refund amount exceeds what remains refundable on this order (${refundable}).`, 'REFUND_AMOUNT_TOO_HIGH', 400, 'RefundAmountTooHigh');
export const refundedAlready = () => new KassaError('This order is fully refunded already.', 'REFUNDED_ALREADY', 403, 'RefundedAlready');

export interface RefundCreateInput {
  orderId: string;
  reason: RefundReason;
  amount: number;
  comment?: string | null;
  revokeBenefits?: boolean | null;
  metadata?: Metadata | null;
}

export interface RefundListArgs extends PageArgs {
  id?: string[] | null;
  organizationId?: string[] | null;
  orderId?: string[] | null;
  customerId?: string[] | null;
  succeeded?: boolean | null;
  sorting?: string[] | null;
}

/** The order's status for what has been refunded of it. */
function refundStatus(order: { netAmount: number }, refundedAmount: number) {
  return refundedAmount === 0 ? 'paid' : refundedAmount >= order.netAmount ? 'refunded' : 'partially_refunded';
}

export async function createRefund(ctx: Context, input: RefundCreateInput, query: object) {
  const issues = new ValidationIssues();
  if (!Number.isInteger(input.amount) || input.amount < 1) issues.add(['input', 'amount'], 'Input should be greater than or equal to 1', 'greater_than_equal');
  if (input.comment && input.comment.length > 1000) issues.add(['input', 'comment'], 'String should have at most 1000 characters', 'string_too_long');
  issues.throwIfAny();
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await db.$queryRaw`SELECT id FROM orders WHERE id = ${input.orderId}::uuid FOR UPDATE`;
    const order = await db.order.findFirst({ where: { id: input.orderId, organizationId: organizationFilter(ctx) } });
    if (!order) throw RequestValidationError.at(['input', 'orderId'], 'Order not found.');
    if (!order.paid) throw RequestValidationError.at(['input', 'orderId'], 'This order is not paid: there is nothing to refund.');
    if (order.netAmount === 0) throw RequestValidationError.at(['input', 'orderId'], 'This order was free: there is nothing to refund.');
    if (input.revokeBenefits && order.billingReason !== 'purchase') {
      throw RequestValidationError.at(['input', 'revokeBenefits'], 'The benefits of a subscription end with it: revoke the subscription instead (DELETE /v1/subscriptions/{id}).');
    }
    const refund = await refundOrder(ctx, db, order, input);
    return db.refund.findUniqueOrThrow({ ...query, where: { id: refund.id } });
  });
}

/**
 * Refunds `amount` of a paid order, in the caller's transaction, which holds the order's row lock:
 * checks what remains refundable, reserves the amount on the order, records order.updated,
 * order.refunded and refund.created, and schedules the processor's refund.
 */
export async function refundOrder(ctx: Context, db: Db, order: Order, input: Omit<RefundCreateInput, 'orderId'>) {
  const refundable = order.netAmount - order.refundedAmount;
  if (refundable <= 0) throw refundedAlready();
  if (input.amount > refundable) throw refundAmountTooHigh(refundable);
  // Tax is returned in proportion; the last refund takes whatever tax remains, so none is lost to rounding.
  const taxAmount =
    input.amount === refundable ? order.taxAmount - order.refundedTaxAmount : Math.floor((input.amount * order.taxAmount) / order.netAmount);
  const refund = await db.refund.create({
    data: {
      organizationId: order.organizationId,
      orderId: order.id,
      customerId: order.customerId,
      reason: input.reason,
      amount: input.amount,
      taxAmount,
      currency: order.currency,
      comment: input.comment ?? null,
      revokeBenefits: input.revokeBenefits ?? false,
      metadata: input.metadata ?? {},
      createdAt: ctx.now(),
    },
  });
  const refundedAmount = order.refundedAmount + input.amount;
  await db.order.update({
    where: { id: order.id },
    data: { refundedAmount, refundedTaxAmount: order.refundedTaxAmount + taxAmount, status: refundStatus(order, refundedAmount) },
  });
  await recordOrderEvents(ctx, db, ['order.updated', 'order.refunded'], order);
  await recordEvents(ctx, db, ['refund.created'], { organizationId: order.organizationId, resourceId: refund.id, resource: refundResource });
  await enqueueJob(db, 'refund.process', { refundId: refund.id }, ctx.now());
  if (refund.revokeBenefits) await scheduleGrantSync(ctx, db, { orderId: order.id });
  return refund;
}

export async function getRefund(ctx: Context, id: string, query: object) {
  const refund = await ctx.prisma.refund.findFirst({ ...query, where: { id, organizationId: organizationFilter(ctx) } });
  if (!refund) throw new ResourceNotFoundError('Refund not found.');
  return refund;
}

export async function listRefunds(ctx: Context, args: RefundListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.RefundWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.id?.length ? { id: { in: args.id } } : {}),
    ...(args.orderId?.length ? { orderId: { in: args.orderId } } : {}),
    ...(args.customerId?.length ? { customerId: { in: args.customerId } } : {}),
    ...(args.succeeded != null ? { status: args.succeeded ? 'succeeded' : { not: 'succeeded' } } : {}),
  };
  const orderBy = sortingOrderBy<(typeof refundSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-created_at'], (property, sort) =>
    property === 'created_at' ? { createdAt: sort } : { amount: sort },
  );
  const [items, total] = await Promise.all([
    ctx.prisma.refund.findMany({ ...query, where, orderBy: orderBy as Prisma.RefundOrderByWithRelationInput[], ...window }),
    ctx.prisma.refund.count({ where }),
  ]);
  return toPage(items, total, args);
}

// Returns the money through the processor. A refund the processor refuses gives its amount back
// to the order's refundable balance.
export const refundJob = job<{ refundId: string }>(
  'refund.process',
  async ({ refundId }, job) => {
    const refund = await job.prisma.refund.findUnique({ where: { id: refundId } });
    if (!refund || refund.status !== 'pending') return;
    const payment = await job.prisma.payment.findFirst({ where: { orderId: refund.orderId, status: 'succeeded' } });
    const processor = job.environment.paymentProcessor;
    if (!processor) throw new Error('No payment processor is configured for this environment.');
    const result = payment
      ? await processor.refund({ refundId, chargeId: payment.processorId ?? payment.id, amount: refund.amount, currency: refund.currency, paymentMethod: payment.paymentMethod })
      : { status: 'succeeded' as const, processorId: 'nothing-charged' };
    await job.prisma.$transaction(async (tx) => {
      const db = tx as Db;
      await db.$queryRaw`SELECT id FROM orders WHERE id = ${refund.orderId}::uuid FOR UPDATE`;
      const { count } = await db.refund.updateMany({ where: { id: refundId, status: 'pending' }, data: { status: result.status, processorId: result.processorId } });
      if (count === 0 || result.status === 'succeeded') return;
      const order = await db.order.findUniqueOrThrow({ where: { id: refund.orderId } });
      const refundedAmount = order.refundedAmount - refund.amount;
      await db.order.update({
        where: { id: order.id },
        data: { refundedAmount, refundedTaxAmount: order.refundedTaxAmount - refund.taxAmount, status: refundStatus(order, refundedAmount) },
      });
      const ctx = systemContext(job.environment, db, order.organizationId, job.now, `refund:${refundId}`);
      await recordOrderEvents(ctx, db, ['order.updated'], order);
      if (refund.revokeBenefits) await scheduleGrantSync(ctx, db, { orderId: order.id });
    });
  },
  { maxAttempts: 8 },
);
