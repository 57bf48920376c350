import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortingScalarConfig } from '../../graphql/sorting.ts';
import { CustomerCancellationReason as CancellationReasons, SubscriptionStatus as SubscriptionStatuses } from '../../generated/prisma/enums.ts';
import { ProductPrice, RecurringInterval } from '../products/schema.ts';
import { Order } from '../orders/schema.ts';
import { CustomerState } from '../customers/schema.ts';
import { BenefitGrant, BenefitType } from '../benefits/schema.ts';
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

export const SubscriptionStatus = builder.enumType(SubscriptionStatuses, { name: 'SubscriptionStatus' });
export const CustomerCancellationReason = builder.enumType(CancellationReasons, { name: 'CustomerCancellationReason' });
const ProrationBehavior = builder.enumType('SubscriptionProrationBehavior', {
  values: { prorate: { description: 'Credit the unused time and charge the rest of the period on the next order.' }, invoice: {} } as const,
});
const SubscriptionSortProperty = builder.scalarType('SubscriptionSortProperty', sortingScalarConfig(subscriptionSortProperties));

const pricesByPosition = { orderBy: { position: 'asc' } } as const;

type SubscriptionFieldBuilder = PrismaFieldBuilder<'Subscription'>;

/** A subscription's own fields, without its metadata: what its customer sees of it too. */
export const subscriptionFields = (t: SubscriptionFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  amount: t.exposeInt('amount', { description: 'What each period costs, in minor units of currency.' }),
  currency: t.exposeString('currency'),
  recurringInterval: t.expose('recurringInterval', { type: RecurringInterval }),
  status: t.expose('status', { type: SubscriptionStatus }),
  currentPeriodStart: t.expose('currentPeriodStart', { type: 'DateTime' }),
  currentPeriodEnd: t.expose('currentPeriodEnd', { type: 'DateTime', nullable: true }),
  cancelAtPeriodEnd: t.exposeBoolean('cancelAtPeriodEnd'),
  canceledAt: t.expose('canceledAt', { type: 'DateTime', nullable: true }),
  startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
  endsAt: t.expose('endsAt', { type: 'DateTime', nullable: true }),
  endedAt: t.expose('endedAt', { type: 'DateTime', nullable: true }),
  customerId: t.expose('customerId', { type: 'UUID' }),
  productId: t.expose('productId', { type: 'UUID' }),
  checkoutId: t.expose('checkoutId', { type: 'UUID', nullable: true }),
  customerCancellationReason: t.expose('customerCancellationReason', { type: CustomerCancellationReason, nullable: true }),
  customerCancellationComment: t.exposeString('customerCancellationComment', { nullable: true }),
});

/** The prices the subscription bills, in order. */
export const subscriptionPricesField = (t: SubscriptionFieldBuilder) =>
  t.field({
    type: [ProductPrice],
    select: (_args, _ctx, nested) => ({ prices: { select: { productPrice: nested() }, ...pricesByPosition } }),
    resolve: (subscription) => subscription.prices.map((p) => p.productPrice),
  });

export const Subscription = builder.prismaObject('Subscription', {
  description: 'A recurring purchase, billed up front for each period from currentPeriodStart to currentPeriodEnd.',
  fields: (t) => ({
    ...subscriptionFields(t as unknown as SubscriptionFieldBuilder),
    metadata: t.field({ type: MetadataScalar, resolve: (subscription) => subscription.metadata as Metadata }),
    customer: t.relation('customer'),
    product: t.relation('product'),
    prices: subscriptionPricesField(t as unknown as SubscriptionFieldBuilder),
    priceId: t.field({
      type: 'UUID',
      deprecationReason: 'use prices',
      select: { prices: { select: { productPriceId: true }, ...pricesByPosition, take: 1 } },
      resolve: (subscription) => subscription.prices[0].productPriceId,
    }),
    price: t.field({
      type: ProductPrice,
      deprecationReason: 'use prices',
      select: (_args, _ctx, nested) => ({ prices: { select: { productPrice: nested() }, ...pricesByPosition, take: 1 } }),
      resolve: (subscription) => subscription.prices[0].productPrice,
    }),
    orders: t.relation('orders', { description: 'The orders billing this subscription, newest first.', query: { orderBy: { createdAt: 'desc' } } }),
  }),
});

builder.prismaObjectField(Order, 'subscription', (t) => t.relation('subscription', { nullable: true }));

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
  benefitType: t.field({ type: BenefitType, select: { benefit: { select: { type: true } } }, resolve: (grant) => grant.benefit.type }),
  benefitMetadata: t.field({ type: MetadataScalar, select: { benefit: { select: { metadata: true } } }, resolve: (grant) => grant.benefit.metadata as Metadata }),
}));

const SubscriptionList = listType('Subscription', Subscription);

const SubscriptionUpdateInput = builder.inputType('SubscriptionUpdateInput', {
  description:
    'One change at a time: cancelAtPeriodEnd (true cancels at the end of the period, false resumes), revoke (true ends it now), or productId (with prorationBehavior).',
  fields: (t) => ({
    cancelAtPeriodEnd: t.boolean(),
    revoke: t.boolean(),
    productId: t.field({ type: 'UUID' }),
    prorationBehavior: t.field({ type: ProrationBehavior, description: 'Default: prorate.' }),
    discountId: t.field({ type: 'UUID' }),
    customerCancellationReason: t.field({ type: CustomerCancellationReason }),
    customerCancellationComment: t.string(),
  }),
});

const read = { scope: ['subscriptions:read', 'subscriptions:write'] } as const;
const write = { scope: 'subscriptions:write' } as const;

builder.objectFields(CoreQuery, (t) => ({
  subscriptions: t.field({
    type: SubscriptionList,
    authScopes: { scope: [...read.scope] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'] }),
      productId: t.arg({ type: ['UUID'] }),
      customerId: t.arg({ type: ['UUID'] }),
      externalCustomerId: t.arg({ type: ['String'] }),
      discountId: t.arg({ type: ['UUID'] }),
      active: t.arg.boolean({ description: 'true: active, trialing or past due; false: the others.' }),
      metadata: t.arg({ type: 'JSONObject' }),
      sorting: t.arg({ type: [SubscriptionSortProperty], description: 'Default: -started_at.' }),
    },
    resolve: (_root, args, ctx, info) => listSubscriptions(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  subscription: t.prismaField({
    type: 'Subscription',
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getSubscription(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  subscriptionUpdate: t.prismaField({
    type: 'Subscription',
    authScopes: write,
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: SubscriptionUpdateInput, required: true }) },
    extensions: raises(canceledAlready, paymentInProgress),
    resolve: (query, _root, { id, input }, ctx) => updateSubscription(ctx, id, input, query),
  }),
  subscriptionRevoke: t.prismaField({
    type: 'Subscription',
    authScopes: write,
    description: 'Ends the subscription now and revokes its benefits.',
    args: { id: t.arg({ type: 'UUID', required: true }) },
    extensions: raises(canceledAlready),
    resolve: (query, _root, { id }, ctx) => revokeSubscription(ctx, id, query),
  }),
  subscriptionPaymentMethodUpdate: t.prismaField({
    type: 'Subscription',
    authScopes: write,
    description: 'Sets the payment method renewals are charged to. A past-due subscription is charged again with it at once.',
    args: { id: t.arg({ type: 'UUID', required: true }), paymentMethod: t.arg.string({ required: true, description: 'The processor’s payment method token.' }) },
    extensions: raises(canceledAlready),
    resolve: (query, _root, { id, paymentMethod }, ctx) => updateSubscriptionPaymentMethod(ctx, id, paymentMethod, query),
  }),
}));
