import { builder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import type { PaymentStatus as PaymentStatuses } from '../../generated/prisma/enums.ts';
import { PaymentProcessor } from '../checkouts/schema.ts';
import { Order } from '../orders/schema.ts';
import { declineMessage, getPayment, listPayments, paymentMethodKind, paymentSortProperties } from './service.ts';

export const PaymentStatus = builder.enumType('PaymentStatus', {
  description: 'Where a payment is: pending until the processor answers, then succeeded or failed for good.',
  values: {
    pending: { description: 'The charge is scheduled or under way; the processor has not settled it.' },
    succeeded: { description: 'The money was taken: the order is paid.' },
    failed: { description: 'The charge was declined or could not be made; see declineReason.' },
  } satisfies Record<PaymentStatuses, object>,
});

const PaymentSortOrder = sortOrderEnum(
  'PaymentSortOrder',
  'payments',
  {
    created_at: 'when the payment was attempted',
    status: 'status',
    amount: 'the amount',
    method: 'the payment method',
  } satisfies Record<(typeof paymentSortProperties)[number], string>,
  'PaymentSortProperty',
);

export const Payment = builder.prismaObject('Payment', {
  interfaces: [Node],
  description: 'One attempt to charge an order through the payment processor. A declined order paid later has several: the failed ones and the one that succeeded.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "The payment's id. Its global id (see Node)." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the payment was attempted.' }),
    modifiedAt: t.expose('processedAt', { type: 'DateTime', nullable: true, description: 'When the processor settled the payment; null while it is pending.' }),
    processor: t.field({ type: PaymentProcessor, description: 'The payment API the payment went through.', resolve: () => 'stripe' as const }),
    status: t.expose('status', { type: PaymentStatus, description: 'Where the payment is.' }),
    amount: t.exposeInt('amount', { description: 'The amount charged, in integer minor units of currency: the order’s total.' }),
    currency: t.exposeString('currency', { description: 'The currency of the amount: an ISO 4217 code, lowercase.' }),
    method: t.string({
      description: 'The kind of payment method: card (every method Kassa charges is a card), or none for a free order, which is charged nothing.',
      select: { paymentMethod: true },
      resolve: (payment) => paymentMethodKind(payment.paymentMethod),
    }),
    declineReason: t.exposeString('declineReason', { nullable: true, description: 'Why the payment failed, as the processor codes it (card_declined, insufficient_funds, …); null unless failed.' }),
    declineMessage: t.string({
      nullable: true,
      description: 'Why the payment failed, in a sentence for the buyer; null unless failed.',
      select: { declineReason: true },
      resolve: (payment) => declineMessage(payment.declineReason),
    }),
    organizationId: t.field({ type: 'UUID', description: 'The organization whose order was charged.', select: { order: { select: { organizationId: true } } }, resolve: (p) => p.order.organizationId }),
    checkoutId: t.field({
      type: 'UUID',
      nullable: true,
      description: 'The checkout whose order was charged; null for a renewal.',
      select: { order: { select: { checkoutId: true } } },
      resolve: (p) => p.order.checkoutId,
    }),
    orderId: t.expose('orderId', { type: 'UUID', description: 'The order charged.' }),
    order: t.relation('order', { description: 'The order charged.' }),
    processorMetadata: t.field({
      type: 'JSONObject',
      description: "The processor's references: intent_id, the Stripe PaymentIntent of the charge; empty when none was made.",
      select: { processorId: true },
      resolve: (p) => (p.processorId?.startsWith('pi_') ? { intent_id: p.processorId } : {}),
    }),
  }),
});

const PaymentList = listType('Payment', Payment);

builder.objectFields(CoreQuery, (t) => ({
  payments: t.field({
    type: PaymentList,
    description: 'The payments of the orders of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: { scope: 'payments:read' },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      checkoutId: t.arg({ type: ['UUID'], description: 'Only payments of the orders of these checkouts.' }),
      orderId: t.arg({ type: ['UUID'], description: 'Only payments of these orders.' }),
      status: t.arg({ type: [PaymentStatus], description: 'Only payments in one of these statuses.' }),
      method: t.arg({ type: ['String'], description: 'Only payments with one of these kinds of method (card, none).' }),
      customerEmail: t.arg({ type: ['String'], description: "Only payments of orders of customers with one of these email addresses (case-insensitive)." }),
      sorting: t.arg({ type: [PaymentSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listPayments(ctx, args, pageQuery(ctx, info)),
  }),
  payment: t.prismaField({
    type: Payment,
    description: 'One payment; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: 'payments:read' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The payment's id." }) },
    resolve: (query, _root, { id }, ctx) => getPayment(ctx, id, query),
  }),
}));

// An order's payments, oldest first: its attempts in the order they were made.
builder.prismaObjectField(Order, 'payments', (t) =>
  t.relation('payments', {
    nullable: true,
    description: "The order's payments, oldest first. Null, with NOT_PERMITTED, for a token without payments:read.",
    authScopes: { scope: 'payments:read' },
    query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
  }),
);

// node(id:) answers for payments as core.payment does.
export const paymentNodeLoader: NodeLoader = { surface: 'core', model: 'payment', typeName: 'Payment', scopes: ['payments:read'], load: getPayment };
