// Webhook endpoints: where an organization receives its events. The URL is checked against the
// environment's destination policy when saved (and again at each delivery, after DNS). The signing
// secret is stored encrypted; it is returned in full only by create and reset, and only its hint
// otherwise. A deleted endpoint keeps its row (its delivery log refers to it) but gets nothing more.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Prisma, WebhookEndpoint, WebhookFormat } from '../../generated/prisma/client.ts';
import { eventTypes } from '../../events/outbox.ts';
import { ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import { wireOnlyValue } from '../../graphql/wire-values.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { destinationPolicy, urlRefusal } from '../../webhooks/destinations.ts';
import { encryptSecret, newWebhookSecret, secretHint } from '../../webhooks/secrets.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';

/** Types the client library offers that Kassa does not record (yet): an endpoint may subscribe to them, and receives none. */
export const unemittedEventTypes = ['refund.updated', 'product.created', 'product.updated', 'benefit_grant.cycled'] as const;
export type UnemittedEventType = (typeof unemittedEventTypes)[number];
/** Every type an endpoint may subscribe to: the client library's WebhookEventType. */
export const webhookEventTypes: readonly string[] = [...eventTypes, ...unemittedEventTypes];

export const minSecretLength = 32;
const maxSecretLength = 1024;

/** An endpoint with its secret in clear: only in the response that created or replaced the secret. */
export type WebhookEndpointWithSecret = WebhookEndpoint & { secret: string };

export interface WebhookEndpointCreateInput {
  url: string;
  format: WebhookFormat;
  events: string[];
  secret?: string | null;
  organizationId?: string | null;
}

export interface WebhookEndpointUpdateInput {
  url?: string | null;
  format?: WebhookFormat | null;
  events?: string[] | null;
  secret?: string | null;
  enabled?: boolean | null;
}

export interface WebhookEndpointListArgs extends PageArgs {
  organizationId?: string[] | null;
}

/** Where Discord and Slack take incoming webhooks: a chat format sent anywhere else would be a raw post in disguise. */
const formatHosts: Record<Exclude<WebhookFormat, 'raw'>, { hosts: string[]; path: string; example: string }> = {
  discord: { hosts: ['discord.com', 'discordapp.com'], path: '/api/webhooks/', example: 'https://discord.com/api/webhooks/...' },
  slack: { hosts: ['hooks.slack.com'], path: '/', example: 'https://hooks.slack.com/...' },
};

function checkUrl(ctx: Context, issues: ValidationIssues, url: string, loc: Loc): void {
  const refusal = urlRefusal(url, destinationPolicy(ctx.environment));
  if (refusal) issues.add(loc, `The webhook URL ${refusal}.`, 'url_refused');
}

/** A discord or slack endpoint must point at that service's incoming-webhook URL, in every environment. */
function checkFormatUrl(issues: ValidationIssues, format: WebhookFormat, url: string, loc: Loc): void {
  if (format === 'raw') return;
  const { hosts, path, example } = formatHosts[format];
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (parsed?.protocol === 'https:' && hosts.includes(parsed.hostname) && parsed.pathname.startsWith(path)) return;
  issues.add(loc, `A ${format} endpoint needs a ${format} webhook URL (${example}).`, 'url_format_mismatch');
}

/**
 * The subscribed types, each once, in the order given; an unknown type is named at its index.
 * GraphQL offers only known types; REST sends any string, an unknown one as a stand-in.
 */
function checkEvents(ctx: Context, issues: ValidationIssues, events: string[], loc: Loc): string[] {
  events.forEach((given, index) => {
    const type = wireOnlyValue(ctx, [...loc, index]) ?? given;
    if (!webhookEventTypes.includes(type)) issues.add([...loc, index], `Unknown event type "${type}". Known types: ${webhookEventTypes.join(', ')}.`, 'enum');
  });
  return [...new Set(events)];
}

function checkSecret(issues: ValidationIssues, secret: string, loc: Loc): void {
  if (secret.length < minSecretLength) issues.add(loc, `String should have at least ${minSecretLength} characters`, 'string_too_short');
  if (secret.length > maxSecretLength) issues.add(loc, `String should have at most ${maxSecretLength} characters`, 'string_too_long');
}

async function storedSecret(ctx: Context, secret: string) {
  return { secretCiphertext: await encryptSecret(ctx.environment, secret), secretHint: secretHint(secret) };
}

export async function createWebhookEndpoint(ctx: Context, input: WebhookEndpointCreateInput, query: object): Promise<WebhookEndpointWithSecret> {
  const organizationId = owningOrganization(ctx, input.organizationId, ['input', 'organizationId']);
  const issues = new ValidationIssues();
  const url = input.url.trim();
  checkUrl(ctx, issues, url, ['input', 'url']);
  checkFormatUrl(issues, input.format, url, ['input', 'url']);
  const events = checkEvents(ctx, issues, input.events, ['input', 'events']);
  if (input.secret != null) checkSecret(issues, input.secret, ['input', 'secret']);
  issues.throwIfAny();
  const secret = input.secret ?? newWebhookSecret(ctx.environment);
  const endpoint = await ctx.prisma.webhookEndpoint.create({
    ...query,
    data: { organizationId, url, format: input.format, events, ...(await storedSecret(ctx, secret)), createdAt: ctx.now() },
  });
  return { ...endpoint, secret };
}

export async function listWebhookEndpoints(ctx: Context, args: WebhookEndpointListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.WebhookEndpointWhereInput = { organizationId: organizationFilter(ctx, args.organizationId), deletedAt: null };
  const [items, total] = await Promise.all([
    ctx.prisma.webhookEndpoint.findMany({ ...query, where, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...window }),
    ctx.prisma.webhookEndpoint.count({ where }),
  ]);
  return toPage(items, total, args);
}

/** A live endpoint of an organization the principal reaches; any other id is not found. */
async function findEndpoint(ctx: Context, db: Db, id: string) {
  const endpoint = await db.webhookEndpoint.findFirst({ where: { id, organizationId: organizationFilter(ctx), deletedAt: null } });
  if (!endpoint) throw new ResourceNotFoundError('Webhook endpoint not found.');
  return endpoint;
}

export async function getWebhookEndpoint(ctx: Context, id: string, query: object) {
  await findEndpoint(ctx, ctx.prisma, id);
  return ctx.prisma.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id } });
}

export async function updateWebhookEndpoint(ctx: Context, id: string, input: WebhookEndpointUpdateInput, query: object) {
  const endpoint = await findEndpoint(ctx, ctx.prisma, id);
  const issues = new ValidationIssues();
  const url = input.url?.trim() ?? endpoint.url;
  const format = input.format ?? endpoint.format;
  if (input.url != null) checkUrl(ctx, issues, url, ['input', 'url']);
  if (input.url != null || input.format != null) checkFormatUrl(issues, format, url, input.url != null ? ['input', 'url'] : ['input', 'format']);
  const events = input.events != null ? checkEvents(ctx, issues, input.events, ['input', 'events']) : undefined;
  if (input.secret != null) checkSecret(issues, input.secret, ['input', 'secret']);
  issues.throwIfAny();
  const data: Prisma.WebhookEndpointUpdateInput = {
    ...(input.url != null ? { url } : {}),
    ...(input.format != null ? { format } : {}),
    ...(events ? { events } : {}),
    ...(input.secret != null ? await storedSecret(ctx, input.secret) : {}),
    // Enabling starts afresh: the failure run that disabled it is over. Disabling by hand gives no reason.
    ...(input.enabled === true ? { enabled: true, disabledAt: null, disabledReason: null, failingSince: null } : {}),
    ...(input.enabled === false ? { enabled: false } : {}),
  };
  // Only a live endpoint changes: one deleted meanwhile is not found. (Prisma counts 0 for an empty change.)
  if (Object.keys(data).length) {
    const { count } = await ctx.prisma.webhookEndpoint.updateMany({ where: { id, deletedAt: null }, data });
    if (count === 0) throw new ResourceNotFoundError('Webhook endpoint not found.');
  }
  return ctx.prisma.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id } });
}

/** Replaces the signing secret: the next attempt of every pending event is signed with the new one. */
export async function resetWebhookEndpointSecret(ctx: Context, id: string, query: object): Promise<WebhookEndpointWithSecret> {
  await findEndpoint(ctx, ctx.prisma, id);
  const secret = newWebhookSecret(ctx.environment);
  const { count } = await ctx.prisma.webhookEndpoint.updateMany({ where: { id, deletedAt: null }, data: await storedSecret(ctx, secret) });
  if (count === 0) throw new ResourceNotFoundError('Webhook endpoint not found.');
  return { ...(await ctx.prisma.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id } })), secret };
}

/**
 * Deletes an endpoint: it is no longer listed or found, receives no new event, and every event
 * still waiting for it is given up. Its delivery log stays.
 */
export async function deleteWebhookEndpoint(ctx: Context, id: string): Promise<boolean> {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await findEndpoint(ctx, db, id);
    const { count } = await db.webhookEndpoint.updateMany({ where: { id, deletedAt: null }, data: { deletedAt: ctx.now(), enabled: false } });
    if (count === 0) throw new ResourceNotFoundError('Webhook endpoint not found.');
    await db.webhookEvent.updateMany({ where: { endpointId: id, succeeded: null }, data: { succeeded: false, nextAttemptAt: null } });
    return true;
  });
}

