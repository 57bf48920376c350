// Whether `kassa serve` records traces, read from the standard OpenTelemetry variables only. Off
// unless OTEL_TRACES_EXPORTER names an exporter (otlp or console); OTEL_SDK_DISABLED=true turns
// it off whatever else is set. Nothing here imports what the instrumentations patch: it is read
// before they are registered (start.ts), and again by loadConfig, which reports a bad value.
export type Env = Record<string, string | undefined>;

export interface TracingSettings {
  exporter: 'otlp' | 'console';
  /** The OTLP encoding: protobuf (the specification's default) or JSON, both over HTTP. */
  protocol: 'http/protobuf' | 'http/json';
  /** Which traces are kept (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG); parentbased_always_on by default. */
  sampler: { name: (typeof samplers)[number]; ratio: number };
  /** The batch span processor's settings from OTEL_BSP_*, where given (the SDK's defaults otherwise). */
  batch: { scheduledDelayMillis?: number; exportTimeoutMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number };
  /** The service name the spans carry when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one. */
  defaultServiceName: string | undefined;
}

/** Throws the caller's error naming the variable. */
export type Fail = (variable: string, problem: string) => never;

const exporters = ['otlp', 'console', 'none'] as const;
const protocols = ['http/protobuf', 'http/json'] as const;
const samplers = ['parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_on', 'always_off', 'traceidratio'] as const;

function flag(env: Env, name: string, fail: Fail): boolean {
  const raw = env[name]?.trim().toLowerCase() ?? '';
  if (raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  return fail(name, `must be true or false (got "${env[name]}")`);
}

function endpoint(env: Env, name: string, fail: Fail): void {
  const raw = env[name]?.trim();
  if (!raw) return;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(name, `must be an absolute http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, `must be an absolute http(s) URL (got "${raw}")`);
}

function positive(env: Env, name: string, fail: Fail): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) fail(name, `must be a whole number of at least 1 (got "${raw}")`);
  return value;
}

/** The tracing settings, or null when traces are off (the default). */
export function tracingSettings(env: Env, fail: Fail): TracingSettings | null {
  const disabled = flag(env, 'OTEL_SDK_DISABLED', fail);
  const exporter = (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() || 'none') as (typeof exporters)[number];
  if (!exporters.includes(exporter)) {
    fail('OTEL_TRACES_EXPORTER', `must be one of ${exporters.join(', ')}: one exporter, or none for no traces (got "${env.OTEL_TRACES_EXPORTER}")`);
  }
  if (disabled || exporter === 'none') return null;
  const protocolVariable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = (env[protocolVariable]?.trim() || 'http/protobuf') as (typeof protocols)[number];
  if (!protocols.includes(protocol)) fail(protocolVariable, `must be http/protobuf or http/json: Kassa exports over HTTP (got "${env[protocolVariable]}")`);
  endpoint(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', fail);
  endpoint(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', fail);
  const named = Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const samplerName = (env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on') as (typeof samplers)[number];
  if (!samplers.includes(samplerName)) fail('OTEL_TRACES_SAMPLER', `must be one of ${samplers.join(', ')} (got "${env.OTEL_TRACES_SAMPLER}")`);
  const ratioRaw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = ratioRaw ? Number(ratioRaw) : 1;
  if (samplerName.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1)) fail('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1, the share of traces kept (got "${ratioRaw}")`);
  const batch = {
    scheduledDelayMillis: positive(env, 'OTEL_BSP_SCHEDULE_DELAY', fail),
    exportTimeoutMillis: positive(env, 'OTEL_BSP_EXPORT_TIMEOUT', fail),
    maxQueueSize: positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', fail),
    maxExportBatchSize: positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', fail),
  };
  if ((batch.maxExportBatchSize ?? 512) > (batch.maxQueueSize ?? 2048)) fail('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'must not exceed OTEL_BSP_MAX_QUEUE_SIZE (2048 when unset)');
  return { exporter: exporter as TracingSettings['exporter'], protocol, sampler: { name: samplerName, ratio }, batch, defaultServiceName: named ? undefined : 'kassa' };
}
