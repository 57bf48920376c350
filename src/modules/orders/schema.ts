import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortingScalarConfig } from '../../graphql/sorting.ts';
import { OrderBillingReason as OrderBillingReasons, OrderStatus as OrderStatuses } from '../../generated/prisma/enums.ts';
import { Address, AddressInput } from '../customers/schema.ts';
import { ProductPrice } from '../products/schema.ts';
import { getOrder, listOrders, orderSortProperties, updateOrder } from './service.ts';
import { generateInvoice, invoiceAlreadyExists, invoiceUrl, missingBillingDetails, notPaidOrder } from '../invoices/service.ts';

/** What generating an invoice answers besides the errors any field may (the Customer Portal's too). */
export const invoiceErrors = raises(
  { error: invoiceAlreadyExists(), when: 'The order has its invoice already.' },
  { error: notPaidOrder(), when: 'The order is not paid: only a paid order is invoiced.' },
  { error: missingBillingDetails(), when: 'The order lacks the billing name or address an invoice needs.' },
);

export const OrderStatus = builder.enumType(OrderStatuses, { name: 'OrderStatus' });
export const OrderBillingReason = builder.enumType(OrderBillingReasons, { name: 'OrderBillingReason' });
const OrderSortProperty = builder.scalarType('OrderSortProperty', sortingScalarConfig(orderSortProperties));
export const ProductBillingType = builder.enumType('ProductBillingType', { values: ['one_time', 'recurring'] as const });

export const OrderItem = builder.prismaObject('OrderItem', {
  description: 'A line of an order.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
    label: t.exposeString('label'),
    amount: t.exposeInt('amount'),
    taxAmount: t.exposeInt('taxAmount'),
    proration: t.exposeBoolean('proration'),
    productPriceId: t.expose('productPriceId', { type: 'UUID', nullable: true }),
  }),
});

type OrderFieldBuilder = PrismaFieldBuilder<'Order'>;

/** An order's own fields and its lines, without its metadata: what its customer sees of it too. */
export const orderFields = (t: OrderFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  status: t.expose('status', { type: OrderStatus }),
  paid: t.exposeBoolean('paid'),
  subtotalAmount: t.exposeInt('subtotalAmount'),
  discountAmount: t.exposeInt('discountAmount'),
  netAmount: t.exposeInt('netAmount'),
  taxAmount: t.exposeInt('taxAmount'),
  totalAmount: t.exposeInt('totalAmount'),
  refundedAmount: t.exposeInt('refundedAmount'),
  refundedTaxAmount: t.exposeInt('refundedTaxAmount'),
  currency: t.exposeString('currency'),
  billingReason: t.expose('billingReason', { type: OrderBillingReason }),
  billingName: t.exposeString('billingName', { nullable: true }),
  billingAddress: t.field({ type: Address, nullable: true, resolve: (order) => order.billingAddress as never }),
  isInvoiceGenerated: t.boolean({ resolve: (order) => order.invoiceGeneratedAt !== null }),
  customerId: t.expose('customerId', { type: 'UUID' }),
  userId: t.expose('customerId', { type: 'UUID', deprecationReason: 'use customerId' }),
  productId: t.expose('productId', { type: 'UUID' }),
  subscriptionId: t.expose('subscriptionId', { type: 'UUID', nullable: true }),
  checkoutId: t.expose('checkoutId', { type: 'UUID', nullable: true }),
  items: t.relation('items', { type: OrderItem, query: { orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] } }),
});

export const Order = builder.prismaObject('Order', {
  description: 'What a customer bought. Amounts are integer minor units of currency: net = subtotal - discount, total = net + tax.',
  fields: (t) => ({
    ...orderFields(t as unknown as OrderFieldBuilder),
    amount: t.exposeInt('netAmount', { deprecationReason: 'use netAmount' }),
    metadata: t.field({ type: MetadataScalar, resolve: (order) => order.metadata as Metadata }),
    customer: t.relation('customer'),
    product: t.relation('product'),
    productPriceId: t.field({
      type: 'UUID',
      nullable: true,
      deprecationReason: 'use items.productPriceId',
      select: { items: { select: { productPriceId: true }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }], take: 1 } },
      resolve: (order) => order.items[0]?.productPriceId ?? null,
    }),
    productPrice: t.field({
      type: ProductPrice,
      nullable: true,
      deprecationReason: 'use items.productPriceId',
      select: (_args, _ctx, nested) => ({ items: { select: { productPrice: nested() }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }], take: 1 } }),
      resolve: (order) => order.items[0]?.productPrice ?? null,
    }),
  }),
});

const OrderList = listType('Order', Order);

const OrderUpdateInput = builder.inputType('OrderUpdateInput', {
  description: 'Billing details, which can change until the invoice is generated.',
  fields: (t) => ({ billingName: t.string(), billingAddress: t.field({ type: AddressInput }) }),
});

builder.objectFields(CoreQuery, (t) => ({
  orders: t.field({
    type: OrderList,
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'] }),
      productId: t.arg({ type: ['UUID'] }),
      customerId: t.arg({ type: ['UUID'] }),
      checkoutId: t.arg({ type: ['UUID'] }),
      productBillingType: t.arg({ type: [ProductBillingType] }),
      status: t.arg({ type: [OrderStatus] }),
      createdAfter: t.arg({ type: 'DateTime', description: 'Orders created at or after this time.' }),
      createdBefore: t.arg({ type: 'DateTime', description: 'Orders created before this time.' }),
      metadata: t.arg({ type: 'JSONObject' }),
      sorting: t.arg({ type: [OrderSortProperty], description: 'Default: -created_at.' }),
    },
    resolve: (_root, args, ctx, info) => listOrders(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  order: t.prismaField({
    type: 'Order',
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getOrder(ctx, id, query),
  }),
}));

const OrderInvoice = builder.objectRef<{ url: string }>('OrderInvoice').implement({
  description: "A link to the order's invoice PDF. It expires after an hour; ask again for a fresh one.",
  fields: (t) => ({ url: t.exposeString('url') }),
});

builder.objectField(CoreQuery, 'orderInvoice', (t) =>
  t.field({
    type: OrderInvoice,
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    description: 'The invoice of an order, once generated (see orderInvoiceGenerate).',
    resolve: (_root, { id }, ctx) => invoiceUrl(ctx, id),
  }),
);

builder.objectFields(CoreMutation, (t) => ({
  orderInvoiceGenerate: t.prismaField({
    type: 'Order',
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    description: 'Issues the invoice of a paid order with billing details. Its billing details are frozen from then on.',
    extensions: invoiceErrors,
    resolve: (query, _root, { id }, ctx) => generateInvoice(ctx, id, query),
  }),
  orderUpdate: t.prismaField({
    type: 'Order',
    authScopes: { scope: 'orders:write' },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: OrderUpdateInput, required: true }) },
    resolve: (query, _root, { id, input }, ctx) => updateOrder(ctx, id, input, query),
  }),
}));
