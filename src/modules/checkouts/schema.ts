import { queryFromInfo } from '@pothos/plugin-prisma';
import type { Environment } from '../../context.ts';
import { builder, type PrismaFieldBuilder, type BuilderTypes } from '../../graphql/builder.ts';
import { raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortingScalarConfig } from '../../graphql/sorting.ts';
import { CheckoutStatus as CheckoutStatuses } from '../../generated/prisma/enums.ts';
import { Address, AddressInput } from '../customers/schema.ts';
import { Product, ProductPrice } from '../products/schema.ts';
import { testCards } from '../payments/processor.ts';
import {
  checkoutSortProperties,
  confirmCheckout,
  createCheckout,
  expired,
  getCheckout,
  getClientCheckout,
  listCheckouts,
  notOpen,
  paymentError,
  updateCheckout,
  updateClientCheckout,
} from './service.ts';

// The checkout errors the fields below answer with besides those any field may.
const notOpenCheckout = { error: notOpen(''), when: 'The checkout is no longer open (confirmed, succeeded, failed or expired), so it cannot change.' };
const expiredCheckout = { error: expired(), when: 'The checkout has expired; the buyer needs a new one.' };
const noPayment = { error: paymentError(''), when: 'No payment processor takes payments in this environment.' };

export const CheckoutStatus = builder.enumType(CheckoutStatuses, { name: 'CheckoutStatus' });
const CheckoutSortProperty = builder.scalarType('CheckoutSortProperty', sortingScalarConfig(checkoutSortProperties));
const BillingAddressFieldMode = builder.enumType('BillingAddressFieldMode', { values: ['required', 'optional', 'disabled'] as const });

type Mode = 'required' | 'optional' | 'disabled';
const BillingAddressFields = builder.objectRef<Record<'country' | 'state' | 'city' | 'postalCode' | 'line1' | 'line2', Mode>>('CheckoutBillingAddressFields').implement({
  description: 'Which billing address fields the checkout asks for.',
  fields: (t) => ({
    country: t.expose('country', { type: BillingAddressFieldMode }),
    state: t.expose('state', { type: BillingAddressFieldMode }),
    city: t.expose('city', { type: BillingAddressFieldMode }),
    postalCode: t.expose('postalCode', { type: BillingAddressFieldMode }),
    line1: t.expose('line1', { type: BillingAddressFieldMode }),
    line2: t.expose('line2', { type: BillingAddressFieldMode }),
  }),
});

type CheckoutFieldBuilder = PrismaFieldBuilder<'Checkout'>;

/** The checkout page's address: under the environment's public address, by client secret. */
function checkoutUrl(environment: Environment, clientSecret: string): string {
  return `${environment.publicUrl}/checkout/${clientSecret}`;
}

// Fields a buyer may see: shared by the organization's view (Checkout) and the buyer's (CheckoutPublic).
const publicFields = (t: CheckoutFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  paymentProcessor: t.string({
    description: 'The payment API the checkout speaks: Stripe-style payment method tokens (in sandbox, the test cards).',
    resolve: () => 'stripe',
  }),
  status: t.expose('status', { type: CheckoutStatus }),
  clientSecret: t.exposeString('clientSecret', { description: 'Addresses the buyer-facing endpoints of this checkout.' }),
  url: t.string({ description: 'The checkout page to send the buyer to.', resolve: (c, _a, ctx) => checkoutUrl(ctx.environment, c.clientSecret) }),
  expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
  successUrl: t.string({
    description: 'Where the buyer goes after paying; the checkout confirmation page when none was given.',
    resolve: (c, _a, ctx) => c.successUrl?.replace('{CHECKOUT_ID}', c.id) ?? `${checkoutUrl(ctx.environment, c.clientSecret)}/confirmation`,
  }),
  embedOrigin: t.string({ nullable: true, resolve: () => null }),
  amount: t.exposeInt('amount', { description: 'Before discount and tax.' }),
  discountAmount: t.exposeInt('discountAmount'),
  netAmount: t.int({ resolve: (c) => c.amount - c.discountAmount }),
  taxAmount: t.exposeInt('taxAmount', { nullable: true }),
  totalAmount: t.int({ resolve: (c) => c.amount - c.discountAmount + c.taxAmount }),
  currency: t.exposeString('currency'),
  productId: t.expose('productId', { type: 'UUID' }),
  productPriceId: t.expose('productPriceId', { type: 'UUID' }),
  discountId: t.field({ type: 'UUID', nullable: true, resolve: () => null }),
  allowDiscountCodes: t.boolean({ resolve: () => false }),
  requireBillingAddress: t.exposeBoolean('requireBillingAddress'),
  isDiscountApplicable: t.boolean({ resolve: () => false }),
  // Paid prices are at least 50 minor units, so nothing is due exactly when the price is free.
  isFreeProductPrice: t.boolean({ resolve: (c) => c.amount === 0 }),
  isPaymentRequired: t.boolean({ resolve: (c) => c.amount > 0 }),
  isPaymentSetupRequired: t.boolean({ resolve: () => false }),
  isPaymentFormRequired: t.boolean({ resolve: (c) => c.amount > 0 }),
  customerId: t.expose('customerId', { type: 'UUID', nullable: true }),
  isBusinessCustomer: t.exposeBoolean('isBusinessCustomer'),
  customerName: t.exposeString('customerName', { nullable: true }),
  customerEmail: t.exposeString('customerEmail', { nullable: true }),
  customerIpAddress: t.exposeString('customerIpAddress', { nullable: true }),
  customerBillingName: t.exposeString('customerBillingName', { nullable: true }),
  customerBillingAddress: t.field({ type: Address, nullable: true, resolve: (c) => c.customerBillingAddress as never }),
  customerTaxId: t.string({ nullable: true, resolve: (c) => (c.customerTaxId as string | null) ?? null }),
  paymentProcessorMetadata: t.field({ type: MetadataScalar, resolve: () => ({}) }),
  billingAddressFields: t.field({
    type: BillingAddressFields,
    resolve: (c) => {
      const mode: Mode = c.requireBillingAddress ? 'required' : 'optional';
      return { country: 'required' as Mode, state: mode, city: mode, postalCode: mode, line1: mode, line2: mode };
    },
  }),
  products: t.field({
    type: [Product],
    description: 'The products offered, in order.',
    select: ((_args: unknown, _ctx: unknown, nested: () => object) => ({ products: { select: { product: nested() }, orderBy: { position: 'asc' } } })) as never,
    resolve: (c: unknown) => (c as { products: { product: never }[] }).products.map((offered) => offered.product),
  }),
  product: t.relation('product'),
  productPrice: t.relation('productPrice', { type: ProductPrice }),
});

export const Checkout = builder.prismaObject('Checkout', {
  description: "A buyer's purchase in progress, as the organization sees it.",
  fields: (t) => ({
    ...publicFields(t as unknown as CheckoutFieldBuilder),
    metadata: t.field({ type: MetadataScalar, resolve: (c) => c.metadata as Metadata }),
    customerMetadata: t.field({ type: MetadataScalar, resolve: (c) => c.customerMetadata as Metadata }),
    externalCustomerId: t.exposeString('externalCustomerId', { nullable: true }),
    customerExternalId: t.exposeString('externalCustomerId', { nullable: true, deprecationReason: 'use externalCustomerId' }),
    subscriptionId: t.field({ type: 'UUID', nullable: true, resolve: () => null }),
  }),
});

export const CheckoutPublic = builder.prismaObject('Checkout', {
  variant: 'CheckoutPublic',
  description: 'A checkout as its buyer sees it: no merchant metadata.',
  fields: (t) => ({ ...publicFields(t as unknown as CheckoutFieldBuilder), organization: t.relation('organization') }),
});

export const CheckoutPublicConfirmed = builder.prismaObject('Checkout', {
  variant: 'CheckoutPublicConfirmed',
  description: 'A checkout just confirmed, with a customer session token to follow the order in the customer portal.',
  fields: (t) => ({
    ...publicFields(t as unknown as CheckoutFieldBuilder),
    organization: t.relation('organization'),
    customerSessionToken: t.string({
      description: 'A customer session token for the buyer. Shown only in this response.',
      resolve: (c) => (c as typeof c & { customerSessionToken: string }).customerSessionToken,
    }),
  }),
});

const CheckoutList = listType('Checkout', Checkout);

const buyerFields = (t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, 'InputObject'>) => ({
  productId: t.field({ type: 'UUID', description: 'Switch to another product the checkout offers.' }),
  amount: t.int({ description: 'For pay-what-you-want prices: the amount chosen, within the price bounds.' }),
  isBusinessCustomer: t.boolean(),
  customerName: t.string(),
  customerEmail: t.string(),
  customerBillingName: t.string(),
  customerBillingAddress: t.field({ type: AddressInput }),
  customerTaxId: t.string(),
});

const CheckoutCreateInput = builder.inputType('CheckoutCreateInput', {
  fields: (t) => ({
    products: t.field({ type: ['UUID'], required: true, description: 'The products offered; the first is selected.' }),
    amount: t.int({ description: 'For pay-what-you-want prices: the amount proposed.' }),
    customerId: t.field({ type: 'UUID' }),
    externalCustomerId: t.string({ description: "The buyer's id in the organization's system." }),
    customerExternalId: t.string({ deprecationReason: 'use externalCustomerId' }),
    customerName: t.string(),
    customerEmail: t.string(),
    customerIpAddress: t.string(),
    customerBillingName: t.string(),
    customerBillingAddress: t.field({ type: AddressInput }),
    customerTaxId: t.string(),
    isBusinessCustomer: t.boolean(),
    metadata: t.field({ type: MetadataScalar }),
    customerMetadata: t.field({ type: MetadataScalar, description: 'Copied to the customer created at confirmation.' }),
    successUrl: t.string({ description: 'May contain {CHECKOUT_ID}.' }),
    requireBillingAddress: t.boolean(),
    allowDiscountCodes: t.boolean(),
    discountId: t.field({ type: 'UUID' }),
    subscriptionId: t.field({ type: 'UUID' }),
    embedOrigin: t.string(),
    customFieldData: t.field({ type: 'JSONObject' }),
  }),
});

const CheckoutUpdateInput = builder.inputType('CheckoutUpdateInput', {
  fields: (t) => ({
    ...buyerFields(t),
    productPriceId: t.field({ type: 'UUID', deprecationReason: 'use productId' }),
    metadata: t.field({ type: MetadataScalar }),
    customerMetadata: t.field({ type: MetadataScalar }),
    customerIpAddress: t.string(),
    successUrl: t.string(),
    requireBillingAddress: t.boolean(),
    allowDiscountCodes: t.boolean(),
    discountId: t.field({ type: 'UUID' }),
    embedOrigin: t.string(),
    customFieldData: t.field({ type: 'JSONObject' }),
  }),
});

const CheckoutUpdatePublicInput = builder.inputType('CheckoutUpdatePublicInput', {
  fields: (t) => ({
    ...buyerFields(t),
    productPriceId: t.field({ type: 'UUID', deprecationReason: 'use productId' }),
    discountCode: t.string(),
    customFieldData: t.field({ type: 'JSONObject' }),
  }),
});

const CheckoutConfirmInput = builder.inputType('CheckoutConfirmInput', {
  fields: (t) => ({
    ...buyerFields(t),
    productPriceId: t.field({ type: 'UUID', deprecationReason: 'use productId' }),
    discountCode: t.string(),
    customFieldData: t.field({ type: 'JSONObject' }),
    confirmationTokenId: t.string({ description: `The payment method token; in sandbox a test card: ${Object.values(testCards).join(', ')}.` }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  checkouts: t.field({
    type: CheckoutList,
    authScopes: { scope: ['checkouts:read', 'checkouts:write'] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'] }),
      productId: t.arg({ type: ['UUID'] }),
      customerId: t.arg({ type: ['UUID'] }),
      status: t.arg({ type: [CheckoutStatus] }),
      query: t.arg.string({ description: 'Matches the customer email.' }),
      sorting: t.arg({ type: [CheckoutSortProperty], description: 'Default: -created_at.' }),
    },
    resolve: (_root, args, ctx, info) => listCheckouts(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  checkout: t.prismaField({
    type: 'Checkout',
    authScopes: { scope: ['checkouts:read', 'checkouts:write'] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getCheckout(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  checkoutCreate: t.prismaField({
    type: 'Checkout',
    authScopes: { scope: 'checkouts:write' },
    args: { input: t.arg({ type: CheckoutCreateInput, required: true }) },
    resolve: (query, _root, { input }, ctx) => createCheckout(ctx, input, query),
  }),
  checkoutUpdate: t.prismaField({
    type: 'Checkout',
    authScopes: { scope: 'checkouts:write' },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: CheckoutUpdateInput, required: true }) },
    extensions: raises(notOpenCheckout),
    resolve: (query, _root, { id, input }, ctx) => updateCheckout(ctx, id, input, query),
  }),
}));

// The buyer's endpoints: no token, the client secret is the capability.
builder.queryField('checkoutClient', (t) =>
  t.prismaField({
    type: CheckoutPublic,
    description: 'A checkout as its buyer sees it, by client secret.',
    args: { clientSecret: t.arg.string({ required: true }) },
    extensions: raises(expiredCheckout),
    resolve: (query, _root, { clientSecret }, ctx) => getClientCheckout(ctx, clientSecret, query),
  }),
);

builder.mutationFields((t) => ({
  checkoutClientUpdate: t.prismaField({
    type: CheckoutPublic,
    description: 'The buyer fills in the checkout.',
    args: { clientSecret: t.arg.string({ required: true }), input: t.arg({ type: CheckoutUpdatePublicInput, required: true }) },
    extensions: raises(expiredCheckout, notOpenCheckout),
    resolve: (query, _root, { clientSecret, input }, ctx) => updateClientCheckout(ctx, clientSecret, input, query),
  }),
  checkoutClientConfirm: t.prismaField({
    type: CheckoutPublicConfirmed,
    description: 'The buyer confirms: a pending order is created and the payment is processed right after.',
    args: { clientSecret: t.arg.string({ required: true }), input: t.arg({ type: CheckoutConfirmInput, required: true }) },
    extensions: raises(expiredCheckout, notOpenCheckout, noPayment),
    resolve: (query, _root, { clientSecret, input }, ctx) => confirmCheckout(ctx, clientSecret, input, query),
  }),
}));
