// Traces are off unless OTEL_TRACES_EXPORTER names an exporter, and a bad OTEL_* value stops the
// start with a message naming the variable. With traces off no SDK starts: no tracer provider is
// registered with the OpenTelemetry API.
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startTracing } from '../../src/tracing/start.ts';
import { activeTraceparent, contextOf, tracingIsOn } from '../../src/tracing/spans.ts';

/** Where @opentelemetry/api keeps what was registered with it (a tracer provider among them). */
const apiGlobal = Symbol.for('opentelemetry.js.api.1');
const registeredTracerProvider = () => (globalThis as Record<symbol, { trace?: unknown } | undefined>)[apiGlobal]?.trace;

describe('tracing settings', () => {
  it('are off by default, with none, and with OTEL_SDK_DISABLED=true whatever the exporter', () => {
    expect(loadConfig({}).tracing).toBeNull();
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing).toBeNull();
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull();
  });

  it('export OTLP over HTTP as protobuf unless told json, as service kassa unless the resource is named', () => {
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing).toMatchObject({ exporter: 'otlp', protocol: 'http/protobuf', defaultServiceName: 'kassa', sampler: { name: 'parentbased_always_on' } });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'shop-api' }).tracing).toMatchObject({ protocol: 'http/json', defaultServiceName: undefined });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=eu,service.name=billing' }).tracing).toMatchObject({ exporter: 'console', defaultServiceName: undefined });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25', OTEL_BSP_SCHEDULE_DELAY: '200' }).tracing).toMatchObject({
      sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
      batch: { scheduledDelayMillis: 200 },
    });
  });

  it('refuse what Kassa cannot do, naming the variable', () => {
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    expect(refusal({ OTEL_TRACES_EXPORTER: 'jaeger' })).toMatch(/^Invalid configuration: OTEL_TRACES_EXPORTER must be one of otlp, console, none/);
    expect(refusal({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatch(/^Invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
    expect(refusal({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(/^Invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http\(s\) URL/);
    expect(refusal({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER_ARG: '2', OTEL_TRACES_SAMPLER: 'traceidratio' })).toMatch(/^Invalid configuration: OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
    expect(refusal({ OTEL_SDK_DISABLED: 'yes' })).toMatch(/^Invalid configuration: OTEL_SDK_DISABLED must be true or false/);
  });
});

describe('with traces off', () => {
  it('no SDK starts: serve without an exporter, and every command but serve even with one', async () => {
    expect(await startTracing(['serve'], {})).toBe(false);
    expect(await startTracing([], { OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(await startTracing(['serve'], { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(await startTracing(['migrate'], { OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
    expect(await startTracing(['serve'], { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe(false);
    expect(registeredTracerProvider()).toBeUndefined();
    expect(tracingIsOn()).toBe(false);
    expect(trace.getActiveSpan()).toBeUndefined();
    expect(activeTraceparent()).toBeNull();
  });
});

describe('a stored traceparent', () => {
  it('names the parent of the span it causes; a malformed one starts a trace of its own', () => {
    const parent = trace.getSpanContext(contextOf('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'));
    expect(parent).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
    for (const malformed of [null, '', '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-00000000000000000000000000000000-b7ad6b7169203331-01']) {
      expect(trace.getSpanContext(contextOf(malformed)), String(malformed)).toBeUndefined();
    }
  });
});
