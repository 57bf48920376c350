// The customer's subscriptions: list, read, cancel at period end, uncancel, and move to another
// product of the same organization. Changes go through the Core subscription service, so the rules,
// the proration and the events are the same whoever asks; its lookups start from reach(ctx), which
// for a customer is their own subscriptions only.
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { raises } from '../../graphql/errors.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CustomerPortalMutation, CustomerPortalQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import { canceledAlready, CustomerCancellationReason, paymentInProgress, subscriptionFields, SubscriptionFields, subscriptionPricesField } from '../subscriptions/schema.ts';
import {
  customerSubscriptionSortProperties,
  getSubscription,
  listCustomerSubscriptions,
  updateSubscription,
  updateSubscriptionAsCustomer,
} from '../subscriptions/service.ts';
import { CustomerSubscriptionProduct } from './products.ts';

const CustomerSubscriptionSortOrder = sortOrderEnum(
  'CustomerSubscriptionSortOrder',
  "the customer's subscriptions",
  {
  started_at: 'when the subscription started, those not started last',
  amount: 'the amount billed each period',
  status: 'status',
  organization: "the selling organization's name",
  product: "the product's name",
  } satisfies Record<(typeof customerSubscriptionSortProperties)[number], string>,
  'CustomerSubscriptionSortProperty',
);

type SubscriptionFieldBuilder = PrismaFieldBuilder<'Subscription'>;

export const CustomerSubscription = builder.prismaObject('Subscription', {
  variant: 'CustomerSubscription',
  interfaces: [Node, SubscriptionFields],
  description: "One of the signed-in customer's subscriptions.",
  fields: (t) => ({
    ...subscriptionFields(t as unknown as SubscriptionFieldBuilder),
    product: t.relation('product', { type: CustomerSubscriptionProduct, description: 'The product subscribed to now.' }),
    discountId: t.expose('discountId', { type: 'UUID', nullable: true, description: 'The discount its renewals get for the discount duration; null if none.' }),
    prices: subscriptionPricesField(t as unknown as SubscriptionFieldBuilder),
  }),
});

const CustomerSubscriptionList = listType('CustomerSubscription', CustomerSubscription);

const CustomerSubscriptionUpdateInput = builder.inputType('CustomerSubscriptionUpdateInput', {
  description:
    'One kind of change: cancelAtPeriodEnd (true cancels at the end of the period, false resumes; with an optional reason and comment), or productId (moves to that product, prorated).',
  fields: (t) => ({
    cancelAtPeriodEnd: t.boolean({ description: 'true: end at the end of the paid period; false: renew again (resume).' }),
    cancellationReason: t.field({ type: CustomerCancellationReason, description: 'With cancelAtPeriodEnd true: why.' }),
    cancellationComment: t.string({ description: 'With cancelAtPeriodEnd true: a free-text comment.' }),
    productId: t.field({ type: 'UUID', description: "A recurring, live product of the same organization; refused while the organization's allow_customer_updates is off." }),
  }),
});
const read = { principal: 'customer' } as const;
const write = { fullCustomerSession: true } as const;

builder.objectFields(CustomerPortalQuery, (t) => ({
  subscriptions: t.field({
    type: CustomerSubscriptionList,
    description: "The signed-in customer's subscriptions, most recently started first unless `sorting` says otherwise.",
    authScopes: read,
    args: {
      ...pageArgs(t.arg),
      productId: t.arg({ type: ['UUID'], description: 'Only subscriptions to these products.' }),
      active: t.arg.boolean({ description: 'true: active, trialing or past due; false: the others.' }),
      query: t.arg.string({ description: "Matches the product's or the organization's name, case-insensitively." }),
      sorting: t.arg({ type: [CustomerSubscriptionSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: started_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listCustomerSubscriptions(ctx, args, pageQuery(ctx, info)),
  }),
  subscription: t.prismaField({
    type: CustomerSubscription,
    description: "One of the customer's subscriptions; RESOURCE_NOT_FOUND if it is not theirs.",
    authScopes: read,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The subscription's id." }) },
    resolve: (query, _root, { id }, ctx) => getSubscription(ctx, id, query),
  }),
}));

builder.objectFields(CustomerPortalMutation, (t) => ({
  subscriptionUpdate: t.prismaField({
    type: CustomerSubscription,
    authScopes: write,
    description:
      'Cancels at period end, resumes, or moves the subscription to another product (prorated), by the same rules and with the same errors as core.subscriptionUpdate.',
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The subscription's id." }),
      input: t.arg({ type: CustomerSubscriptionUpdateInput, required: true, description: 'The one change to make.' }),
    },
    extensions: raises(canceledAlready, paymentInProgress),
    resolve: (query, _root, { id, input }, ctx) => updateSubscriptionAsCustomer(ctx, id, input, query),
  }),
  subscriptionCancel: t.prismaField({
    type: CustomerSubscription,
    authScopes: write,
    description:
      'Cancels the subscription at the end of the paid period; it can be resumed until then. ALREADY_CANCELED_SUBSCRIPTION if it is canceled already; SUBSCRIPTION_LOCKED while its first payment is in progress.',
    args: { id: t.arg({ type: 'UUID', required: true, description: "The subscription's id." }) },
    extensions: raises(canceledAlready, paymentInProgress),
    resolve: (query, _root, { id }, ctx) => updateSubscription(ctx, id, { cancelAtPeriodEnd: true }, query),
  }),
}));

/** node(id:) answers a customer for their subscriptions as customerPortal.subscription does. */
export const customerSubscriptionNodeLoader: NodeLoader = { surface: 'customerPortal', model: 'subscription', typeName: 'CustomerSubscription', load: getSubscription };
