// Jobs and events remember the trace they were caused in: while traces are on, every job and event
// written through Prisma stores the W3C traceparent of the active span (the request's, or the job's
// that caused it), and the job's run or the event's delivery becomes a child of that span
// (jobs/tracing.ts, webhooks/tracing.ts). Installed only when tracing is on.
import type { PrismaClient } from '../generated/prisma/client.ts';
import { activeTraceparent, tracingIsOn } from '../tracing/spans.ts';

type Write = { args: { data?: unknown }; query: (args: never) => Promise<unknown> };

function stamped({ args, query }: Write): Promise<unknown> {
  const traceparent = activeTraceparent();
  if (traceparent) {
    for (const row of Array.isArray(args.data) ? args.data : [args.data]) {
      if (row && typeof row === 'object' && (row as { traceparent?: unknown }).traceparent === undefined) (row as { traceparent?: string }).traceparent = traceparent;
    }
  }
  return query(args as never);
}

/** The client, storing the active trace context with the jobs and events it creates; unchanged while tracing is off. */
export function withTraceContext(prisma: PrismaClient): PrismaClient {
  if (!tracingIsOn()) return prisma;
  const writes = { create: stamped, createMany: stamped, createManyAndReturn: stamped };
  // Query extensions change what is written, not the client's types.
  return prisma.$extends({ name: 'trace-context', query: { job: writes, event: writes } }) as unknown as PrismaClient;
}
