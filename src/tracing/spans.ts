// What the application does with traces, through the OpenTelemetry API only (a no-op until the SDK
// starts): the request id on a request's span, the W3C trace context stored with a job or an event
// so the work it causes later joins the trace, and the spans of a job's run and of a webhook
// delivery, each a child of the span that caused it. With tracing off each helper costs a check.
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context } from '@opentelemetry/api';

export const requestIdAttribute = 'kassa.request_id';

const tracer = trace.getTracer('kassa');
let on = false;

/** Called once the SDK has started (sdk.ts). */
export function turnTracingOn(): void {
  on = true;
}

export function tracingIsOn(): boolean {
  return on;
}

/** Stamps the request id on the span of the request being served (the incoming HTTP span). */
export function markRequest(requestId: string, environment: string | undefined): void {
  if (!on) return;
  const span = trace.getActiveSpan();
  span?.setAttribute(requestIdAttribute, requestId);
  if (environment) span?.setAttribute('kassa.environment', environment);
}

/** The W3C traceparent of the active span (`00-<trace id>-<span id>-<flags>`), or null outside a sampled span. */
export function activeTraceparent(): string | null {
  if (!on) return null;
  const span = trace.getActiveSpan()?.spanContext();
  if (!span || !trace.isSpanContextValid(span) || !(span.traceFlags & TraceFlags.SAMPLED)) return null;
  return `00-${span.traceId}-${span.spanId}-${span.traceFlags.toString(16).padStart(2, '0')}`;
}

const traceparentShape = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The context whose parent is the span a stored traceparent names; the root context when there is none. */
export function contextOf(traceparent: string | null | undefined): Context {
  const match = traceparent ? traceparentShape.exec(traceparent) : null;
  if (!match) return ROOT_CONTEXT;
  const parent = { traceId: match[1], spanId: match[2], traceFlags: Number.parseInt(match[3], 16), isRemote: true };
  return trace.isSpanContextValid(parent) ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/**
 * Runs `work` in a span named `name`, a child of the span the traceparent that `lookUp` reads names
 * (a job's or an event's, stored when it was enqueued or recorded). With tracing off, only `work` runs.
 */
export async function inCausedSpan<T>(name: string, attributes: Attributes, lookUp: () => Promise<string | null | undefined>, work: () => Promise<T>): Promise<T> {
  if (!on) return work();
  // Read outside any span: the statement is bookkeeping, not part of the traced work.
  const traceparent = await context.with(ROOT_CONTEXT, lookUp).catch(() => null);
  return tracer.startActiveSpan(name, { kind: SpanKind.CONSUMER, attributes }, contextOf(traceparent), async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
