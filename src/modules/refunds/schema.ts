import { builder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import type { RefundReason as RefundReasons, RefundStatus as RefundStatuses } from '../../generated/prisma/enums.ts';
import { createRefund, getRefund, listRefunds, refundAmountTooHigh, refundedAlready, refundSortProperties } from './service.ts';

// What refundCreate answers besides the errors any field may.
const refundErrors = raises(
  { error: refundAmountTooHigh(0), when: 'The amount exceeds what remains refundable on the order.' },
  { error: refundedAlready(), when: 'The order is fully refunded already.' },
);

export const RefundStatus = builder.enumType('RefundStatus', {
  description: 'Where a refund is: pending until the payment processor answers.',
  values: {
    pending: { description: 'Recorded and reserved on the order; the processor has not returned the money yet.' },
    succeeded: { description: 'The money was returned.' },
    failed: { description: 'The processor refused; the amount is refundable again.' },
    canceled: { description: 'Canceled before the money moved; the amount is refundable again.' },
  } satisfies Record<RefundStatuses, object>,
});
export const RefundReason = builder.enumType('RefundReason', {
  description: 'Why the money is returned.',
  values: {
    duplicate: { description: 'The customer paid twice for the same thing.' },
    fraudulent: { description: 'The payment was not made by the card holder.' },
    customer_request: { description: 'The customer asked for it.' },
    service_disruption: { description: 'The product or service was unavailable.' },
    satisfaction_guarantee: { description: 'A money-back guarantee.' },
    other: { description: 'Another reason; say which in the comment.' },
  } satisfies Record<RefundReasons, object>,
});
const RefundSortOrder = sortOrderEnum(
  'RefundSortOrder',
  'refunds',
  {
  created_at: 'when the refund was created',
  amount: 'the refunded amount',
  } satisfies Record<(typeof refundSortProperties)[number], string>,
  'RefundSortProperty',
);

export const Refund = builder.prismaObject('Refund', {
  interfaces: [Node],
  description: "Money returned on an order, in minor units of the order's currency.",
  fields: (t) => ({
    id: t.exposeID('id', { description: "The refund's id. Its global id (see Node)." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the refund was made.' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the refund was last changed; null if never.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data.", resolve: (refund) => refund.metadata as Metadata }),
    status: t.expose('status', { type: RefundStatus, description: 'Where the refund is.' }),
    reason: t.expose('reason', { type: RefundReason, description: 'Why the money is returned.' }),
    amount: t.exposeInt('amount', { description: "The net amount returned, without tax, in integer minor units of currency; at least 1." }),
    taxAmount: t.exposeInt('taxAmount', {
      description: "The tax returned with it, in minor units of currency: the order's tax in proportion, rounded down; the last refund takes what remains.",
    }),
    currency: t.exposeString('currency', { description: "The order's currency: an ISO 4217 code, lowercase." }),
    comment: t.exposeString('comment', { nullable: true, description: 'Internal note; not sent to the customer.' }),
    organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization that refunded.' }),
    orderId: t.expose('orderId', { type: 'UUID', description: 'The order refunded.' }),
    subscriptionId: t.field({
      type: 'UUID',
      nullable: true,
      description: 'The subscription whose order was refunded, if any.',
      select: { order: { select: { subscriptionId: true } } },
      resolve: (refund) => refund.order.subscriptionId,
    }),
    customerId: t.expose('customerId', { type: 'UUID', description: 'The customer refunded.' }),
    revokeBenefits: t.exposeBoolean('revokeBenefits', { description: 'Whether the benefits the order granted are revoked with the refund.' }),
    order: t.relation('order', { description: 'The order refunded.' }),
  }),
});

const RefundList = listType('Refund', Refund);

const RefundCreateInput = builder.inputType('RefundCreateInput', {
  description: 'A refund of part or all of a paid order.',
  fields: (t) => ({
    orderId: t.field({ type: 'UUID', required: true, description: 'The paid, not free, order to refund.' }),
    reason: t.field({ type: RefundReason, required: true, description: 'Why the money is returned.' }),
    amount: t.int({
      required: true,
      description: "The net amount, in minor units of the order's currency: at least 1, at most netAmount less refundedAmount. The tax follows in proportion.",
    }),
    comment: t.string({ description: 'Internal note, at most 1000 characters; not sent to the customer.' }),
    revokeBenefits: t.boolean({ description: 'Also revoke the benefits the order granted (one-time purchases only); false when omitted.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data." }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  refunds: t.field({
    type: RefundList,
    description: 'The refunds of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: { scope: ['refunds:read', 'refunds:write'] },
    args: {
      ...pageArgs(t.arg),
      id: t.arg({ type: ['UUID'], description: 'Only these refunds.' }),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      orderId: t.arg({ type: ['UUID'], description: 'Only refunds of these orders.' }),
      customerId: t.arg({ type: ['UUID'], description: 'Only refunds of these customers.' }),
      succeeded: t.arg.boolean({ description: 'true: only succeeded refunds; false: only the others; omitted: all.' }),
      sorting: t.arg({ type: [RefundSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listRefunds(ctx, args, pageQuery(ctx, info)),
  }),
  refund: t.prismaField({
    type: 'Refund',
    description: 'One refund; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: ['refunds:read', 'refunds:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The refund's id." }) },
    resolve: (query, _root, { id }, ctx) => getRefund(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  refundCreate: t.prismaField({
    type: 'Refund',
    description:
      "Refunds part or all of a paid order: the amount is reserved on the order at once (its status becomes partially_refunded or refunded) and the money is returned through the payment processor after. REFUND_AMOUNT_TOO_HIGH above what remains refundable, REFUNDED_ALREADY when nothing remains; BAD_USER_INPUT for an unknown, unpaid or free order, or revokeBenefits on a subscription's order.",
    authScopes: { scope: 'refunds:write' },
    args: { input: t.arg({ type: RefundCreateInput, required: true, description: 'The refund to make.' }) },
    extensions: refundErrors,
    resolve: (query, _root, { input }, ctx) => createRefund(ctx, input, query),
  }),
}));

/** node(id:) answers for refunds as core.refund does. */
export const refundNodeLoader: NodeLoader = { surface: 'core', model: 'refund', typeName: 'Refund', scopes: ['refunds:read', 'refunds:write'], load: getRefund };
