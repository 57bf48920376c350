// A signed-in user's own OAuth clients, managed through GraphQL: the same rules and lifecycle as
// dynamic registration (src/oauth/clients.ts), reported as GraphQL validation errors. Another
// user's client is answered as not found.
import type { Context } from '../../context.ts';
import type { OAuthClient } from '../../generated/prisma/client.ts';
import { checkClientMetadata, createClient, deleteClient, isPublicClient, metadataField, metadataOf, rotateClientSecret, updateClient, type ClientMetadata } from '../../oauth/clients.ts';
import { OAuthError } from '../../oauth/errors.ts';
import { NotPermittedError, RequestValidationError, ResourceNotFoundError } from '../../graphql/errors.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';

export interface OAuth2ClientInput {
  clientName?: string | null;
  redirectUris?: string[] | null;
  scopes?: string[] | null;
  tokenEndpointAuthMethod?: string | null;
  grantTypes?: string[] | null;
  responseTypes?: string[] | null;
  clientUri?: string | null;
  logoUri?: string | null;
  tosUri?: string | null;
  policyUri?: string | null;
}

/** RFC 7591 field names, as the GraphQL input names them. */
const inputNames: Record<string, keyof OAuth2ClientInput> = {
  client_name: 'clientName',
  redirect_uris: 'redirectUris',
  scope: 'scopes',
  token_endpoint_auth_method: 'tokenEndpointAuthMethod',
  grant_types: 'grantTypes',
  response_types: 'responseTypes',
  client_uri: 'clientUri',
  logo_uri: 'logoUri',
  tos_uri: 'tosUri',
  policy_uri: 'policyUri',
};

/** The input as RFC 7591 metadata: only the fields given (a null clears an optional one). */
function asRegistration(input: OAuth2ClientInput): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [field, name] of Object.entries(inputNames)) {
    if (input[name] === undefined) continue;
    const value = input[name];
    body[field] = name === 'scopes' && Array.isArray(value) ? value.join(' ') : value;
  }
  return body;
}

function checkMetadata(body: Record<string, unknown>): ClientMetadata {
  try {
    return checkClientMetadata(body);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    const field = metadataField(error);
    throw RequestValidationError.at(['input', ...(field ? [inputNames[field] ?? field] : [])], error.description);
  }
}

function actingUserId(ctx: Context): string {
  if (ctx.principal.kind !== 'user') throw new NotPermittedError('Only a user has OAuth clients.');
  return ctx.principal.userId;
}

async function ownClient(ctx: Context, id: string): Promise<OAuthClient> {
  const client = await ctx.prisma.oAuthClient.findFirst({ where: { id, userId: actingUserId(ctx), deletedAt: null } });
  if (!client) throw new ResourceNotFoundError('OAuth client not found.');
  return client;
}

export async function listOAuth2Clients(ctx: Context, args: PageArgs, query: object = {}) {
  const window = pageWindow(args);
  const where = { userId: actingUserId(ctx), deletedAt: null };
  const [items, total] = await Promise.all([
    ctx.prisma.oAuthClient.findMany({ ...query, where, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...window }),
    ctx.prisma.oAuthClient.count({ where }),
  ]);
  return toPage(items, total, args);
}

export function getOAuth2Client(ctx: Context, id: string) {
  return ownClient(ctx, id);
}

export async function createOAuth2Client(ctx: Context, input: OAuth2ClientInput) {
  const userId = actingUserId(ctx);
  const metadata = checkMetadata(asRegistration(input));
  return createClient(ctx.environment, userId, metadata);
}

/** Changes the fields given and keeps the others. */
export async function updateOAuth2Client(ctx: Context, id: string, input: OAuth2ClientInput) {
  const client = await ownClient(ctx, id);
  const metadata = checkMetadata({ ...metadataOf(client), ...asRegistration(input) });
  return updateClient(ctx.environment, client, metadata);
}

export async function rotateOAuth2ClientSecret(ctx: Context, id: string) {
  const client = await ownClient(ctx, id);
  if (isPublicClient(client)) throw RequestValidationError.at(['id'], 'A public client (token_endpoint_auth_method none) has no secret to rotate.');
  return rotateClientSecret(ctx.environment, client);
}

export async function deleteOAuth2Client(ctx: Context, id: string) {
  const client = await ownClient(ctx, id);
  const now = ctx.now();
  await deleteClient(ctx.environment, client, now);
  return { ...client, deletedAt: now };
}
