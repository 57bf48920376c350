// The provider's HTTP shapes: what an OAuth endpoint or page receives and answers. Endpoints are
// plain functions from a request to a response; src/oauth/routes.ts maps paths to them.
import type { Environment } from '../context.ts';
import { bearerToken, type RequestFacts } from '../http/request.ts';
import { maxInputNesting, tooDeepAt } from '../graphql/nesting.ts';
import { OAuthError } from './errors.ts';

export interface OAuthRequest {
  method: string;
  /** The path under the environment's base: `/v1/oauth2/token`, `/oauth2/authorize`, `/.well-known/jwks.json`. */
  path: string;
  /** The named segments of the route's path (`/v1/oauth2/register/{client_id}`). */
  params: Record<string, string>;
  query: URLSearchParams;
  /** What the request's headers say, parsed at the edge (http/request.ts). */
  facts: RequestFacts;
  body: Buffer;
  clientIp: string;
  requestId: string;
}

export interface OAuthResponse {
  status: number;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

export type OAuthHandler = (environment: Environment, request: OAuthRequest, now: Date) => Promise<OAuthResponse>;

/** A JSON answer. Anything carrying a token or a secret must not be cached (RFC 6749 §5.1). */
export function json(status: number, body: unknown, headers: Record<string, string | string[]> = {}): OAuthResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache', ...headers },
    body: JSON.stringify(body),
  };
}

/**
 * An OAuth error as its JSON body. A 401 or 403 names the scheme the endpoint takes: Bearer for a
 * refused access token (RFC 6750 §3), Basic for a refused client (RFC 6749 §5.2).
 */
export function oauthErrorResponse(error: OAuthError, scheme: 'Basic' | 'Bearer' = error.error === 'invalid_token' || error.error === 'insufficient_scope' ? 'Bearer' : 'Basic'): OAuthResponse {
  const headers: Record<string, string> = {};
  if (error.status === 401 || (scheme === 'Bearer' && error.status === 403)) {
    headers['www-authenticate'] =
      scheme === 'Bearer' ? `Bearer error="${error.error}", error_description="${error.description.replace(/["\\]/g, '')}"` : 'Basic realm="kassa"';
  }
  return json(error.status, error.toJSON(), headers);
}

export function redirect(location: string, headers: Record<string, string | string[]> = {}): OAuthResponse {
  return { status: 303, headers: { location, 'cache-control': 'no-store', ...headers } };
}

/** The media type of a request, lowercased, without parameters. */
export function mediaType(request: OAuthRequest): string | undefined {
  return request.facts.mediaType;
}

/**
 * An `application/x-www-form-urlencoded` body (RFC 6749 §3.2). A parameter sent twice is refused,
 * as the RFC requires; so is any other media type.
 */
export function formBody(request: OAuthRequest): URLSearchParams {
  if (mediaType(request) !== 'application/x-www-form-urlencoded') {
    throw new OAuthError('invalid_request', 'Send the parameters form-encoded, with "Content-Type: application/x-www-form-urlencoded".');
  }
  const form = new URLSearchParams(request.body.toString('utf8'));
  singleValued(form);
  refuseNul(form);
  return form;
}

/** PostgreSQL text cannot hold NUL, and no parameter of the provider needs it. */
export function refuseNul(params: URLSearchParams): void {
  for (const [name, value] of params) {
    if (name.includes('\u0000') || value.includes('\u0000')) throw new OAuthError('invalid_request', `The parameter "${name.replace(/\u0000/g, '')}" contains the NUL character.`);
  }
}

/** Refuses parameters given more than once (RFC 6749 §3.1 and §3.2). */
export function singleValued(params: URLSearchParams): void {
  const seen = new Set<string>();
  for (const key of params.keys()) {
    if (seen.has(key)) throw new OAuthError('invalid_request', `The parameter "${key}" was given more than once.`);
    seen.add(key);
  }
}

/** A JSON object body, for client registration (RFC 7591). */
export function jsonBody(request: OAuthRequest): Record<string, unknown> {
  if (mediaType(request) !== 'application/json') throw new OAuthError('invalid_request', 'Send the body as JSON, with "Content-Type: application/json".');
  let value: unknown;
  try {
    value = JSON.parse(request.body.toString('utf8'));
  } catch (error) {
    throw new OAuthError('invalid_request', `The body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new OAuthError('invalid_request', 'The body must be a JSON object.');
  const tooDeep = tooDeepAt(value, []);
  if (tooDeep) throw new OAuthError('invalid_request', `"${tooDeep[0]}" nests arrays and objects more than ${maxInputNesting} levels deep; no client metadata field takes a value nested this deep.`);
  return value as Record<string, unknown>;
}

/** The bearer token of the request, if it carries one. */
export function bearer(request: OAuthRequest): string | undefined {
  return bearerToken(request.facts) ?? undefined;
}

/** The cookies of the request, by name. */
export function cookies(request: OAuthRequest): ReadonlyMap<string, string> {
  return request.facts.cookies;
}
