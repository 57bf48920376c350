// Subscriptions. A checkout of a recurring product makes an `incomplete` subscription with its
// first order; paying that order makes it `active`. Each period is billed up front: once a period
// ends, the renewal sweep creates the next period's order (`subscription_cycle`) and charges it.
// Paid, the period advances; declined, the subscription is `past_due` and the charge is retried on
// a schedule, after which it ends. Canceling at period end lets the paid period run out; revoking
// ends it now. Every transition writes its events in its own transaction and schedules the grant
// sync, which grants or revokes the product's benefits.
import { addInterval } from '../../calendar.ts';
import { systemContext, type Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { reach } from '../../auth/reach.ts';
import type { Customer, CustomerCancellationReason, Order, Prisma, RecurringInterval, Subscription } from '../../generated/prisma/client.ts';
import { recordEvents, type EventType } from '../../events/outbox.ts';
import { KassaError, RequestValidationError, ResourceNotFoundError } from '../../graphql/errors.ts';
import { metadataWhere } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { sweep, type JobContext } from '../../jobs/runner.ts';
import { organizationFilter } from '../organizations/access.ts';
import { subscriptionSettingsOf } from '../organizations/service.ts';
import { recordOrderEvents } from '../orders/events.ts';
import { recordCustomerStateChanged, scheduleGrantSync } from '../benefits/grants.ts';
import { unknownPaymentMethod } from '../payments/processor.ts';
import { chargeOrder } from '../payments/service.ts';
import { subscriptionEnded } from './status.ts';
import { discountAppliesToPeriod, discountedAmounts } from '../discounts/amounts.ts';
import { redeemDiscountForSubscription } from '../discounts/service.ts';
import { billPeriodUsage } from './metered.ts';

export const subscriptionSortProperties = ['customer', 'status', 'started_at', 'current_period_end', 'amount', 'product', 'discount'] as const;

/**
 * After a declined renewal, the charge is tried again this long after each failure; when the last
 * retry fails too, the subscription is canceled and its benefits revoked.
 */
export const renewalRetryDelaysMs = [1, 3, 5, 7].map((days) => days * 86_400_000);

export const alreadyCanceled = (detail = 'This subscription is already canceled or will be at the end of its period.') =>
  new KassaError(detail, 'ALREADY_CANCELED_SUBSCRIPTION', 403, 'AlreadyCanceledSubscription');
export const subscriptionLocked = (detail: string) => new KassaError(detail, 'SUBSCRIPTION_LOCKED', 409, 'SubscriptionLocked');

/** The end of period number `cycle` (from 0) of a subscription anchored at `anchor`. */
const periodEnd = (anchor: Date, interval: RecurringInterval, cycle: number) => addInterval(anchor, interval, cycle + 1);

async function record(ctx: Context, db: Db, types: EventType[], subscription: { id: string; organizationId: string }) {
  await recordEvents(ctx, db, types, { organizationId: subscription.organizationId, resourceId: subscription.id, resource: 'subscription' });
}

/** The subscription, locked for a change, if the principal reaches it: Core its organizations', a customer its own. */
async function lockSubscription(ctx: Context, db: Db, id: string): Promise<Subscription> {
  await db.$executeRaw`SELECT id FROM subscriptions WHERE id = ${id}::uuid FOR UPDATE`;
  const subscription = await db.subscription.findFirst({ where: { AND: [reach(ctx).subscription, { id }] } });
  if (!subscription) throw new ResourceNotFoundError('Subscription not found.');
  return subscription;
}

export { subscriptionEnded };

// ---------------------------------------------------------------------------------------------
// Creation and the outcome of charges

/** Called by a checkout confirm for a recurring product, in its transaction: the subscription its first order pays for. */
export async function startSubscription(
  ctx: Context,
  db: Db,
  checkout: { id: string; organizationId: string; productId: string; productPriceId: string; amount: number; currency: string; discountId: string | null; metadata: unknown; customFieldData: unknown },
  customerId: string,
  paymentMethod: string,
): Promise<Subscription> {
  const product = await db.product.findUniqueOrThrow({ where: { id: checkout.productId } });
  const interval = product.recurringInterval ?? 'month';
  // The product's metered prices come with the static price bought: they bill each period's usage from the first renewal on.
  const metered = await db.productPrice.findMany({ where: { productId: product.id, isArchived: false, amountType: 'metered_unit' }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }], select: { id: true } });
  const start = ctx.now();
  const subscription = await db.subscription.create({
    data: {
      organizationId: checkout.organizationId,
      customerId,
      productId: product.id,
      checkoutId: checkout.id,
      discountId: checkout.discountId,
      status: 'incomplete',
      amount: checkout.amount,
      currency: checkout.currency,
      recurringInterval: interval,
      currentPeriodStart: start,
      currentPeriodEnd: periodEnd(start, interval, 0),
      paymentMethod,
      metadata: (checkout.metadata ?? {}) as object,
      customFieldData: (checkout.customFieldData ?? {}) as object,
      createdAt: start,
      prices: { create: [{ productPriceId: checkout.productPriceId }, ...metered.map((p, i) => ({ productPriceId: p.id, position: i + 1 }))] },
    },
  });
  await record(ctx, db, ['subscription.created'], subscription);
  return subscription;
}

/** The payment of a subscription's order succeeded or failed; called by the payment job in its transaction. */
export async function settleSubscriptionOrder(ctx: Context, db: Db, order: Order, outcome: 'succeeded' | 'failed'): Promise<void> {
  if (!order.subscriptionId) return;
  await db.$executeRaw`SELECT id FROM subscriptions WHERE id = ${order.subscriptionId}::uuid FOR UPDATE`;
  const subscription = await db.subscription.findUniqueOrThrow({ where: { id: order.subscriptionId } });
  if (order.billingReason === 'subscription_create') {
    if (subscription.status !== 'incomplete') return;
    if (outcome === 'succeeded') {
      await db.subscription.update({ where: { id: subscription.id }, data: { status: 'active', startedAt: subscription.currentPeriodStart } });
      await recordEntitlementChange(ctx, db, subscription, ['subscription.updated', 'subscription.active']);
    } else if (!order.checkoutId) {
      await expireIncomplete(ctx, db, subscription);
    }
    // A checkout's buyer may try another card (checkouts/retry.ts): it stays incomplete for
    // incompleteWindowMs, then expireIncompleteSubscriptions ends it.
    return;
  }
  if (order.billingReason !== 'subscription_cycle' || subscriptionEnded(subscription)) return;
  if (order.billingPeriodStart?.getTime() !== subscription.currentPeriodEnd.getTime()) return;
  if (outcome === 'succeeded') {
    const cycles = subscription.cycles + 1;
    const anchor = subscription.startedAt ?? subscription.createdAt;
    await db.subscription.update({
      where: { id: subscription.id },
      data: {
        status: 'active',
        cycles,
        currentPeriodStart: subscription.currentPeriodEnd,
        currentPeriodEnd: periodEnd(anchor, subscription.recurringInterval, cycles),
        failedAttempts: 0,
        retryAt: null,
      },
    });
    if (subscription.status === 'past_due') await recordEntitlementChange(ctx, db, subscription, ['subscription.updated', 'subscription.active']);
    else await record(ctx, db, ['subscription.updated'], subscription);
    return;
  }
  const failedAttempts = subscription.failedAttempts + 1;
  if (failedAttempts <= renewalRetryDelaysMs.length) {
    await db.subscription.update({
      where: { id: subscription.id },
      data: { status: 'past_due', failedAttempts, retryAt: new Date(ctx.now().getTime() + renewalRetryDelaysMs[failedAttempts - 1]) },
    });
    await record(ctx, db, ['subscription.updated'], subscription);
    if (subscription.status === 'active') await recordCustomerStateChanged(ctx, db, subscription);
    await scheduleGrantSync(ctx, db, { subscriptionId: subscription.id });
    return;
  }
  await db.subscription.update({
    where: { id: subscription.id },
    data: { status: 'canceled', failedAttempts, retryAt: null, canceledAt: subscription.canceledAt ?? ctx.now(), endsAt: ctx.now(), endedAt: ctx.now(), cancelAtPeriodEnd: false },
  });
  await recordEntitlementChange(ctx, db, subscription, ['subscription.updated', 'subscription.canceled', 'subscription.revoked']);
}

/** A change to what the subscription entitles to: its events, the customer's new state, and the grant sync. */
async function recordEntitlementChange(ctx: Context, db: Db, subscription: Subscription, types: EventType[]) {
  await record(ctx, db, types, subscription);
  await recordCustomerStateChanged(ctx, db, subscription);
  await scheduleGrantSync(ctx, db, { subscriptionId: subscription.id });
}

// ---------------------------------------------------------------------------------------------
// The renewal scheduler

/**
 * The discount the order for the period after the current one gets: the subscription's, while its
 * duration covers that period (counted from the subscription's first period), and, for a fixed
 * discount, only in its own currency. A discount deleted since still applies: it was sold with it.
 */
async function renewalDiscount(db: Db, subscription: Subscription) {
  if (!subscription.discountId) return null;
  const discount = await db.discount.findUniqueOrThrow({ where: { id: subscription.discountId } });
  const firstPeriodStart = subscription.discountStartsAt ?? subscription.startedAt ?? subscription.createdAt;
  if (!discountAppliesToPeriod(discount, firstPeriodStart, subscription.currentPeriodEnd)) return null;
  if (discount.type === 'fixed' && discount.currency !== subscription.currency) return null;
  return discount;
}

/** What every order of a subscription's billing cycle carries: its customer's billing details, the subscription, the period it is for. */
function cycleOrderFields(ctx: Context, subscription: Subscription, customer: Pick<Customer, 'name' | 'billingAddress'>) {
  return {
    currency: subscription.currency,
    billingReason: 'subscription_cycle' as const,
    billingName: customer.name,
    billingAddress: customer.billingAddress ?? undefined,
    customerId: subscription.customerId,
    productId: subscription.productId,
    subscriptionId: subscription.id,
    billingPeriodStart: subscription.currentPeriodEnd,
    createdAt: ctx.now(),
  };
}

/**
 * The order for the period after the current one, charged to the subscription's payment method:
 * the base price up front for the new period, and the metered prices' usage of the period that
 * just ended, in arrears (metered.ts).
 */
async function createRenewalOrder(ctx: Context, db: Db, subscription: Subscription, batch: RenewalBatch) {
  const { customer, product, prices: allPrices, pending } = batch.of(subscription);
  const prices = allPrices.filter((p) => p.productPrice.amountType !== 'metered_unit');
  // Fixed prices bill their amount; a pay-what-you-want price bills what the buyer chose, the rest of the subscription's amount.
  const fixed = prices.reduce((total, p) => total + (p.productPrice.amountType === 'custom' ? 0 : (p.productPrice.priceAmount ?? 0)), 0);
  const priceAmount = (p: (typeof prices)[number]) => (p.productPrice.amountType === 'custom' ? subscription.amount - fixed : (p.productPrice.priceAmount ?? 0));
  const usage = await billPeriodUsage(ctx, db, subscription, { start: subscription.currentPeriodStart, end: subscription.currentPeriodEnd }, false, { customer, prices: allPrices });
  const items = [
    ...prices.map((p) => ({ label: product.name, amount: priceAmount(p), productPriceId: p.productPriceId, proration: false })),
    ...usage.items,
    ...pending.map((p) => ({ label: p.label, amount: p.amount, productPriceId: p.productPriceId, proration: p.proration })),
  ].map((item, position) => ({ ...item, position }));
  const sum = items.reduce((total, item) => total + item.amount, 0);
  // A credit larger than the period's price is carried to the next order rather than lost.
  const carried = Math.min(sum, 0);
  const subtotal = sum - carried;
  const discount = await renewalDiscount(db, subscription);
  const { discountAmount, netAmount, totalAmount } = discountedAmounts(discount, subtotal);
  const order = await db.order.create({
    data: {
      organizationId: subscription.organizationId,
      subtotalAmount: subtotal,
      discountId: discount?.id ?? null,
      discountAmount,
      netAmount,
      totalAmount,
      ...cycleOrderFields(ctx, subscription, customer),
      items: { create: [...items, ...(carried < 0 ? [{ label: 'Credit carried to the next period', amount: -carried, proration: true, position: items.length }] : [])] },
    },
  });
  if (pending.length) await db.subscriptionPendingItem.updateMany({ where: { id: { in: pending.map((p) => p.id) } }, data: { orderId: order.id } });
  if (carried < 0) await db.subscriptionPendingItem.create({ data: { subscriptionId: subscription.id, label: 'Credit from the previous period', amount: carried, createdAt: ctx.now() } });
  await usage.record(order.id);
  await recordOrderEvents(ctx, db, ['order.created'], order);
  return order;
}

/**
 * A subscription canceled at period end owes the usage of its last period, billed in arrears like
 * every period's: a final order of its metered items alone, charged though the subscription has
 * ended (payments ask billsFinalUsage). Nothing is ordered when the usage comes to nothing, and a
 * past-due subscription's last period was billed already by its unpaid renewal.
 */
async function createFinalUsageOrder(ctx: Context, db: Db, subscription: Subscription) {
  if (subscription.status !== 'active') return null;
  const usage = await billPeriodUsage(ctx, db, subscription, { start: subscription.currentPeriodStart, end: subscription.currentPeriodEnd }, true);
  const { items } = usage;
  const subtotal = items.reduce((total, item) => total + item.amount, 0);
  if (subtotal === 0) {
    await usage.record(null);
    return null;
  }
  const customer = await db.customer.findUniqueOrThrow({ where: { id: subscription.customerId } });
  const order = await db.order.create({
    data: {
      organizationId: subscription.organizationId,
      subtotalAmount: subtotal,
      netAmount: subtotal,
      totalAmount: subtotal,
      ...cycleOrderFields(ctx, subscription, customer),
      items: { create: items.map((item, position) => ({ ...item, position })) },
    },
  });
  await usage.record(order.id);
  await recordOrderEvents(ctx, db, ['order.created'], order);
  return order;
}

/**
 * What the renewals of a claimed batch read, in one statement each for the whole batch rather than
 * per subscription: customers, products, prices and pending items. Read after the claim, and a
 * renewal changes none of them for another subscription of the batch.
 */
async function readRenewalBatch(db: Db, subscriptions: Subscription[]) {
  const ids = subscriptions.map((s) => s.id);
  const any = ids.length > 0;
  const customers = any ? await db.customer.findMany({ where: { id: { in: [...new Set(subscriptions.map((s) => s.customerId))] } } }) : [];
  const products = any ? await db.product.findMany({ where: { id: { in: [...new Set(subscriptions.map((s) => s.productId))] } } }) : [];
  const prices = any ? await db.subscriptionPrice.findMany({ where: { subscriptionId: { in: ids } }, include: { productPrice: true }, orderBy: { position: 'asc' } }) : [];
  const pending = any ? await db.subscriptionPendingItem.findMany({ where: { subscriptionId: { in: ids }, orderId: null }, orderBy: { createdAt: 'asc' } }) : [];
  return {
    of: (subscription: Subscription) => ({
      customer: customers.find((c) => c.id === subscription.customerId)!,
      product: products.find((p) => p.id === subscription.productId)!,
      prices: prices.filter((p) => p.subscriptionId === subscription.id),
      pending: pending.filter((p) => p.subscriptionId === subscription.id),
    }),
  };
}
type RenewalBatch = Awaited<ReturnType<typeof readRenewalBatch>>;

/**
 * One pass of the scheduler. Due subscriptions are claimed with FOR UPDATE SKIP LOCKED, so
 * schedulers in several processes never work on the same one at once; the claim is re-read in a
 * new statement, and (subscription, period start) is unique on orders, so a period is billed once.
 */
export async function renewSubscriptions(job: JobContext): Promise<void> {
  for (;;) {
    const worked = await job.prisma.$transaction(async (tx) => {
      const db = tx as Db;
      const now = job.now();
      // An active subscription whose next period is billed already waits for that payment, not for the scheduler.
      const due = await db.$queryRaw<{ id: string }[]>`
        SELECT s.id FROM subscriptions s
        WHERE (s.status = 'active' AND s.current_period_end <= ${now}
               AND (s.cancel_at_period_end OR NOT EXISTS (
                 SELECT 1 FROM orders o WHERE o.subscription_id = s.id AND o.billing_period_start = s.current_period_end)))
           OR (s.status = 'past_due' AND (s.retry_at <= ${now} OR (s.cancel_at_period_end AND s.current_period_end <= ${now})))
        ORDER BY s.current_period_end LIMIT 20 FOR UPDATE OF s SKIP LOCKED`;
      if (!due.length) return 0;
      // The batch's subscriptions and their next periods' orders, read once for the batch.
      const subscriptions = await db.subscription.findMany({ where: { id: { in: due.map((d) => d.id) } } });
      const nextOrders = await db.order.findMany({ where: { OR: subscriptions.map((s) => ({ subscriptionId: s.id, billingPeriodStart: s.currentPeriodEnd })) } });
      const renewing = subscriptions.filter((s) => s.status === 'active' && !s.cancelAtPeriodEnd && !nextOrders.some((o) => o.subscriptionId === s.id));
      const batch = await readRenewalBatch(db, renewing);
      for (const { id } of due) {
        const subscription = subscriptions.find((s) => s.id === id)!;
        const ctx = systemContext(job.environment, db, subscription.organizationId, job.now, `subscription:${id}`);
        if (subscription.cancelAtPeriodEnd) {
          const final = await createFinalUsageOrder(ctx, db, subscription);
          await db.subscription.update({ where: { id }, data: { status: 'canceled', endedAt: subscription.currentPeriodEnd, retryAt: null } });
          await recordEntitlementChange(ctx, db, subscription, ['subscription.updated', 'subscription.revoked']);
          if (final) await chargeOrder(ctx, db, final, subscription.paymentMethod);
          continue;
        }
        const billed = nextOrders.find((o) => o.subscriptionId === id) ?? null;
        if (subscription.status === 'active' && !billed) {
          await chargeOrder(ctx, db, await createRenewalOrder(ctx, db, subscription, batch), subscription.paymentMethod);
        } else if (subscription.status === 'past_due' && billed && !billed.paid) {
          await db.subscription.update({ where: { id }, data: { retryAt: null } });
          // One attempt at a time: a second payment in flight could charge the period twice.
          const inFlight = await db.payment.count({ where: { orderId: billed.id, status: 'pending' } });
          if (inFlight === 0) await chargeOrder(ctx, db, billed, subscription.paymentMethod);
        }
      }
      return due.length;
    });
    // A full batch may mean more are due; a later pass that finds only what is in flight stops here.
    if (worked < 20) return;
  }
}

export const renewalSweep = sweep('subscriptions.renew', renewSubscriptions);

/** How long a subscription whose first payment was declined waits for its buyer to try another card, as Stripe's 23 hours. */
export const incompleteWindowMs = 23 * 3600_000;

async function expireIncomplete(ctx: Context, db: Db, subscription: Subscription) {
  await db.subscription.update({ where: { id: subscription.id }, data: { status: 'incomplete_expired', endedAt: ctx.now() } });
  await record(ctx, db, ['subscription.updated'], subscription);
}

/**
 * Ends subscriptions still incomplete incompleteWindowMs after they were created, with no payment
 * in flight: their buyer did not pay. Claimed as the renewal sweep claims, so two runners end each once.
 */
export async function expireIncompleteSubscriptions(job: JobContext): Promise<void> {
  await job.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const due = await db.$queryRaw<{ id: string }[]>`
      SELECT s.id FROM subscriptions s
      WHERE s.status = 'incomplete' AND s.created_at <= ${new Date(job.now().getTime() - incompleteWindowMs)}
        AND NOT EXISTS (SELECT 1 FROM orders o JOIN payments p ON p.order_id = o.id WHERE o.subscription_id = s.id AND p.status = 'pending')
      ORDER BY s.created_at LIMIT 100 FOR UPDATE OF s SKIP LOCKED`;
    for (const { id } of due) {
      const subscription = await db.subscription.findUniqueOrThrow({ where: { id } });
      await expireIncomplete(systemContext(job.environment, db, subscription.organizationId, job.now, `subscription:${id}`), db, subscription);
    }
  });
}

export const incompleteExpirySweep = sweep('subscriptions.expire-incomplete', expireIncompleteSubscriptions);

// ---------------------------------------------------------------------------------------------
// Reading

export interface SubscriptionListArgs extends PageArgs {
  organizationId?: string[] | null;
  productId?: string[] | null;
  customerId?: string[] | null;
  externalCustomerId?: string[] | null;
  discountId?: string[] | null;
  active?: boolean | null;
  metadata?: Record<string, unknown> | null;
  sorting?: string[] | null;
}

/** Subscriptions the `active` filter means: paid up, in trial, or past due while the renewal is retried. */
export const liveSubscription: Prisma.SubscriptionWhereInput = { status: { in: ['active', 'trialing', 'past_due'] } };

export async function listSubscriptions(ctx: Context, args: SubscriptionListArgs, query: object) {
  const where: Prisma.SubscriptionWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.productId?.length ? { productId: { in: args.productId } } : {}),
    ...(args.customerId?.length ? { customerId: { in: args.customerId } } : {}),
    ...(args.externalCustomerId?.length ? { customer: { externalId: { in: args.externalCustomerId } } } : {}),
    ...(args.discountId?.length ? { discountId: { in: args.discountId } } : {}),
    ...(args.active == null ? {} : args.active ? liveSubscription : { NOT: liveSubscription }),
    AND: metadataWhere(args.metadata),
  };
  const orderBy = sortingOrderBy<(typeof subscriptionSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-started_at'], (property, sort) => {
    switch (property) {
      case 'customer':
        return { customer: { email: sort } };
      case 'status':
        return { status: sort };
      case 'started_at':
        return { startedAt: { sort, nulls: 'last' } };
      case 'current_period_end':
        return { currentPeriodEnd: sort };
      case 'amount':
        return { amount: sort };
      case 'product':
        return { product: { name: sort } };
      case 'discount':
        return { discount: { name: sort } };
    }
  });
  const [items, total] = await Promise.all([
    ctx.prisma.subscription.findMany({ ...query, where, orderBy: [...(orderBy as Prisma.SubscriptionOrderByWithRelationInput[]), { createdAt: 'desc' }], ...pageWindow(args) }),
    ctx.prisma.subscription.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getSubscription(ctx: Context, id: string, query: object) {
  const subscription = await ctx.prisma.subscription.findFirst({ ...query, where: { AND: [reach(ctx).subscription, { id }] } });
  if (!subscription) throw new ResourceNotFoundError('Subscription not found.');
  return subscription;
}

// ---------------------------------------------------------------------------------------------
// Changes

export interface SubscriptionUpdateInput {
  cancelAtPeriodEnd?: boolean | null;
  revoke?: boolean | null;
  productId?: string | null;
  prorationBehavior?: 'invoice' | 'prorate' | null;
  discountId?: string | null;
  customerCancellationReason?: CustomerCancellationReason | null;
  customerCancellationComment?: string | null;
}

/** PATCH /v1/subscriptions/{id}: the body is one of cancel/uncancel, revoke, or a product change, told apart by its keys. */
export async function updateSubscription(ctx: Context, id: string, input: SubscriptionUpdateInput, query: object) {
  const given = (['cancelAtPeriodEnd', 'revoke', 'productId', 'discountId'] as const).filter((key) => input[key] !== undefined);
  if (given.length !== 1) {
    throw RequestValidationError.at(['input'], 'Give exactly one of cancel_at_period_end, revoke, product_id or discount_id.', 'missing');
  }
  for (const key of ['cancelAtPeriodEnd', 'revoke', 'productId'] as const) {
    if (input[key] === null) throw RequestValidationError.at(['input', key], 'Input should not be null', 'missing');
  }
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const subscription = await lockSubscription(ctx, db, id);
    switch (given[0]) {
      case 'cancelAtPeriodEnd':
        if (input.cancelAtPeriodEnd) await cancelAtPeriodEnd(ctx, db, subscription, input);
        else await uncancel(ctx, db, subscription);
        break;
      case 'revoke':
        if (input.revoke !== true) throw RequestValidationError.at(['input', 'revoke'], 'Input should be true', 'literal_error');
        await revoke(ctx, db, subscription, input);
        break;
      case 'productId':
        await changeProduct(ctx, db, subscription, input.productId!, input.prorationBehavior ?? 'prorate');
        break;
      case 'discountId':
        await changeDiscount(ctx, db, subscription, input.discountId ?? null);
        break;
    }
    return db.subscription.findUniqueOrThrow({ ...query, where: { id } });
  });
}

/** DELETE /v1/subscriptions/{id}: ends the subscription now and revokes its benefits. */
export async function revokeSubscription(ctx: Context, id: string, query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await revoke(ctx, db, await lockSubscription(ctx, db, id), {});
    return db.subscription.findUniqueOrThrow({ ...query, where: { id } });
  });
}

type Reason = Pick<SubscriptionUpdateInput, 'customerCancellationReason' | 'customerCancellationComment'>;

function reasonData(input: Reason) {
  return {
    ...(input.customerCancellationReason !== undefined ? { customerCancellationReason: input.customerCancellationReason } : {}),
    ...(input.customerCancellationComment !== undefined ? { customerCancellationComment: input.customerCancellationComment } : {}),
  };
}

async function cancelAtPeriodEnd(ctx: Context, db: Db, subscription: Subscription, input: Reason) {
  if (subscriptionEnded(subscription) || subscription.cancelAtPeriodEnd) throw alreadyCanceled();
  if (subscription.status === 'incomplete') throw subscriptionLocked('This subscription’s first payment is still in progress.');
  await db.subscription.update({
    where: { id: subscription.id },
    data: { cancelAtPeriodEnd: true, canceledAt: ctx.now(), endsAt: subscription.currentPeriodEnd, ...reasonData(input) },
  });
  await record(ctx, db, ['subscription.updated', 'subscription.canceled'], subscription);
}

async function uncancel(ctx: Context, db: Db, subscription: Subscription) {
  if (subscriptionEnded(subscription)) throw alreadyCanceled('This subscription has ended; it cannot be resumed.');
  if (!subscription.cancelAtPeriodEnd) return;
  await db.subscription.update({
    where: { id: subscription.id },
    data: { cancelAtPeriodEnd: false, canceledAt: null, endsAt: null, customerCancellationReason: null, customerCancellationComment: null },
  });
  await record(ctx, db, ['subscription.updated', 'subscription.uncanceled'], subscription);
}

async function revoke(ctx: Context, db: Db, subscription: Subscription, input: Reason) {
  if (subscriptionEnded(subscription)) throw alreadyCanceled('This subscription has ended already.');
  const now = ctx.now();
  await db.subscription.update({
    where: { id: subscription.id },
    data: { status: 'canceled', cancelAtPeriodEnd: false, canceledAt: subscription.canceledAt ?? now, endsAt: now, endedAt: now, retryAt: null, ...reasonData(input) },
  });
  await recordEntitlementChange(ctx, db, subscription, ['subscription.updated', 'subscription.canceled', 'subscription.revoked']);
}

/**
 * Applies a discount to the renewals from the next one on (its duration counted from there), or
 * removes the subscription's discount (null) from the next renewal on. The current period, paid
 * already, is not changed. The discount is redeemed as at a checkout: a live discount of the
 * organization, for this product and currency, with a redemption left.
 */
async function changeDiscount(ctx: Context, db: Db, subscription: Subscription, discountId: string | null) {
  if (subscriptionEnded(subscription) || subscription.cancelAtPeriodEnd) throw alreadyCanceled('This subscription is canceled: its discount can no longer change.');
  if (subscription.status === 'incomplete') throw subscriptionLocked('This subscription’s first payment is still in progress.');
  if (discountId === subscription.discountId) return;
  if (discountId !== null) await redeemDiscountForSubscription(db, subscription, discountId, ctx.now());
  await db.subscription.update({
    where: { id: subscription.id },
    data: { discountId, discountStartsAt: discountId === null ? null : subscription.currentPeriodEnd },
  });
  await record(ctx, db, ['subscription.updated'], subscription);
}

/** When a customer is deleted: its live subscriptions are revoked, and the grants of its one-time purchases synced away. */
export async function endCustomerEntitlements(ctx: Context, db: Db, customerId: string) {
  const live = await db.subscription.findMany({ where: { customerId, endedAt: null, status: { notIn: ['canceled', 'incomplete_expired', 'unpaid'] } }, select: { id: true } });
  for (const { id } of live) await revoke(ctx, db, await lockSubscription(ctx, db, id), {});
  const purchases = await db.benefitGrant.findMany({ where: { customerId, orderId: { not: null } }, select: { orderId: true }, distinct: ['orderId'] });
  for (const { orderId } of purchases) await scheduleGrantSync(ctx, db, { orderId: orderId! });
}

/**
 * Moves the subscription to another recurring product from now on. The unused part of the current
 * period is credited and the rest of the period at the new price charged, both prorated to the
 * millisecond and recorded as items of the next order.
 */
async function changeProduct(ctx: Context, db: Db, subscription: Subscription, productId: string, proration: 'invoice' | 'prorate') {
  if (subscriptionEnded(subscription) || subscription.cancelAtPeriodEnd) throw alreadyCanceled('This subscription is canceled: its product can no longer change.');
  if (subscription.status !== 'active') throw subscriptionLocked(`This subscription is ${subscription.status}: its product can change once it is paid up.`);
  const renewing = await db.order.findUnique({
    where: { subscriptionId_billingPeriodStart: { subscriptionId: subscription.id, billingPeriodStart: subscription.currentPeriodEnd } },
  });
  if (renewing && !renewing.paid) throw subscriptionLocked('The renewal of this subscription is being charged: its product can change once it is paid.');
  if (proration === 'invoice') {
    throw RequestValidationError.at(['input', 'prorationBehavior'], 'Immediate invoicing of plan changes is not available; use prorate (billed on the next order).');
  }
  const product = await db.product.findFirst({
    where: { id: productId, organizationId: subscription.organizationId },
    include: { prices: { where: { isArchived: false }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] } },
  });
  const loc = ['input', 'productId'];
  if (!product) throw RequestValidationError.at(loc, 'Product not found.');
  if (product.id === subscription.productId) throw RequestValidationError.at(loc, 'The subscription is already on this product.');
  if (product.isArchived) throw RequestValidationError.at(loc, 'This product is archived and cannot be sold.');
  if (!product.isRecurring || product.recurringInterval !== subscription.recurringInterval) {
    throw RequestValidationError.at(loc, `The new product must be recurring every ${subscription.recurringInterval}, like the subscription.`);
  }
  const price = product.prices.find((p) => p.amountType !== 'metered_unit');
  const metered = product.prices.filter((p) => p.amountType === 'metered_unit');
  if (!price || price.amountType === 'custom') throw RequestValidationError.at(loc, 'The new product needs a fixed or free price to subscribe at.');
  if (price.priceCurrency !== subscription.currency) throw RequestValidationError.at(loc, `The new product is priced in ${price.priceCurrency}, the subscription in ${subscription.currency}.`);

  const newAmount = price.priceAmount ?? 0;
  const start = subscription.currentPeriodStart.getTime();
  const end = subscription.currentPeriodEnd.getTime();
  const remaining = Math.max(0, end - ctx.now().getTime());
  const share = (amount: number) => Math.round((amount * remaining) / (end - start));
  const oldProduct = await db.product.findUniqueOrThrow({ where: { id: subscription.productId } });
  const oldPrices = await db.subscriptionPrice.findMany({ where: { subscriptionId: subscription.id } });
  await db.subscriptionPendingItem.createMany({
    data: [
      { subscriptionId: subscription.id, label: `Unused time on ${oldProduct.name}`, amount: -share(subscription.amount), productPriceId: oldPrices[0]?.productPriceId ?? null, createdAt: ctx.now() },
      { subscriptionId: subscription.id, label: `Remaining time on ${product.name}`, amount: share(newAmount), productPriceId: price.id, createdAt: ctx.now() },
    ],
  });
  await db.subscriptionPrice.deleteMany({ where: { subscriptionId: subscription.id } });
  await db.subscription.update({
    where: { id: subscription.id },
    data: { productId: product.id, amount: newAmount, prices: { create: [{ productPriceId: price.id }, ...metered.map((p, i) => ({ productPriceId: p.id, position: i + 1 }))] } },
  });
  await recordEntitlementChange(ctx, db, subscription, ['subscription.updated']);
}

/**
 * Sets the payment method renewals are charged to. A past-due subscription is retried at once
 * with it, which is how a customer whose card was declined recovers.
 */
export async function updateSubscriptionPaymentMethod(ctx: Context, id: string, paymentMethod: string, query: object) {
  const processor = ctx.environment.paymentProcessor;
  if (processor && !processor.acceptsPaymentMethod(paymentMethod)) {
    throw RequestValidationError.at(['paymentMethod'], unknownPaymentMethod);
  }
  // Renewals charge it without the customer: only a method saved on the customer's own record at
  // the processor, never another customer's card. Asked before the transaction: it is across the network.
  const owner = processor?.checkRenewalMethod ? await ctx.prisma.subscription.findFirst({ where: { AND: [reach(ctx).subscription, { id }] }, select: { customer: { select: { processorCustomerId: true } } } }) : null;
  if (owner && processor?.checkRenewalMethod) {
    const problem = await processor.checkRenewalMethod(paymentMethod, owner.customer.processorCustomerId).catch(() => {
      throw new KassaError('The payment processor could not be reached, or failed to answer: nothing was changed. Try again in a moment.', 'PAYMENT_PROCESSOR_UNAVAILABLE', 503, 'PaymentProcessorUnavailable');
    });
    if (problem) throw RequestValidationError.at(['paymentMethod'], problem);
  }
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const subscription = await lockSubscription(ctx, db, id);
    if (subscriptionEnded(subscription)) throw alreadyCanceled('This subscription has ended.');
    await renewWith(ctx, db, subscription, paymentMethod);
    return db.subscription.findUniqueOrThrow({ ...query, where: { id } });
  });
}

/** The subscription renews with this method from now on; a past-due one is charged again with it at the scheduler's next pass. */
async function renewWith(ctx: Context, db: Db, subscription: Subscription, paymentMethod: string) {
  await db.subscription.update({
    where: { id: subscription.id },
    data: { paymentMethod, ...(subscription.status === 'past_due' ? { retryAt: ctx.now() } : {}) },
  });
  await record(ctx, db, ['subscription.updated'], subscription);
}

/**
 * A customer's new default payment method (the portal's "update payment method"): every live
 * subscription the principal reaches renews with it, and the past-due ones are retried with it at
 * once, as updateSubscriptionPaymentMethod does for one. Called in the caller's transaction.
 */
export async function renewLiveSubscriptionsWith(ctx: Context, db: Db, paymentMethod: string): Promise<void> {
  // Locked one by one in id order, so two of these at once cannot deadlock.
  const live = await db.subscription.findMany({ where: { AND: [reach(ctx).subscription, liveSubscription, { endedAt: null }] }, select: { id: true }, orderBy: { id: 'asc' } });
  for (const { id } of live) {
    const subscription = await lockSubscription(ctx, db, id);
    // One that ended meanwhile renews with nothing.
    if (!subscriptionEnded(subscription)) await renewWith(ctx, db, subscription, paymentMethod);
  }
}

/** The live subscriptions the principal reaches that will renew with this payment method (those ending at period end will not). */
export async function subscriptionsRenewingWith(ctx: Context, paymentMethod: string) {
  return ctx.prisma.subscription.findMany({
    where: { AND: [reach(ctx).subscription, liveSubscription, { endedAt: null, cancelAtPeriodEnd: false, paymentMethod }] },
    select: { id: true },
  });
}

// ---- The Customer Portal: a customer's own subscriptions ----

export const customerSubscriptionSortProperties = ['started_at', 'amount', 'status', 'organization', 'product'] as const;

export interface CustomerSubscriptionListArgs extends PageArgs {
  productId?: string[] | null;
  active?: boolean | null;
  query?: string | null;
  sorting?: string[] | null;
}

/** The signed-in customer's subscriptions (the Customer Portal list), filtered and sorted as the client library asks. */
export async function listCustomerSubscriptions(ctx: Context, args: CustomerSubscriptionListArgs, query: object) {
  const where: Prisma.SubscriptionWhereInput = {
    AND: [
      reach(ctx).subscription,
      args.productId?.length ? { productId: { in: args.productId } } : {},
      args.active == null ? {} : args.active ? liveSubscription : { NOT: liveSubscription },
      args.query
        ? { OR: [{ product: { name: { contains: escapeLike(args.query), mode: 'insensitive' } } }, { organization: { name: { contains: escapeLike(args.query), mode: 'insensitive' } } }] }
        : {},
    ],
  };
  const orderBy = sortingOrderBy<(typeof customerSubscriptionSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-started_at'], (property, sort) => {
    switch (property) {
      case 'started_at':
        return { startedAt: { sort, nulls: 'last' } };
      case 'amount':
        return { amount: sort };
      case 'status':
        return { status: sort };
      case 'organization':
        return { organization: { name: sort } };
      case 'product':
        return { product: { name: sort } };
    }
  });
  const [items, total] = await Promise.all([
    ctx.prisma.subscription.findMany({ ...query, where, orderBy: orderBy as Prisma.SubscriptionOrderByWithRelationInput[], ...pageWindow(args) }),
    ctx.prisma.subscription.count({ where }),
  ]);
  return toPage(items, total, args);
}

/** A customer's change request: one kind of CustomerSubscriptionUpdate, not both. */
export interface CustomerSubscriptionUpdateInput {
  cancelAtPeriodEnd?: boolean | null;
  cancellationReason?: CustomerCancellationReason | null;
  cancellationComment?: string | null;
  productId?: string | null;
}

/** The request is one change of CustomerSubscriptionUpdate's union, told apart by its keys, as the Core update it becomes. */
function customerChange(input: CustomerSubscriptionUpdateInput): SubscriptionUpdateInput {
  const cancel = input.cancelAtPeriodEnd !== undefined || input.cancellationReason !== undefined || input.cancellationComment !== undefined;
  const change = input.productId !== undefined;
  if (cancel === change) {
    const either = 'Give either cancel_at_period_end (with an optional cancellation_reason and cancellation_comment) or product_id';
    throw RequestValidationError.at(['input'], cancel ? `${either}, not both.` : `${either}.`, cancel ? 'value_error' : 'missing');
  }
  if (change) return { productId: input.productId };
  if (input.cancelAtPeriodEnd === undefined) throw RequestValidationError.at(['input', 'cancelAtPeriodEnd'], 'Field required', 'missing');
  if (input.cancelAtPeriodEnd === false && (input.cancellationReason != null || input.cancellationComment != null)) {
    throw RequestValidationError.at(['input', 'cancelAtPeriodEnd'], 'A cancellation reason or comment goes with cancel_at_period_end true.');
  }
  return {
    cancelAtPeriodEnd: input.cancelAtPeriodEnd,
    customerCancellationReason: input.cancellationReason,
    customerCancellationComment: input.cancellationComment,
  };
}

/**
 * A customer's change, by the same rules, proration and events as the Core update. A change of
 * product is the customer's to make only while the organization allows it (allow_customer_updates);
 * cancelling is always theirs.
 */
export async function updateSubscriptionAsCustomer(ctx: Context, id: string, input: CustomerSubscriptionUpdateInput, query: object) {
  const change = customerChange(input);
  if (change.productId !== undefined) await checkCustomerMayChangeProduct(ctx, id);
  return updateSubscription(ctx, id, change, query);
}

async function checkCustomerMayChangeProduct(ctx: Context, id: string) {
  const subscription = await ctx.prisma.subscription.findFirst({ where: { AND: [reach(ctx).subscription, { id }] }, select: { organizationId: true } });
  if (!subscription) throw new ResourceNotFoundError('Subscription not found.');
  const settings = await subscriptionSettingsOf(ctx.prisma, subscription.organizationId);
  if (!settings.allow_customer_updates) {
    throw RequestValidationError.at(['input', 'productId'], "This organization does not let customers change their subscription's product; cancel it, or ask the organization to change it.");
  }
}
