// An authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, OpenID Connect Core §3.1.2.1), checked
// one rule at a time. The first two rules decide where errors may go: until the client and its
// redirect URI are known to belong together, an error is shown to the user and never redirected
// (RFC 6749 §4.1.2.1); after that, errors go back to the client with its `state`.
import type { OAuthClient } from '../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import { allScopes, isScope, type Scope } from '../auth/scopes.ts';
import { findClient, redirectUriRegistered } from './clients.ts';
import { InvalidRequest, InvalidScope, OAuthError, UnauthorizedClient, UnsupportedResponseType } from './errors.ts';

export type SubType = 'organization' | 'user';
export const prompts = ['none', 'login', 'consent'] as const;
export type Prompt = (typeof prompts)[number];

export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | null;
  scopes: Scope[];
  subType: SubType;
  nonce: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | null;
  prompts: Prompt[];
  /** OpenID Connect's `max_age`: the most seconds since the user last entered their password. */
  maxAge: number | null;
}

/** An error that must not be redirected: the client or its redirect URI is in doubt. */
export class UntrustedRedirect extends OAuthError {}

/** An error to send back to the client's redirect URI, with its state. */
export class RedirectableError extends Error {
  constructor(
    readonly reason: OAuthError,
    readonly redirectUri: string,
    readonly state: string | null,
  ) {
    super(reason.description);
  }
}

const maxLength = { state: 2048, nonce: 512 };
const pkceValue = /^[A-Za-z0-9\-._~]{43,128}$/;

function single(params: URLSearchParams, name: string): string | null {
  const values = params.getAll(name);
  if (values.length > 1) throw new InvalidRequest(`The parameter "${name}" was given more than once.`);
  return values[0] ?? null;
}

async function checkClient(prisma: Db, params: URLSearchParams): Promise<OAuthClient> {
  const clientId = single(params, 'client_id');
  if (!clientId) throw new UntrustedRedirect('invalid_request', 'The request names no client: client_id is missing.');
  const client = await findClient(prisma, clientId);
  if (!client) throw new UntrustedRedirect('invalid_client', 'No client is registered with this client_id.');
  return client;
}

/** RFC 6749 §3.1.2.3 and RFC 9700 §2.1: the redirect URI must be one the client registered, character for character. */
function checkRedirectUri(client: OAuthClient, params: URLSearchParams): string {
  const given = single(params, 'redirect_uri');
  if (given === null) {
    // OpenID Connect requires it; plain OAuth may omit it when exactly one is registered.
    if (client.redirectUris.length === 1 && !requestedScopes(params).includes('openid')) return client.redirectUris[0];
    throw new UntrustedRedirect('invalid_request', 'redirect_uri is missing: name one of the redirect URIs the client registered.');
  }
  if (!redirectUriRegistered(client, given)) {
    throw new UntrustedRedirect('invalid_request', 'redirect_uri is not one the client registered (it must match exactly).');
  }
  return given;
}

function checkResponseType(client: OAuthClient, params: URLSearchParams): void {
  const responseType = single(params, 'response_type');
  if (!responseType) throw new InvalidRequest('response_type is missing: use response_type=code.');
  if (responseType !== 'code') throw new UnsupportedResponseType(`response_type "${responseType}" is not supported: use response_type=code.`);
  if (!client.responseTypes.includes('code') || !client.grantTypes.includes('authorization_code')) {
    throw new UnauthorizedClient('This client is not registered for the authorization code grant.');
  }
}

function requestedScopes(params: URLSearchParams): string[] {
  return (params.get('scope') ?? '').split(' ').filter(Boolean);
}

/** Every requested scope is in the catalogue and among the scopes the client registered. */
function checkScope(client: OAuthClient, params: URLSearchParams): Scope[] {
  single(params, 'scope');
  const requested = [...new Set(requestedScopes(params))];
  if (requested.length === 0) throw new InvalidScope(`scope is missing: ask for at least one of the client's scopes (${client.scopes.join(' ')}).`);
  const unknown = requested.filter((s) => !isScope(s));
  if (unknown.length) throw new InvalidScope(`Unknown scope(s): ${unknown.join(' ')}. Known scopes: ${allScopes.join(' ')}.`);
  const beyond = requested.filter((s) => !client.scopes.includes(s));
  if (beyond.length) throw new InvalidScope(`The client is not registered for the scope(s): ${beyond.join(' ')}.`);
  return requested as Scope[];
}

/**
 * RFC 7636 and RFC 9700 §2.1.1: S256 only. A challenge without a method would be `plain`, which is
 * refused; public clients must send a challenge.
 */
function checkPkce(client: OAuthClient, params: URLSearchParams): { codeChallenge: string | null; codeChallengeMethod: 'S256' | null } {
  const challenge = single(params, 'code_challenge');
  const method = single(params, 'code_challenge_method');
  if (challenge === null) {
    if (method !== null) throw new InvalidRequest('code_challenge_method was given without a code_challenge.');
    if (client.tokenEndpointAuthMethod === 'none') throw new InvalidRequest('A public client must use PKCE: send code_challenge and code_challenge_method=S256.');
    return { codeChallenge: null, codeChallengeMethod: null };
  }
  if (method === null || method === 'plain') throw new InvalidRequest('code_challenge_method must be S256; the plain method is not accepted.');
  if (method !== 'S256') throw new InvalidRequest(`code_challenge_method "${method}" is not supported; use S256.`);
  if (!pkceValue.test(challenge)) throw new InvalidRequest('code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" or "~" (the base64url SHA-256 of the verifier).');
  return { codeChallenge: challenge, codeChallengeMethod: 'S256' };
}

function checkSubType(params: URLSearchParams): SubType {
  const subType = single(params, 'sub_type') ?? 'organization';
  if (subType !== 'organization' && subType !== 'user') throw new InvalidRequest(`sub_type must be "organization" or "user" (got "${subType}").`);
  return subType;
}

/** OpenID Connect Core §3.1.2.1: `none` stands alone. */
function checkPrompt(params: URLSearchParams): Prompt[] {
  const requested = (single(params, 'prompt') ?? '').split(' ').filter(Boolean);
  for (const prompt of requested) {
    if (!(prompts as readonly string[]).includes(prompt)) throw new InvalidRequest(`prompt "${prompt}" is not supported (${prompts.join(', ')}).`);
  }
  if (requested.includes('none') && requested.length > 1) throw new InvalidRequest('prompt=none cannot be combined with other prompt values.');
  return requested as Prompt[];
}

/** OpenID Connect Core §3.1.2.1: a whole number of seconds; 0 means sign in again now. */
function checkMaxAge(params: URLSearchParams): number | null {
  const raw = single(params, 'max_age');
  if (raw === null) return null;
  if (!/^\d{1,9}$/.test(raw)) throw new InvalidRequest(`max_age must be a whole number of seconds (got "${raw.slice(0, 20)}").`);
  return Number(raw);
}

/** Request objects (OpenID Connect Core §6) are not supported, and say so. */
function checkNoRequestObject(params: URLSearchParams): void {
  if (params.has('request')) throw new OAuthError('request_not_supported', 'Request objects (the request parameter) are not supported.');
  if (params.has('request_uri')) throw new OAuthError('request_uri_not_supported', 'The request_uri parameter is not supported.');
}

function checkLength(params: URLSearchParams, name: 'state' | 'nonce'): string | null {
  const value = single(params, name);
  if (value !== null && value.length > maxLength[name]) throw new InvalidRequest(`${name} is longer than ${maxLength[name]} characters.`);
  return value;
}

/**
 * Checks an authorization request. Throws UntrustedRedirect while the redirect URI is in doubt and
 * RedirectableError afterwards.
 */
export async function checkAuthorizationRequest(prisma: Db, params: URLSearchParams): Promise<AuthorizationRequest> {
  const client = await checkClient(prisma, params);
  const redirectUri = checkRedirectUri(client, params);
  const rawState = params.getAll('state');
  const state = rawState.length === 1 ? rawState[0] : null;
  try {
    checkResponseType(client, params);
    checkNoRequestObject(params);
    const scopes = checkScope(client, params);
    const pkce = checkPkce(client, params);
    const subType = checkSubType(params);
    const prompts = checkPrompt(params);
    const maxAge = checkMaxAge(params);
    const nonce = checkLength(params, 'nonce');
    checkLength(params, 'state');
    return { client, redirectUri, state, scopes, subType, nonce, prompts, maxAge, ...pkce };
  } catch (error) {
    if (error instanceof OAuthError) throw new RedirectableError(error, redirectUri, state !== null && state.length <= maxLength.state ? state : null);
    throw error;
  }
}

/** Whether the user must enter their password again for this request (`prompt=login`, or a sign-in older than `max_age`). */
export function needsFreshSignIn(request: AuthorizationRequest, signedInAt: Date, now: Date): boolean {
  if (request.prompts.includes('login')) return true;
  return request.maxAge !== null && now.getTime() - signedInAt.getTime() > request.maxAge * 1000;
}

/** The redirect URI with the answer's parameters added (RFC 6749 §4.1.2), `iss` included (RFC 9207). */
export function redirectWith(redirectUri: string, issuer: string, values: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(values)) if (value !== null) url.searchParams.set(name, value);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/** The parameters that make up a request, to carry it through sign-in and consent unchanged. */
export const requestParameterNames = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'sub_type', 'prompt', 'max_age'] as const;
