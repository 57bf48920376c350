// Products and their prices. Amounts are integer minor units of `priceCurrency`. A product has
// exactly one live static price (fixed, custom or free); a recurring product may add metered
// prices (metered_unit), one per meter, billed in arrears from a meter's usage. Replacing a price
// archives the old one, so an amount that was ever sold against is never edited.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { isKnownCurrency } from '../../currencies.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import { metadataWhere, type Metadata } from '../../graphql/metadata.ts';
import { wireOnlyValue } from '../../graphql/wire-values.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';

export const minimumPriceAmount = 50;
export const maximumPriceAmount = 99_999_999;
export const productSortProperties = ['created_at', 'name', 'price_amount_type', 'price_amount'] as const;

type AmountType = 'fixed' | 'custom' | 'free' | 'metered_unit';
type Interval = 'day' | 'week' | 'month' | 'year';

export interface PriceInput {
  id?: string | null;
  amountType?: AmountType | null;
  priceCurrency?: string | null;
  priceAmount?: number | null;
  minimumAmount?: number | null;
  maximumAmount?: number | null;
  presetAmount?: number | null;
  meterId?: string | null;
  unitAmount?: string | null;
  capAmount?: number | null;
}

/** A metered price's unit amount: minor units, up to 12 decimal places, above 0. */
const unitAmountPattern = /^\d{1,18}(\.\d{1,12})?$/;
export const maximumUnitAmount = new Prisma.Decimal(maximumPriceAmount);

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

const billingIntervalOf = (interval: string | null) => interval as Interval | null;

function forbid(issues: ValidationIssues, loc: Loc, price: PriceInput, fields: (keyof PriceInput)[], why: string): void {
  for (const field of fields) {
    if (price[field] !== undefined && price[field] !== null) issues.add([...loc, field], why, 'extra_forbidden');
  }
}

const staticFields: (keyof PriceInput)[] = ['priceAmount', 'minimumAmount', 'maximumAmount', 'presetAmount'];
const meteredFields: (keyof PriceInput)[] = ['meterId', 'unitAmount', 'capAmount'];

/**
 * Checks the submitted prices and plans them: prices to keep by id, prices to create. A product
 * has exactly one static price (fixed, custom or free); a recurring one may add metered prices,
 * each on its own meter, in the static price's currency. `existing` maps the live prices' ids to
 * their types when updating. The meters themselves are checked by checkMeters.
 */
function planPrices(
  issues: ValidationIssues,
  prices: PriceInput[],
  recurringInterval: Interval | null,
  existing: Map<string, { amountType: AmountType; meterId: string | null; priceCurrency: string }> | null,
): PricePlan[] {
  const loc: Loc = ['input', 'prices'];
  if (prices.length === 0) issues.add(loc, 'List should have at least 1 item after validation, not 0', 'too_short');
  const plans = prices.map((price, position): PricePlan => {
    const at: Loc = [...loc, position];
    if (price.id) {
      if (!existing) issues.add([...at, 'id'], 'An existing price can only be kept when updating a product.');
      else if (!existing.has(price.id)) issues.add([...at, 'id'], 'Price not found among the live prices of this product.');
      forbid(issues, at, price, ['amountType', 'priceCurrency', ...staticFields, ...meteredFields], 'An existing price is kept by its id alone; create a new price to change it.');
      return { keep: price.id, position };
    }
    if (!price.amountType) {
      issues.add([...at, 'amountType'], 'Field required: fixed, custom, free or metered_unit (or the id of an existing price)', 'missing');
      return { create: { amountType: 'free', position } };
    }
    const priceCurrency = (price.priceCurrency ?? 'usd').toLowerCase();
    // The ISO table, not Intl's list: an amount is only meaningful with the currency's minor unit.
    if (!isKnownCurrency(priceCurrency)) issues.add([...at, 'priceCurrency'], `"${price.priceCurrency}" is not an ISO 4217 currency code`);
    const base = { amountType: price.amountType, priceCurrency, recurringInterval, position };
    if (price.amountType !== 'metered_unit') forbid(issues, at, price, meteredFields, `Not allowed on a ${price.amountType} price: only metered_unit prices have a meter.`);
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
        forbid(issues, at, price, staticFields, 'Not allowed on a free price.');
        return { create: { ...base, priceCurrency: 'usd' } };
      case 'metered_unit': {
        if (recurringInterval === null) issues.add(at, 'A metered price bills usage every period: it needs a recurring product (recurring_interval month or year).');
        forbid(issues, at, price, staticFields, 'Not allowed on a metered price: set unit_amount and an optional cap_amount.');
        if (!price.meterId) issues.add([...at, 'meterId'], 'Field required', 'missing');
        const unitAmount = checkUnitAmount(issues, [...at, 'unitAmount'], price.unitAmount);
        const { capAmount } = price;
        if (capAmount != null && capAmount < 0) issues.add([...at, 'capAmount'], 'Input should be greater than or equal to 0', 'greater_than_equal');
        else if (capAmount != null && capAmount > maximumPriceAmount) issues.add([...at, 'capAmount'], `Input should be less than or equal to ${maximumPriceAmount}`, 'less_than_equal');
        return { create: { ...base, meterId: price.meterId ?? null, unitAmount, capAmount: capAmount ?? null } };
      }
    }
  });
  // The live prices once the plan applies: the kept ones as they are, the new ones as given.
  const live = plans.map((plan, position) =>
    'keep' in plan ? { position, ...(existing?.get(plan.keep) ?? { amountType: 'free' as AmountType, meterId: null, priceCurrency: 'usd' }) } : { position, amountType: plan.create.amountType as AmountType, meterId: plan.create.meterId ?? null, priceCurrency: plan.create.priceCurrency ?? 'usd' },
  );
  const statics = live.filter((p) => p.amountType !== 'metered_unit');
  if (prices.length > 0 && statics.length !== 1) {
    issues.add(loc, 'A product has exactly one static price (fixed, custom or free), beside any metered prices.', 'value_error');
  }
  const seen = new Set<string>();
  for (const price of live.filter((p) => p.amountType === 'metered_unit')) {
    const at: Loc = [...loc, price.position];
    if (price.meterId && seen.has(price.meterId)) issues.add([...at, 'meterId'], 'A product has one metered price per meter.');
    if (price.meterId) seen.add(price.meterId);
    const base = statics[0];
    if (base && base.amountType !== 'free' && base.priceCurrency !== price.priceCurrency) {
      issues.add([...at, 'priceCurrency'], `A metered price bills on the same orders as the product's ${base.priceCurrency} price: use ${base.priceCurrency}.`);
    }
  }
  return plans;
}

/** A unit amount as given (text or number), checked and kept exact as a decimal. */
function checkUnitAmount(issues: ValidationIssues, loc: Loc, given: string | null | undefined): Prisma.Decimal | null {
  if (given == null) {
    issues.add(loc, 'Field required', 'missing');
    return null;
  }
  const text = given.trim();
  if (/^-/.test(text) && unitAmountPattern.test(text.slice(1))) {
    issues.add(loc, 'Input should be greater than 0', 'greater_than');
    return null;
  }
  if (!unitAmountPattern.test(text)) {
    issues.add(loc, 'Input should be a valid decimal: minor units with at most 12 decimal places, such as "0.5"', 'decimal_parsing');
    return null;
  }
  const amount = new Prisma.Decimal(text);
  if (amount.lte(0)) issues.add(loc, 'Input should be greater than 0', 'greater_than');
  else if (amount.gt(maximumUnitAmount)) issues.add(loc, `Input should be less than or equal to ${maximumPriceAmount}`, 'less_than_equal');
  return amount;
}

/** Metered prices' meters must be live meters of the product's organization. */
async function checkMeters(db: Pick<Context['prisma'], 'meter'>, issues: ValidationIssues, organizationId: string, plans: PricePlan[]): Promise<void> {
  const wanted = plans.flatMap((plan) => ('create' in plan && plan.create.meterId ? [{ meterId: plan.create.meterId, position: plan.create.position ?? 0 }] : []));
  if (!wanted.length || !organizationId) return;
  const meters = await db.meter.findMany({ where: { id: { in: wanted.map((w) => w.meterId) }, organizationId }, select: { id: true, archivedAt: true } });
  for (const { meterId, position } of wanted) {
    const meter = meters.find((m) => m.id === meterId);
    if (!meter) issues.add(['input', 'prices', position, 'meterId'], 'Meter not found.');
    else if (meter.archivedAt) issues.add(['input', 'prices', position, 'meterId'], 'This meter is archived: unarchive it to bill it.');
  }
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

type SortablePrice = { amountType: AmountType; priceAmount?: number | null; minimumAmount?: number | null };

/** The product's sort keys, from its live static price. */
function sortKeys(prices: SortablePrice[]) {
  const price = prices.find((p) => p.amountType !== 'metered_unit') ?? prices[0];
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
  await checkMeters(ctx.prisma, issues, organizationId, plan);
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
      ...sortKeys(prices as SortablePrice[]),
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
    const plan = input.prices ? planPrices(issues, input.prices, billingIntervalOf(product.recurringInterval), new Map(product.prices.map((p) => [p.id, p]))) : null;
    if (plan) await checkMeters(tx, issues, product.organizationId, plan);
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
      const live = [...created, ...product.prices.filter((p) => kept.some((k) => k.keep === p.id))];
      if (live.length) Object.assign(data, sortKeys(live as SortablePrice[]));
    }
    return tx.product.update({ ...query, where: { id }, data });
  });
}
