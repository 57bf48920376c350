import { withoutId } from '../../graphql/shared-fields.ts';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery, connectionType, relationArgs, relationPage, relationWindow, relationQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import type { OrderBillingReason as OrderBillingReasons, OrderStatus as OrderStatuses } from '../../generated/prisma/enums.ts';
import { Address, AddressInput, Customer } from '../customers/schema.ts';
import { ProductPrice } from '../products/schema.ts';
import { Discount } from '../discounts/schema.ts';
import { getOrder, listOrders, orderSortProperties, updateOrder } from './service.ts';
import { generateInvoice, invoiceAlreadyExists, invoiceUrl, missingBillingDetails, notPaidOrder } from '../invoices/service.ts';

/** What generating an invoice answers besides the errors any field may (the Customer Portal's too). */
export const invoiceErrors = raises(
  { error: invoiceAlreadyExists(), when: 'The order has its invoice already.' },
  { error: notPaidOrder(), when: 'The order is not paid: only a paid order is invoiced.' },
  { error: missingBillingDetails(), when: 'The order lacks the billing name or address an invoice needs.' },
);

export const OrderStatus = builder.enumType('OrderStatus', {
  description: 'Where an order is in its payment and refunds.',
  values: {
    pending: { description: 'Created by a confirmed checkout or a renewal; the payment is not through yet.' },
    paid: { description: 'The payment went through and nothing is refunded.' },
    refunded: { description: 'Refunds cover the whole net amount.' },
    partially_refunded: { description: 'Refunds cover part of the net amount.' },
  } satisfies Record<OrderStatuses, object>,
});
export const OrderBillingReason = builder.enumType('OrderBillingReason', {
  description: 'Why an order was made.',
  values: {
    purchase: { description: 'A one-time product bought at checkout.' },
    subscription_create: { description: 'The first period of a subscription, bought at checkout.' },
    subscription_cycle: { description: 'The renewal of a subscription for its next period.' },
    subscription_update: { description: "A change of a subscription's product billed at once. Kassa bills changes on the next renewal, so it makes none of these." },
  } satisfies Record<OrderBillingReasons, object>,
});
const OrderSortOrder = sortOrderEnum(
  'OrderSortOrder',
  'orders',
  {
  created_at: 'when the order was created',
  status: 'status',
  amount: 'the amount before discounts and tax (subtotalAmount)',
  net_amount: 'the amount after discounts, before tax (netAmount)',
  customer: "the customer's email address",
  product: "the product's name",
  } satisfies Record<(typeof orderSortProperties)[number], string>,
  'OrderSortProperty',
);
export const ProductBillingType = builder.enumType('ProductBillingType', {
  description: 'Whether an order is for a one-time or a recurring product.',
  values: {
    one_time: { description: 'A one-time product.' },
    recurring: { description: 'A subscription product.' },
  },
});

export const OrderItem = builder.prismaObject('OrderItem', {
  description: 'A line of an order.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: "The line's id." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the line was created.' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the line was last changed; null if never.' }),
    label: t.exposeString('label', { description: 'What the line is for, as on the invoice: the product name, or the proration it records.' }),
    amount: t.exposeInt('amount', { description: "Before tax, in integer minor units of the order's currency; negative for a credit." }),
    taxAmount: t.exposeInt('taxAmount', { description: "The tax on the line, in minor units of the order's currency." }),
    proration: t.exposeBoolean('proration', { description: "Whether the line settles part of a period, after a subscription's product changed." }),
    productPriceId: t.expose('productPriceId', { type: 'UUID', nullable: true, description: 'The price the line was billed at; null for a credit carried over.' }),
    productPrice: t.relation('productPrice', { type: ProductPrice, nullable: true, description: 'The price the line was billed at, archived or not; null for a credit carried over.' }),
  }),
});

type OrderFieldBuilder = PrismaFieldBuilder<'Order'>;

/** An order's own fields and its lines, without its metadata: what its customer sees of it too. */
export const orderFields = (t: OrderFieldBuilder) => ({
  id: t.exposeID('id', { description: "The order's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the order was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the order was last changed; null if never.' }),
  status: t.expose('status', { type: OrderStatus, description: 'Where the order is in its payment and refunds.' }),
  paid: t.exposeBoolean('paid', { description: 'Whether the payment went through; stays true after refunds.' }),
  subtotalAmount: t.exposeInt('subtotalAmount', { description: 'The sum of the lines before discount and tax, in integer minor units of currency.' }),
  discountAmount: t.exposeInt('discountAmount', { description: 'What the discount took off subtotalAmount, in minor units of currency; 0 without one.' }),
  netAmount: t.exposeInt('netAmount', { description: 'subtotalAmount less discountAmount, in minor units of currency: what refunds are measured against.' }),
  taxAmount: t.exposeInt('taxAmount', { description: 'The tax, in minor units of currency.' }),
  totalAmount: t.exposeInt('totalAmount', { description: 'What the customer paid: netAmount plus taxAmount, in minor units of currency.' }),
  refundedAmount: t.exposeInt('refundedAmount', { description: 'The net amount refunded so far, without tax, in minor units of currency.' }),
  refundedTaxAmount: t.exposeInt('refundedTaxAmount', { description: 'The tax refunded so far, in minor units of currency.' }),
  currency: t.exposeString('currency', { description: 'An ISO 4217 code, lowercase, such as `usd`.' }),
  billingReason: t.expose('billingReason', { type: OrderBillingReason, description: 'Why the order was made.' }),
  billingName: t.exposeString('billingName', { nullable: true, description: 'The name on the invoice; null until given.' }),
  billingAddress: t.field({ type: Address, nullable: true, description: 'The address on the invoice; null until given.', resolve: (order) => order.billingAddress as never }),
  isInvoiceGenerated: t.boolean({ description: 'Whether the invoice was issued; its billing details can no longer change.', resolve: (order) => order.invoiceGeneratedAt !== null }),
  customerId: t.expose('customerId', { type: 'UUID', description: 'The customer who bought.' }),
  userId: t.expose('customerId', { type: 'UUID', deprecationReason: 'use customerId', description: 'The former name of customerId.' }),
  productId: t.expose('productId', { type: 'UUID', description: 'The product bought.' }),
  subscriptionId: t.expose('subscriptionId', { type: 'UUID', nullable: true, description: 'The subscription the order bills; null for a one-time purchase.' }),
  checkoutId: t.expose('checkoutId', { type: 'UUID', nullable: true, description: 'The checkout that made the order; null for a renewal.' }),
  items: t.relation('items', { type: OrderItem, description: 'The lines, in invoice order.', query: { orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] } }),
});

/** What an order is to anyone who may see it: Order (the organization's view) and CustomerOrder implement it. */
export const OrderFields = builder.prismaInterface('Order', {
  variant: 'OrderFields',
  description: "The fields every view of an order shares: its state, amounts, billing details and lines. Order is the organization's view, CustomerOrder its customer's.",
  fields: (t) => withoutId(orderFields(t as unknown as OrderFieldBuilder)),
});

export const Order = builder.prismaObject('Order', {
  interfaces: [Node, OrderFields],
  description: 'What a customer bought. Amounts are integer minor units of currency: net = subtotal - discount, total = net + tax.',
  fields: (t) => ({
    ...orderFields(t as unknown as OrderFieldBuilder),
    amount: t.exposeInt('netAmount', { deprecationReason: 'use netAmount', description: 'The former name of netAmount.' }),
    discountId: t.expose('discountId', { type: 'UUID', nullable: true, description: 'The discount that took discountAmount off; null if none.' }),
    discount: t.relation('discount', { type: Discount, nullable: true, description: 'The discount that took discountAmount off, even if deleted since; null if none.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data: the checkout's, on an order a checkout made; empty on a renewal.", resolve: (order) => order.metadata as Metadata }),
    customFieldData: t.field({
      type: 'JSONObject',
      description: "The buyer's answers to the product's custom fields, by the field's slug: the checkout's, on an order a checkout made; empty on a renewal.",
      resolve: (order) => order.customFieldData as Record<string, unknown>,
    }),
    customer: t.relation('customer', { description: 'The customer who bought.' }),
    product: t.relation('product', { description: 'The product bought.' }),
    productPriceId: t.field({
      type: 'UUID',
      nullable: true,
      description: 'The price of the first line; null if it has none.',
      deprecationReason: 'use items.productPriceId',
      select: { items: { select: { productPriceId: true }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }], take: 1 } },
      resolve: (order) => order.items[0]?.productPriceId ?? null,
    }),
    productPrice: t.field({
      type: ProductPrice,
      nullable: true,
      description: 'The price of the first line; null if it has none.',
      deprecationReason: 'use items.productPriceId',
      select: (_args, _ctx, nested) => ({ items: { select: { productPrice: nested() }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }], take: 1 } }),
      resolve: (order) => order.items[0]?.productPrice ?? null,
    }),
  }),
});

const OrderList = listType('Order', Order);

const OrderUpdateInput = builder.inputType('OrderUpdateInput', {
  description: 'Billing details, which can change until the invoice is generated.',
  fields: (t) => ({
    billingName: t.string({ description: 'The name on the invoice; null clears it.' }),
    billingAddress: t.field({ type: AddressInput, description: 'The address on the invoice; null clears it.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  orders: t.field({
    type: OrderList,
    description: 'The orders of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      productId: t.arg({ type: ['UUID'], description: 'Only orders of these products.' }),
      customerId: t.arg({ type: ['UUID'], description: 'Only orders of these customers.' }),
      checkoutId: t.arg({ type: ['UUID'], description: 'Only orders made by these checkouts.' }),
      productBillingType: t.arg({ type: [ProductBillingType], description: 'Only orders of one-time or of recurring products; both when omitted or both given.' }),
      status: t.arg({ type: [OrderStatus], description: 'Only orders in one of these statuses.' }),
      createdAfter: t.arg({ type: 'DateTime', description: 'Orders created at or after this time.' }),
      createdBefore: t.arg({ type: 'DateTime', description: 'Orders created before this time.' }),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [OrderSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listOrders(ctx, args, pageQuery(ctx, info)),
  }),
  order: t.prismaField({
    type: 'Order',
    description: 'One order; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The order's id." }) },
    resolve: (query, _root, { id }, ctx) => getOrder(ctx, id, query),
  }),
}));

const OrderInvoice = builder.objectRef<{ url: string }>('OrderInvoice').implement({
  description: "A link to the order's invoice PDF. It expires after an hour; ask again for a fresh one.",
  fields: (t) => ({ url: t.exposeString('url', { description: 'A signed link to the PDF, valid for an hour; needs no token.' }) }),
});

builder.objectField(CoreQuery, 'orderInvoice', (t) =>
  t.field({
    type: OrderInvoice,
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The order's id." }) },
    description: 'The invoice of an order, once generated (see orderInvoiceGenerate). RESOURCE_NOT_FOUND for an unknown order or one without an invoice.',
    resolve: (_root, { id }, ctx) => invoiceUrl(ctx, id),
  }),
);

builder.objectFields(CoreMutation, (t) => ({
  orderInvoiceGenerate: t.prismaField({
    type: 'Order',
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The order's id." }) },
    description:
      'Issues the invoice of a paid order with billing details. Its billing details are frozen from then on. INVOICE_ALREADY_EXISTS if issued before, NOT_PAID_ORDER before payment, MISSING_INVOICE_BILLING_DETAILS without a billing name and address.',
    extensions: invoiceErrors,
    resolve: (query, _root, { id }, ctx) => generateInvoice(ctx, id, query),
  }),
  orderUpdate: t.prismaField({
    type: 'Order',
    description: "Changes an order's billing details. RESOURCE_NOT_FOUND if the token does not reach it; BAD_USER_INPUT once its invoice exists, or for an invalid address.",
    authScopes: { scope: 'orders:write' },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The order's id." }),
      input: t.arg({ type: OrderUpdateInput, required: true, description: 'The billing details to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateOrder(ctx, id, input, query),
  }),
}));

/** node(id:) answers for orders as core.order does. */
export const orderNodeLoader: NodeLoader = { surface: 'core', model: 'order', typeName: 'Order', scopes: ['orders:read', 'orders:write'], load: getOrder };

// A customer's orders, read with the customer: one statement for a whole page of customers.
builder.prismaObjectField(Customer, 'orders', (t) =>
  t.field({
    type: connectionType('Order', Order),
    nullable: true,
    description: "The customer's orders, newest first. Null, with NOT_PERMITTED, for a token without orders:read.",
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: relationArgs(t.arg),
    select: (args, _ctx, nested) => ({
      orders: relationQuery(nested({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...relationWindow(args) }, ['edges', 'node'])),
      _count: { select: { orders: true } },
    }),
    resolve: (customer, args) => relationPage(customer.orders, customer._count.orders, args),
  }),
);
