// Products and their prices. Amounts are integer minor units of `priceCurrency`. A product has
// exactly one live static price (fixed, custom or free); replacing it archives the old one, so an
// amount that was ever sold against is never edited.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { isKnownCurrency } from '../../currencies.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import { metadataWhere, type Metadata } from '../../graphql/metadata.ts';
import { wireOnlyValue } from '../../graphql/wire-values.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';

export const minimumPriceAmount = 50;
export const maximumPriceAmount = 99_999_999;
export const productSortProperties = ['created_at', 'name', 'price_amount_type', 'price_amount'] as const;

type AmountType = 'fixed' | 'custom' | 'free';
type Interval = 'day' | 'week' | 'month' | 'year';

export interface PriceInput {
  id?: string | null;
  amountType?: AmountType | null;
  priceCurrency?: string | null;
  priceAmount?: number | null;
  minimumAmount?: number | null;
  maximumAmount?: number | null;
  presetAmount?: number | null;
}

interface ProductFields {
  name?: string | null;
  description?: string | null;
  metadata?: Metadata | null;
  prices?: PriceInput[] | null;
  medias?: string[] | null;
  attachedCustomFields?: { customFieldId: string; required: boolean }[] | null;
}

export interface ProductCreateInput extends ProductFields {
  name: string;
  recurringInterval?: Interval | null;
  prices: PriceInput[];
  organizationId?: string | null;
}

export interface ProductUpdateInput extends ProductFields {
  recurringInterval?: Interval | null;
  isArchived?: boolean | null;
}

export interface ProductListArgs extends PageArgs {
  id?: string[] | null;
  organizationId?: string[] | null;
  query?: string | null;
  isArchived?: boolean | null;
  isRecurring?: boolean | null;
  metadata?: Record<string, unknown> | null;
  sorting?: string[] | null;
}

type PriceData = Omit<Prisma.ProductPriceCreateManyInput, 'productId'>;
type PricePlan = { keep: string; position: number } | { create: PriceData };

function checkAmount(issues: ValidationIssues, loc: Loc, amount: number | null | undefined, required: boolean): void {
  if (amount === null || amount === undefined) {
    if (required) issues.add(loc, 'Field required', 'missing');
  } else if (amount < minimumPriceAmount) {
    issues.add(loc, `Input should be greater than or equal to ${minimumPriceAmount}`, 'greater_than_equal');
  } else if (amount > maximumPriceAmount) {
    issues.add(loc, `Input should be less than or equal to ${maximumPriceAmount}`, 'less_than_equal');
  }
}

function forbid(issues: ValidationIssues, loc: Loc, price: PriceInput, fields: (keyof PriceInput)[], why: string): void {
  for (const field of fields) {
    if (price[field] !== undefined && price[field] !== null) issues.add([...loc, field], why, 'extra_forbidden');
  }
}

/** Checks the submitted prices and plans them: prices to keep by id, prices to create. */
function planPrices(
  issues: ValidationIssues,
  prices: PriceInput[],
  recurringInterval: Interval | null,
  existing: Set<string> | null,
): PricePlan[] {
  const loc: Loc = ['input', 'prices'];
  if (prices.length === 0) issues.add(loc, 'List should have at least 1 item after validation, not 0', 'too_short');
  if (prices.length > 1) issues.add(loc, 'A product has exactly one static price (fixed, custom or free).', 'value_error');
  return prices.map((price, position): PricePlan => {
    const at: Loc = [...loc, position];
    if (price.id) {
      if (!existing) issues.add([...at, 'id'], 'An existing price can only be kept when updating a product.');
      else if (!existing.has(price.id)) issues.add([...at, 'id'], 'Price not found among the live prices of this product.');
      forbid(issues, at, price, ['amountType', 'priceAmount', 'priceCurrency', 'minimumAmount', 'maximumAmount', 'presetAmount'], 'An existing price is kept by its id alone; create a new price to change it.');
      return { keep: price.id, position };
    }
    if (!price.amountType) {
      issues.add([...at, 'amountType'], 'Field required: fixed, custom or free (or the id of an existing price)', 'missing');
      return { create: { amountType: 'free', position } };
    }
    const priceCurrency = (price.priceCurrency ?? 'usd').toLowerCase();
    // The ISO table, not Intl's list: an amount is only meaningful with the currency's minor unit.
    if (!isKnownCurrency(priceCurrency)) issues.add([...at, 'priceCurrency'], `"${price.priceCurrency}" is not an ISO 4217 currency code`);
    const base = { amountType: price.amountType, priceCurrency, recurringInterval, position };
    switch (price.amountType) {
      case 'fixed':
        checkAmount(issues, [...at, 'priceAmount'], price.priceAmount, true);
        forbid(issues, at, price, ['minimumAmount', 'maximumAmount', 'presetAmount'], 'Not allowed on a fixed price.');
        return { create: { ...base, priceAmount: price.priceAmount } };
      case 'custom': {
        const { minimumAmount, maximumAmount, presetAmount } = price;
        checkAmount(issues, [...at, 'minimumAmount'], minimumAmount, false);
        checkAmount(issues, [...at, 'maximumAmount'], maximumAmount, false);
        checkAmount(issues, [...at, 'presetAmount'], presetAmount, false);
        const low = minimumAmount ?? minimumPriceAmount;
        const high = maximumAmount ?? maximumPriceAmount;
        if (low > high) issues.add([...at, 'maximumAmount'], 'The maximum amount must be greater than or equal to the minimum amount.');
        if (presetAmount != null && (presetAmount < low || presetAmount > high)) {
          issues.add([...at, 'presetAmount'], 'The preset amount must lie between the minimum and maximum amounts.');
        }
        forbid(issues, at, price, ['priceAmount'], 'Not allowed on a custom price: set minimum, maximum and preset amounts.');
        return { create: { ...base, minimumAmount, maximumAmount, presetAmount } };
      }
      case 'free':
        forbid(issues, at, price, ['priceAmount', 'minimumAmount', 'maximumAmount', 'presetAmount'], 'Not allowed on a free price.');
        return { create: { ...base, priceCurrency: 'usd' } };
    }
  });
}

function checkCommonFields(issues: ValidationIssues, input: ProductFields): void {
  if (input.name !== undefined && input.name !== null) {
    const name = input.name.trim();
    if (name.length < 3) issues.add(['input', 'name'], 'String should have at least 3 characters', 'string_too_short');
    if (name.length > 256) issues.add(['input', 'name'], 'String should have at most 256 characters', 'string_too_long');
  }
  if (input.description && input.description.length > 10_000) {
    issues.add(['input', 'description'], 'String should have at most 10000 characters', 'string_too_long');
  }
  if (input.medias?.length) issues.add(['input', 'medias'], 'Product media files are not supported by this server; send an empty list.');
}

type AttachedCustomFieldInput = NonNullable<ProductFields['attachedCustomFields']>[number];

/**
 * The custom fields a product asks at checkout, in the order given: each a live field of the
 * product's organization, each once. Another organization's field is answered as not found.
 */
async function checkAttachedCustomFields(db: Db, issues: ValidationIssues, organizationId: string, attached: AttachedCustomFieldInput[]) {
  const loc: Loc = ['input', 'attachedCustomFields'];
  const ids = attached.map((a) => a.customFieldId);
  const found = ids.length ? await db.customField.findMany({ where: { id: { in: ids }, organizationId, deletedAt: null }, select: { id: true } }) : [];
  attached.forEach((a, i) => {
    if (!found.some((f) => f.id === a.customFieldId)) issues.add([...loc, i, 'customFieldId'], 'Custom field not found.');
    else if (ids.indexOf(a.customFieldId) !== i) issues.add([...loc, i, 'customFieldId'], 'Each custom field may be attached once.');
  });
  return attached.map((a, order) => ({ customFieldId: a.customFieldId, required: a.required, order }));
}

/** The product's sort keys, from its live static price. */
function sortKeys(price: { amountType: AmountType; priceAmount?: number | null; minimumAmount?: number | null }) {
  const amount = price.amountType === 'fixed' ? price.priceAmount : price.amountType === 'custom' ? (price.minimumAmount ?? 0) : 0;
  return { priceAmountType: price.amountType, priceAmount: amount ?? 0 };
}

const livePrices = { where: { isArchived: false }, orderBy: [{ position: 'asc' as const }, { createdAt: 'asc' as const }] };

export async function listProducts(ctx: Context, args: ProductListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.ProductWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.id?.length ? { id: { in: args.id } } : {}),
    ...(args.query ? { name: { contains: escapeLike(args.query), mode: 'insensitive' } } : {}),
    ...(args.isArchived != null ? { isArchived: args.isArchived } : {}),
    ...(args.isRecurring != null ? { isRecurring: args.isRecurring } : {}),
    AND: metadataWhere(args.metadata),
  };
  const orderBy = sortingOrderBy<(typeof productSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-created_at'], (property, sort) => {
    switch (property) {
      case 'created_at':
        return { createdAt: sort };
      case 'name':
        return { name: sort };
      case 'price_amount_type':
        return { priceAmountType: { sort, nulls: 'last' } };
      case 'price_amount':
        return { priceAmount: { sort, nulls: 'last' } };
    }
  });
  const [items, total] = await Promise.all([
    ctx.prisma.product.findMany({ ...query, where, orderBy: orderBy as Prisma.ProductOrderByWithRelationInput[], ...window }),
    ctx.prisma.product.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getProduct(ctx: Context, id: string, query: object) {
  const product = await ctx.prisma.product.findFirst({ ...query, where: { id, organizationId: organizationFilter(ctx) } });
  if (!product) throw new ResourceNotFoundError('Product not found.');
  return product;
}

export async function createProduct(ctx: Context, input: ProductCreateInput, query: object) {
  const issues = new ValidationIssues();
  checkCommonFields(issues, input);
  const interval = (wireOnlyValue(ctx, ['input', 'recurringInterval']) as Interval | undefined) ?? input.recurringInterval ?? null;
  if (interval === 'day' || interval === 'week') {
    issues.add(['input', 'recurringInterval'], 'Recurring products bill monthly or yearly: use month or year.');
  }
  const plan = planPrices(issues, input.prices, interval, null);
  let organizationId = '';
  try {
    organizationId = owningOrganization(ctx, input.organizationId, ['input', 'organizationId']);
  } catch (error) {
    issues.list.push(...(error as { issues: ValidationIssues['list'] }).issues);
  }
  const customFields = organizationId && input.attachedCustomFields?.length ? await checkAttachedCustomFields(ctx.prisma, issues, organizationId, input.attachedCustomFields) : [];
  issues.throwIfAny();
  const prices = plan.flatMap((p) => ('create' in p ? [p.create] : []));
  return ctx.prisma.product.create({
    ...query,
    data: {
      organizationId,
      name: input.name.trim(),
      description: input.description ?? null,
      isRecurring: interval !== null,
      recurringInterval: interval,
      metadata: input.metadata ?? {},
      ...sortKeys(prices[0] as Parameters<typeof sortKeys>[0]),
      prices: { createMany: { data: prices } },
      customFields: { createMany: { data: customFields } },
    },
  });
}

export async function updateProduct(ctx: Context, id: string, input: ProductUpdateInput, query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    // Locks the product row: concurrent price replacements apply one after the other.
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM products WHERE id = ${id}::uuid FOR UPDATE`;
    const product = locked.length
      ? await tx.product.findFirst({ where: { id, organizationId: organizationFilter(ctx) }, include: { prices: livePrices } })
      : null;
    if (!product) throw new ResourceNotFoundError('Product not found.');

    const issues = new ValidationIssues();
    checkCommonFields(issues, input);
    const interval = wireOnlyValue(ctx, ['input', 'recurringInterval']) ?? input.recurringInterval;
    if (interval !== undefined && interval !== product.recurringInterval) {
      issues.add(['input', 'recurringInterval'], "A product's recurring interval cannot be changed once set; create a new product instead.");
    }
    const plan = input.prices ? planPrices(issues, input.prices, product.recurringInterval, new Set(product.prices.map((p) => p.id))) : null;
    const customFields = input.attachedCustomFields ? await checkAttachedCustomFields(tx as Db, issues, product.organizationId, input.attachedCustomFields) : null;
    issues.throwIfAny();
    if (customFields) {
      await tx.productCustomField.deleteMany({ where: { productId: id } });
      await tx.productCustomField.createMany({ data: customFields.map((c) => ({ ...c, productId: id })) });
    }

    const data: Prisma.ProductUpdateInput = {};
    if (input.name != null) data.name = input.name.trim();
    if (input.description !== undefined) data.description = input.description;
    if (input.metadata != null) data.metadata = input.metadata;
    if (input.isArchived != null) data.isArchived = input.isArchived;
    if (plan) {
      const kept = plan.flatMap((p) => ('keep' in p ? [p] : []));
      await tx.productPrice.updateMany({
        where: { productId: id, isArchived: false, id: { notIn: kept.map((k) => k.keep) } },
        data: { isArchived: true },
      });
      for (const k of kept) await tx.productPrice.update({ where: { id: k.keep }, data: { position: k.position } });
      const created = plan.flatMap((p) => ('create' in p ? [p.create] : []));
      if (created.length) await tx.productPrice.createMany({ data: created.map((c) => ({ ...c, productId: id })) });
      const live = created[0] ?? product.prices.find((p) => p.id === kept[0]?.keep);
      if (live) Object.assign(data, sortKeys(live as Parameters<typeof sortKeys>[0]));
    }
    return tx.product.update({ ...query, where: { id }, data });
  });
}
