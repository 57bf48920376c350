import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { withoutId } from '../../graphql/shared-fields.ts';
import { raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery, connectionType, relationArgs, relationPage, relationQuery, relationWindow } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import type { CustomerCancellationReason as CancellationReasons, SubscriptionStatus as SubscriptionStatuses } from '../../generated/prisma/enums.ts';
import { ProductPrice, RecurringInterval, billingInterval } from '../products/schema.ts';
import { Order } from '../orders/schema.ts';
import { Customer, CustomerState } from '../customers/schema.ts';
import { BenefitGrant, BenefitType } from '../benefits/schema.ts';
import { Discount } from '../discounts/schema.ts';
import {
  alreadyCanceled,
  getSubscription,
  listSubscriptions,
  revokeSubscription,
  subscriptionLocked,
  subscriptionSortProperties,
  updateSubscription,
  updateSubscriptionPaymentMethod,
} from './service.ts';

/** The errors a change to a subscription answers with besides those any field may (the Customer Portal's too). */
export const canceledAlready = { error: alreadyCanceled(), when: 'The subscription has ended, or is canceled at period end, so the change is not possible.' };
export const paymentInProgress = { error: subscriptionLocked(''), when: 'A payment of the subscription is in progress; the change is possible once it is paid.' };

export const SubscriptionStatus = builder.enumType('SubscriptionStatus', {
  description: 'Where a subscription is. active, trialing and past_due keep its benefits granted; the others do not.',
  values: {
    incomplete: { description: 'Made by a confirmed checkout; its first payment is not through yet.' },
    incomplete_expired: { description: 'Its first payment was declined: it never started, and has ended.' },
    trialing: { description: 'In a free trial. Kassa has no trials, so no subscription is in this status.' },
    active: { description: 'Paid up for the current period.' },
    past_due: { description: 'A renewal was declined; the charge is retried 1, 3, 5 and 7 days after each failure, then the subscription is canceled.' },
    canceled: { description: 'Ended: revoked, run out after a cancellation at period end, or out of renewal retries.' },
    unpaid: { description: 'Left unpaid after the retries. Kassa cancels instead, so no subscription is in this status.' },
  } satisfies Record<SubscriptionStatuses, object>,
});
export const CustomerCancellationReason = builder.enumType('CustomerCancellationReason', {
  description: 'Why the customer canceled, as they gave it.',
  values: {
    customer_service: { description: 'Unhappy with the customer service.' },
    low_quality: { description: 'The quality was too low.' },
    missing_features: { description: 'Features they need are missing.' },
    switched_service: { description: 'They moved to another service.' },
    too_complex: { description: 'Too complex to use.' },
    too_expensive: { description: 'Too expensive.' },
    unused: { description: 'They did not use it enough.' },
    other: { description: 'Another reason; see the comment.' },
  } satisfies Record<CancellationReasons, object>,
});
export const ProrationBehavior = builder.enumType('SubscriptionProrationBehavior', {
  description: 'How a change of product is billed.',
  values: {
    prorate: { description: 'Credit the unused time and charge the rest of the period on the next order.' },
    invoice: { description: 'Bill the difference at once. Not available: refused with BAD_USER_INPUT.' },
  } as const,
});
const SubscriptionSortOrder = sortOrderEnum(
  'SubscriptionSortOrder',
  'subscriptions',
  {
  customer: "the customer's email address",
  status: 'status',
  started_at: 'when the subscription started, those not started last',
  current_period_end: 'the end of the current period',
  amount: 'the amount billed each period',
  product: "the product's name",
  discount: 'the name of the discount it was bought with',
  } satisfies Record<(typeof subscriptionSortProperties)[number], string>,
  'SubscriptionSortProperty',
);

const pricesByPosition = { orderBy: { position: 'asc' } } as const;

type SubscriptionFieldBuilder = PrismaFieldBuilder<'Subscription'>;

/** A subscription's own fields, without its metadata: what its customer sees of it too. */
export const subscriptionFields = (t: SubscriptionFieldBuilder) => ({
  id: t.exposeID('id', { description: "The subscription's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the subscription was created (at checkout confirmation).' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the subscription was last changed; null if never.' }),
  amount: t.exposeInt('amount', { description: 'What each period costs, in minor units of currency.' }),
  currency: t.exposeString('currency', { description: 'An ISO 4217 code, lowercase, such as `usd`.' }),
  recurringInterval: t.field({
    type: RecurringInterval,
    description: 'How long a period is: a month or a year.',
    resolve: (subscription) => billingInterval(subscription.recurringInterval),
  }),
  status: t.expose('status', { type: SubscriptionStatus, description: 'Where the subscription is.' }),
  currentPeriodStart: t.expose('currentPeriodStart', { type: 'DateTime', description: 'When the current (paid or being paid) period began.' }),
  currentPeriodEnd: t.expose('currentPeriodEnd', { type: 'DateTime', nullable: true, description: 'When the current period ends and the next is charged. Always set in Kassa.' }),
  cancelAtPeriodEnd: t.exposeBoolean('cancelAtPeriodEnd', { description: 'Whether the subscription ends at currentPeriodEnd instead of renewing.' }),
  canceledAt: t.expose('canceledAt', { type: 'DateTime', nullable: true, description: 'When it was canceled (at period end or at once); null if not canceled.' }),
  startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true, description: 'When the first payment went through; null before.' }),
  endsAt: t.expose('endsAt', { type: 'DateTime', nullable: true, description: 'When it ends or ended, once canceled; null while it renews.' }),
  endedAt: t.expose('endedAt', { type: 'DateTime', nullable: true, description: 'When it ended; null while it runs.' }),
  customerId: t.expose('customerId', { type: 'UUID', description: 'The customer subscribed.' }),
  productId: t.expose('productId', { type: 'UUID', description: 'The product subscribed to now.' }),
  checkoutId: t.expose('checkoutId', { type: 'UUID', nullable: true, description: 'The checkout that started it; null if none.' }),
  customerCancellationReason: t.expose('customerCancellationReason', {
    type: CustomerCancellationReason,
    nullable: true,
    description: 'Why it was canceled, when a reason was given; null otherwise, and again once resumed.',
  }),
  customerCancellationComment: t.exposeString('customerCancellationComment', { nullable: true, description: 'A free-text comment on the cancellation; null if none.' }),
});

/** The prices the subscription bills, in order. */
export const subscriptionPricesField = (t: SubscriptionFieldBuilder) =>
  t.field({
    type: [ProductPrice],
    description: 'The prices billed each period, in order.',
    select: (_args, _ctx, nested) => ({ prices: { select: { productPrice: nested() }, ...pricesByPosition } }),
    resolve: (subscription) => subscription.prices.map((p) => p.productPrice),
  });

/** What a subscription is to anyone who may see it: Subscription and the portal's views implement it. */
export const SubscriptionFields = builder.prismaInterface('Subscription', {
  variant: 'SubscriptionFields',
  description: "The fields every view of a subscription shares: its amount, interval, state and periods. Subscription is the organization's view, CustomerSubscription and CustomerOrderSubscription its customer's.",
  fields: (t) => withoutId(subscriptionFields(t as unknown as SubscriptionFieldBuilder)),
});

export const Subscription = builder.prismaObject('Subscription', {
  interfaces: [Node, SubscriptionFields],
  description: 'A recurring purchase, billed up front for each period from currentPeriodStart to currentPeriodEnd.',
  fields: (t) => ({
    ...subscriptionFields(t as unknown as SubscriptionFieldBuilder),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data, copied from the checkout.", resolve: (subscription) => subscription.metadata as Metadata }),
    customFieldData: t.field({
      type: 'JSONObject',
      description: "The buyer's answers to the product's custom fields at checkout, by the field's slug.",
      resolve: (subscription) => subscription.customFieldData as Record<string, unknown>,
    }),
    discountId: t.expose('discountId', { type: 'UUID', nullable: true, description: 'The discount it was bought with, which its orders get for the discount duration; null if none.' }),
    discount: t.relation('discount', { type: Discount, nullable: true, description: 'The discount it was bought with, even if deleted since; null if none.' }),
    customer: t.relation('customer', { description: 'The customer subscribed.' }),
    product: t.relation('product', { description: 'The product subscribed to now.' }),
    prices: subscriptionPricesField(t as unknown as SubscriptionFieldBuilder),
    priceId: t.field({
      type: 'UUID',
      deprecationReason: 'use prices',
      description: 'The id of the first price billed.',
      select: { prices: { select: { productPriceId: true }, ...pricesByPosition, take: 1 } },
      resolve: (subscription) => subscription.prices[0].productPriceId,
    }),
    price: t.field({
      type: ProductPrice,
      deprecationReason: 'use prices',
      description: 'The first price billed.',
      select: (_args, _ctx, nested) => ({ prices: { select: { productPrice: nested() }, ...pricesByPosition, take: 1 } }),
      resolve: (subscription) => subscription.prices[0].productPrice,
    }),
  }),
});

builder.prismaObjectField(Order, 'subscription', (t) =>
  t.relation('subscription', { nullable: true, description: 'The subscription the order bills; null for a one-time purchase.' }),
);

/** What a customer is entitled to: its live subscriptions and granted benefits. */
builder.prismaObjectFields(CustomerState, (t) => ({
  activeSubscriptions: t.relation('subscriptions', {
    description: 'Subscriptions that are active (paid up).',
    query: { where: { status: 'active' }, orderBy: { createdAt: 'asc' } },
  }),
  grantedBenefits: t.relation('benefitGrants', {
    description: 'Benefits granted now, with their metadata.',
    query: { where: { grantedAt: { not: null }, revokedAt: null }, orderBy: { grantedAt: 'asc' } },
  }),
  licenseKeys: t.relation('licenseKeys', {
    description: 'License keys that are granted (not revoked or disabled).',
    query: { where: { status: 'granted' }, orderBy: { createdAt: 'asc' } },
  }),
}));

builder.prismaObjectFields(BenefitGrant, (t) => ({
  benefitType: t.field({ type: BenefitType, description: "The granted benefit's type.", select: { benefit: { select: { type: true } } }, resolve: (grant) => grant.benefit.type }),
  benefitMetadata: t.field({ type: MetadataScalar, description: "The granted benefit's metadata.", select: { benefit: { select: { metadata: true } } }, resolve: (grant) => grant.benefit.metadata as Metadata }),
}));

const SubscriptionList = listType('Subscription', Subscription);

const SubscriptionUpdateInput = builder.inputType('SubscriptionUpdateInput', {
  description:
    'One change at a time: cancelAtPeriodEnd (true cancels at the end of the period, false resumes), revoke (true ends it now), or productId (with prorationBehavior).',
  fields: (t) => ({
    cancelAtPeriodEnd: t.boolean({ description: 'true: end at the end of the paid period; false: renew again (resume).' }),
    revoke: t.boolean({ description: 'true (only): end now and revoke its benefits.' }),
    productId: t.field({
      type: 'UUID',
      description: 'Move to this product from now on: recurring at the same interval, in the same currency, with a fixed or free price, not archived.',
    }),
    prorationBehavior: t.field({ type: ProrationBehavior, description: 'With productId: how the change is billed. Default: prorate.' }),
    discountId: t.field({
      type: 'UUID',
      description:
        "Apply this discount to the renewals from the next one on (its duration counted from there), redeeming it as a checkout does; null removes the subscription's discount from the next renewal on. The current, paid period is unchanged.",
    }),
    customerCancellationReason: t.field({ type: CustomerCancellationReason, description: 'With a cancellation or revocation: why.' }),
    customerCancellationComment: t.string({ description: 'With a cancellation or revocation: a free-text comment.' }),
  }),
});

const read = { scope: ['subscriptions:read', 'subscriptions:write'] } as const;
const write = { scope: 'subscriptions:write' } as const;

builder.objectFields(CoreQuery, (t) => ({
  subscriptions: t.field({
    type: SubscriptionList,
    description: 'The subscriptions of the organizations the token reaches, most recently started first unless `sorting` says otherwise.',
    authScopes: { scope: [...read.scope] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      productId: t.arg({ type: ['UUID'], description: 'Only subscriptions to these products.' }),
      customerId: t.arg({ type: ['UUID'], description: 'Only subscriptions of these customers.' }),
      externalCustomerId: t.arg({ type: ['String'], description: 'Only subscriptions of the customers with these external ids.' }),
      discountId: t.arg({ type: ['UUID'], description: 'Only subscriptions bought with these discounts.' }),
      active: t.arg.boolean({ description: 'true: active, trialing or past due; false: the others.' }),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [SubscriptionSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: started_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listSubscriptions(ctx, args, pageQuery(ctx, info)),
  }),
  subscription: t.prismaField({
    type: 'Subscription',
    description: 'One subscription; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The subscription's id." }) },
    resolve: (query, _root, { id }, ctx) => getSubscription(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  subscriptionUpdate: t.prismaField({
    type: 'Subscription',
    description:
      'Cancels at period end, resumes, revokes, or changes the product of a subscription: exactly one per call, else BAD_USER_INPUT. ALREADY_CANCELED_SUBSCRIPTION once it is canceled or ended; SUBSCRIPTION_LOCKED while a payment of it is in progress or, for a product change, while it is not active; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: write,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The subscription's id." }),
      input: t.arg({ type: SubscriptionUpdateInput, required: true, description: 'The one change to make.' }),
    },
    extensions: raises(canceledAlready, paymentInProgress),
    resolve: (query, _root, { id, input }, ctx) => updateSubscription(ctx, id, input, query),
  }),
  subscriptionRevoke: t.prismaField({
    type: 'Subscription',
    authScopes: write,
    description: 'Ends the subscription now and revokes its benefits. ALREADY_CANCELED_SUBSCRIPTION if it has ended; RESOURCE_NOT_FOUND if the token does not reach it.',
    args: { id: t.arg({ type: 'UUID', required: true, description: "The subscription's id." }) },
    extensions: raises(canceledAlready),
    resolve: (query, _root, { id }, ctx) => revokeSubscription(ctx, id, query),
  }),
  subscriptionPaymentMethodUpdate: t.prismaField({
    type: 'Subscription',
    authScopes: write,
    description:
      'Sets the payment method renewals are charged to. A past-due subscription is charged again with it at once. BAD_USER_INPUT for a payment method the processor does not know, or, with Stripe, one that is not a PaymentMethod saved on the subscription’s customer; ALREADY_CANCELED_SUBSCRIPTION if it has ended.',
    args: { id: t.arg({ type: 'UUID', required: true, description: "The subscription's id." }), paymentMethod: t.arg.string({ required: true, description: 'The processor’s payment method token.' }) },
    extensions: raises(canceledAlready),
    resolve: (query, _root, { id, paymentMethod }, ctx) => updateSubscriptionPaymentMethod(ctx, id, paymentMethod, query),
  }),
}));

/** node(id:) answers for subscriptions as core.subscription does. */
export const subscriptionNodeLoader: NodeLoader = { surface: 'core', model: 'subscription', typeName: 'Subscription', scopes: read.scope, load: getSubscription };

// A customer's subscriptions and a subscription's orders, read with their parent: one statement per page of parents.
builder.prismaObjectField(Customer, 'subscriptions', (t) =>
  t.field({
    type: connectionType('Subscription', Subscription),
    nullable: true,
    description: "The customer's subscriptions, newest first. Null, with NOT_PERMITTED, for a token without subscriptions:read.",
    authScopes: { scope: [...read.scope] },
    args: relationArgs(t.arg),
    select: (args, _ctx, nested) => ({
      subscriptions: relationQuery(nested({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...relationWindow(args) }, ['edges', 'node'])),
      _count: { select: { subscriptions: true } },
    }),
    resolve: (parent, args) => relationPage(parent.subscriptions, parent._count.subscriptions, args),
  }),
);

builder.prismaObjectField(Subscription, 'orders', (t) =>
  t.field({
    type: connectionType('Order', Order),
    nullable: true,
    description: "The orders billing this subscription, newest first. Null, with NOT_PERMITTED, for a token without orders:read.",
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: relationArgs(t.arg),
    select: (args, _ctx, nested) => ({
      orders: relationQuery(nested({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...relationWindow(args) }, ['edges', 'node'])),
      _count: { select: { orders: true } },
    }),
    resolve: (parent, args) => relationPage(parent.orders, parent._count.orders, args),
  }),
);
