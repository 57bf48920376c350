import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortingScalarConfig } from '../../graphql/sorting.ts';
import { PriceAmountType as PriceAmountTypes, RecurringInterval as RecurringIntervals } from '../../generated/prisma/enums.ts';
import { createProduct, getProduct, listProducts, productSortProperties, updateProduct } from './service.ts';

export const RecurringInterval = builder.enumType(RecurringIntervals, {
  name: 'RecurringInterval',
  description: 'How often a recurring product bills. Products bill monthly or yearly.',
});
export const PriceAmountType = builder.enumType(PriceAmountTypes, {
  name: 'PriceAmountType',
  description: 'fixed: a set amount; custom: the buyer chooses (pay what you want); free: no charge.',
});
export const ProductPriceType = builder.enumType('ProductPriceType', { values: ['one_time', 'recurring'] as const });
const ProductSortProperty = builder.scalarType('ProductSortProperty', sortingScalarConfig(productSortProperties));

export const ProductPrice = builder.prismaInterface('ProductPrice', {
  description: 'A price of a product. Amounts are integer minor units (cents) of the price currency.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
    amountType: t.expose('amountType', { type: PriceAmountType }),
    isArchived: t.exposeBoolean('isArchived'),
    productId: t.expose('productId', { type: 'UUID' }),
    type: t.field({ type: ProductPriceType, resolve: (price) => (price.recurringInterval ? 'recurring' : 'one_time') }),
    recurringInterval: t.expose('recurringInterval', { type: RecurringInterval, nullable: true, deprecationReason: 'use the product recurringInterval' }),
  }),
  resolveType: (price) => ({ fixed: 'ProductPriceFixed', custom: 'ProductPriceCustom', free: 'ProductPriceFree' })[price.amountType],
});

builder.prismaObject('ProductPrice', {
  variant: 'ProductPriceFixed',
  interfaces: [ProductPrice],
  fields: (t) => ({
    priceCurrency: t.exposeString('priceCurrency'),
    priceAmount: t.int({ resolve: (price) => price.priceAmount ?? 0 }),
  }),
});

builder.prismaObject('ProductPrice', {
  variant: 'ProductPriceCustom',
  description: 'Pay what you want, between the minimum and maximum amounts.',
  interfaces: [ProductPrice],
  fields: (t) => ({
    priceCurrency: t.exposeString('priceCurrency'),
    minimumAmount: t.exposeInt('minimumAmount', { nullable: true }),
    maximumAmount: t.exposeInt('maximumAmount', { nullable: true }),
    presetAmount: t.exposeInt('presetAmount', { nullable: true }),
  }),
});

builder.prismaObject('ProductPrice', { variant: 'ProductPriceFree', interfaces: [ProductPrice], fields: () => ({}) });

type ProductFieldBuilder = PrismaFieldBuilder<'Product'>;

/** A product's own fields and live prices, without its metadata: what its buyers see of it too. */
export const productFields = (t: ProductFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  name: t.exposeString('name'),
  description: t.exposeString('description', { nullable: true }),
  recurringInterval: t.expose('recurringInterval', { type: RecurringInterval, nullable: true }),
  isRecurring: t.exposeBoolean('isRecurring'),
  isArchived: t.exposeBoolean('isArchived'),
  organizationId: t.expose('organizationId', { type: 'UUID' }),
  prices: t.relation('prices', {
    type: ProductPrice,
    description: 'The live (not archived) prices.',
    query: { where: { isArchived: false }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] },
  }),
});

export const Product = builder.prismaObject('Product', {
  description: 'Something an organization sells, one-time or recurring, with its price.',
  fields: (t) => ({
    ...productFields(t as unknown as ProductFieldBuilder),
    metadata: t.field({ type: MetadataScalar, resolve: (product) => product.metadata as Metadata }),
    organization: t.relation('organization'),
  }),
});

const ProductList = listType('Product', Product);

const ProductPriceInput = builder.inputType('ProductPriceInput', {
  description: 'A new price (by amountType and its amounts), or, when updating, an existing price kept by its id.',
  fields: (t) => ({
    id: t.field({ type: 'UUID', description: 'Keeps this existing price (update only).' }),
    amountType: t.field({ type: PriceAmountType }),
    priceCurrency: t.string({ description: 'ISO 4217 code, lowercase; usd when omitted.' }),
    priceAmount: t.int({ description: 'fixed: the amount in minor units.' }),
    minimumAmount: t.int({ description: 'custom: the least a buyer may pay.' }),
    maximumAmount: t.int({ description: 'custom: the most a buyer may pay.' }),
    presetAmount: t.int({ description: 'custom: the amount suggested to the buyer.' }),
  }),
});

const AttachedCustomFieldInput = builder.inputType('AttachedCustomFieldInput', {
  fields: (t) => ({
    customFieldId: t.field({ type: 'UUID', required: true }),
    required: t.boolean({ required: true }),
  }),
});

const ProductCreateInput = builder.inputType('ProductCreateInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    description: t.string(),
    recurringInterval: t.field({ type: RecurringInterval, description: 'month or year for a subscription; null for a one-time purchase.' }),
    prices: t.field({ type: [ProductPriceInput], required: true }),
    metadata: t.field({ type: MetadataScalar }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    medias: t.field({ type: ['UUID'] }),
    attachedCustomFields: t.field({ type: [AttachedCustomFieldInput] }),
  }),
});

const ProductUpdateInput = builder.inputType('ProductUpdateInput', {
  description: 'Only the fields given change. `prices` replaces the live prices: keep one by its id, or give a new one.',
  fields: (t) => ({
    name: t.string(),
    description: t.string(),
    recurringInterval: t.field({ type: RecurringInterval }),
    isArchived: t.boolean(),
    prices: t.field({ type: [ProductPriceInput] }),
    metadata: t.field({ type: MetadataScalar }),
    medias: t.field({ type: ['UUID'] }),
    attachedCustomFields: t.field({ type: [AttachedCustomFieldInput] }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  products: t.field({
    type: ProductList,
    authScopes: { scope: ['products:read', 'products:write'] },
    args: {
      ...pageArgs(t.arg),
      id: t.arg({ type: ['UUID'] }),
      organizationId: t.arg({ type: ['UUID'] }),
      query: t.arg.string({ description: 'Matches product names, case-insensitively.' }),
      isArchived: t.arg.boolean(),
      isRecurring: t.arg.boolean(),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [ProductSortProperty], description: 'Default: -created_at.' }),
    },
    resolve: (_root, args, ctx, info) => listProducts(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  product: t.prismaField({
    type: 'Product',
    authScopes: { scope: ['products:read', 'products:write'] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getProduct(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  productCreate: t.prismaField({
    type: 'Product',
    authScopes: { scope: 'products:write' },
    args: { input: t.arg({ type: ProductCreateInput, required: true }) },
    resolve: (query, _root, { input }, ctx) => createProduct(ctx, input, query),
  }),
  productUpdate: t.prismaField({
    type: 'Product',
    authScopes: { scope: 'products:write' },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: ProductUpdateInput, required: true }) },
    resolve: (query, _root, { id, input }, ctx) => updateProduct(ctx, id, input, query),
  }),
}));
