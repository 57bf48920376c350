// The delivery log and redelivery. The webhook worker (src/webhooks/worker.ts) writes the log;
// here the organization reads it and asks for an event to be sent again.
import type { Context } from '../../context.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { ResourceNotFoundError } from '../../graphql/errors.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { organizationFilter } from '../organizations/access.ts';

export interface WebhookDeliveryListArgs extends PageArgs {
  endpointId?: string[] | null;
  organizationId?: string[] | null;
}

export interface WebhookEventListArgs extends WebhookDeliveryListArgs {
  succeeded?: boolean | null;
}

export async function listWebhookDeliveries(ctx: Context, args: WebhookDeliveryListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.WebhookDeliveryWhereInput = {
    webhookEvent: { organizationId: organizationFilter(ctx, args.organizationId) },
    ...(args.endpointId?.length ? { endpointId: { in: args.endpointId } } : {}),
  };
  const [items, total] = await Promise.all([
    ctx.prisma.webhookDelivery.findMany({ ...query, where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...window }),
    ctx.prisma.webhookDelivery.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function listWebhookEvents(ctx: Context, args: WebhookEventListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.WebhookEventWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.endpointId?.length ? { endpointId: { in: args.endpointId } } : {}),
    ...(args.succeeded != null ? { succeeded: args.succeeded } : {}),
  };
  const [items, total] = await Promise.all([
    ctx.prisma.webhookEvent.findMany({ ...query, where, orderBy: [{ createdAt: 'desc' }, { sequence: 'desc' }], ...window }),
    ctx.prisma.webhookEvent.count({ where }),
  ]);
  return toPage(items, total, args);
}

/**
 * Makes the event due now: a new attempt with the same webhook-id, whether it was delivered, given
 * up or is waiting for a retry. An attempt already in flight keeps its claim and answers for it.
 */
export async function redeliverWebhookEvent(ctx: Context, id: string, query: object) {
  const { count } = await ctx.prisma.webhookEvent.updateMany({
    where: { id, organizationId: organizationFilter(ctx), endpoint: { deletedAt: null } },
    data: { succeeded: null, nextAttemptAt: ctx.now() },
  });
  if (count === 0) throw new ResourceNotFoundError('Webhook event not found.');
  return ctx.prisma.webhookEvent.findUniqueOrThrow({ ...query, where: { id } });
}
