import { builder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreQuery } from '../../graphql/roots.ts';
import type { DisputeStatus as DisputeStatuses } from '../../generated/prisma/enums.ts';
import { Order } from '../orders/schema.ts';
import { getDispute, listDisputes } from './service.ts';

export const DisputeStatus = builder.enumType('DisputeStatus', {
  description: 'Where a dispute is, as the payment processor last reported it. won, lost and warning_closed are final.',
  values: {
    needs_response: { description: 'Open: the bank took the money back for now, and evidence can be sent to the processor.' },
    under_review: { description: 'Evidence was sent; the bank decides.' },
    won: { description: 'Decided for the organization: the money stays.' },
    lost: { description: 'Decided for the buyer: the money went back to them.' },
    warning_closed: { description: 'An inquiry that closed without becoming a chargeback: no money moved.' },
  } satisfies Record<DisputeStatuses, object>,
});

export const Dispute = builder.prismaObject('Dispute', {
  interfaces: [Node],
  description:
    "A chargeback: the buyer's bank disputing a payment of an order, as the payment processor reports it. Kassa records it and keeps it up to date; it is answered in the processor's dashboard.",
  fields: (t) => ({
    id: t.exposeID('id', { description: "The dispute's id. Its global id (see Node)." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When Kassa first heard of the dispute.' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the dispute was last changed; null if never.' }),
    status: t.expose('status', { type: DisputeStatus, description: 'Where the dispute is; it never moves back from a final status.' }),
    reason: t.exposeString('reason', { description: "The bank's reason, as the processor names it: fraudulent, product_not_received, duplicate, …" }),
    amount: t.exposeInt('amount', { description: 'The disputed amount, in integer minor units of currency.' }),
    currency: t.exposeString('currency', { description: 'The currency of the amount: an ISO 4217 code, lowercase.' }),
    closedAt: t.expose('closedAt', { type: 'DateTime', nullable: true, description: 'When the dispute was decided; null while it is open.' }),
    organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization whose order is disputed.' }),
    orderId: t.expose('orderId', { type: 'UUID', description: 'The order whose payment is disputed.' }),
    order: t.relation('order', { description: 'The order whose payment is disputed.' }),
  }),
});

const DisputeList = listType('Dispute', Dispute);

builder.objectFields(CoreQuery, (t) => ({
  disputes: t.field({
    type: DisputeList,
    description: 'The disputes of the orders of the organizations the token reaches, newest first.',
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      orderId: t.arg({ type: ['UUID'], description: 'Only disputes of these orders.' }),
      status: t.arg({ type: [DisputeStatus], description: 'Only disputes in one of these statuses.' }),
    },
    resolve: (_root, args, ctx, info) => listDisputes(ctx, args, pageQuery(ctx, info)),
  }),
  dispute: t.prismaField({
    type: 'Dispute',
    description: 'One dispute; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: ['orders:read', 'orders:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The dispute's id." }) },
    resolve: (query, _root, { id }, ctx) => getDispute(ctx, id, query),
  }),
}));

// An order's disputes, read with the order. Null, like Customer.orders, for a token that reached
// the order without an orders scope (through a refund).
builder.prismaObjectField(Order, 'disputes', (t) =>
  t.relation('disputes', {
    nullable: true,
    description: "The order's disputes, newest first; usually none. Null, with NOT_PERMITTED, for a token without orders:read.",
    authScopes: { scope: ['orders:read', 'orders:write'] },
    query: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] },
  }),
);

// node(id:) answers for disputes as core.dispute does.
export const disputeNodeLoader: NodeLoader = { surface: 'core', model: 'dispute', typeName: 'Dispute', scopes: ['orders:read', 'orders:write'], load: getDispute };
