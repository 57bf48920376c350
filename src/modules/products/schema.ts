import { GraphQLEnumType } from 'graphql';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { wireOnlyExtension, wireExtension } from '../../graphql/wire-values.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import type { PriceAmountType as PriceAmountTypes, RecurringInterval as RecurringIntervals } from '../../generated/prisma/enums.ts';
import { CustomField } from '../custom-fields/schema.ts';
import { createProduct, getProduct, listProducts, productSortProperties, updateProduct } from './service.ts';

const recurringIntervalDescription = 'How often a recurring product bills. Products bill monthly or yearly.';
// REST still checks the interval against every value the wire format names (`day` and `week`
// too), so an unknown one gets the same error as before; the product inputs take those two from
// REST only for the service to refuse them with their own message (wireOnlyIntervals below).
const restRecurringInterval = new GraphQLEnumType({
  name: 'RecurringInterval',
  description: recurringIntervalDescription,
  values: { day: {}, week: {}, month: {}, year: {} } satisfies Record<RecurringIntervals, object>,
});
export const RecurringInterval = builder.enumType('RecurringInterval', {
  description: recurringIntervalDescription,
  values: {
    month: { description: 'Every month, on the day of the month the subscription started.' },
    year: { description: 'Every year, on the date the subscription started.' },
  },
  extensions: wireExtension(restRecurringInterval),
});
/**
 * A stored interval as the enum. The database type still names `day` and `week`, but no input
 * writes them; were one stored, serializing it would fail the field rather than pass it on.
 */
export function billingInterval<I extends RecurringIntervals | null>(interval: I) {
  return interval as Exclude<I, 'day' | 'week'>;
}
/** REST still takes `day` and `week`, which no product may have; the service refuses them. */
const wireOnlyIntervals = wireOnlyExtension(['day', 'week'], 'month');

export const PriceAmountType = builder.enumType('PriceAmountType', {
  description: 'How the amount of a price is set.',
  values: {
    fixed: { description: 'A set amount (`priceAmount`).' },
    custom: { description: 'The buyer chooses the amount (pay what you want), between optional bounds.' },
    free: { description: 'No charge.' },
    metered_unit: { description: "A price per unit of a meter's usage (`unitAmount`, up to `capAmount`), billed each period in arrears." },
  } satisfies Record<PriceAmountTypes, object>,
});
export const ProductPriceType = builder.enumType('ProductPriceType', {
  description: 'Whether a price is paid once or every interval of its product.',
  values: {
    one_time: { description: 'Paid once, at checkout.' },
    recurring: { description: 'Paid every `recurringInterval` of the product, by a subscription.' },
  },
});
const ProductSortOrder = sortOrderEnum(
  'ProductSortOrder',
  'products',
  {
  created_at: 'when the product was created',
  name: 'name',
  price_amount_type: 'the amount type of its price (fixed, custom, free), products without one last',
  price_amount: 'the amount of its price, products without one last',
  } satisfies Record<(typeof productSortProperties)[number], string>,
  'ProductSortProperty',
);

export const ProductPrice = builder.prismaInterface('ProductPrice', {
  description: 'A price of a product. Amounts are integer ISO 4217 minor units of the price currency: cents for usd, yen for jpy (no decimals), fils for kwd (three).',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: "The price's id." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the price was created.' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the price was last changed; null if never.' }),
    amountType: t.expose('amountType', { type: PriceAmountType, description: 'How the amount is set; also tells which of the three price types this is.' }),
    isArchived: t.exposeBoolean('isArchived', {
      description: 'An archived price is no longer offered (it was replaced); orders and subscriptions made at it keep it.',
    }),
    productId: t.expose('productId', { type: 'UUID', description: 'The product the price belongs to.' }),
    type: t.field({ type: ProductPriceType, description: "one_time or recurring, following the product's recurringInterval.", resolve: (price) => (price.recurringInterval ? 'recurring' : 'one_time') }),
    recurringInterval: t.field({
      type: RecurringInterval,
      nullable: true,
      deprecationReason: 'use the product recurringInterval',
      description: "The product's recurringInterval, repeated on the price; null for a one-time price.",
      resolve: (price) => billingInterval(price.recurringInterval),
    }),
  }),
  resolveType: (price) => ({ fixed: 'ProductPriceFixed', custom: 'ProductPriceCustom', free: 'ProductPriceFree', metered_unit: 'ProductPriceMeteredUnit' })[price.amountType],
});

const priceCurrencyDescription = 'The currency: an ISO 4217 code, lowercase, such as `usd`.';

builder.prismaObject('ProductPrice', {
  variant: 'ProductPriceFixed',
  description: 'A set amount.',
  interfaces: [ProductPrice],
  fields: (t) => ({
    priceCurrency: t.exposeString('priceCurrency', { description: priceCurrencyDescription }),
    priceAmount: t.int({ description: 'The amount, in integer minor units of priceCurrency (cents for usd, yen for jpy).', resolve: (price) => price.priceAmount ?? 0 }),
  }),
});

builder.prismaObject('ProductPrice', {
  variant: 'ProductPriceCustom',
  description: 'Pay what you want, between the minimum and maximum amounts.',
  interfaces: [ProductPrice],
  fields: (t) => ({
    priceCurrency: t.exposeString('priceCurrency', { description: priceCurrencyDescription }),
    minimumAmount: t.exposeInt('minimumAmount', { nullable: true, description: 'The least a buyer may pay, in minor units of priceCurrency; null: 50.' }),
    maximumAmount: t.exposeInt('maximumAmount', { nullable: true, description: 'The most a buyer may pay, in minor units of priceCurrency; null: 99999999.' }),
    presetAmount: t.exposeInt('presetAmount', { nullable: true, description: 'The amount suggested to the buyer, in minor units of priceCurrency; null: none.' }),
  }),
});

builder.prismaObject('ProductPrice', { variant: 'ProductPriceFree', description: 'No charge.', interfaces: [ProductPrice], fields: () => ({}) });

const ProductPriceMeter = builder.objectRef<{ id: string; name: string }>('ProductPriceMeter').implement({
  description: 'The meter a metered price bills.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "The meter's id." }),
    name: t.exposeString('name', { description: "The meter's name, which labels the price's order items." }),
  }),
});

builder.prismaObject('ProductPrice', {
  variant: 'ProductPriceMeteredUnit',
  description: "A price per unit of a meter's usage, billed at the end of each period for the period's usage past the customer's meter credits.",
  interfaces: [ProductPrice],
  fields: (t) => ({
    priceCurrency: t.exposeString('priceCurrency', { description: priceCurrencyDescription }),
    unitAmount: t.field({
      type: 'UnitAmount',
      description: 'Minor units of priceCurrency per unit of usage, exact, fractions of a minor unit allowed ("0.5": half a cent per unit for usd).',
      resolve: (price) => (price.unitAmount ? price.unitAmount.toFixed() : '0'),
    }),
    capAmount: t.exposeInt('capAmount', { nullable: true, description: "The most a period's usage is billed, in minor units; null: no cap." }),
    meterId: t.field({ type: 'UUID', description: 'The meter whose usage the price bills.', resolve: (price) => price.meterId ?? '' }),
    meter: t.field({
      type: ProductPriceMeter,
      description: 'The meter whose usage the price bills.',
      select: { meter: { select: { id: true, name: true } } },
      resolve: (price) => price.meter!,
    }),
  }),
});

type ProductFieldBuilder = PrismaFieldBuilder<'Product'>;

/** A product's own fields and live prices, without its metadata: what its buyers see of it too. */
export const productFields = (t: ProductFieldBuilder) => ({
  id: t.exposeID('id', { description: "The product's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the product was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the product was last changed; null if never.' }),
  name: t.exposeString('name', { description: 'The name shown to buyers, 3 to 256 characters.' }),
  description: t.exposeString('description', { nullable: true, description: 'A longer text shown to buyers; null if none.' }),
  recurringInterval: t.field({
    type: RecurringInterval,
    nullable: true,
    description: 'How often a subscription to it bills; null for a one-time product.',
    resolve: (product) => billingInterval(product.recurringInterval),
  }),
  isRecurring: t.exposeBoolean('isRecurring', { description: 'Whether buying it starts a subscription (recurringInterval is set).' }),
  isArchived: t.exposeBoolean('isArchived', { description: 'An archived product can no longer be bought; existing subscriptions go on.' }),
  organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization that sells it.' }),
  prices: t.relation('prices', {
    type: ProductPrice,
    description: 'The live (not archived) prices.',
    query: { where: { isArchived: false }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] },
  }),
});

/** A custom field as a product asks it. */
export const AttachedCustomField = builder.prismaObject('ProductCustomField', {
  name: 'AttachedCustomField',
  description: 'A custom field asked at the checkout of a product: where, and whether the buyer must answer it.',
  fields: (t) => ({
    customFieldId: t.expose('customFieldId', { type: 'UUID', description: 'The custom field.' }),
    customField: t.relation('customField', { type: CustomField, description: 'The custom field, with its properties.' }),
    order: t.exposeInt('order', { description: 'Its place among the fields the product asks, from 0.' }),
    required: t.exposeBoolean('required', { description: 'Whether the buyer must answer it to confirm.' }),
  }),
});

/** The custom fields a product asks at checkout, in order. */
export const attachedCustomFieldsField = (t: ProductFieldBuilder) =>
  t.relation('customFields', { type: AttachedCustomField, description: 'The custom fields asked at checkout, in order.', query: { orderBy: { order: 'asc' } } });

export const Product = builder.prismaObject('Product', {
  interfaces: [Node],
  description: 'Something an organization sells, one-time or recurring, with its price.',
  fields: (t) => ({
    ...productFields(t as unknown as ProductFieldBuilder),
    attachedCustomFields: attachedCustomFieldsField(t as unknown as ProductFieldBuilder),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data; never shown to buyers.", resolve: (product) => product.metadata as Metadata }),
    organization: t.relation('organization', { description: 'The organization that sells it.' }),
  }),
});

const ProductList = listType('Product', Product);

const ProductPriceInput = builder.inputType('ProductPriceInput', {
  description: 'A new price (by amountType and its amounts), or, when updating, an existing price kept by its id.',
  fields: (t) => ({
    id: t.field({ type: 'UUID', description: 'Keeps this existing price (update only).' }),
    amountType: t.field({ type: PriceAmountType, description: 'Required for a new price; not allowed with id.' }),
    priceCurrency: t.string({ description: 'ISO 4217 code, lowercase; usd when omitted.' }),
    priceAmount: t.int({ description: 'fixed (and only fixed): the amount in minor units, 50 to 99999999.' }),
    minimumAmount: t.int({ description: 'custom: the least a buyer may pay, in minor units, 50 to 99999999.' }),
    maximumAmount: t.int({ description: 'custom: the most a buyer may pay, in minor units; at least minimumAmount.' }),
    presetAmount: t.int({ description: 'custom: the amount suggested to the buyer, in minor units, between the minimum and maximum.' }),
    meterId: t.field({ type: 'UUID', description: 'metered_unit: the meter billed, a live meter of the organization.' }),
    unitAmount: t.field({ type: 'UnitAmount', description: 'metered_unit: minor units per unit of usage, above 0, up to 12 decimal places ("0.5").' }),
    capAmount: t.int({ description: "metered_unit: the most a period's usage is billed, in minor units, 0 to 99999999; no cap when omitted." }),
  }),
});

const AttachedCustomFieldInput = builder.inputType('AttachedCustomFieldInput', {
  description: 'A custom field asked at the checkout of the product.',
  fields: (t) => ({
    customFieldId: t.field({ type: 'UUID', required: true, description: 'The custom field to ask.' }),
    required: t.boolean({ required: true, description: 'Whether the buyer must answer it.' }),
  }),
});

const ProductCreateInput = builder.inputType('ProductCreateInput', {
  description: 'A new product.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'The name shown to buyers, 3 to 256 characters (trimmed).' }),
    description: t.string({ description: 'A longer text shown to buyers, at most 10000 characters.' }),
    recurringInterval: t.field({
      type: RecurringInterval,
      description: 'month or year for a subscription; null for a one-time purchase.',
      extensions: wireOnlyIntervals,
    }),
    prices: t.field({ type: [ProductPriceInput], required: true, description: 'Exactly one static price (fixed, custom or free), and for a recurring product any metered_unit prices, one per meter.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data; empty when omitted." }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    medias: t.field({ type: ['UUID'], description: 'Product images. Not supported: send an empty list or omit it.' }),
    attachedCustomFields: t.field({
      type: [AttachedCustomFieldInput],
      description: "The organization's custom fields asked at checkout, in this order, each once; BAD_USER_INPUT for a field not found.",
    }),
  }),
});

const ProductUpdateInput = builder.inputType('ProductUpdateInput', {
  description: 'Only the fields given change. `prices` replaces the live prices: keep one by its id, or give a new one.',
  fields: (t) => ({
    name: t.string({ description: 'A new name, 3 to 256 characters.' }),
    description: t.string({ description: 'A new description; null clears it.' }),
    recurringInterval: t.field({
      type: RecurringInterval,
      description: 'Cannot change once set: only the current value is accepted.',
      extensions: wireOnlyIntervals,
    }),
    isArchived: t.boolean({ description: 'true archives the product (no new purchases); false offers it again.' }),
    prices: t.field({ type: [ProductPriceInput], description: 'The new live prices: one static price and any metered ones. A price not kept is archived.' }),
    metadata: t.field({ type: MetadataScalar, description: 'Replaces the whole metadata object.' }),
    medias: t.field({ type: ['UUID'], description: 'Product images. Not supported: send an empty list or omit it.' }),
    attachedCustomFields: t.field({ type: [AttachedCustomFieldInput], description: 'Replaces the custom fields asked at checkout, in this order; empty asks none.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  products: t.field({
    type: ProductList,
    description: 'The products of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: { scope: ['products:read', 'products:write'] },
    args: {
      ...pageArgs(t.arg),
      id: t.arg({ type: ['UUID'], description: 'Only these products.' }),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      query: t.arg.string({ description: 'Matches product names, case-insensitively.' }),
      isArchived: t.arg.boolean({ description: 'true: only archived products; false: only those on sale; omitted: both.' }),
      isRecurring: t.arg.boolean({ description: 'true: only subscription products; false: only one-time ones; omitted: both.' }),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [ProductSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listProducts(ctx, args, pageQuery(ctx, info)),
  }),
  product: t.prismaField({
    type: 'Product',
    description: 'One product; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: ['products:read', 'products:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The product's id." }) },
    resolve: (query, _root, { id }, ctx) => getProduct(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  productCreate: t.prismaField({
    type: 'Product',
    description:
      'Creates a product with its one price. BAD_USER_INPUT names each invalid field: a short name, no or several prices, an amount out of range, an unknown currency, a custom field not found.',
    authScopes: { scope: 'products:write' },
    args: { input: t.arg({ type: ProductCreateInput, required: true, description: 'The product to create.' }) },
    resolve: (query, _root, { input }, ctx) => createProduct(ctx, input, query),
  }),
  productUpdate: t.prismaField({
    type: 'Product',
    description:
      'Changes a product. Replacing its price archives the old one; orders and subscriptions keep the price they were made at. RESOURCE_NOT_FOUND if the token does not reach it; BAD_USER_INPUT as for productCreate, or for a changed recurringInterval.',
    authScopes: { scope: 'products:write' },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The product's id." }),
      input: t.arg({ type: ProductUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateProduct(ctx, id, input, query),
  }),
}));

/** node(id:) answers for products as core.product does. */
export const productNodeLoader: NodeLoader = { surface: 'core', model: 'product', typeName: 'Product', scopes: ['products:read', 'products:write'], load: getProduct };
