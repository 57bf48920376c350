import type { Environment } from '../../context.ts';
import { builder, type PrismaFieldBuilder, type BuilderTypes } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { withoutId } from '../../graphql/shared-fields.ts';
import { raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import type { CheckoutStatus as CheckoutStatuses } from '../../generated/prisma/enums.ts';
import { Address, AddressInput } from '../customers/schema.ts';
import { AttachedCustomField, Product, ProductPrice } from '../products/schema.ts';
import { testCards } from '../payments/processor.ts';
import { CheckoutDiscount } from '../discounts/schema.ts';
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

export const CheckoutStatus = builder.enumType('CheckoutStatus', {
  description: 'Where a checkout is: open until the buyer confirms or it expires, then confirmed until the payment settles.',
  values: {
    open: { description: 'The buyer can fill it in and confirm it, until expiresAt.' },
    expired: { description: 'It passed expiresAt unconfirmed; it can no longer change.' },
    confirmed: { description: 'The buyer confirmed: a pending order exists and the payment is being processed.' },
    succeeded: { description: 'The payment went through: the order is paid.' },
    failed: { description: 'The payment was declined.' },
  } satisfies Record<CheckoutStatuses, object>,
});
const CheckoutSortOrder = sortOrderEnum(
  'CheckoutSortOrder',
  'checkouts',
  {
  created_at: 'when the checkout was created',
  expires_at: 'when the checkout expires',
  status: 'status',
  } satisfies Record<(typeof checkoutSortProperties)[number], string>,
  'CheckoutSortProperty',
);
const BillingAddressFieldMode = builder.enumType('BillingAddressFieldMode', {
  description: 'Whether the checkout asks for a billing address field.',
  values: {
    required: { description: 'The buyer must fill it in.' },
    optional: { description: 'The buyer may fill it in.' },
    disabled: { description: 'Not asked.' },
  },
});

// Inputs the client library sends for features Kassa does not have: they are taken and dropped.
const ignored = 'Accepted for compatibility and ignored.';
const answersDescription =
  "Answers to the selected product's custom fields, by slug; replaces the answers given before. Each is checked by its field's type and properties (BAD_USER_INPUT at customFieldData.<slug>); a slug the product does not ask is refused.";

type Mode = 'required' | 'optional' | 'disabled';
const BillingAddressFields = builder.objectRef<Record<'country' | 'state' | 'city' | 'postalCode' | 'line1' | 'line2', Mode>>('CheckoutBillingAddressFields').implement({
  description: 'Which billing address fields the checkout asks for.',
  fields: (t) => ({
    country: t.expose('country', { type: BillingAddressFieldMode, description: 'The country: always required.' }),
    state: t.expose('state', { type: BillingAddressFieldMode, description: 'The state or region: required when requireBillingAddress, else optional.' }),
    city: t.expose('city', { type: BillingAddressFieldMode, description: 'The city: required when requireBillingAddress, else optional.' }),
    postalCode: t.expose('postalCode', { type: BillingAddressFieldMode, description: 'The postal code: required when requireBillingAddress, else optional.' }),
    line1: t.expose('line1', { type: BillingAddressFieldMode, description: 'The street line: required when requireBillingAddress, else optional.' }),
    line2: t.expose('line2', { type: BillingAddressFieldMode, description: 'The second line: required when requireBillingAddress, else optional.' }),
  }),
});

type CheckoutFieldBuilder = PrismaFieldBuilder<'Checkout'>;

/** The checkout page's address: under the environment's public address, by client secret. */
function checkoutUrl(environment: Environment, clientSecret: string): string {
  return `${environment.publicUrl}/checkout/${clientSecret}`;
}

// Fields a buyer may see: shared by the organization's view (Checkout) and the buyer's (CheckoutPublic).
export const PaymentProcessor = builder.enumType('PaymentProcessor', {
  description: 'A payment API a checkout speaks.',
  values: { stripe: { description: 'Stripe-style payment method tokens (in sandbox, the test cards).' } },
});

const publicFields = (t: CheckoutFieldBuilder) => ({
  id: t.exposeID('id', { description: "The checkout's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the checkout was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the checkout was last changed; null if never.' }),
  paymentProcessor: t.field({
    type: PaymentProcessor,
    description: 'The payment API the checkout speaks.',
    resolve: () => 'stripe' as const,
  }),
  status: t.expose('status', { type: CheckoutStatus, description: 'Where the checkout is; see CheckoutStatus.' }),
  clientSecret: t.exposeString('clientSecret', { description: 'Addresses the buyer-facing endpoints of this checkout.' }),
  url: t.string({ description: 'The checkout page to send the buyer to.', resolve: (c, _a, ctx) => checkoutUrl(ctx.environment, c.clientSecret) }),
  expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When an unconfirmed checkout expires: an hour after creation.' }),
  successUrl: t.string({
    description: 'Where the buyer goes after paying; the checkout confirmation page when none was given.',
    resolve: (c, _a, ctx) => c.successUrl?.replace('{CHECKOUT_ID}', c.id) ?? `${checkoutUrl(ctx.environment, c.clientSecret)}/confirmation`,
  }),
  embedOrigin: t.string({ nullable: true, description: 'The origin of a page embedding the checkout. Embedding is not supported: always null.', resolve: () => null }),
  amount: t.exposeInt('amount', { description: 'Before discount and tax, in integer minor units of currency (cents for usd).' }),
  discountAmount: t.exposeInt('discountAmount', {
    description: 'What the discount takes off amount, in minor units of currency: never more than amount; 0 without a discount. A percentage is rounded half up.',
  }),
  netAmount: t.int({ description: 'amount less discountAmount, in minor units of currency.', resolve: (c) => c.amount - c.discountAmount }),
  taxAmount: t.exposeInt('taxAmount', { nullable: true, description: 'The tax, in minor units of currency. Kassa charges no tax: 0.' }),
  totalAmount: t.int({ description: 'What the buyer pays: netAmount plus taxAmount, in minor units of currency.', resolve: (c) => c.amount - c.discountAmount + c.taxAmount }),
  currency: t.exposeString('currency', { description: "The selected price's currency: an ISO 4217 code, lowercase." }),
  productId: t.expose('productId', { type: 'UUID', description: 'The selected product.' }),
  productPriceId: t.expose('productPriceId', { type: 'UUID', description: "The selected product's price the buyer pays." }),
  discountId: t.expose('discountId', { type: 'UUID', nullable: true, description: 'The discount applied; null if none.' }),
  discount: t.relation('discount', { type: CheckoutDiscount, nullable: true, description: 'The discount applied, as the buyer sees it; null if none.' }),
  allowDiscountCodes: t.exposeBoolean('allowDiscountCodes', { description: 'Whether the buyer may enter a discount code.' }),
  requireBillingAddress: t.exposeBoolean('requireBillingAddress', { description: 'Whether the buyer must give a full billing address; otherwise only the country is required.' }),
  isDiscountApplicable: t.boolean({ description: 'Whether a discount could apply: the selected price is not free.', resolve: (c) => c.amount > 0 }),
  // Paid prices are at least 50 minor units, so nothing is due exactly when the price is free.
  isFreeProductPrice: t.boolean({ description: 'Whether the selected price costs nothing.', resolve: (c) => c.amount === 0 }),
  isPaymentRequired: t.boolean({
    description: 'Whether the buyer must pay (totalAmount is above 0); confirming then needs confirmationTokenId.',
    resolve: (c) => c.amount - c.discountAmount + c.taxAmount > 0,
  }),
  isPaymentSetupRequired: t.boolean({ description: 'Whether a payment method must be saved without a payment now. Never the case: always false.', resolve: () => false }),
  isPaymentFormRequired: t.boolean({ description: 'Whether the checkout page shows a payment form: when a payment is required.', resolve: (c) => c.amount - c.discountAmount + c.taxAmount > 0 }),
  customerId: t.expose('customerId', { type: 'UUID', nullable: true, description: 'The customer buying: set when the checkout names one, and at confirmation; null before.' }),
  isBusinessCustomer: t.exposeBoolean('isBusinessCustomer', { description: 'Whether the buyer buys as a business rather than as an individual.' }),
  customerName: t.exposeString('customerName', { nullable: true, description: "The buyer's name; null until given." }),
  customerEmail: t.exposeString('customerEmail', { nullable: true, description: "The buyer's email address; null until given." }),
  customerIpAddress: t.exposeString('customerIpAddress', { nullable: true, description: "The buyer's IP address, as the organization gave it; null if not given." }),
  customerBillingName: t.exposeString('customerBillingName', { nullable: true, description: 'The name on the invoice, when not the buyer\'s own; null until given.' }),
  customerBillingAddress: t.field({ type: Address, nullable: true, description: "The buyer's billing address; null until given.", resolve: (c) => c.customerBillingAddress as never }),
  customerTaxId: t.string({ nullable: true, description: "The buyer's tax id, as entered; null until given.", resolve: (c) => (c.customerTaxId as string | null) ?? null }),
  paymentProcessorMetadata: t.field({
    type: MetadataScalar,
    description:
      "Data the checkout page needs from the payment processor, all strings. With Stripe: `publishable_key` for Stripe.js; once confirmed, `intent_status` (`requires_action` while the buyer must authenticate, as for 3-D Secure; `processing` while the bank answers) and, for `requires_action`, `intent_client_secret` for Stripe.js's handleNextAction. Empty with the test processor.",
    resolve: (c, _args, ctx) => ({ ...ctx.environment.paymentProcessor?.pageSettings?.(), ...(c.processorMetadata as Record<string, string>) }),
  }),
  billingAddressFields: t.field({
    type: BillingAddressFields,
    description: 'Which billing address fields the checkout page asks for, following requireBillingAddress.',
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
  product: t.relation('product', { description: 'The selected product.' }),
  attachedCustomFields: t.field({
    type: [AttachedCustomField],
    description: 'The custom fields the selected product asks, in order: what the checkout page shows.',
    select: ((_args: unknown, _ctx: unknown, nested: () => object) => ({
      product: { select: { customFields: { ...nested(), where: { customField: { deletedAt: null } }, orderBy: { order: 'asc' } } } },
    })) as never,
    resolve: (c: unknown) => (c as { product: { customFields: never[] } }).product.customFields,
  }),
  customFieldData: t.field({
    type: 'JSONObject',
    description: "The buyer's answers to the selected product's custom fields, by the field's slug.",
    resolve: (c) => c.customFieldData as Record<string, unknown>,
  }),
  productPrice: t.relation('productPrice', { type: ProductPrice, description: "The selected product's price the buyer pays." }),
});

/** What a checkout is to anyone who may see it: Checkout, CheckoutPublic and CheckoutPublicConfirmed implement it. */
export const CheckoutFields = builder.prismaInterface('Checkout', {
  variant: 'CheckoutFields',
  description: "The fields every view of a checkout shares: what is bought, the amounts, the buyer's details and the state. Checkout is the organization's view, CheckoutPublic and CheckoutPublicConfirmed the buyer's.",
  fields: (t) => withoutId(publicFields(t as unknown as CheckoutFieldBuilder)),
});

export const Checkout = builder.prismaObject('Checkout', {
  interfaces: [Node, CheckoutFields],
  description: "A buyer's purchase in progress, as the organization sees it.",
  fields: (t) => ({
    ...publicFields(t as unknown as CheckoutFieldBuilder),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data, copied to the order.", resolve: (c) => c.metadata as Metadata }),
    customerMetadata: t.field({ type: MetadataScalar, description: 'Key-value data given to the customer created at confirmation.', resolve: (c) => c.customerMetadata as Metadata }),
    externalCustomerId: t.exposeString('externalCustomerId', { nullable: true, description: "The buyer's id in the organization's system; null if not given." }),
    customerExternalId: t.exposeString('externalCustomerId', { nullable: true, deprecationReason: 'use externalCustomerId', description: 'The former name of externalCustomerId.' }),
    subscriptionId: t.field({ type: 'UUID', nullable: true, description: 'The subscription this checkout upgrades. Upgrades are not supported: always null.', resolve: () => null }),
  }),
});

export const CheckoutPublic = builder.prismaObject('Checkout', {
  variant: 'CheckoutPublic',
  interfaces: [CheckoutFields],
  description: 'A checkout as its buyer sees it: no merchant metadata.',
  fields: (t) => ({ ...publicFields(t as unknown as CheckoutFieldBuilder), organization: t.relation('organization', { description: 'The organization selling.' }) }),
});

export const CheckoutPublicConfirmed = builder.prismaObject('Checkout', {
  variant: 'CheckoutPublicConfirmed',
  interfaces: [CheckoutFields],
  description: 'A checkout just confirmed, with a customer session token to follow the order in the customer portal.',
  fields: (t) => ({
    ...publicFields(t as unknown as CheckoutFieldBuilder),
    organization: t.relation('organization', { description: 'The organization selling.' }),
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
  isBusinessCustomer: t.boolean({ description: 'Whether the buyer buys as a business.' }),
  customerName: t.string({ description: "The buyer's name." }),
  customerEmail: t.string({ description: "The buyer's email address; must be valid." }),
  customerBillingName: t.string({ description: 'The name on the invoice, when not the buyer\'s own.' }),
  customerBillingAddress: t.field({ type: AddressInput, description: "The buyer's billing address; null clears it." }),
  customerTaxId: t.string({ description: "The buyer's tax id." }),
});

const CheckoutCreateInput = builder.inputType('CheckoutCreateInput', {
  description: 'A new checkout: the products offered, and what is known of the buyer in advance.',
  fields: (t) => ({
    products: t.field({
      type: ['UUID'],
      required: true,
      description: 'The products offered, at least one, each once, of one organization and not archived; the first is selected.',
    }),
    amount: t.int({ description: 'For pay-what-you-want prices: the amount proposed, in minor units, within the price bounds; the preset or minimum when omitted.' }),
    customerId: t.field({ type: 'UUID', description: 'An existing customer of the organization who is buying.' }),
    externalCustomerId: t.string({ description: "The buyer's id in the organization's system; links the order to the customer with this external id, or gives it to the new customer." }),
    customerExternalId: t.string({ deprecationReason: 'use externalCustomerId', description: 'The former name of externalCustomerId.' }),
    customerName: t.string({ description: "The buyer's name, filled in in advance." }),
    customerEmail: t.string({ description: "The buyer's email address, filled in in advance." }),
    customerIpAddress: t.string({ description: "The buyer's IP address, when the organization's server creates the checkout for them." }),
    customerBillingName: t.string({ description: 'The name on the invoice, filled in in advance.' }),
    customerBillingAddress: t.field({ type: AddressInput, description: "The buyer's billing address, filled in in advance." }),
    customerTaxId: t.string({ description: "The buyer's tax id, filled in in advance." }),
    isBusinessCustomer: t.boolean({ description: 'Whether the buyer buys as a business; false when omitted.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data, copied to the order." }),
    customerMetadata: t.field({ type: MetadataScalar, description: 'Copied to the customer created at confirmation.' }),
    successUrl: t.string({ description: 'Where the buyer goes after paying: an http(s) URL, which may contain {CHECKOUT_ID}.' }),
    requireBillingAddress: t.boolean({ description: 'Whether the buyer must give a full billing address; false when omitted.' }),
    allowDiscountCodes: t.boolean({ description: 'Whether the buyer may enter a discount code; true when omitted.' }),
    discountId: t.field({
      type: 'UUID',
      description: "A discount of the organization to apply: started, not ended, with redemptions left, for the selected product (and, if fixed, in the price's currency); BAD_USER_INPUT otherwise.",
    }),
    subscriptionId: t.field({ type: 'UUID', description: 'A subscription to upgrade. Upgrades are not supported: BAD_USER_INPUT when given.' }),
    embedOrigin: t.string({ description: `The origin of a page embedding the checkout. ${ignored}` }),
    customFieldData: t.field({ type: 'JSONObject', description: answersDescription }),
  }),
});

const CheckoutUpdateInput = builder.inputType('CheckoutUpdateInput', {
  description: 'The fields to change on an open checkout; fields left out keep their value.',
  fields: (t) => ({
    ...buyerFields(t),
    productPriceId: t.field({ type: 'UUID', deprecationReason: 'use productId', description: `The former way to select a product. ${ignored}` }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data; replaces the whole object." }),
    customerMetadata: t.field({ type: MetadataScalar, description: 'Key-value data for the customer created at confirmation; null empties it.' }),
    customerIpAddress: t.string({ description: "The buyer's IP address." }),
    successUrl: t.string({ description: 'Where the buyer goes after paying: an http(s) URL, which may contain {CHECKOUT_ID}.' }),
    requireBillingAddress: t.boolean({ description: 'Whether the buyer must give a full billing address.' }),
    allowDiscountCodes: t.boolean({ description: 'Whether the buyer may enter a discount code.' }),
    discountId: t.field({ type: 'UUID', description: 'A discount of the organization to apply, checked as at checkoutCreate; null removes the discount.' }),
    embedOrigin: t.string({ description: `The origin of a page embedding the checkout. ${ignored}` }),
    customFieldData: t.field({ type: 'JSONObject', description: answersDescription }),
  }),
});

const CheckoutUpdatePublicInput = builder.inputType('CheckoutUpdatePublicInput', {
  description: 'What the buyer fills in; fields left out keep their value.',
  fields: (t) => ({
    ...buyerFields(t),
    productPriceId: t.field({ type: 'UUID', deprecationReason: 'use productId', description: `The former way to select a product. ${ignored}` }),
    discountCode: t.string({
      description: 'A discount code of the organization, in any case, when the checkout allows codes; checked as discountId is at checkoutCreate. null removes the discount.',
    }),
    customFieldData: t.field({ type: 'JSONObject', description: answersDescription }),
  }),
});

const CheckoutConfirmInput = builder.inputType('CheckoutConfirmInput', {
  description: 'The last buyer fields, applied before confirming, and the payment method.',
  fields: (t) => ({
    ...buyerFields(t),
    productPriceId: t.field({ type: 'UUID', deprecationReason: 'use productId', description: `The former way to select a product. ${ignored}` }),
    discountCode: t.string({
      description: 'A discount code of the organization, in any case, when the checkout allows codes; checked as discountId is at checkoutCreate. null removes the discount.',
    }),
    customFieldData: t.field({ type: 'JSONObject', description: `${answersDescription} Every required field must be answered by now.` }),
    confirmationTokenId: t.string({ description: `The payment method token; in sandbox a test card: ${Object.values(testCards).join(', ')}.` }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  checkouts: t.field({
    type: CheckoutList,
    description: 'The checkouts of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: { scope: ['checkouts:read', 'checkouts:write'] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      productId: t.arg({ type: ['UUID'], description: 'Only checkouts with one of these products selected.' }),
      customerId: t.arg({ type: ['UUID'], description: 'Only checkouts of these customers.' }),
      status: t.arg({ type: [CheckoutStatus], description: 'Only checkouts in one of these statuses.' }),
      query: t.arg.string({ description: 'Matches the customer email.' }),
      sorting: t.arg({ type: [CheckoutSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listCheckouts(ctx, args, pageQuery(ctx, info)),
  }),
  checkout: t.prismaField({
    type: 'Checkout',
    description: 'One checkout; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: ['checkouts:read', 'checkouts:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The checkout's id." }) },
    resolve: (query, _root, { id }, ctx) => getCheckout(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  checkoutCreate: t.prismaField({
    type: 'Checkout',
    description:
      'Opens a checkout for an hour; send the buyer to its url. BAD_USER_INPUT names each problem: no or repeated products, a product not found or archived, products of two organizations, an amount out of bounds, an unknown customer, a discount that does not apply (see discountId), a subscription id.',
    authScopes: { scope: 'checkouts:write' },
    args: { input: t.arg({ type: CheckoutCreateInput, required: true, description: 'The checkout to open.' }) },
    resolve: (query, _root, { input }, ctx) => createCheckout(ctx, input, query),
  }),
  checkoutUpdate: t.prismaField({
    type: 'Checkout',
    description:
      'Changes an open checkout. RESOURCE_NOT_FOUND if the token does not reach it; NOT_OPEN_CHECKOUT once it is expired or confirmed; BAD_USER_INPUT for a product it does not offer, an amount out of bounds, an invalid email or URL.',
    authScopes: { scope: 'checkouts:write' },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The checkout's id." }),
      input: t.arg({ type: CheckoutUpdateInput, required: true, description: 'The fields to change.' }),
    },
    extensions: raises(notOpenCheckout),
    resolve: (query, _root, { id, input }, ctx) => updateCheckout(ctx, id, input, query),
  }),
}));

// The buyer's endpoints: no token, the client secret is the capability.
builder.queryField('checkoutClient', (t) =>
  t.prismaField({
    type: CheckoutPublic,
    description: 'A checkout as its buyer sees it, by client secret; needs no token. RESOURCE_NOT_FOUND for an unknown secret, EXPIRED_CHECKOUT once expired.',
    args: { clientSecret: t.arg.string({ required: true, description: "The checkout's clientSecret." }) },
    extensions: raises(expiredCheckout),
    resolve: (query, _root, { clientSecret }, ctx) => getClientCheckout(ctx, clientSecret, query),
  }),
);

builder.mutationFields((t) => ({
  checkoutClientUpdate: t.prismaField({
    type: CheckoutPublic,
    description:
      'The buyer fills in the checkout; needs no token. RESOURCE_NOT_FOUND for an unknown secret, EXPIRED_CHECKOUT once expired, NOT_OPEN_CHECKOUT once confirmed; BAD_USER_INPUT as for checkoutUpdate.',
    args: {
      clientSecret: t.arg.string({ required: true, description: "The checkout's clientSecret." }),
      input: t.arg({ type: CheckoutUpdatePublicInput, required: true, description: 'The fields to change.' }),
    },
    extensions: raises(expiredCheckout, notOpenCheckout),
    resolve: (query, _root, { clientSecret, input }, ctx) => updateClientCheckout(ctx, clientSecret, input, query),
  }),
  checkoutClientConfirm: t.prismaField({
    type: CheckoutPublicConfirmed,
    description:
      'The buyer confirms: a pending order is created and the payment is processed right after (status moves to succeeded or failed). A failed checkout is confirmed again with another confirmationTokenId: its order is charged anew, and its other fields stay as they are. Needs no token. BAD_USER_INPUT when the email, a required billing address or the payment method is missing or unknown; PAYMENT_ERROR when the environment has no payment processor; EXPIRED_CHECKOUT and NOT_OPEN_CHECKOUT as for checkoutClientUpdate.',
    args: {
      clientSecret: t.arg.string({ required: true, description: "The checkout's clientSecret." }),
      input: t.arg({ type: CheckoutConfirmInput, required: true, description: 'The last changes and the payment method.' }),
    },
    extensions: raises(expiredCheckout, notOpenCheckout, noPayment),
    resolve: (query, _root, { clientSecret, input }, ctx) => confirmCheckout(ctx, clientSecret, input, query),
  }),
}));

/** node(id:) answers for checkouts as core.checkout does. */
export const checkoutNodeLoader: NodeLoader = { surface: 'core', model: 'checkout', typeName: 'Checkout', scopes: ['checkouts:read', 'checkouts:write'], load: getCheckout };
