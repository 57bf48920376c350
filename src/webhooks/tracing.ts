// A webhook delivery attempt as a span, when traces are on: a child of the span that recorded the
// event (its stored traceparent, see db/trace-context.ts), so the delivery of an order.paid is in
// the trace of the payment that caused it. The POST itself is the HTTP instrumentation's child span.
import type { JobContext } from '../jobs/runner.ts';
import { inCausedSpan } from '../tracing/spans.ts';

export function inDeliverySpan<T>(ctx: JobContext, delivery: { id: string; endpoint_id: string; attempts: number }, send: () => Promise<T>): Promise<T> {
  return inCausedSpan(
    'webhook delivery',
    { 'kassa.webhook_event.id': delivery.id, 'kassa.webhook_endpoint.id': delivery.endpoint_id, 'kassa.webhook.attempt': delivery.attempts, 'kassa.environment': ctx.environment.name },
    async () => {
      const [row] = await ctx.prisma.$queryRaw<{ traceparent: string | null }[]>`
        SELECT e.traceparent FROM webhook_events w JOIN events e ON e.id = w.event_id WHERE w.id = ${delivery.id}::uuid`;
      return row?.traceparent;
    },
    send,
  );
}
