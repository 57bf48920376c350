// Checkouts: a buyer's purchase from `open` to `confirmed`, then `succeeded` or `failed` once the
// payment is processed, or `expired` after `expiresAt`. Confirming creates the customer (if new)
// and a pending order, and schedules the charge; the charge itself runs in the payment job.
import { randomBytes } from 'node:crypto';
import { systemContext, type Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Checkout, Prisma } from '../../generated/prisma/client.ts';
import { recordEvents, type EventType } from '../../events/outbox.ts';
import { RequestValidationError, ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import type { Metadata } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { sweep, type JobContext } from '../../jobs/runner.ts';
import { organizationFilter } from '../organizations/access.ts';
import { checkAddress, checkEmail, storedAddress, type AddressInput } from '../customers/service.ts';
import { createPendingOrder } from '../orders/service.ts';
import { issueCustomerSession } from '../../auth/customer-sessions.ts';
import { chargeOrder } from '../payments/service.ts';
import { discountAmount } from '../discounts/amounts.ts';
import { discountFits, findDiscount, redeemDiscount, type DiscountWithProducts } from '../discounts/service.ts';
import { answersFor, attachedFieldsOf, checkAnswers, type Answers } from '../custom-fields/answers.ts';
import { expired, notOpen, paymentError } from './errors.ts';
import { checkBuyerPaymentMethod } from './payment-method.ts';
import { retryFailedCheckout } from './retry.ts';

const answersLoc: Loc = ['input', 'customFieldData'];

export const checkoutLifetimeMs = 3600 * 1000;
export const checkoutSortProperties = ['created_at', 'expires_at', 'status'] as const;

export { CheckoutError, expired, notOpen, paymentError } from './errors.ts';

interface BuyerFields {
  productId?: string | null;
  amount?: number | null;
  isBusinessCustomer?: boolean | null;
  customerName?: string | null;
  customerEmail?: string | null;
  customerBillingName?: string | null;
  customerBillingAddress?: AddressInput | null;
  customerTaxId?: string | null;
  customFieldData?: Record<string, unknown> | null;
}

/** What the buyer sends: their fields, and a discount code when the checkout allows codes. */
interface BuyerInput extends BuyerFields {
  discountCode?: string | null;
}

export interface CheckoutCreateInput extends BuyerFields {
  products: string[];
  customerId?: string | null;
  externalCustomerId?: string | null;
  customerExternalId?: string | null;
  customerIpAddress?: string | null;
  metadata?: Metadata | null;
  customerMetadata?: Metadata | null;
  successUrl?: string | null;
  requireBillingAddress?: boolean | null;
  allowDiscountCodes?: boolean | null;
  discountId?: string | null;
  embedOrigin?: string | null;
  subscriptionId?: string | null;
  /** Not in the GraphQL input: the checkout link a visitor opened (modules/checkout-links). */
  checkoutLinkId?: string | null;
  /** Not in the GraphQL input: a discount that no longer applies is left off instead of refused. */
  dropUnusableDiscount?: boolean;
}

export interface CheckoutUpdateInput extends BuyerFields {
  metadata?: Metadata | null;
  customerMetadata?: Metadata | null;
  customerIpAddress?: string | null;
  successUrl?: string | null;
  requireBillingAddress?: boolean | null;
  allowDiscountCodes?: boolean | null;
  discountId?: string | null;
}

export interface CheckoutConfirmInput extends BuyerInput {
  confirmationTokenId?: string | null;
}

export interface CheckoutListArgs extends PageArgs {
  organizationId?: string[] | null;
  productId?: string[] | null;
  customerId?: string[] | null;
  status?: string[] | null;
  query?: string | null;
  sorting?: string[] | null;
}

type LivePrice = { id: string; amountType: 'fixed' | 'custom' | 'free'; priceAmount: number | null; minimumAmount: number | null; maximumAmount: number | null; presetAmount: number | null; priceCurrency: string };


async function record(ctx: Context, tx: Db, types: EventType[], checkout: { id: string; organizationId: string }) {
  await recordEvents(ctx, tx, types, { organizationId: checkout.organizationId, resourceId: checkout.id, resource: 'checkout' });
}

/** The amount a buyer pays for a price: fixed as set, free nothing, custom what they chose within bounds. */
function amountFor(price: LivePrice, requested: number | null | undefined, issues: ValidationIssues, loc: Loc): number {
  switch (price.amountType) {
    case 'fixed':
      return price.priceAmount ?? 0;
    case 'free':
      return 0;
    case 'custom': {
      const low = price.minimumAmount ?? 50;
      const high = price.maximumAmount ?? 99_999_999;
      const amount = requested ?? price.presetAmount ?? low;
      if (amount < low || amount > high) issues.add(loc, `The amount must be between ${low} and ${high}.`, 'value_error');
      return amount;
    }
  }
}

async function livePriceOf(db: Db, productId: string): Promise<LivePrice | null> {
  // The static price: metered prices are billed by the subscription's renewals, not at checkout.
  return (await db.productPrice.findFirst({ where: { productId, isArchived: false, amountType: { not: 'metered_unit' } }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] })) as LivePrice | null;
}

export async function createCheckout(ctx: Context, input: CheckoutCreateInput, query: object) {
  const issues = new ValidationIssues();
  checkEmail(issues, input.customerEmail, ['input', 'customerEmail']);
  if (input.products.length === 0) issues.add(['input', 'products'], 'List should have at least 1 item after validation, not 0', 'too_short');
  if (new Set(input.products).size !== input.products.length) issues.add(['input', 'products'], 'Each product may be offered once.');
  if (input.subscriptionId) issues.add(['input', 'subscriptionId'], 'Subscription upgrades are not available on this server yet.');
  issues.throwIfAny();
  const products = await ctx.prisma.product.findMany({ where: { id: { in: input.products }, organizationId: organizationFilter(ctx) } });
  input.products.forEach((id, i) => {
    const product = products.find((p) => p.id === id);
    if (!product) issues.add(['input', 'products', i], 'Product not found.');
    else if (product.isArchived) issues.add(['input', 'products', i], 'This product is archived and cannot be sold.');
  });
  if (new Set(products.map((p) => p.organizationId)).size > 1) issues.add(['input', 'products'], 'All products must belong to one organization.');
  issues.throwIfAny();
  const organizationId = products[0].organizationId;
  const chosen = input.products[0];
  const price = await livePriceOf(ctx.prisma, chosen);
  if (!price) throw RequestValidationError.at(['input', 'products', 0], 'This product has no price to sell at.');
  const amount = amountFor(price, input.amount, issues, ['input', 'amount']);
  const discount = input.discountId
    ? await findDiscount(ctx.prisma, { organizationId, productId: chosen, currency: price.priceCurrency, now: ctx.now(), loc: ['input', 'discountId'] }, { id: input.discountId }).catch(
        (error: RequestValidationError) => void (input.dropUnusableDiscount || issues.list.push(...error.issues)),
      )
    : null;

  const externalCustomerId = input.externalCustomerId ?? input.customerExternalId ?? null;
  let customerId: string | null = null;
  if (input.customerId) {
    const customer = await ctx.prisma.customer.findFirst({ where: { id: input.customerId, organizationId, deletedAt: null } });
    if (!customer) issues.add(['input', 'customerId'], 'Customer not found.');
    else customerId = customer.id;
  } else if (externalCustomerId) {
    const customer = await ctx.prisma.customer.findFirst({ where: { activeExternalId: externalCustomerId, organizationId } });
    customerId = customer?.id ?? null;
  }
  checkAddress(issues, ['input', 'customerBillingAddress'], input.customerBillingAddress);
  checkSuccessUrl(issues, input.successUrl);
  const customFieldData = input.customFieldData ? checkAnswers(issues, answersLoc, await attachedFieldsOf(ctx.prisma, chosen), input.customFieldData, false) : {};
  issues.throwIfAny();

  return ctx.prisma.$transaction(async (tx) => {
    const checkout = await tx.checkout.create({
      data: {
        organizationId,
        clientSecret: `${ctx.environment.config.tokenPrefix}_c_${randomBytes(24).toString('base64url')}`,
        expiresAt: new Date(ctx.now().getTime() + checkoutLifetimeMs),
        successUrl: input.successUrl ?? null,
        productId: chosen,
        productPriceId: price.id,
        amount,
        currency: price.priceCurrency,
        discountId: discount ? discount.id : null,
        discountAmount: discount ? discountAmount(discount, amount) : 0,
        allowDiscountCodes: input.allowDiscountCodes ?? true,
        customerId,
        externalCustomerId,
        customerName: input.customerName ?? null,
        customerEmail: input.customerEmail?.trim() ?? null,
        customerIpAddress: input.customerIpAddress ?? null,
        customerBillingName: input.customerBillingName ?? null,
        customerBillingAddress: input.customerBillingAddress ? storedAddress(input.customerBillingAddress) : undefined,
        customerTaxId: input.customerTaxId ?? undefined,
        isBusinessCustomer: input.isBusinessCustomer ?? false,
        requireBillingAddress: input.requireBillingAddress ?? false,
        metadata: input.metadata ?? {},
        customerMetadata: input.customerMetadata ?? {},
        checkoutLinkId: input.checkoutLinkId ?? null,
        customFieldData,
        createdAt: ctx.now(),
        products: { create: input.products.map((productId, position) => ({ productId, position })) },
      },
    });
    await record(ctx, tx as Db, ['checkout.created'], checkout);
    return tx.checkout.findUniqueOrThrow({ ...query, where: { id: checkout.id } });
  });
}

export async function listCheckouts(ctx: Context, args: CheckoutListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.CheckoutWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.productId?.length ? { productId: { in: args.productId } } : {}),
    ...(args.customerId?.length ? { customerId: { in: args.customerId } } : {}),
    ...(args.status?.length ? { status: { in: args.status as never } } : {}),
    ...(args.query ? { customerEmail: { contains: escapeLike(args.query), mode: 'insensitive' } } : {}),
  };
  const orderBy = sortingOrderBy<(typeof checkoutSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-created_at'], (property, sort) =>
    property === 'created_at' ? { createdAt: sort } : property === 'expires_at' ? { expiresAt: sort } : { status: sort },
  );
  const [items, total] = await Promise.all([
    ctx.prisma.checkout.findMany({ ...query, where, orderBy: orderBy as Prisma.CheckoutOrderByWithRelationInput[], ...window }),
    ctx.prisma.checkout.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getCheckout(ctx: Context, id: string, query: object) {
  const checkout = await ctx.prisma.checkout.findFirst({ ...query, where: { id, organizationId: organizationFilter(ctx) } });
  if (!checkout) throw new ResourceNotFoundError('Checkout not found.');
  return checkout;
}

/** Locks the checkout row for the rest of the transaction; concurrent changes wait their turn. */
async function lockCheckout(tx: Db, where: { id: string } | { clientSecret: string }) {
  const rows =
    'id' in where
      ? await tx.$queryRaw<{ id: string }[]>`SELECT id FROM checkouts WHERE id = ${where.id}::uuid FOR UPDATE`
      : await tx.$queryRaw<{ id: string }[]>`SELECT id FROM checkouts WHERE client_secret = ${where.clientSecret} FOR UPDATE`;
  return rows.length ? tx.checkout.findUniqueOrThrow({ where: { id: rows[0].id } }) : null;
}

/** Applies buyer fields to an open checkout; returns the Prisma update. */
async function buyerChanges(tx: Db, checkout: { id: string; productId: string; amount: number; customFieldData: unknown }, input: BuyerFields, issues: ValidationIssues) {
  const data: Prisma.CheckoutUncheckedUpdateInput = {};
  let productId = checkout.productId;
  if (input.productId && input.productId !== checkout.productId) {
    const offered = await tx.checkoutProduct.findUnique({ where: { checkoutId_productId: { checkoutId: checkout.id, productId: input.productId } } });
    if (!offered) issues.add(['input', 'productId'], 'This product is not offered by this checkout.');
    else productId = input.productId;
  }
  const price = await livePriceOf(tx, productId);
  if (price && (productId !== checkout.productId || input.amount != null)) {
    Object.assign(data, { productId, productPriceId: price.id, currency: price.priceCurrency, amount: amountFor(price, input.amount, issues, ['input', 'amount']) });
  }
  if (input.customerEmail !== undefined) {
    checkEmail(issues, input.customerEmail, ['input', 'customerEmail']);
    data.customerEmail = input.customerEmail?.trim() ?? null;
  }
  if (input.customerName !== undefined) data.customerName = input.customerName;
  if (input.customerBillingName !== undefined) data.customerBillingName = input.customerBillingName;
  if (input.customerBillingAddress !== undefined) {
    checkAddress(issues, ['input', 'customerBillingAddress'], input.customerBillingAddress);
    data.customerBillingAddress = input.customerBillingAddress ? storedAddress(input.customerBillingAddress) : (null as never);
  }
  if (input.customerTaxId !== undefined) data.customerTaxId = input.customerTaxId ?? (null as never);
  if (input.isBusinessCustomer != null) data.isBusinessCustomer = input.isBusinessCustomer;
  const answers = await answerChanges(tx, checkout, productId, input.customFieldData, issues);
  if (answers) data.customFieldData = answers;
  return data;
}

/**
 * The answers to custom fields after a change: those given, checked against the fields the
 * (possibly new) product asks, replace the earlier ones; without new answers, a switch to another
 * product keeps the answers to the fields it asks too. Null when they stay as they are.
 */
async function answerChanges(tx: Db, checkout: { productId: string; customFieldData: unknown }, productId: string, given: Record<string, unknown> | null | undefined, issues: ValidationIssues): Promise<Answers | null> {
  if (given == null && productId === checkout.productId) return null;
  const fields = await attachedFieldsOf(tx, productId);
  if (given != null) return checkAnswers(issues, answersLoc, fields, given, false);
  return answersFor(fields, checkout.customFieldData as Answers);
}

/**
 * The discount fields after a change to an open checkout: the discount asked for (the
 * organization's by id, the buyer's by code, null to remove it) or else the one it has, dropped
 * when it no longer goes with the selected product or currency; and its amount on the price.
 */
async function discountChanges(
  ctx: Context,
  db: Db,
  checkout: Checkout,
  data: Prisma.CheckoutUncheckedUpdateInput,
  request: { discountId?: string | null; discountCode?: string | null },
  issues: ValidationIssues,
) {
  const use = {
    organizationId: checkout.organizationId,
    productId: (data.productId as string | undefined) ?? checkout.productId,
    currency: (data.currency as string | undefined) ?? checkout.currency,
    now: ctx.now(),
  };
  const found = (loc: Loc, key: { id: string } | { code: string }) =>
    findDiscount(db, { ...use, loc }, key).catch((error: RequestValidationError) => void issues.list.push(...error.issues));
  let discount: DiscountWithProducts | null | undefined;
  if (request.discountId !== undefined) {
    discount = request.discountId === null ? null : await found(['input', 'discountId'], { id: request.discountId });
  }
  if (request.discountCode !== undefined) {
    if (!checkout.allowDiscountCodes) issues.add(['input', 'discountCode'], 'This checkout does not take discount codes.');
    else discount = request.discountCode === null ? null : await found(['input', 'discountCode'], { code: request.discountCode });
  }
  if (discount === undefined && checkout.discountId) {
    const current = await db.discount.findUniqueOrThrow({ where: { id: checkout.discountId }, include: { products: { select: { productId: true } } } });
    discount = discountFits(current, use) ? current : null;
  }
  const amount = (data.amount as number | undefined) ?? checkout.amount;
  return { discountId: discount?.id ?? null, discountAmount: discount ? discountAmount(discount, amount) : 0 };
}

/** What the buyer pays: the amount less the discount, plus tax. */
const totalOf = (checkout: { amount: number; discountAmount: number; taxAmount: number }) => checkout.amount - checkout.discountAmount + checkout.taxAmount;

function assertOpen(ctx: Context, checkout: { status: string; expiresAt: Date }, publicEndpoint: boolean) {
  if (checkout.status === 'expired' || (checkout.status === 'open' && checkout.expiresAt <= ctx.now())) {
    if (publicEndpoint) throw expired();
    throw notOpen('This checkout has expired.');
  }
  if (checkout.status !== 'open') throw notOpen(`This checkout is ${checkout.status}: it can no longer change.`);
}

export async function updateCheckout(ctx: Context, id: string, input: CheckoutUpdateInput, query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    const checkout = await lockCheckout(tx as Db, { id });
    if (!checkout || !organizationFilter(ctx).in.includes(checkout.organizationId)) throw new ResourceNotFoundError('Checkout not found.');
    assertOpen(ctx, checkout, false);
    const issues = new ValidationIssues();
    const data = await buyerChanges(tx as Db, checkout, input, issues);
    if (input.allowDiscountCodes != null) data.allowDiscountCodes = input.allowDiscountCodes;
    Object.assign(data, await discountChanges(ctx, tx as Db, checkout, data, { discountId: input.discountId }, issues));
    checkSuccessUrl(issues, input.successUrl);
    if (input.successUrl !== undefined) data.successUrl = input.successUrl;
    if (input.metadata != null) data.metadata = input.metadata;
    if (input.customerMetadata !== undefined) data.customerMetadata = input.customerMetadata ?? {};
    if (input.customerIpAddress !== undefined) data.customerIpAddress = input.customerIpAddress;
    if (input.requireBillingAddress != null) data.requireBillingAddress = input.requireBillingAddress;
    issues.throwIfAny();
    await tx.checkout.update({ where: { id }, data });
    await record(ctx, tx as Db, ['checkout.updated'], checkout);
    return tx.checkout.findUniqueOrThrow({ ...query, where: { id } });
  });
}

/** Where the buyer is sent after paying: an absolute http(s) URL, on create and on update alike. */
export function checkSuccessUrl(issues: ValidationIssues, url: string | null | undefined): void {
  if (!url) return;
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) issues.add(['input', 'successUrl'], 'Input should be a valid URL, starting with http:// or https://');
}

export async function getClientCheckout(ctx: Context, clientSecret: string, query: object) {
  const checkout = await ctx.prisma.checkout.findUnique({ ...query, where: { clientSecret } });
  if (!checkout) throw new ResourceNotFoundError('Checkout not found.');
  if (checkout.status === 'expired' || (checkout.status === 'open' && checkout.expiresAt <= ctx.now())) throw expired();
  return checkout;
}

export async function updateClientCheckout(ctx: Context, clientSecret: string, input: BuyerInput, query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    const checkout = await lockCheckout(tx as Db, { clientSecret });
    if (!checkout) throw new ResourceNotFoundError('Checkout not found.');
    assertOpen(ctx, checkout, true);
    const issues = new ValidationIssues();
    const data = await buyerChanges(tx as Db, checkout, input, issues);
    Object.assign(data, await discountChanges(ctx, tx as Db, checkout, data, { discountCode: input.discountCode }, issues));
    issues.throwIfAny();
    await tx.checkout.update({ where: { id: checkout.id }, data });
    await record(ctx, tx as Db, ['checkout.updated'], checkout);
    return tx.checkout.findUniqueOrThrow({ ...query, where: { id: checkout.id } });
  });
}

/**
 * Confirms a checkout: one transaction locks it, checks it is open, makes the customer and the
 * pending order, records the events and schedules the charge. Of two concurrent confirms the
 * second finds it confirmed and is refused, so exactly one order exists.
 */
export async function confirmCheckout(ctx: Context, clientSecret: string, input: CheckoutConfirmInput, query: object) {
  const processor = ctx.environment.paymentProcessor;
  const token = input.confirmationTokenId;
  // Asked before the transaction: the processor is across the network. Its tokens are single-use.
  const tokenProblem = token && processor?.checkPaymentMethod && processor.acceptsPaymentMethod(token) ? await processor.checkPaymentMethod(token) : null;
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const locked = await lockCheckout(db, { clientSecret });
    if (!locked) throw new ResourceNotFoundError('Checkout not found.');
    if (locked.status === 'failed') return retryFailedCheckout(ctx, db, locked, input.confirmationTokenId, tokenProblem, query);
    assertOpen(ctx, locked, true);
    const issues = new ValidationIssues();
    const changes = await buyerChanges(db, locked, input, issues);
    Object.assign(changes, await discountChanges(ctx, db, locked, changes, { discountCode: input.discountCode }, issues));
    const checkout = { ...locked, ...(await db.checkout.update({ where: { id: locked.id }, data: changes })) };
    if (!checkout.customerEmail && !checkout.customerId) issues.add(['input', 'customerEmail'], 'Field required: the buyer’s email address', 'missing');
    if (checkout.requireBillingAddress && !checkout.customerBillingAddress) issues.add(['input', 'customerBillingAddress'], 'Field required: this checkout asks for a billing address', 'missing');
    checkAnswers(issues, answersLoc, await attachedFieldsOf(db, checkout.productId), checkout.customFieldData as Answers, true);
    const total = totalOf(checkout);
    if (total > 0) await checkBuyerPaymentMethod(ctx, db, input.confirmationTokenId, tokenProblem, issues, 'Field required: the payment method token');
    issues.throwIfAny();
    if (total > 0 && !processor) throw paymentError('No payment processor is configured for this environment.');
    const amountProblem = total > 0 ? processor?.checkAmount?.(total, checkout.currency) : null;
    if (amountProblem) throw paymentError(`This checkout's amount cannot be charged: ${amountProblem}`);
    if (checkout.discountId) await redeemDiscount(db, { ...checkout, discountId: checkout.discountId }, ctx.now());

    const { order, customer } = await createPendingOrder(ctx, db, checkout, input.confirmationTokenId ?? 'none');
    await db.checkout.update({ where: { id: checkout.id }, data: { status: 'confirmed', customerId: customer.id } });
    await record(ctx, db, ['checkout.updated'], checkout);
    await chargeOrder(ctx, db, order, input.confirmationTokenId ?? 'none');
    const { token } = await issueCustomerSession(ctx, db, customer, { checkoutId: checkout.id });
    const confirmed = await db.checkout.findUniqueOrThrow({ ...query, where: { id: checkout.id } });
    return Object.assign(confirmed, { customerSessionToken: token });
  });
}

/** Moves open checkouts past their expiry to `expired`, each with its checkout.updated event. */
export async function expireCheckouts(job: JobContext): Promise<void> {
  await job.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const due = await db.$queryRaw<{ id: string; organization_id: string }[]>`
      SELECT id, organization_id FROM checkouts WHERE status = 'open' AND expires_at <= ${job.now()}
      ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED`;
    for (const checkout of due) {
      await db.checkout.update({ where: { id: checkout.id }, data: { status: 'expired' } });
      const ctx = systemContext(job.environment, db, checkout.organization_id, job.now, 'checkout-expiry');
      await record(ctx, db, ['checkout.updated'], { id: checkout.id, organizationId: checkout.organization_id });
    }
  });
}

export const expirySweep = sweep('checkouts.expire', expireCheckouts);
