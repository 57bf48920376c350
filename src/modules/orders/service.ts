// Orders: created `pending` by a confirmed checkout, `paid` when the payment succeeds. Amounts are
// integer minor units: net = subtotal - discount, total = net + tax.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Checkout, Prisma } from '../../generated/prisma/client.ts';
import { recordEvents } from '../../events/outbox.ts';
import { recordOrderEvents } from './events.ts';
import { RequestValidationError, ResourceNotFoundError, ValidationIssues } from '../../graphql/errors.ts';
import { metadataWhere } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { reach } from '../../auth/reach.ts';
import { startSubscription } from '../subscriptions/service.ts';
import { checkAddress, lockCustomerIdentity, storedAddress, type AddressInput } from '../customers/service.ts';

export const orderSortProperties = ['created_at', 'status', 'amount', 'net_amount', 'customer', 'product'] as const;
/** What a customer may sort their own orders by in the Customer Portal. */
export const customerOrderSortProperties = ['created_at', 'amount', 'net_amount', 'product', 'subscription'] as const;
type OrderSortProperty = (typeof orderSortProperties)[number] | (typeof customerOrderSortProperties)[number];

export interface OrderListArgs extends PageArgs {
  organizationId?: string[] | null;
  productId?: string[] | null;
  customerId?: string[] | null;
  checkoutId?: string[] | null;
  subscriptionId?: string[] | null;
  productBillingType?: string[] | null;
  status?: string[] | null;
  createdAfter?: Date | null;
  createdBefore?: Date | null;
  metadata?: Record<string, unknown> | null;
  /** Matches the product's name, case-insensitively. */
  query?: string | null;
  sorting?: string[] | null;
}

/**
 * The buyer of a checkout as a customer: the one named, else the one with its external id, else
 * (without an external id) the one holding its email, else a new one. A buyer types an email at
 * checkout without proving it, so it reaches only a customer whose email the organization set or
 * the customer verified, and a new customer carries it without holding it: a purchase is never
 * handed to someone who merely claimed the buyer's address, and no one's account is linked to an
 * external id through an address the buyer typed. Concurrent confirms by one buyer wait for each
 * other here and end with one customer.
 */
async function customerFor(ctx: Context, db: Db, checkout: Checkout) {
  if (checkout.customerId) return db.customer.findUniqueOrThrow({ where: { id: checkout.customerId } });
  const { organizationId, externalCustomerId } = checkout;
  const email = checkout.customerEmail!;
  await lockCustomerIdentity(db, organizationId, { email, externalId: externalCustomerId });
  if (externalCustomerId) {
    const byExternalId = await db.customer.findFirst({ where: { organizationId, activeExternalId: externalCustomerId } });
    if (byExternalId) return byExternalId;
  } else {
    const holder = await db.customer.findFirst({ where: { organizationId, activeEmail: email.toLowerCase() } });
    if (holder) return holder;
  }
  const customer = await db.customer.create({
    data: {
      organizationId: checkout.organizationId,
      email,
      name: checkout.customerName,
      externalId: externalCustomerId,
      activeExternalId: externalCustomerId,
      billingAddress: checkout.customerBillingAddress ?? undefined,
      metadata: checkout.customerMetadata ?? {},
      createdAt: ctx.now(),
    },
  });
  await recordEvents(ctx, db, ['customer.created'], { organizationId: customer.organizationId, resourceId: customer.id, resource: 'customer' });
  return customer;
}

/**
 * The checkout's answers to custom fields, added to the customer's: a later answer to a field
 * replaces an earlier one. The customer's row is written in the confirm transaction.
 */
async function keepCustomFieldAnswers(db: Db, customer: { id: string; customFieldData: unknown }, answers: unknown) {
  const given = answers as Record<string, unknown>;
  if (!Object.keys(given).length) return;
  await db.customer.update({ where: { id: customer.id }, data: { customFieldData: { ...(customer.customFieldData as Record<string, unknown>), ...given } as object } });
}

/** The pending order of a confirmed checkout; for a recurring product, with the subscription it starts. */
export async function createPendingOrder(ctx: Context, db: Db, checkout: Checkout, paymentMethod: string) {
  const customer = await customerFor(ctx, db, checkout);
  await keepCustomFieldAnswers(db, customer, checkout.customFieldData);
  const product = await db.product.findUniqueOrThrow({ where: { id: checkout.productId } });
  const subscription = product.isRecurring ? await startSubscription(ctx, db, checkout, customer.id, paymentMethod) : null;
  const subtotal = checkout.amount;
  const net = subtotal - checkout.discountAmount;
  const order = await db.order.create({
    data: {
      organizationId: checkout.organizationId,
      subtotalAmount: subtotal,
      discountId: checkout.discountId,
      discountAmount: checkout.discountAmount,
      netAmount: net,
      taxAmount: checkout.taxAmount,
      totalAmount: net + checkout.taxAmount,
      currency: checkout.currency,
      billingReason: product.isRecurring ? 'subscription_create' : 'purchase',
      billingName: checkout.customerBillingName ?? checkout.customerName,
      billingAddress: checkout.customerBillingAddress ?? undefined,
      customerId: customer.id,
      productId: product.id,
      checkoutId: checkout.id,
      subscriptionId: subscription?.id ?? null,
      billingPeriodStart: subscription?.currentPeriodStart ?? null,
      metadata: checkout.metadata ?? {},
      customFieldData: checkout.customFieldData ?? {},
      createdAt: ctx.now(),
      items: { create: [{ label: product.name, amount: subtotal, taxAmount: checkout.taxAmount, productPriceId: checkout.productPriceId }] },
    },
  });
  await recordOrderEvents(ctx, db, ['order.created'], order);
  return { order, customer };
}

/** The orders the principal reaches (an organization's, or a customer's own), filtered. */
export async function listOrders(ctx: Context, args: OrderListArgs, query: object) {
  const window = pageWindow(args);
  const product: Prisma.ProductWhereInput = {
    ...(args.productBillingType?.length === 1 ? { isRecurring: args.productBillingType[0] === 'recurring' } : {}),
    ...(args.query ? { name: { contains: escapeLike(args.query), mode: 'insensitive' } } : {}),
  };
  const where: Prisma.OrderWhereInput = {
    AND: [
      reach(ctx).order,
      {
        ...(args.organizationId?.length ? { organizationId: { in: args.organizationId } } : {}),
        ...(args.productId?.length ? { productId: { in: args.productId } } : {}),
        ...(args.customerId?.length ? { customerId: { in: args.customerId } } : {}),
        ...(args.checkoutId?.length ? { checkoutId: { in: args.checkoutId } } : {}),
        ...(args.subscriptionId?.length ? { subscriptionId: { in: args.subscriptionId } } : {}),
        ...(Object.keys(product).length ? { product } : {}),
        ...(args.status?.length ? { status: { in: args.status as never } } : {}),
        ...(args.createdAfter || args.createdBefore
          ? { createdAt: { ...(args.createdAfter ? { gte: args.createdAfter } : {}), ...(args.createdBefore ? { lt: args.createdBefore } : {}) } }
          : {}),
      },
      ...metadataWhere(args.metadata),
    ],
  };
  const orderBy = sortingOrderBy<OrderSortProperty>(args.sorting?.length ? args.sorting : ['-created_at'], (property, sort) => {
    switch (property) {
      case 'created_at':
        return { createdAt: sort };
      case 'status':
        return { status: sort };
      case 'amount':
        return { subtotalAmount: sort };
      case 'net_amount':
        return { netAmount: sort };
      case 'customer':
        return { customer: { email: sort } };
      case 'product':
        return { product: { name: sort } };
      case 'subscription':
        return { subscriptionId: sort };
    }
  });
  const [items, total] = await Promise.all([
    ctx.prisma.order.findMany({ ...query, where, orderBy: orderBy as Prisma.OrderOrderByWithRelationInput[], ...window }),
    ctx.prisma.order.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getOrder(ctx: Context, id: string, query: object) {
  const order = await ctx.prisma.order.findFirst({ ...query, where: { AND: [reach(ctx).order, { id }] } });
  if (!order) throw new ResourceNotFoundError('Order not found.');
  return order;
}

export async function updateOrder(ctx: Context, id: string, input: { billingName?: string | null; billingAddress?: AddressInput | null }, query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM orders WHERE id = ${id}::uuid FOR UPDATE`;
    const order = locked.length ? await db.order.findFirst({ where: { AND: [reach(ctx).order, { id }] } }) : null;
    if (!order) throw new ResourceNotFoundError('Order not found.');
    if (order.invoiceGeneratedAt) {
      throw RequestValidationError.at(['input'], 'The invoice of this order exists: its billing details can no longer change.');
    }
    const data: Prisma.OrderUpdateInput = {};
    if (input.billingName !== undefined) data.billingName = input.billingName;
    if (input.billingAddress !== undefined) {
      const issues = new ValidationIssues();
      checkAddress(issues, ['input', 'billingAddress'], input.billingAddress);
      issues.throwIfAny();
      data.billingAddress = input.billingAddress ? storedAddress(input.billingAddress) : (null as never);
    }
    await db.order.update({ where: { id }, data });
    await recordOrderEvents(ctx, db, ['order.updated'], order);
    return db.order.findUniqueOrThrow({ ...query, where: { id } });
  });
}
