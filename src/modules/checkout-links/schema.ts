import type { Environment } from '../../context.ts';
import type { Scope } from '../../auth/scopes.ts';
import { builder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import { PaymentProcessor } from '../checkouts/schema.ts';
import { Discount } from '../discounts/schema.ts';
import { Product } from '../products/schema.ts';
import { checkoutLinkSortProperties, createCheckoutLink, deleteCheckoutLink, getCheckoutLink, listCheckoutLinks, updateCheckoutLink } from './service.ts';

const read = { scope: ['checkout_links:read', 'checkout_links:write'] satisfies Scope[] as Scope[] };
const write = { scope: 'checkout_links:write' satisfies Scope as Scope };

const CheckoutLinkSortOrder = sortOrderEnum(
  'CheckoutLinkSortOrder',
  'checkout links',
  {
    created_at: 'when the link was created',
    label: 'label, links without one last',
    success_url: 'success URL, links without one last',
    allow_discount_codes: 'whether buyers may enter a discount code',
  } satisfies Record<(typeof checkoutLinkSortProperties)[number], string>,
  'CheckoutLinkSortProperty',
);

/** The link's public address: each visit opens a new checkout (see docs/selling.md). */
function checkoutLinkUrl(environment: Environment, clientSecret: string): string {
  return `${environment.publicUrl}/v1/checkout-links/${clientSecret}/redirect`;
}

export const CheckoutLink = builder.prismaObject('CheckoutLink', {
  interfaces: [Node],
  description: 'A reusable public link to buy one or more products: each visit to its url opens a new checkout from it.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "The link's id. Its global id (see Node)." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the link was created.' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the link was last changed; null if never.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data, copied to each checkout the link opens.", resolve: (l) => l.metadata as Metadata }),
    paymentProcessor: t.field({ type: PaymentProcessor, description: 'The payment API its checkouts speak.', resolve: () => 'stripe' as const }),
    clientSecret: t.exposeString('clientSecret', { description: 'Addresses the link publicly: the last part of its url. Hard to guess; whoever has it can open checkouts.' }),
    url: t.string({
      description: 'The public address to share: opening it (GET, no token) creates a new checkout for the visitor and redirects to its page.',
      resolve: (l, _a, ctx) => checkoutLinkUrl(ctx.environment, l.clientSecret),
    }),
    successUrl: t.exposeString('successUrl', { nullable: true, description: 'Where buyers go after paying, copied to each checkout; null: the checkout confirmation page.' }),
    label: t.exposeString('label', { nullable: true, description: 'A name for the organization to tell its links apart; buyers never see it.' }),
    allowDiscountCodes: t.exposeBoolean('allowDiscountCodes', { description: 'Whether buyers may enter a discount code on the checkouts it opens.' }),
    requireBillingAddress: t.exposeBoolean('requireBillingAddress', { description: 'Whether buyers must give a full billing address, not only the country.' }),
    discountId: t.expose('discountId', { type: 'UUID', nullable: true, description: 'The discount applied to each checkout it opens, while the discount still applies; null if none.' }),
    discount: t.relation('discount', { type: Discount, nullable: true, description: 'The discount applied to each checkout it opens; null if none.' }),
    organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization selling.' }),
    products: t.field({
      type: [Product],
      description: 'The products offered, in order; the first live one is selected on each checkout. Archived products stay listed and are left out of new checkouts.',
      select: ((_args: unknown, _ctx: unknown, nested: () => object) => ({ products: { select: { product: nested() }, orderBy: { position: 'asc' } } })) as never,
      resolve: (l: unknown) => (l as { products: { product: never }[] }).products.map((offered) => offered.product),
    }),
  }),
});

const CheckoutLinkList = listType('CheckoutLink', CheckoutLink);

const settingFields = {
  label: 'A name to tell links apart, for the organization only; null removes it.',
  successUrl: 'Where buyers go after paying: an http(s) URL, which may contain {CHECKOUT_ID}; null: the checkout confirmation page.',
  discountId:
    "A live discount of the link's organization that applies to each of its products; applied to each checkout while it is still redeemable, left off otherwise. null removes it.",
};

const CheckoutLinkCreateInput = builder.inputType('CheckoutLinkCreateInput', {
  description: 'A new checkout link: its products (a list, or one product, or a price of one), and what each checkout it opens starts with.',
  fields: (t) => ({
    products: t.field({ type: ['UUID'], description: 'The products offered, at least one, each once, of one organization and not archived; the first is selected.' }),
    productId: t.field({ type: 'UUID', description: 'One product to offer, instead of products.' }),
    productPriceId: t.field({ type: 'UUID', deprecationReason: 'use products', description: "A price whose product to offer, instead of products." }),
    paymentProcessor: t.field({ type: PaymentProcessor, description: 'The payment API: stripe, the only one.' }),
    label: t.string({ description: settingFields.label }),
    successUrl: t.string({ description: settingFields.successUrl }),
    allowDiscountCodes: t.boolean({ description: 'Whether buyers may enter a discount code; true when omitted.' }),
    requireBillingAddress: t.boolean({ description: 'Whether buyers must give a full billing address; false when omitted.' }),
    discountId: t.field({ type: 'UUID', description: settingFields.discountId }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data, copied to each checkout." }),
  }),
});

const CheckoutLinkUpdateInput = builder.inputType('CheckoutLinkUpdateInput', {
  description: 'Only the fields given change. Checkouts the link opened already keep what they started with.',
  fields: (t) => ({
    products: t.field({ type: ['UUID'], description: 'Replaces the products offered: at least one, each once, of the link\'s organization and not archived.' }),
    label: t.string({ description: settingFields.label }),
    successUrl: t.string({ description: settingFields.successUrl }),
    allowDiscountCodes: t.boolean({ description: 'Whether buyers may enter a discount code.' }),
    requireBillingAddress: t.boolean({ description: 'Whether buyers must give a full billing address.' }),
    discountId: t.field({ type: 'UUID', description: settingFields.discountId }),
    metadata: t.field({ type: MetadataScalar, description: 'Replaces the whole metadata object.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  checkoutLinks: t.field({
    type: CheckoutLinkList,
    description: 'The live (not deleted) checkout links of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: read,
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      productId: t.arg({ type: ['UUID'], description: 'Only links offering one of these products.' }),
      sorting: t.arg({ type: [CheckoutLinkSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listCheckoutLinks(ctx, args, pageQuery(ctx, info)),
  }),
  checkoutLink: t.prismaField({
    type: CheckoutLink,
    description: 'One checkout link; RESOURCE_NOT_FOUND if the token does not reach it or it was deleted.',
    authScopes: read,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The link's id." }) },
    resolve: (query, _root, { id }, ctx) => getCheckoutLink(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  checkoutLinkCreate: t.prismaField({
    type: CheckoutLink,
    description:
      'Creates a checkout link. BAD_USER_INPUT names each problem: no or repeated products, a product not found or archived, products of two organizations, a discount not found or not for every product, a success URL that is not http(s).',
    authScopes: write,
    args: { input: t.arg({ type: CheckoutLinkCreateInput, required: true, description: 'The link to create.' }) },
    resolve: (query, _root, { input }, ctx) => createCheckoutLink(ctx, input, query),
  }),
  checkoutLinkUpdate: t.prismaField({
    type: CheckoutLink,
    description: 'Changes a checkout link. RESOURCE_NOT_FOUND if the token does not reach it or it was deleted; BAD_USER_INPUT as for checkoutLinkCreate.',
    authScopes: write,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The link's id." }),
      input: t.arg({ type: CheckoutLinkUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateCheckoutLink(ctx, id, input, query),
  }),
  checkoutLinkDelete: t.boolean({
    description: 'Deletes a checkout link and returns true: its url stops opening checkouts; the checkouts it opened keep working. RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: write,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The link's id." }) },
    resolve: (_root, { id }, ctx) => deleteCheckoutLink(ctx, id),
  }),
}));

/** node(id:) answers for checkout links as core.checkoutLink does. */
export const checkoutLinkNodeLoader: NodeLoader = { surface: 'core', model: 'checkoutLink', typeName: 'CheckoutLink', scopes: read.scope, load: getCheckoutLink };
