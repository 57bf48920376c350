// Idempotency-Key on POST, as Stripe does it: the first answer to a key is stored; a retry with
// the same key and the same request gets that answer back without running again. The same key
// with another request is refused, and a retry while the first is still running gets 409.
import { createHash } from 'node:crypto';
import type { Context } from '../context.ts';
import type { RestHandler, RestRequest, RestResponse } from './adapter.ts';
import { restError } from './adapter.ts';
import { tooDeepAt } from '../graphql/nesting.ts';

/** How long a key is remembered. */
export const idempotencyWindowMs = 24 * 3600 * 1000;

function callerOf(ctx: Context, request: RestRequest): string {
  const { principal } = ctx;
  switch (principal.kind) {
    case 'organization':
      return `organization-${principal.credential}:${principal.tokenId}`;
    case 'user':
      return `user:${principal.userId}`;
    case 'customer':
      return `customer:${principal.customerId}`;
    default:
      // Unauthenticated POSTs carry their secret in the path (a checkout's client secret) or the body
      // (a license key): keys are scoped to the path and the caller's address, so callers who share
      // a path without sharing a secret never meet each other's keys.
      return `anonymous:${ctx.clientIp}:${request.path}`;
  }
}

/**
 * What the request asks for: its method, path, query and body. A JSON body counts by its canonical
 * form, so the same JSON with keys in another order, other spacing or `1.0` for `1` is the same
 * request; any other body (or JSON nested too deep to be accepted) counts by its bytes.
 */
function requestHash(request: RestRequest): string {
  return createHash('sha256').update(`${request.method} ${request.path}?${request.query}\n`).update(canonicalBody(request.body)).digest('hex');
}

function canonicalBody(body: Buffer): Buffer | string {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  return tooDeepAt(value, []) ? body : canonicalJson(value);
}

/**
 * JSON with object keys sorted, numbers as JSON.stringify writes them (`1.0` and `1e0` as `1`).
 * A number too large for a double stays apart from null, which JSON.stringify would make it.
 * Recurses only within maxInputNesting.
 */
function canonicalJson(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Where keys and their answers are kept (db/idempotency-store.ts), for the environment of a request. */
export interface IdempotencyStore {
  /**
   * Claims `key` for `scope` with the request's hash, after forgetting a claim made before `stale`:
   * `claimed` with the claim's id, or the earlier claim (`status: null` while it is still running).
   */
  claim(ctx: Context, claim: { scope: string; key: string; requestHash: string; now: Date; stale: Date }): Promise<
    { claimed: string } | { earlier: { requestHash: string; status: number | null; body: unknown } | null }
  >;
  /** Keeps the answer of a claim, or forgets the claim when the store cannot hold that answer. */
  complete(ctx: Context, id: string, response: { status: number; body: unknown }, now: Date): Promise<void>;
  /** Forgets a claim, so a retry runs again. */
  release(ctx: Context, id: string): Promise<void>;
}

export function withIdempotency(handler: RestHandler, store: IdempotencyStore): RestHandler {
  return async (request, ctx) => {
    const key = request.idempotencyKey;
    if (request.method !== 'POST' || key === undefined) return handler(request, ctx);
    if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
      return { status: 422, body: { detail: [{ loc: ['header', 'idempotency-key'], msg: 'Use 1 to 255 printable ASCII characters without spaces.', type: 'value_error' }] } };
    }
    const scope = callerOf(ctx, request);
    const hash = requestHash(request);
    const now = ctx.now();
    const stale = new Date(now.getTime() - idempotencyWindowMs);
    const claim = await store.claim(ctx, { scope, key, requestHash: hash, now, stale });
    if ('earlier' in claim) {
      const first = claim.earlier;
      if (!first) return restError(409, 'IdempotencyKeyInUse', 'A request with this Idempotency-Key is being processed; retry shortly.');
      if (first.requestHash !== hash) {
        return {
          status: 422,
          body: { detail: [{ loc: ['header', 'idempotency-key'], msg: 'This Idempotency-Key was already used with a different request.', type: 'idempotency_key_reused' }] },
        };
      }
      if (first.status === null) return restError(409, 'IdempotencyKeyInUse', 'A request with this Idempotency-Key is being processed; retry shortly.');
      return { status: first.status, body: first.body ?? undefined, headers: { 'idempotent-replayed': 'true' } };
    }
    const id = claim.claimed;
    let response: RestResponse;
    try {
      response = await handler(request, ctx);
    } catch (error) {
      await store.release(ctx, id);
      throw error;
    }
    // A server error is not an answer to remember: the retry should run again.
    if (response.status >= 500) await store.release(ctx, id);
    else await store.complete(ctx, id, { status: response.status, body: response.body ?? null }, ctx.now());
    return response;
  };
}
