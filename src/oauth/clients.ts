// OAuth clients: their registered metadata (RFC 7591 §2), checked one named rule at a time; how a
// client proves itself at the token, revocation and introspection endpoints (RFC 6749 §2.3); and
// their lifecycle (create, replace, rotate the secret, delete). Secrets and registration access
// tokens exist in plaintext only in the response that issues them: the database keeps SHA-256s.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import type { OAuthClient } from '../generated/prisma/client.ts';
import { announcePrincipalChange } from '../auth/principal-cache.ts';
import { allScopes, isScope, type Scope } from '../auth/scopes.ts';
import { generateToken, hashToken } from '../auth/tokens.ts';
import { InvalidClient, InvalidClientMetadata, InvalidRedirectUri, InvalidRequest, OAuthError } from './errors.ts';
import type { Authorization } from '../http/request.ts';
import type { OAuthRequest } from './http.ts';

export const tokenEndpointAuthMethods = ['client_secret_basic', 'client_secret_post', 'none'] as const;
export type TokenEndpointAuthMethod = (typeof tokenEndpointAuthMethods)[number];
export const supportedGrantTypes = ['authorization_code', 'refresh_token'] as const;
export const supportedResponseTypes = ['code'] as const;

export const maxClientNameLength = 200;
export const maxUriLength = 2000;
export const maxRedirectUris = 20;

// ---- lookup ---------------------------------------------------------------------------------

/** A client that is registered and not deleted. */
export function findClient(prisma: Db, clientId: string): Promise<OAuthClient | null> {
  return prisma.oAuthClient.findFirst({ where: { clientId, deletedAt: null } });
}

/** RFC 6749 §3.1.2.3, RFC 9700 §2.1: redirect URIs are compared as strings, character for character. */
export function redirectUriRegistered(client: OAuthClient, uri: string): boolean {
  return client.redirectUris.includes(uri);
}

/** A public client has no secret: it cannot keep one (a browser or native app). */
export function isPublicClient(client: OAuthClient): boolean {
  return client.tokenEndpointAuthMethod === 'none';
}

/** Compares a presented secret with a stored hash in constant time; a missing hash compares against a dummy, so timing tells nothing. */
export function secretMatches(storedHash: string | null | undefined, presented: string | null): boolean {
  const expected = Buffer.from(storedHash ?? dummyHash, 'hex');
  const given = createHash('sha256')
    .update(presented ?? '')
    .digest();
  const equal = expected.length === given.length && timingSafeEqual(expected, given);
  return equal && storedHash != null && presented !== null;
}

const dummyHash = hashToken('no client has this secret');

// ---- client authentication (RFC 6749 §2.3) ---------------------------------------------------

interface PresentedCredentials {
  method: TokenEndpointAuthMethod;
  clientId: string;
  secret: string | null;
}

/** RFC 6749 §2.3.1 and Appendix B: each half of the Basic credentials is form-urlencoded. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new InvalidClient('The Basic credentials are not correctly form-urlencoded.');
  }
}

function basicCredentials(authorization: Authorization): { clientId: string; secret: string } {
  const match = authorization.scheme === 'basic' ? /^([A-Za-z0-9+/=]+)$/.exec(authorization.credentials) : null;
  if (!match) throw new InvalidClient('Authenticate the client with "Authorization: Basic <base64(client_id:client_secret)>" or with client_id and client_secret in the body.');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new InvalidClient('The Basic credentials must be "client_id:client_secret", base64-encoded.');
  return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

/** Which method the request uses, and its credentials. A request uses exactly one method. */
function presentedCredentials(request: OAuthRequest, form: URLSearchParams): PresentedCredentials {
  const authorization = request.facts.authorization;
  const bodyId = form.get('client_id');
  const bodySecret = form.get('client_secret');
  if (authorization) {
    if (bodySecret !== null) throw new InvalidRequest('The client authenticated twice: use either the Basic header or client_secret in the body, not both.');
    const { clientId, secret } = basicCredentials(authorization);
    if (bodyId !== null && bodyId !== clientId) throw new InvalidRequest('client_id in the body differs from the client of the Basic header.');
    return { method: 'client_secret_basic', clientId, secret };
  }
  if (!bodyId) throw new InvalidClient('Client authentication is required: send client_id (and client_secret, for a confidential client) or a Basic header.');
  if (bodySecret !== null) return { method: 'client_secret_post', clientId: bodyId, secret: bodySecret };
  return { method: 'none', clientId: bodyId, secret: null };
}

/** One answer for every failure, so the endpoint does not tell which client ids exist or how they authenticate. */
const authenticationFailed = 'Client authentication failed: unknown client, wrong secret, or not the method the client registered (token_endpoint_auth_method).';

function checkAuthMethodRegistered(client: OAuthClient, method: TokenEndpointAuthMethod): void {
  if (client.tokenEndpointAuthMethod !== method) throw new InvalidClient(authenticationFailed);
}

function checkSecretNotExpired(client: OAuthClient, now: Date): void {
  if (client.clientSecretExpiresAt !== null && client.clientSecretExpiresAt <= now) throw new InvalidClient('The client secret has expired: rotate it.');
}

/**
 * Authenticates the client of a request to the token, revocation or introspection endpoint. Unknown
 * client and wrong secret get the same answer, after the same work.
 */
export async function authenticateClient(environment: Environment, request: OAuthRequest, form: URLSearchParams, now: Date): Promise<OAuthClient> {
  const presented = presentedCredentials(request, form);
  const client = await findClient(environment.prisma, presented.clientId);
  const secretOk = secretMatches(client?.clientSecretHash, presented.secret);
  if (!client) throw new InvalidClient(authenticationFailed);
  checkAuthMethodRegistered(client, presented.method);
  if (presented.method !== 'none') {
    if (!secretOk) throw new InvalidClient(authenticationFailed);
    checkSecretNotExpired(client, now);
  }
  return client;
}

// ---- metadata (RFC 7591 §2) ------------------------------------------------------------------

export interface ClientMetadata {
  clientName: string;
  redirectUris: string[];
  scopes: Scope[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  grantTypes: string[];
  responseTypes: string[];
  clientUri: string | null;
  logoUri: string | null;
  tosUri: string | null;
  policyUri: string | null;
}

/** The metadata field an error is about (RFC 7591 names), for callers that report it elsewhere. */
export function metadataField(error: OAuthError): string | undefined {
  return (error as OAuthError & { field?: string }).field;
}

function invalidMetadata(field: string, message: string): InvalidClientMetadata {
  return Object.assign(new InvalidClientMetadata(message), { field });
}

function invalidRedirect(message: string): InvalidRedirectUri {
  return Object.assign(new InvalidRedirectUri(message), { field: 'redirect_uris' });
}

const isMissing = (value: unknown) => value === undefined || value === null;

function stringList(body: Record<string, unknown>, field: string, fallback: readonly string[]): string[] {
  const value = body[field];
  if (isMissing(value)) return [...fallback];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw invalidMetadata(field, `${field} must be an array of strings.`);
  return [...new Set(value as string[])];
}

export function checkClientName(body: Record<string, unknown>): string {
  const value = body.client_name;
  if (isMissing(value)) throw invalidMetadata('client_name', 'client_name is required: name the application users will see on the consent page.');
  if (typeof value !== 'string') throw invalidMetadata('client_name', 'client_name must be a string.');
  const name = value.trim();
  if (name === '') throw invalidMetadata('client_name', 'client_name must not be empty.');
  if (name.length > maxClientNameLength) throw invalidMetadata('client_name', `client_name must be at most ${maxClientNameLength} characters.`);
  return name;
}

const loopbackHosts = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** The authority of an absolute URI as written (`user@host:port`), before any normalization. */
function rawAuthority(uri: string): string {
  const start = uri.indexOf('//');
  if (start < 0) return '';
  const rest = uri.slice(start + 2);
  return rest.slice(0, rest.search(/[/?#]|$/));
}

/** RFC 6749 §3.1.2, RFC 8252 §7.3, RFC 9700 §2.1: absolute, https (plain http on loopback only), no fragment, no userinfo. */
export function checkRedirectUri(uri: unknown): string {
  if (typeof uri !== 'string') throw invalidRedirect('Each redirect URI must be a string.');
  if (uri.length > maxUriLength) throw invalidRedirect(`A redirect URI must be at most ${maxUriLength} characters.`);
  if (/\s/.test(uri)) throw invalidRedirect(`The redirect URI "${uri}" contains whitespace.`);
  if (!URL.canParse(uri)) throw invalidRedirect(`The redirect URI "${uri}" is not an absolute URL.`);
  const url = new URL(uri);
  if (uri.includes('#')) throw invalidRedirect(`The redirect URI "${uri}" has a fragment; redirect URIs must not (RFC 6749 §3.1.2).`);
  if (rawAuthority(uri).includes('@') || url.username || url.password) throw invalidRedirect(`The redirect URI "${uri}" carries user information; remove the "user@" part.`);
  if (url.protocol === 'https:') return uri;
  if (url.protocol === 'http:' && loopbackHosts.has(url.hostname)) return uri;
  if (url.protocol === 'http:') throw invalidRedirect(`The redirect URI "${uri}" uses http: use https, or http on a loopback address (127.0.0.1, [::1], localhost).`);
  throw invalidRedirect(`The redirect URI "${uri}" uses the scheme ${url.protocol.slice(0, -1)}: use https, or http on a loopback address.`);
}

export function checkRedirectUris(body: Record<string, unknown>): string[] {
  const value = body.redirect_uris;
  if (isMissing(value)) throw invalidRedirect('redirect_uris is required: register at least one URI to send users back to.');
  if (!Array.isArray(value)) throw invalidRedirect('redirect_uris must be an array of URLs.');
  if (value.length === 0) throw invalidRedirect('redirect_uris must name at least one URI.');
  if (value.length > maxRedirectUris) throw invalidRedirect(`redirect_uris may name at most ${maxRedirectUris} URIs.`);
  return [...new Set(value.map(checkRedirectUri))];
}

/** Space-separated scopes from the catalogue; by default every scope. */
export function checkScope(body: Record<string, unknown>): Scope[] {
  const value = body.scope;
  if (isMissing(value)) return [...allScopes];
  if (typeof value !== 'string') throw invalidMetadata('scope', 'scope must be a string of space-separated scopes.');
  const scopes = [...new Set(value.split(' ').filter(Boolean))];
  if (scopes.length === 0) throw invalidMetadata('scope', 'scope is empty: name at least one scope, or omit it for all of them.');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw invalidMetadata('scope', `Unknown scope(s): ${unknown.join(' ')}. Known scopes: ${allScopes.join(' ')}.`);
  return scopes as Scope[];
}

/** RFC 7591 §2: client_secret_basic unless the client says otherwise. */
export function checkTokenEndpointAuthMethod(body: Record<string, unknown>): TokenEndpointAuthMethod {
  const value = body.token_endpoint_auth_method;
  if (isMissing(value)) return 'client_secret_basic';
  if (typeof value !== 'string' || !(tokenEndpointAuthMethods as readonly string[]).includes(value)) {
    throw invalidMetadata('token_endpoint_auth_method', `token_endpoint_auth_method must be one of ${tokenEndpointAuthMethods.join(', ')}.`);
  }
  return value as TokenEndpointAuthMethod;
}

export function checkGrantTypes(body: Record<string, unknown>): string[] {
  const grantTypes = stringList(body, 'grant_types', supportedGrantTypes);
  const unsupported = grantTypes.filter((g) => !(supportedGrantTypes as readonly string[]).includes(g));
  if (unsupported.length) throw invalidMetadata('grant_types', `Unsupported grant type(s): ${unsupported.join(', ')}. Supported: ${supportedGrantTypes.join(', ')}.`);
  if (!grantTypes.includes('authorization_code')) throw invalidMetadata('grant_types', 'grant_types must include authorization_code: it is how a client obtains tokens.');
  return grantTypes;
}

/** RFC 7591 §2.1: the code response type goes with the authorization_code grant. */
export function checkResponseTypes(body: Record<string, unknown>): string[] {
  const responseTypes = stringList(body, 'response_types', supportedResponseTypes);
  const unsupported = responseTypes.filter((r) => !(supportedResponseTypes as readonly string[]).includes(r));
  if (unsupported.length) throw invalidMetadata('response_types', `Unsupported response type(s): ${unsupported.join(', ')}. Supported: code.`);
  if (!responseTypes.includes('code')) throw invalidMetadata('response_types', 'response_types must include code, to go with the authorization_code grant.');
  return responseTypes;
}

/** client_uri, logo_uri, tos_uri, policy_uri: an https URL, or null. */
export function checkInformationUri(body: Record<string, unknown>, field: 'client_uri' | 'logo_uri' | 'tos_uri' | 'policy_uri'): string | null {
  const value = body[field];
  if (isMissing(value)) return null;
  if (typeof value !== 'string') throw invalidMetadata(field, `${field} must be a string URL or null.`);
  if (value.length > maxUriLength) throw invalidMetadata(field, `${field} must be at most ${maxUriLength} characters.`);
  if (!URL.canParse(value) || new URL(value).protocol !== 'https:') throw invalidMetadata(field, `${field} must be an absolute https URL.`);
  if (rawAuthority(value).includes('@')) throw invalidMetadata(field, `${field} must not carry user information.`);
  return value;
}

/** Checks a registration's metadata (RFC 7591 §2) and fills in the defaults; unknown fields are ignored. */
export function checkClientMetadata(body: unknown): ClientMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidClientMetadata('The client metadata must be a JSON object.');
  const fields = body as Record<string, unknown>;
  return {
    clientName: checkClientName(fields),
    redirectUris: checkRedirectUris(fields),
    scopes: checkScope(fields),
    tokenEndpointAuthMethod: checkTokenEndpointAuthMethod(fields),
    grantTypes: checkGrantTypes(fields),
    responseTypes: checkResponseTypes(fields),
    clientUri: checkInformationUri(fields, 'client_uri'),
    logoUri: checkInformationUri(fields, 'logo_uri'),
    tosUri: checkInformationUri(fields, 'tos_uri'),
    policyUri: checkInformationUri(fields, 'policy_uri'),
  };
}

/** A client's metadata in RFC 7591 form, to merge a partial change into. */
export function metadataOf(client: OAuthClient): Record<string, unknown> {
  return {
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    scope: client.scopes.join(' '),
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    grant_types: client.grantTypes,
    response_types: client.responseTypes,
    client_uri: client.clientUri,
    logo_uri: client.logoUri,
    tos_uri: client.tosUri,
    policy_uri: client.policyUri,
  };
}

// ---- lifecycle -------------------------------------------------------------------------------

export interface IssuedClient {
  client: OAuthClient;
  /** Null for a public client. */
  clientSecret: string | null;
  registrationAccessToken: string;
}

/** Registers a client for `userId`. Its secret and registration access token are returned here only. */
export async function createClient(environment: Environment, userId: string | null, metadata: ClientMetadata): Promise<IssuedClient> {
  const prefix = environment.config.tokenPrefix;
  const clientSecret = metadata.tokenEndpointAuthMethod === 'none' ? null : generateToken(prefix, 'cs');
  const registrationAccessToken = generateToken(prefix, 'rat');
  const client = await environment.prisma.oAuthClient.create({
    data: {
      clientId: generateToken(prefix, 'ci'),
      clientSecretHash: clientSecret && hashToken(clientSecret),
      clientSecretExpiresAt: null,
      registrationAccessTokenHash: hashToken(registrationAccessToken),
      userId,
      ...metadata,
    },
  });
  return { client, clientSecret, registrationAccessToken };
}

/**
 * Replaces a client's metadata (RFC 7592 §2.2). A public client made confidential gets a secret,
 * returned here only; a confidential client made public loses its secret.
 */
export async function updateClient(environment: Environment, client: OAuthClient, metadata: ClientMetadata): Promise<{ client: OAuthClient; clientSecret: string | null }> {
  let clientSecret: string | null = null;
  let secret: { clientSecretHash: string | null; clientSecretExpiresAt: null } | object = {};
  if (metadata.tokenEndpointAuthMethod === 'none') secret = { clientSecretHash: null, clientSecretExpiresAt: null };
  else if (client.clientSecretHash === null) {
    clientSecret = generateToken(environment.config.tokenPrefix, 'cs');
    secret = { clientSecretHash: hashToken(clientSecret), clientSecretExpiresAt: null };
  }
  const updated = await environment.prisma.oAuthClient.update({ where: { id: client.id }, data: { ...metadata, ...secret } });
  return { client: updated, clientSecret };
}

/** Issues a new secret to a confidential client; the old one stops working at once. */
export async function rotateClientSecret(environment: Environment, client: OAuthClient): Promise<{ client: OAuthClient; clientSecret: string }> {
  if (isPublicClient(client)) throw new InvalidRequest('A public client has no secret to rotate.');
  const clientSecret = generateToken(environment.config.tokenPrefix, 'cs');
  const updated = await environment.prisma.oAuthClient.update({ where: { id: client.id }, data: { clientSecretHash: hashToken(clientSecret), clientSecretExpiresAt: null } });
  return { client: updated, clientSecret };
}

/**
 * Deletes a client: it can no longer authenticate or be authorized, every token issued to it is
 * revoked and its unused codes are gone. The row stays (soft delete) for the tokens' history.
 */
export async function deleteClient(environment: Environment, client: OAuthClient, now: Date): Promise<void> {
  const revoked = await environment.prisma.$transaction(async (tx) => {
    await tx.oAuthClient.update({ where: { id: client.id }, data: { deletedAt: now } });
    await tx.oAuthAuthorizationCode.deleteMany({ where: { clientId: client.id, usedAt: null } });
    const rows = await tx.oAuthToken.findMany({ where: { clientId: client.id, revokedAt: null }, select: { id: true, accessTokenHash: true } });
    if (rows.length === 0) return [];
    await tx.oAuthToken.updateMany({ where: { id: { in: rows.map((r) => r.id) } }, data: { revokedAt: now } });
    const hashes = rows.map((r) => r.accessTokenHash);
    await announcePrincipalChange(tx as Db, hashes);
    return hashes;
  });
  environment.principals.forget(revoked);
}

/**
 * The client a registration access token manages (RFC 7592 §2), or null: an unknown client and a
 * wrong token look alike, and the token is compared in constant time.
 */
export async function clientForRegistrationToken(prisma: Db, clientId: string, token: string): Promise<OAuthClient | null> {
  const client = await findClient(prisma, clientId);
  const ok = secretMatches(client?.registrationAccessTokenHash, token);
  return client && ok ? client : null;
}
