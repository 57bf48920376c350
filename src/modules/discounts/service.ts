// Discounts: a fixed amount or a percentage off a checkout, for one payment (`once`), every
// payment (`forever`) or the payments of the first `durationInMonths` months (`repeating`). An
// organization applies one to a checkout by id; a buyer enters its code. The checks a discount
// passes before it may be used are named functions below; confirming a checkout repeats them
// under the discount's row lock and records the redemption in the same transaction, so
// `maxRedemptions` holds however many buyers confirm at once. Deleting is soft: orders and
// subscriptions keep the discount they were sold with.
import type { Context } from '../../context.ts';
import { isKnownCurrency } from '../../currencies.ts';
import type { Db } from '../../db/client.ts';
import type { Discount, DiscountDuration, DiscountType, Prisma } from '../../generated/prisma/client.ts';
import { RequestValidationError, ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import type { Metadata } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';
import { maximumPriceAmount } from '../products/service.ts';

export const discountSortProperties = ['created_at', 'name', 'code', 'redemptions_count'] as const;

interface DiscountTermsInput {
  type?: DiscountType | null;
  amount?: number | null;
  currency?: string | null;
  basisPoints?: number | null;
  duration?: DiscountDuration | null;
  durationInMonths?: number | null;
}

interface DiscountFields extends DiscountTermsInput {
  name?: string | null;
  code?: string | null;
  startsAt?: Date | null;
  endsAt?: Date | null;
  maxRedemptions?: number | null;
  products?: string[] | null;
  metadata?: Metadata | null;
}

export interface DiscountCreateInput extends DiscountFields {
  name: string;
  type: DiscountType;
  duration: DiscountDuration;
  organizationId?: string | null;
}

export type DiscountUpdateInput = DiscountFields;

export interface DiscountListArgs extends PageArgs {
  organizationId?: string[] | null;
  query?: string | null;
  sorting?: string[] | null;
}

const live = { deletedAt: null };
const codePattern = /^[A-Za-z0-9_-]{3,256}$/;

// ---------------------------------------------------------------------------------------------
// Reading

export async function listDiscounts(ctx: Context, args: DiscountListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.DiscountWhereInput = {
    ...live,
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.query
      ? { OR: [{ name: { contains: escapeLike(args.query), mode: 'insensitive' } }, { code: { contains: escapeLike(args.query), mode: 'insensitive' } }] }
      : {}),
  };
  const orderBy = sortingOrderBy<(typeof discountSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-created_at'], (property, sort) => {
    switch (property) {
      case 'created_at':
        return { createdAt: sort };
      case 'name':
        return { name: sort };
      case 'code':
        return { code: { sort, nulls: 'last' } };
      case 'redemptions_count':
        return { redemptionsCount: sort };
    }
  });
  const [items, total] = await Promise.all([
    ctx.prisma.discount.findMany({ ...query, where, orderBy: orderBy as Prisma.DiscountOrderByWithRelationInput[], ...window }),
    ctx.prisma.discount.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getDiscount(ctx: Context, id: string, query: object) {
  const discount = await ctx.prisma.discount.findFirst({ ...query, where: { id, ...live, organizationId: organizationFilter(ctx) } });
  if (!discount) throw new ResourceNotFoundError('Discount not found.');
  return discount;
}

// ---------------------------------------------------------------------------------------------
// Writing

/** The discount's terms as stored: exactly the columns its type and duration use, the others null. */
interface Terms {
  type: DiscountType;
  duration: DiscountDuration;
  amount: number | null;
  currency: string | null;
  basisPoints: number | null;
  durationInMonths: number | null;
}

function checkTerms(issues: ValidationIssues, terms: Terms, given: DiscountTermsInput): Terms {
  const at = (field: string): Loc => ['input', field];
  const data: Terms = { type: terms.type, duration: terms.duration, amount: null, currency: null, basisPoints: null, durationInMonths: null };
  if (terms.type === 'fixed') {
    if (terms.amount == null) issues.add(at('amount'), 'Field required: a fixed discount takes an amount', 'missing');
    else if (!Number.isInteger(terms.amount) || terms.amount < 1) issues.add(at('amount'), 'Input should be greater than or equal to 1', 'greater_than_equal');
    else if (terms.amount > maximumPriceAmount) issues.add(at('amount'), `Input should be less than or equal to ${maximumPriceAmount}`, 'less_than_equal');
    const currency = (terms.currency ?? 'usd').toLowerCase();
    if (!isKnownCurrency(currency)) issues.add(at('currency'), `"${terms.currency}" is not an ISO 4217 currency code`);
    if (given.basisPoints != null) issues.add(at('basisPoints'), 'Not allowed on a fixed discount.', 'extra_forbidden');
    Object.assign(data, { amount: terms.amount, currency });
  } else {
    if (terms.basisPoints == null) issues.add(at('basisPoints'), 'Field required: a percentage discount takes basis points', 'missing');
    else if (!Number.isInteger(terms.basisPoints) || terms.basisPoints < 1 || terms.basisPoints > 10_000) {
      issues.add(at('basisPoints'), 'Input should be between 1 and 10000 (0.01% to 100%)', 'value_error');
    }
    if (given.amount != null) issues.add(at('amount'), 'Not allowed on a percentage discount.', 'extra_forbidden');
    data.basisPoints = terms.basisPoints;
  }
  if (terms.duration === 'repeating') {
    if (terms.durationInMonths == null) issues.add(at('durationInMonths'), 'Field required: a repeating discount lasts a number of months', 'missing');
    else if (!Number.isInteger(terms.durationInMonths) || terms.durationInMonths < 1 || terms.durationInMonths > 999) {
      issues.add(at('durationInMonths'), 'Input should be between 1 and 999', 'value_error');
    }
    data.durationInMonths = terms.durationInMonths;
  } else if (given.durationInMonths != null) {
    issues.add(at('durationInMonths'), 'Only a repeating discount lasts a number of months.', 'extra_forbidden');
  }
  return data;
}

function checkCommonFields(issues: ValidationIssues, input: DiscountFields, window: { startsAt: Date | null; endsAt: Date | null }) {
  if (input.name != null) {
    const name = input.name.trim();
    if (name.length < 1) issues.add(['input', 'name'], 'String should have at least 1 character', 'string_too_short');
    if (name.length > 256) issues.add(['input', 'name'], 'String should have at most 256 characters', 'string_too_long');
  }
  if (input.code != null && !codePattern.test(input.code)) {
    issues.add(['input', 'code'], 'A code is 3 to 256 letters, digits, "-" or "_".', 'string_pattern_mismatch');
  }
  if (input.maxRedemptions != null && (!Number.isInteger(input.maxRedemptions) || input.maxRedemptions < 1)) {
    issues.add(['input', 'maxRedemptions'], 'Input should be greater than or equal to 1', 'greater_than_equal');
  }
  if (window.startsAt && window.endsAt && window.endsAt <= window.startsAt) issues.add(['input', 'endsAt'], 'ends_at must be after starts_at.');
}

/** The products a discount is restricted to, each the organization's own. */
async function checkProducts(db: Db, issues: ValidationIssues, organizationId: string, products: string[]) {
  const found = await db.product.findMany({ where: { id: { in: products }, organizationId }, select: { id: true } });
  products.forEach((id, i) => {
    if (!found.some((p) => p.id === id)) issues.add(['input', 'products', i], 'Product not found.');
  });
  return [...new Set(products)];
}

/** A write that hit the live-code uniqueness index, as the 422 the client can act on. */
function codeTaken(error: unknown): never {
  if ((error as { code?: string }).code === 'P2002') throw RequestValidationError.at(['input', 'code'], 'A discount with this code already exists.');
  throw error;
}

export async function createDiscount(ctx: Context, input: DiscountCreateInput, query: object) {
  const issues = new ValidationIssues();
  const terms = checkTerms(
    issues,
    { type: input.type, duration: input.duration, amount: input.amount ?? null, currency: input.currency ?? null, basisPoints: input.basisPoints ?? null, durationInMonths: input.durationInMonths ?? null },
    input,
  );
  if (input.type === 'percentage' && input.currency != null) issues.add(['input', 'currency'], 'Not allowed on a percentage discount.', 'extra_forbidden');
  checkCommonFields(issues, input, { startsAt: input.startsAt ?? null, endsAt: input.endsAt ?? null });
  let organizationId = '';
  try {
    organizationId = owningOrganization(ctx, input.organizationId, ['input', 'organizationId']);
  } catch (error) {
    issues.list.push(...(error as RequestValidationError).issues);
  }
  const products = organizationId && input.products?.length ? await checkProducts(ctx.prisma, issues, organizationId, input.products) : [];
  issues.throwIfAny();
  return ctx.prisma.discount
    .create({
      ...query,
      data: {
        organizationId,
        name: input.name.trim(),
        ...terms,
        code: input.code ?? null,
        activeCode: input.code?.toLowerCase() ?? null,
        startsAt: input.startsAt ?? null,
        endsAt: input.endsAt ?? null,
        maxRedemptions: input.maxRedemptions ?? null,
        metadata: input.metadata ?? {},
        createdAt: ctx.now(),
        products: { create: products.map((productId) => ({ productId })) },
      },
    })
    .catch(codeTaken);
}

/** Locks a live discount the principal reaches, for the rest of the transaction. */
async function lockDiscount(ctx: Context, db: Db, id: string): Promise<Discount> {
  await db.$queryRaw`SELECT id FROM discounts WHERE id = ${id}::uuid FOR UPDATE`;
  const discount = await db.discount.findFirst({ where: { id, ...live, organizationId: organizationFilter(ctx) } });
  if (!discount) throw new ResourceNotFoundError('Discount not found.');
  return discount;
}

const termFields = ['type', 'amount', 'basisPoints', 'duration', 'durationInMonths'] as const;

export async function updateDiscount(ctx: Context, id: string, input: DiscountUpdateInput, query: object) {
  return ctx.prisma
    .$transaction(async (tx) => {
      const db = tx as Db;
      const discount = await lockDiscount(ctx, db, id);
      const issues = new ValidationIssues();
      const changesTerms = termFields.some((field) => input[field] != null && input[field] !== discount[field]);
      // The client library sends a currency with every update (its default, usd): it counts only with an amount or a change to fixed.
      const currencyCounts = input.amount != null || (input.type === 'fixed' && discount.type !== 'fixed');
      const changesCurrency = currencyCounts && input.currency != null && input.currency.toLowerCase() !== discount.currency;
      const data: Prisma.DiscountUncheckedUpdateInput = {};
      if (changesTerms || changesCurrency) {
        if (discount.redemptionsCount > 0) {
          throw RequestValidationError.at(['input'], 'This discount has been redeemed: what it takes off can no longer change. Create a new discount instead.');
        }
        const type = input.type ?? discount.type;
        const sameType = type === discount.type;
        const duration = input.duration ?? discount.duration;
        Object.assign(
          data,
          checkTerms(
            issues,
            {
              type,
              duration,
              amount: input.amount ?? (sameType ? discount.amount : null),
              currency: (currencyCounts ? input.currency : null) ?? (sameType ? discount.currency : null),
              basisPoints: input.basisPoints ?? (sameType ? discount.basisPoints : null),
              durationInMonths: input.durationInMonths ?? (duration === discount.duration ? discount.durationInMonths : null),
            },
            { ...input, durationInMonths: duration === 'repeating' ? null : input.durationInMonths },
          ),
        );
      }
      const window = { startsAt: input.startsAt !== undefined ? input.startsAt : discount.startsAt, endsAt: input.endsAt !== undefined ? input.endsAt : discount.endsAt };
      checkCommonFields(issues, input, window);
      if (input.maxRedemptions != null && input.maxRedemptions < discount.redemptionsCount) {
        issues.add(['input', 'maxRedemptions'], `This discount has been redeemed ${discount.redemptionsCount} times already.`);
      }
      const products = input.products ? await checkProducts(db, issues, discount.organizationId, input.products) : null;
      issues.throwIfAny();
      if (input.name != null) data.name = input.name.trim();
      if (input.code !== undefined) Object.assign(data, { code: input.code, activeCode: input.code?.toLowerCase() ?? null });
      if (input.startsAt !== undefined) data.startsAt = input.startsAt;
      if (input.endsAt !== undefined) data.endsAt = input.endsAt;
      if (input.maxRedemptions !== undefined) data.maxRedemptions = input.maxRedemptions;
      if (input.metadata != null) data.metadata = input.metadata;
      if (products) {
        await db.discountProduct.deleteMany({ where: { discountId: id } });
        await db.discountProduct.createMany({ data: products.map((productId) => ({ discountId: id, productId })) });
      }
      return db.discount.update({ ...query, where: { id }, data });
    })
    .catch(codeTaken);
}

/** Soft-deletes: the discount can no longer be applied, and its code is free again; orders and subscriptions keep it. */
export async function deleteDiscount(ctx: Context, id: string) {
  await ctx.prisma.$transaction(async (tx) => {
    await lockDiscount(ctx, tx as Db, id);
    await tx.discount.update({ where: { id }, data: { deletedAt: ctx.now(), activeCode: null } });
  });
  return true;
}

// ---------------------------------------------------------------------------------------------
// Applying a discount to a checkout. Each check throws a 422 at the field the discount came by.

export type DiscountWithProducts = Discount & { products: { productId: string }[] };

export interface DiscountUse {
  organizationId: string;
  productId: string;
  currency: string;
  now: Date;
  loc: Loc;
}

const refuse = (use: DiscountUse, msg: string): never => {
  throw RequestValidationError.at(use.loc, msg);
};

function checkDiscountStarted(discount: Discount, use: DiscountUse) {
  if (discount.startsAt && discount.startsAt > use.now) refuse(use, 'This discount is not redeemable yet.');
}

function checkDiscountNotEnded(discount: Discount, use: DiscountUse) {
  if (discount.endsAt && discount.endsAt <= use.now) refuse(use, 'This discount has ended.');
}

function checkRedemptionsLeft(discount: Discount, use: DiscountUse) {
  if (discount.maxRedemptions != null && discount.redemptionsCount >= discount.maxRedemptions) refuse(use, 'This discount has been redeemed its maximum number of times.');
}

function checkDiscountCoversProduct(discount: DiscountWithProducts, use: DiscountUse) {
  if (discount.products.length && !discount.products.some((p) => p.productId === use.productId)) refuse(use, 'This discount does not apply to this product.');
}

function checkDiscountCurrency(discount: Discount, use: DiscountUse) {
  if (discount.type === 'fixed' && discount.currency !== use.currency) refuse(use, `This discount is in ${discount.currency}; the price is in ${use.currency}.`);
}

/** Every check a discount passes before a checkout may use it. */
export function checkDiscountUsable(discount: DiscountWithProducts, use: DiscountUse) {
  checkDiscountStarted(discount, use);
  checkDiscountNotEnded(discount, use);
  checkRedemptionsLeft(discount, use);
  checkDiscountCoversProduct(discount, use);
  checkDiscountCurrency(discount, use);
}

/** Whether the discount may still go with the checkout's product and currency (after the buyer switches product). */
export function discountFits(discount: DiscountWithProducts, use: Omit<DiscountUse, 'loc'>) {
  try {
    checkDiscountCoversProduct(discount, { ...use, loc: [] });
    checkDiscountCurrency(discount, { ...use, loc: [] });
    return true;
  } catch {
    return false;
  }
}

/** A live discount of the checkout's organization, by id (the organization's way) or by code (the buyer's, case-insensitive). */
export async function findDiscount(db: Db, use: DiscountUse, key: { id: string } | { code: string }): Promise<DiscountWithProducts> {
  const where = 'id' in key ? { id: key.id } : { activeCode: key.code.toLowerCase() };
  const discount = await db.discount.findFirst({ where: { ...where, ...live, organizationId: use.organizationId }, include: { products: { select: { productId: true } } } });
  if (!discount) return refuse(use, 'id' in key ? 'Discount not found.' : 'This discount code does not exist.');
  checkDiscountUsable(discount, use);
  return discount;
}

/**
 * Redeems the checkout's discount in the confirm transaction: the discount's row lock makes
 * concurrent confirms take turns, each re-checks it (not deleted, started, not ended, a
 * redemption left, still for this product) and counts one redemption, so no more than
 * `maxRedemptions` confirms ever get through. A refusal throws, and the transaction writes nothing.
 */
export async function redeemDiscount(db: Db, checkout: { id: string; discountId: string; organizationId: string; productId: string; currency: string }, now: Date) {
  return redeem(db, checkout, { checkoutId: checkout.id }, now, 'The discount on this checkout can no longer be used: ');
}

/**
 * Redeems a discount applied to a live subscription, as a confirm does for a checkout: under the
 * discount's row lock, re-checked for the subscription's product and currency, counted once.
 */
export async function redeemDiscountForSubscription(db: Db, subscription: { id: string; organizationId: string; productId: string; currency: string }, discountId: string, now: Date) {
  return redeem(db, { ...subscription, discountId }, { subscriptionId: subscription.id }, now, '');
}

async function redeem(
  db: Db,
  use: { discountId: string; organizationId: string; productId: string; currency: string },
  redeemer: { checkoutId: string } | { subscriptionId: string },
  now: Date,
  refusal: string,
) {
  await db.$queryRaw`SELECT id FROM discounts WHERE id = ${use.discountId}::uuid FOR UPDATE`;
  const where: DiscountUse = { organizationId: use.organizationId, productId: use.productId, currency: use.currency, now, loc: ['input', 'discountId'] };
  const discount = await findDiscount(db, where, { id: use.discountId }).catch((error: RequestValidationError) => {
    throw refusal ? RequestValidationError.at(where.loc, `${refusal}${error.issues[0].msg}`) : error;
  });
  await db.discountRedemption.create({ data: { discountId: discount.id, ...redeemer, createdAt: now } });
  await db.discount.update({ where: { id: discount.id }, data: { redemptionsCount: { increment: 1 } } });
  return discount;
}
