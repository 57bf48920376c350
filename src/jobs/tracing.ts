// A job's run as a span, when traces are on: a child of the span that enqueued the job (its stored
// traceparent, see db/trace-context.ts), so a payment charged after a checkout's confirm is in the
// confirm's trace. A job enqueued outside any trace (by a sweep) starts a trace of its own.
import { inCausedSpan } from '../tracing/spans.ts';
import type { JobContext } from './runner.ts';

export function inJobSpan<T>(ctx: JobContext, job: { id: string; kind: string; attempts: number }, run: () => Promise<T>): Promise<T> {
  return inCausedSpan(
    `job ${job.kind}`,
    { 'kassa.job.id': job.id, 'kassa.job.kind': job.kind, 'kassa.job.attempt': job.attempts, 'kassa.environment': ctx.environment.name },
    async () => (await ctx.prisma.job.findUnique({ where: { id: job.id }, select: { traceparent: true } }))?.traceparent,
    run,
  );
}
