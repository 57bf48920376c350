// The OpenTelemetry SDK as Kassa runs it: instrumentations of incoming and outgoing HTTP, pg (the
// PostgreSQL driver under Prisma's adapter) and graphql; Kassa's span processor first (request id,
// secrets scrubbed), then the exporter the settings name. The exporters read their own standard
// variables (OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT); the sampler and OTEL_BSP_* come from
// settings.ts; the SDK reads the resource's (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) and the
// propagators' (OTEL_PROPAGATORS). Loaded only when tracing is on.
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { trace, type Context } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  SamplingDecision,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { KassaSpanProcessor } from './processor.ts';
import type { TracingSettings } from './settings.ts';
import { turnTracingOn } from './spans.ts';

function exportingProcessor(settings: TracingSettings): SpanProcessor {
  if (settings.exporter === 'console') return new SimpleSpanProcessor({ exporter: new ConsoleSpanExporter() });
  return new BatchSpanProcessor({ ...settings.batch, exporter: settings.protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtobufExporter() });
}

function configuredSampler({ name, ratio }: TracingSettings['sampler']): Sampler {
  const root = name.endsWith('always_off') ? new AlwaysOffSampler() : name.endsWith('traceidratio') ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler();
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/**
 * The configured sampler, except that a GraphQL span with no parent is dropped: outside a request
 * or a job, GraphQL is the start-up's compiling of the REST routes' operations, not traced work.
 */
function samplerOf(settings: TracingSettings): Sampler {
  const configured = configuredSampler(settings.sampler);
  return {
    shouldSample(context: Context, traceId, name, kind, attributes, links) {
      if (!trace.getSpan(context) && name.startsWith('graphql.')) return { decision: SamplingDecision.NOT_RECORD };
      return configured.shouldSample(context, traceId, name, kind, attributes, links);
    },
    toString: () => `KassaSampler{${configured.toString()}}`,
  };
}

export function startSdk(settings: TracingSettings): NodeSDK {
  const sdk = new NodeSDK({
    serviceName: settings.defaultServiceName,
    sampler: samplerOf(settings),
    spanProcessors: [new KassaSpanProcessor(), exportingProcessor(settings)],
    instrumentations: [
      // Outgoing requests are traced inside a traced request or job only: not the exporter's own.
      new HttpInstrumentation({ requireParentforOutgoingSpans: true }),
      // Statements only where a request or a job is traced: not the job runners' polls.
      new PgInstrumentation({ requireParentSpan: true }),
      // Parse and validate; execution is compiled by graphql-jit, outside graphql-js.
      new GraphQLInstrumentation({ ignoreResolveSpans: true, allowValues: false }),
    ],
  });
  sdk.start();
  turnTracingOn();
  return sdk;
}
