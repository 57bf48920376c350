// Dynamic client registration (RFC 7591) and its management protocol (RFC 7592). A signed-in user
// registers a client with their session token; the registration access token returned once then
// reads, replaces and deletes that registration.
import type { Environment } from '../context.ts';
import { resolvePrincipal } from '../auth/principals.ts';
import type { OAuthClient } from '../generated/prisma/client.ts';
import { KassaError } from '../graphql/errors.ts';
import { checkClientMetadata, clientForRegistrationToken, createClient, deleteClient, isPublicClient, metadataOf, secretMatches, updateClient } from './clients.ts';
import { InvalidRequest, InvalidToken } from './errors.ts';
import { bearer, json, jsonBody, type OAuthRequest, type OAuthResponse } from './http.ts';
import type { OAuthRoute } from './routes.ts';

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** The client information response (RFC 7591 §3.2.1, RFC 7592 §3). Secrets appear only when just issued. */
export function clientInformation(environment: Environment, client: OAuthClient, issued: { clientSecret?: string | null; registrationAccessToken?: string } = {}) {
  const body: Record<string, unknown> = {
    client_id: client.clientId,
    client_id_issued_at: seconds(client.createdAt),
  };
  if (issued.clientSecret) body.client_secret = issued.clientSecret;
  if (!isPublicClient(client)) body.client_secret_expires_at = client.clientSecretExpiresAt ? seconds(client.clientSecretExpiresAt) : 0;
  if (issued.registrationAccessToken) body.registration_access_token = issued.registrationAccessToken;
  Object.assign(body, {
    registration_client_uri: `${environment.publicUrl}/v1/oauth2/register/${client.clientId}`,
    ...metadataOf(client),
    created_at: client.createdAt.toISOString(),
    modified_at: client.modifiedAt?.toISOString() ?? null,
  });
  return body;
}

/** Registration is for a user signed in with their password: no organization, personal, OAuth or customer token. */
async function signedInUserId(environment: Environment, request: OAuthRequest, now: Date): Promise<string> {
  const token = bearer(request);
  if (!token) throw new InvalidToken('Registering a client requires a signed-in user: send "Authorization: Bearer <user session token>".');
  let principal;
  try {
    principal = await resolvePrincipal(environment, token, now);
  } catch (error) {
    if (error instanceof KassaError) throw new InvalidToken('The access token is invalid, expired or revoked.');
    throw error;
  }
  if (principal.kind !== 'user' || principal.credential !== 'session') throw new InvalidToken('Registering a client requires the session token of a signed-in user.');
  return principal.userId;
}

async function register(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const userId = await signedInUserId(environment, request, now);
  const metadata = checkClientMetadata(jsonBody(request));
  const issued = await createClient(environment, userId, metadata);
  return json(201, clientInformation(environment, issued.client, issued));
}

/** RFC 7592 §2: the registration access token of this very client, or 401 without saying whether the client exists. */
async function managedClient(environment: Environment, request: OAuthRequest): Promise<OAuthClient> {
  const token = bearer(request);
  if (!token) throw new InvalidToken('Send the registration access token as "Authorization: Bearer <token>".');
  const client = await clientForRegistrationToken(environment.prisma, request.params.client_id, token);
  if (!client) throw new InvalidToken('The registration access token is invalid for this client.');
  return client;
}

async function read(environment: Environment, request: OAuthRequest): Promise<OAuthResponse> {
  return json(200, clientInformation(environment, await managedClient(environment, request)));
}

/** RFC 7592 §2.2: the body replaces every metadata field; fields left out take their defaults. */
async function replace(environment: Environment, request: OAuthRequest): Promise<OAuthResponse> {
  const client = await managedClient(environment, request);
  const body = jsonBody(request);
  if (body.client_id !== undefined && body.client_id !== client.clientId) throw new InvalidRequest('client_id in the body differs from the client being updated.');
  if (body.client_secret !== undefined && (typeof body.client_secret !== 'string' || !secretMatches(client.clientSecretHash, body.client_secret))) {
    throw new InvalidRequest('client_secret in the body is not the current secret of this client; omit it, or send the current one.');
  }
  const metadata = checkClientMetadata(body);
  const updated = await updateClient(environment, client, metadata);
  return json(200, clientInformation(environment, updated.client, { clientSecret: updated.clientSecret }));
}

async function remove(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const client = await managedClient(environment, request);
  await deleteClient(environment, client, now);
  return { status: 204, headers: { 'cache-control': 'no-store' } };
}

export const registrationRoutes: OAuthRoute[] = [
  { method: 'POST', path: '/v1/oauth2/register', handler: register },
  { method: 'GET', path: '/v1/oauth2/register/{client_id}', handler: read },
  { method: 'PUT', path: '/v1/oauth2/register/{client_id}', handler: replace },
  { method: 'DELETE', path: '/v1/oauth2/register/{client_id}', handler: remove },
];
