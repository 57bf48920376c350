// Idempotency-Key on POST, as Stripe does it: the first answer to a key is stored; a retry with
// the same key and the same request gets that answer back without running again. The same key
// with another request is refused, and a retry while the first is still running gets 409.
import { createHash } from 'node:crypto';
import type { Context } from '../context.ts';
import type { RestHandler, RestRequest, RestResponse } from './adapter.ts';
import { restError } from './adapter.ts';

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

function requestHash(request: RestRequest): string {
  return createHash('sha256').update(`${request.method} ${request.path}?${request.query}\n`).update(request.body).digest('hex');
}

/**
 * Whether the database can hold the answer: PostgreSQL's jsonb refuses NUL and lone surrogates, which
 * an error message may quote from the input. JSON.stringify writes both, and only them, as escapes.
 */
function storable(body: unknown): boolean {
  return !/\\u0000|\\ud[89a-f][0-9a-f]{2}/i.test(JSON.stringify(body ?? null));
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === 'P2002';
}

export function withIdempotency(handler: RestHandler): RestHandler {
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
    await ctx.prisma.idempotencyKey.deleteMany({ where: { scope, key, createdAt: { lt: stale } } });
    let id: string;
    try {
      ({ id } = await ctx.prisma.idempotencyKey.create({ data: { scope, key, requestHash: hash, createdAt: now }, select: { id: true } }));
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const first = await ctx.prisma.idempotencyKey.findUnique({ where: { scope_key: { scope, key } } });
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
    let response: RestResponse;
    try {
      response = await handler(request, ctx);
    } catch (error) {
      await ctx.prisma.idempotencyKey.delete({ where: { id } });
      throw error;
    }
    // A server error is not an answer to remember: the retry should run again. Nor is one the
    // database cannot hold; only a refusal quotes the input, and refusing again changes nothing.
    if (response.status >= 500 || !storable(response.body)) await ctx.prisma.idempotencyKey.delete({ where: { id } });
    else await ctx.prisma.idempotencyKey.update({ where: { id }, data: { status: response.status, body: (response.body ?? null) as never, completedAt: ctx.now() } });
    return response;
  };
}
