import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder } from '../../graphql/builder.ts';
import { raises } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortingScalarConfig } from '../../graphql/sorting.ts';
import { RefundReason as RefundReasons, RefundStatus as RefundStatuses } from '../../generated/prisma/enums.ts';
import { createRefund, getRefund, listRefunds, refundAmountTooHigh, refundedAlready, refundSortProperties } from './service.ts';

// What refundCreate answers besides the errors any field may.
const refundErrors = raises(
  { error: refundAmountTooHigh(0), when: 'The amount exceeds what remains refundable on the order.' },
  { error: refundedAlready(), when: 'The order is fully refunded already.' },
);

export const RefundStatus = builder.enumType(RefundStatuses, { name: 'RefundStatus' });
export const RefundReason = builder.enumType(RefundReasons, { name: 'RefundReason' });
const RefundSortProperty = builder.scalarType('RefundSortProperty', sortingScalarConfig(refundSortProperties));

export const Refund = builder.prismaObject('Refund', {
  description: "Money returned on an order, in minor units of the order's currency.",
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
    metadata: t.field({ type: MetadataScalar, resolve: (refund) => refund.metadata as Metadata }),
    status: t.expose('status', { type: RefundStatus }),
    reason: t.expose('reason', { type: RefundReason }),
    amount: t.exposeInt('amount'),
    taxAmount: t.exposeInt('taxAmount'),
    currency: t.exposeString('currency'),
    comment: t.exposeString('comment', { nullable: true, description: 'Internal note; not sent to the customer.' }),
    organizationId: t.expose('organizationId', { type: 'UUID' }),
    orderId: t.expose('orderId', { type: 'UUID' }),
    subscriptionId: t.field({
      type: 'UUID',
      nullable: true,
      description: 'The subscription whose order was refunded, if any.',
      select: { order: { select: { subscriptionId: true } } },
      resolve: (refund) => refund.order.subscriptionId,
    }),
    customerId: t.expose('customerId', { type: 'UUID' }),
    revokeBenefits: t.exposeBoolean('revokeBenefits'),
    order: t.relation('order'),
  }),
});

const RefundList = listType('Refund', Refund);

const RefundCreateInput = builder.inputType('RefundCreateInput', {
  fields: (t) => ({
    orderId: t.field({ type: 'UUID', required: true }),
    reason: t.field({ type: RefundReason, required: true }),
    amount: t.int({ required: true, description: 'In minor units; at most what remains refundable.' }),
    comment: t.string(),
    revokeBenefits: t.boolean({ description: "Also revoke the benefits the order granted (one-time purchases)." }),
    metadata: t.field({ type: MetadataScalar }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  refunds: t.field({
    type: RefundList,
    authScopes: { scope: ['refunds:read', 'refunds:write'] },
    args: {
      ...pageArgs(t.arg),
      id: t.arg({ type: ['UUID'] }),
      organizationId: t.arg({ type: ['UUID'] }),
      orderId: t.arg({ type: ['UUID'] }),
      customerId: t.arg({ type: ['UUID'] }),
      succeeded: t.arg.boolean(),
      sorting: t.arg({ type: [RefundSortProperty], description: 'Default: -created_at.' }),
    },
    resolve: (_root, args, ctx, info) => listRefunds(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  refund: t.prismaField({
    type: 'Refund',
    authScopes: { scope: ['refunds:read', 'refunds:write'] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getRefund(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  refundCreate: t.prismaField({
    type: 'Refund',
    authScopes: { scope: 'refunds:write' },
    args: { input: t.arg({ type: RefundCreateInput, required: true }) },
    extensions: refundErrors,
    resolve: (query, _root, { input }, ctx) => createRefund(ctx, input, query),
  }),
}));
