// Idempotency keys and their answers in the environment's database (rest/idempotency.ts holds the
// rules). A unique (scope, key) makes the claim atomic: of two requests racing with one key,
// exactly one runs.
import type { IdempotencyStore } from '../rest/idempotency.ts';

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === 'P2002';
}

/**
 * Whether the database can hold the answer: PostgreSQL's jsonb refuses NUL and lone surrogates, which
 * an error message may quote from the input. JSON.stringify writes both, and only them, as escapes.
 * Such an answer is forgotten instead: only a refusal quotes the input, and refusing again changes
 * nothing.
 */
function storable(body: unknown): boolean {
  return !/\\u0000|\\ud[89a-f][0-9a-f]{2}/i.test(JSON.stringify(body ?? null));
}

export const databaseIdempotencyStore: IdempotencyStore = {
  async claim(ctx, { scope, key, requestHash, now, stale }) {
    await ctx.prisma.idempotencyKey.deleteMany({ where: { scope, key, createdAt: { lt: stale } } });
    try {
      const { id } = await ctx.prisma.idempotencyKey.create({ data: { scope, key, requestHash, createdAt: now }, select: { id: true } });
      return { claimed: id };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const first = await ctx.prisma.idempotencyKey.findUnique({ where: { scope_key: { scope, key } } });
      return { earlier: first && { requestHash: first.requestHash, status: first.status, body: first.body } };
    }
  },
  async complete(ctx, id, response, now) {
    if (!storable(response.body)) await ctx.prisma.idempotencyKey.delete({ where: { id } });
    else await ctx.prisma.idempotencyKey.update({ where: { id }, data: { status: response.status, body: (response.body ?? null) as never, completedAt: now } });
  },
  async release(ctx, id) {
    await ctx.prisma.idempotencyKey.delete({ where: { id } });
  },
};
