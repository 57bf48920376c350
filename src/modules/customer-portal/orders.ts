// The customer's own orders: list and read them, set their billing details until the invoice
// exists, generate and fetch the invoice. Every lookup is the Core service's over reach(ctx).order,
// so the rules and errors are Core's and a customer reaches only their own orders (a checkout's
// session: only what that checkout bought). The types below expose what the customer may see of
// an order and its subscription (of its product: products.ts): no merchant metadata, no way into Core types.
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CustomerPortalMutation, CustomerPortalQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import { AddressInput } from '../customers/schema.ts';
import { generateInvoice, invoiceUrl } from '../invoices/service.ts';
import { invoiceErrors, orderFields, OrderFields, ProductBillingType } from '../orders/schema.ts';
import { customerOrderSortProperties, getOrder, listOrders, updateOrder } from '../orders/service.ts';
import { subscriptionFields, SubscriptionFields } from '../subscriptions/schema.ts';
import { raises } from '../../graphql/errors.ts';
import { PaymentProcessor } from '../checkouts/schema.ts';
import { orderNotEligibleForRetry, orderPaymentStatus, paymentAlreadyInProgress, retryOrderPayment } from '../payments/service.ts';
import { CustomerOrderProduct } from './products.ts';
import { CustomFieldAnswer } from '../custom-fields/schema.ts';
import { labelledAnswers } from '../custom-fields/service.ts';

const CustomerOrderSortOrder = sortOrderEnum(
  'CustomerOrderSortOrder',
  "the customer's orders",
  {
  created_at: 'when the order was created',
  amount: 'the amount before discounts and tax (subtotalAmount)',
  net_amount: 'the amount after discounts, before tax (netAmount)',
  product: "the product's name",
  subscription: 'the id of the subscription the order bills',
  } satisfies Record<(typeof customerOrderSortProperties)[number], string>,
  'CustomerOrderSortProperty',
);

export const CustomerOrderSubscription = builder.prismaObject('Subscription', {
  variant: 'CustomerOrderSubscription',
  interfaces: [SubscriptionFields],
  description: 'The subscription an order bills, as its customer sees it.',
  fields: (t) => ({
    ...subscriptionFields(t as unknown as PrismaFieldBuilder<'Subscription'>),
    discountId: t.expose('discountId', { type: 'UUID', nullable: true, description: 'The discount its renewals get; null if none.' }),
  }),
});

type RetriedOrder = { paid: boolean; billingPeriodStart: Date | null; subscription: { status: string; currentPeriodEnd: Date; retryAt: Date | null } | null };

/**
 * A declined renewal is charged again at its subscription's retryAt: the unpaid order of the period
 * after the current one, while the subscription is past due. No other order has a retry scheduled.
 */
function nextPaymentAttemptAt({ paid, billingPeriodStart, subscription }: RetriedOrder): Date | null {
  if (paid || subscription?.status !== 'past_due') return null;
  return billingPeriodStart?.getTime() === subscription.currentPeriodEnd.getTime() ? subscription.retryAt : null;
}

export const CustomerOrder = builder.prismaObject('Order', {
  variant: 'CustomerOrder',
  interfaces: [Node, OrderFields],
  description: 'An order of the signed-in customer. Amounts are integer minor units: net = subtotal - discount, total = net + tax.',
  fields: (t) => ({
    ...orderFields(t as unknown as PrismaFieldBuilder<'Order'>),
    product: t.relation('product', { type: CustomerOrderProduct, description: 'The product bought.' }),
    discountId: t.expose('discountId', { type: 'UUID', nullable: true, description: 'The discount that took discountAmount off; null if none.' }),
    subscription: t.relation('subscription', { type: CustomerOrderSubscription, nullable: true, description: 'The subscription the order bills; null for a one-time purchase.' }),
    nextPaymentAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When a declined renewal is charged again; null when no retry is scheduled.',
      select: { paid: true, billingPeriodStart: true, subscription: { select: { status: true, currentPeriodEnd: true, retryAt: true } } },
      resolve: (order) => nextPaymentAttemptAt(order),
    }),
    customFieldAnswers: t.field({
      type: [CustomFieldAnswer],
      description: 'What the customer answered to the custom fields at checkout, labelled; empty if none.',
      select: { organizationId: true, productId: true, customFieldData: true },
      resolve: (order, _args, ctx) => labelledAnswers(ctx.prisma, order),
    }),
  }),
});

const CustomerOrderList = listType('CustomerOrder', CustomerOrder);

const CustomerOrderInvoice = builder.objectRef<{ url: string }>('CustomerOrderInvoice').implement({
  description: "A link to the order's invoice PDF. It expires after an hour; ask again for a fresh one.",
  fields: (t) => ({ url: t.exposeString('url', { description: 'A signed link to the PDF, valid for an hour; needs no token.' }) }),
});

const CustomerOrderUpdateInput = builder.inputType('CustomerOrderUpdateInput', {
  description: 'Billing details, which can change until the invoice is generated.',
  fields: (t) => ({
    billingName: t.string({ description: 'The name on the invoice; null clears it.' }),
    billingAddress: t.field({ type: AddressInput, description: 'The address on the invoice; null clears it.' }),
  }),
});

const CustomerOrderPaymentStatus = builder.objectRef<{ status: string; error: string | null }>('CustomerOrderPaymentStatus').implement({
  description: "Where the payment of the customer's order stands: its latest attempt.",
  fields: (t) => ({
    status: t.exposeString('status', { description: 'pending, succeeded or failed: the status of the latest payment of the order.' }),
    error: t.exposeString('error', { nullable: true, description: 'Why the latest payment failed, in a sentence; null unless it failed.' }),
  }),
});

const CustomerOrderPaymentConfirmation = builder.objectRef<{ status: string; clientSecret: string | null; error: string | null }>('CustomerOrderPaymentConfirmation').implement({
  description: 'A new payment of the order, scheduled: follow it with orderPaymentStatus.',
  fields: (t) => ({
    status: t.exposeString('status', { description: 'pending: the payment is charged in the background.' }),
    clientSecret: t.exposeString('clientSecret', { nullable: true, description: 'Always null: Kassa charges in the background, the page has nothing to finish.' }),
    error: t.exposeString('error', { nullable: true, description: 'Always null: a failure shows on orderPaymentStatus.' }),
  }),
});

const CustomerOrderPaymentConfirmInput = builder.inputType('CustomerOrderPaymentConfirmInput', {
  description: 'The payment method to pay the order with: a new one-time token or a saved method, one of the two.',
  fields: (t) => ({
    confirmationTokenId: t.string({ description: 'A one-time token from the buyer’s page (a Stripe ConfirmationToken, ctoken_…; in sandbox, a test card).' }),
    paymentMethodId: t.string({ description: 'A saved payment method of the customer (a Stripe PaymentMethod, pm_…).' }),
    paymentProcessor: t.field({ type: PaymentProcessor, description: 'The payment API the token is for; stripe, the only one.' }),
  }),
});

const orderPaymentErrors = raises(
  { error: paymentAlreadyInProgress(), when: 'A payment of the order is still pending.' },
  { error: orderNotEligibleForRetry(), when: 'The order is paid or refunded, or bills a subscription that has ended.' },
);

builder.objectFields(CustomerPortalQuery, (t) => ({
  orderPaymentStatus: t.field({
    type: CustomerOrderPaymentStatus,
    authScopes: { principal: 'customer' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The order's id." }) },
    description: "Where the payment of one of the customer's orders stands. RESOURCE_NOT_FOUND for an order that is not theirs.",
    resolve: (_root, { id }, ctx) => orderPaymentStatus(ctx, id),
  }),
  orders: t.field({
    type: CustomerOrderList,
    description: "The signed-in customer's orders (a checkout's session: that checkout's), newest first unless `sorting` says otherwise.",
    authScopes: { principal: 'customer' },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: "Only these organizations' orders." }),
      productId: t.arg({ type: ['UUID'], description: 'Only orders of these products.' }),
      productBillingType: t.arg({ type: [ProductBillingType], description: 'Only orders of one-time or of recurring products; both when omitted or both given.' }),
      subscriptionId: t.arg({ type: ['UUID'], description: 'Only orders billing these subscriptions.' }),
      query: t.arg.string({ description: "Matches the product's name, case-insensitively." }),
      sorting: t.arg({ type: [CustomerOrderSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listOrders(ctx, args, pageQuery(ctx, info)),
  }),
  order: t.prismaField({
    type: CustomerOrder,
    description: "One of the customer's orders; RESOURCE_NOT_FOUND if it is not theirs.",
    authScopes: { principal: 'customer' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The order's id." }) },
    resolve: (query, _root, { id }, ctx) => getOrder(ctx, id, query),
  }),
  orderInvoice: t.field({
    type: CustomerOrderInvoice,
    authScopes: { principal: 'customer' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The order's id." }) },
    description: 'The invoice of an order, once generated (see orderInvoiceGenerate). RESOURCE_NOT_FOUND for an order that is not theirs or has no invoice.',
    resolve: (_root, { id }, ctx) => invoiceUrl(ctx, id),
  }),
}));

builder.objectFields(CustomerPortalMutation, (t) => ({
  orderPaymentConfirm: t.field({
    type: CustomerOrderPaymentConfirmation,
    authScopes: { fullCustomerSession: true },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The order's id." }),
      input: t.arg({ type: CustomerOrderPaymentConfirmInput, required: true, description: 'The payment method to pay with.' }),
    },
    description:
      "Pays an unpaid order of the customer's again, with another payment method: a new pending payment, charged in the background. PAYMENT_ALREADY_IN_PROGRESS while one is pending; ORDER_NOT_ELIGIBLE_FOR_RETRY for a paid or refunded order or an ended subscription's; RESOURCE_NOT_FOUND for an order that is not theirs.",
    extensions: orderPaymentErrors,
    resolve: (_root, { id, input }, ctx) => retryOrderPayment(ctx, id, input),
  }),
  orderUpdate: t.prismaField({
    type: CustomerOrder,
    authScopes: { fullCustomerSession: true },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The order's id." }),
      input: t.arg({ type: CustomerOrderUpdateInput, required: true, description: 'The billing details to change.' }),
    },
    description: 'Sets the billing details the invoice will carry. BAD_USER_INPUT once the invoice exists or for an invalid address; RESOURCE_NOT_FOUND for an order that is not theirs.',
    resolve: (query, _root, { id, input }, ctx) => updateOrder(ctx, id, input, query),
  }),
  orderInvoiceGenerate: t.prismaField({
    type: CustomerOrder,
    authScopes: { fullCustomerSession: true },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The order's id." }) },
    description:
      'Issues the invoice of a paid order with billing details. Its billing details are frozen from then on. INVOICE_ALREADY_EXISTS, NOT_PAID_ORDER and MISSING_INVOICE_BILLING_DETAILS as in the Core API.',
    extensions: invoiceErrors,
    resolve: (query, _root, { id }, ctx) => generateInvoice(ctx, id, query),
  }),
}));

/** node(id:) answers a customer for their orders as customerPortal.order does. */
export const customerOrderNodeLoader: NodeLoader = { surface: 'customerPortal', model: 'order', typeName: 'CustomerOrder', load: getOrder };
