import type { Scope } from '../../auth/scopes.ts';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import type { Discount as DiscountRow, DiscountDuration as DiscountDurations, DiscountType as DiscountTypes } from '../../generated/prisma/client.ts';
import { Product } from '../products/schema.ts';
import { createDiscount, deleteDiscount, discountSortProperties, getDiscount, listDiscounts, updateDiscount } from './service.ts';

const read = { scope: ['discounts:read', 'discounts:write'] satisfies Scope[] as Scope[] };
const write = { scope: 'discounts:write' satisfies Scope as Scope };

export const DiscountType = builder.enumType('DiscountType', {
  description: 'How a discount reduces the price.',
  values: {
    fixed: { description: 'A set amount off, in minor units of its currency.' },
    percentage: { description: 'A share of the price off, in basis points (10000 = 100%).' },
  } satisfies Record<DiscountTypes, object>,
});
export const DiscountDuration = builder.enumType('DiscountDuration', {
  description: 'Which payments of a subscription a discount reduces; a one-time purchase has one payment.',
  values: {
    once: { description: 'The first payment only.' },
    forever: { description: 'Every payment.' },
    repeating: { description: 'The payments of the first durationInMonths months.' },
  } satisfies Record<DiscountDurations, object>,
});
const DiscountSortOrder = sortOrderEnum(
  'DiscountSortOrder',
  'discounts',
  {
    created_at: 'when the discount was created',
    name: 'name',
    code: 'code, discounts without one last',
    redemptions_count: 'the number of times it was redeemed',
  } satisfies Record<(typeof discountSortProperties)[number], string>,
  'DiscountSortProperty',
);

type DiscountFieldBuilder = PrismaFieldBuilder<'Discount'>;

/** What a buyer sees of a discount applied to their checkout. */
const checkoutDiscountFields = (t: DiscountFieldBuilder) => ({
  id: t.exposeID('id', { description: "The discount's id." }),
  name: t.exposeString('name', { description: 'Shown to the buyer when the discount is applied.' }),
  code: t.exposeString('code', { nullable: true, description: 'What a buyer types at checkout to apply it, in any case; null: applied by the organization only.' }),
  type: t.expose('type', { type: DiscountType, description: 'fixed or percentage.' }),
  duration: t.expose('duration', { type: DiscountDuration, description: 'Which payments of a subscription it reduces.' }),
});

/** What every discount has, whatever its type and duration. */
const discountFields = (t: DiscountFieldBuilder) => ({
  ...checkoutDiscountFields(t),
  id: t.exposeID('id', { description: "The discount's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the discount was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the discount was last changed; null if never.' }),
  metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data.", resolve: (d) => d.metadata as Metadata }),
  startsAt: t.expose('startsAt', { type: 'DateTime', nullable: true, description: 'When it becomes redeemable; null: at once.' }),
  endsAt: t.expose('endsAt', { type: 'DateTime', nullable: true, description: 'When it stops being redeemable; null: never.' }),
  maxRedemptions: t.exposeInt('maxRedemptions', { nullable: true, description: 'How many checkouts may redeem it; null: no limit.' }),
  redemptionsCount: t.exposeInt('redemptionsCount', { description: 'How many confirmed checkouts have redeemed it.' }),
  organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization that offers it.' }),
  products: t.field({
    type: [Product],
    description: 'The products it is restricted to; empty: every product of the organization.',
    select: ((_args: unknown, _ctx: unknown, nested: () => object) => ({ products: { select: { product: nested() }, orderBy: { productId: 'asc' } } })) as never,
    resolve: (d: unknown) => (d as { products: { product: never }[] }).products.map((restricted) => restricted.product),
  }),
});

const variants = {
  FixedOnceForeverDuration: 'A fixed amount off the first payment (once) or every payment (forever).',
  FixedRepeatDuration: 'A fixed amount off the payments of the first durationInMonths months.',
  PercentageOnceForeverDuration: 'A percentage off the first payment (once) or every payment (forever).',
  PercentageRepeatDuration: 'A percentage off the payments of the first durationInMonths months.',
} as const;
type Variant = keyof typeof variants;

/** The variant of a discount row: by its type, and whether it repeats. */
function variantOf(discount: Pick<DiscountRow, 'type' | 'duration'>): Variant {
  const repeats = discount.duration === 'repeating';
  if (discount.type === 'fixed') return repeats ? 'FixedRepeatDuration' : 'FixedOnceForeverDuration';
  return repeats ? 'PercentageRepeatDuration' : 'PercentageOnceForeverDuration';
}

/** The object type of a discount row, as a full Discount. */
export const discountObjectType = (discount: Pick<DiscountRow, 'type' | 'duration'>) => `Discount${variantOf(discount)}`;

/** What a discount takes off: the fields of its variant. */
const termFields = (t: DiscountFieldBuilder, variant: Variant) => ({
  ...(variant.startsWith('Fixed')
    ? {
        amount: t.int({ description: 'The amount off, in minor units of currency; never more than the price.', resolve: (d) => d.amount ?? 0 }),
        currency: t.string({ description: 'The currency of amount: an ISO 4217 code, lowercase. It applies only to prices in this currency.', resolve: (d) => d.currency ?? 'usd' }),
      }
    : {
        basisPoints: t.int({
          description: 'The share off in basis points, 1 to 10000 (1000 = 10%); the amount off is rounded half up to the minor unit.',
          resolve: (d) => d.basisPoints ?? 0,
        }),
      }),
  ...(variant.endsWith('RepeatDuration') ? { durationInMonths: t.int({ description: 'How many months of payments it reduces, from the first.', resolve: (d) => d.durationInMonths ?? 1 }) } : {}),
});

export const Discount = builder.prismaInterface('Discount', {
  interfaces: [Node],
  description: 'A reduction of the price at checkout: fixed or percentage, for one, some or every payment of a subscription.',
  fields: (t) => discountFields(t as unknown as DiscountFieldBuilder),
  resolveType: discountObjectType,
});

export const CheckoutDiscount = builder.prismaInterface('Discount', {
  variant: 'CheckoutDiscount',
  description: 'A discount as the buyer of a checkout sees it: its name and code and what it takes off.',
  fields: (t) => checkoutDiscountFields(t as unknown as DiscountFieldBuilder),
  resolveType: (discount) => `CheckoutDiscount${variantOf(discount)}`,
});

for (const [variant, description] of Object.entries(variants) as [Variant, string][]) {
  builder.prismaObject('Discount', {
    variant: `Discount${variant}`,
    description,
    interfaces: [Node, Discount],
    fields: (t) => ({ ...discountFields(t as unknown as DiscountFieldBuilder), ...termFields(t as unknown as DiscountFieldBuilder, variant) }),
  });
  builder.prismaObject('Discount', {
    variant: `CheckoutDiscount${variant}`,
    description: `${description} As the buyer of a checkout sees it.`,
    interfaces: [CheckoutDiscount],
    fields: (t) => ({ ...checkoutDiscountFields(t as unknown as DiscountFieldBuilder), ...termFields(t as unknown as DiscountFieldBuilder, variant) }),
  });
}

const DiscountList = listType('Discount', Discount);

const termsDescription = {
  amount: 'fixed: the amount off, in minor units of currency, 1 to 99999999.',
  currency: 'fixed: an ISO 4217 code, lowercase; usd when omitted.',
  basisPoints: 'percentage: the share off in basis points, 1 to 10000 (1000 = 10%).',
  durationInMonths: 'repeating (and only repeating): how many months of payments it reduces, 1 to 999.',
};

const DiscountCreateInput = builder.inputType('DiscountCreateInput', {
  description: 'A new discount: a type with its amount or basis points, a duration, and optionally a code, a window, a limit and products.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Shown to the buyer, 1 to 256 characters.' }),
    type: t.field({ type: DiscountType, required: true, description: 'fixed or percentage.' }),
    amount: t.int({ description: termsDescription.amount }),
    currency: t.string({ description: termsDescription.currency }),
    basisPoints: t.int({ description: termsDescription.basisPoints }),
    duration: t.field({ type: DiscountDuration, required: true, description: 'Which payments of a subscription it reduces.' }),
    durationInMonths: t.int({ description: termsDescription.durationInMonths }),
    code: t.string({ description: 'What buyers type to apply it: 3 to 256 letters, digits, - or _; unique in the organization, whatever the case.' }),
    startsAt: t.field({ type: 'DateTime', description: 'When it becomes redeemable; at once when omitted.' }),
    endsAt: t.field({ type: 'DateTime', description: 'When it stops being redeemable; after startsAt. Never when omitted.' }),
    maxRedemptions: t.int({ description: 'How many checkouts may redeem it, at least 1; no limit when omitted.' }),
    products: t.field({ type: ['UUID'], description: "The organization's products it is restricted to; every product when omitted or empty." }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data." }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
  }),
});

const DiscountUpdateInput = builder.inputType('DiscountUpdateInput', {
  description:
    'Only the fields given change. What a discount takes off (type, amount, currency, basisPoints, duration, durationInMonths) can change only until it is first redeemed.',
  fields: (t) => ({
    name: t.string({ description: 'A new name, 1 to 256 characters.' }),
    code: t.string({ description: 'A new code; null removes it.' }),
    startsAt: t.field({ type: 'DateTime', description: 'When it becomes redeemable; null: at once.' }),
    endsAt: t.field({ type: 'DateTime', description: 'When it stops being redeemable; null: never.' }),
    maxRedemptions: t.int({ description: 'How many checkouts may redeem it, no fewer than have; null: no limit.' }),
    type: t.field({ type: DiscountType, description: 'A new type; give its amount or basisPoints with it.' }),
    amount: t.int({ description: termsDescription.amount }),
    currency: t.string({ description: 'fixed: the currency of a new amount. Counts only with amount or a change to fixed (the client library always sends one).' }),
    basisPoints: t.int({ description: termsDescription.basisPoints }),
    duration: t.field({ type: DiscountDuration, description: 'A new duration.' }),
    durationInMonths: t.int({ description: termsDescription.durationInMonths }),
    products: t.field({ type: ['UUID'], description: 'Replaces the products it is restricted to; empty: every product.' }),
    metadata: t.field({ type: MetadataScalar, description: 'Replaces the whole metadata object.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  discounts: t.field({
    type: DiscountList,
    description: 'The live (not deleted) discounts of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: read,
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      query: t.arg.string({ description: 'Matches names and codes, case-insensitively.' }),
      sorting: t.arg({ type: [DiscountSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listDiscounts(ctx, args, pageQuery(ctx, info)),
  }),
  discount: t.prismaField({
    type: Discount,
    description: 'One discount; RESOURCE_NOT_FOUND if the token does not reach it or it was deleted.',
    authScopes: read,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The discount's id." }) },
    resolve: (query, _root, { id }, ctx) => getDiscount(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  discountCreate: t.prismaField({
    type: Discount,
    description: 'Creates a discount. BAD_USER_INPUT names each invalid field: an amount or basis points out of range, a code taken, a product not found.',
    authScopes: write,
    args: { input: t.arg({ type: DiscountCreateInput, required: true, description: 'The discount to create.' }) },
    resolve: (query, _root, { input }, ctx) => createDiscount(ctx, input, query),
  }),
  discountUpdate: t.prismaField({
    type: Discount,
    description:
      'Changes a discount. RESOURCE_NOT_FOUND if the token does not reach it; BAD_USER_INPUT as for discountCreate, or for a change to what a redeemed discount takes off.',
    authScopes: write,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The discount's id." }),
      input: t.arg({ type: DiscountUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateDiscount(ctx, id, input, query),
  }),
  discountDelete: t.boolean({
    description:
      'Deletes a discount and returns true: it can no longer be applied and its code is free again; orders and subscriptions keep it. RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: write,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The discount's id." }) },
    resolve: (_root, { id }, ctx) => deleteDiscount(ctx, id),
  }),
}));

/** node(id:) answers for discounts as core.discount does. */
export const discountNodeLoader: NodeLoader = {
  surface: 'core',
  model: 'discount',
  typeName: 'Discount',
  scopes: read.scope,
  load: getDiscount,
  objectType: (row) => discountObjectType(row as DiscountRow),
};
