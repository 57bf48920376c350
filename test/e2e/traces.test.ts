// Traces, as an operator turns them on: `kassa serve` with OTEL_TRACES_EXPORTER=otlp exporting to
// a collector on 127.0.0.1. One purchase (checkout, confirm with the test card, the payment job,
// the order.paid webhook delivered) is one trace; the request's spans carry its request id; no
// span holds a token, a secret or the card. With OTEL_TRACES_EXPORTER unset nothing is exported.
// With KASSA_TEST_DATABASE=postgres the server runs on PostgreSQL, and its statements are spans too.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { kassaBin, serveProcess, type ServeProcess } from '../helpers/processes.ts';
import { createPostgresDatabases, usePostgres } from '../helpers/server.ts';
import { eventually } from '../helpers/waiting.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

// Each step starts a Node process that opens two databases (bootstrap, then serve).
vi.setConfig({ testTimeout: 180_000 });

let dataDir: string;
/** Where the processes keep their data: the embedded databases in `dataDir`, or two PostgreSQL databases. */
let databaseEnv: Record<string, string>;
let dropDatabases: (() => Promise<void>) | undefined;
let collector: OtlpReceiver;
let hooks: Receiver;
const running: ServeProcess[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'kassa-traces-'));
  const postgres = usePostgres ? await createPostgresDatabases() : null;
  databaseEnv = postgres?.env ?? { DATA_DIR: dataDir };
  dropDatabases = postgres?.drop;
  collector = await startOtlpReceiver();
  hooks = await startReceiver();
});
afterAll(async () => {
  for (const server of running) server.child.kill('SIGKILL');
  await Promise.all(running.map((server) => server.exited));
  await dropDatabases?.();
  await collector?.close();
  await hooks?.close();
  await rm(dataDir, { recursive: true, force: true });
});

function bootstrap(): Promise<{ organization_access_token: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [kassaBin, 'bootstrap', '--environment', 'sandbox', '--json'], { env: { ...process.env, ...databaseEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`bootstrap exited with ${code}: ${stderr}`))));
  });
}

async function serve(env: Record<string, string>): Promise<ServeProcess> {
  const server = await serveProcess({ ...databaseEnv, JOB_POLL_INTERVAL_MS: '50', TEST_CARD_DELAY_MS: '0', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', ...env });
  running.push(server);
  return server;
}

/** Stops the server as an operator does (SIGTERM): it exports the spans it still holds before it exits. */
async function stop(server: ServeProcess): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

function client(server: ServeProcess, token: string) {
  return async (method: string, route: string, body?: unknown, { auth = true, requestId }: { auth?: boolean; requestId?: string } = {}) => {
    const response = await fetch(`${server.url}/sandbox/v1${route}`, {
      method,
      headers: { ...(auth ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}), ...(requestId ? { 'x-request-id': requestId } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: await response.json() };
  };
}

/** The span's ancestors, nearest first, among the spans received. */
function ancestors(span: ReceivedSpan, spans: ReceivedSpan[]): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  for (let parent = spans.find((s) => s.spanId === span.parentSpanId); parent; parent = spans.find((s) => s.spanId === parent!.parentSpanId)) chain.push(parent);
  return chain;
}

describe('traces', () => {
  it('follow one purchase from the confirm request through the payment job to the webhook delivery, in one trace', async () => {
    const { organization_access_token: token } = await bootstrap();
    const server = await serve({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'kassa-under-test', OTEL_BSP_SCHEDULE_DELAY: '100' });
    const api = client(server, token);

    const endpoint = await api('POST', '/webhooks/endpoints', { url: hooks.url, format: 'raw', events: ['order.paid'] });
    expect(endpoint.status).toBe(201);
    hooks.secret = endpoint.body.secret;
    const product = await api('POST', '/products/', { name: 'Traced', recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }] });
    expect(product.status).toBe(201);
    const checkout = await api('POST', '/checkouts/', { products: [product.body.id] });
    expect(checkout.status).toBe(201);
    const clientSecret: string = checkout.body.client_secret;
    const confirmed = await api('POST', `/checkouts/client/${clientSecret}/confirm`, { customer_email: 'traced@example.com', confirmation_token_id: 'tok_visa' }, { auth: false, requestId: 'confirm-under-trace' });
    expect(confirmed.status).toBe(200);
    const [delivered] = await eventually(
      async () => hooks.receipts.filter((r) => r.event?.type === 'order.paid'),
      (receipts) => receipts.length === 1,
      'the order.paid webhook',
    );
    expect(delivered.refused).toBeNull();
    await stop(server);

    const spans = collector.spans;
    expect(new Set(spans.map((s) => s.serviceName))).toEqual(new Set(['kassa-under-test']));
    const confirm = spans.filter((s) => s.kind === 2 && s.attributes['kassa.request_id'] === 'confirm-under-trace');
    expect(confirm).toHaveLength(1);
    expect(confirm[0].attributes['url.path']).toBe('/sandbox/v1/checkouts/client/service_c_[redacted]/confirm');
    const trace = spans.filter((s) => s.traceId === confirm[0].traceId);

    const charge = trace.filter((s) => s.name === 'job payment.charge');
    expect(charge).toHaveLength(1);
    expect(ancestors(charge[0], trace)).toContainEqual(confirm[0]);
    const delivery = trace.filter((s) => s.name === 'webhook delivery');
    expect(delivery).toHaveLength(1);
    expect(ancestors(delivery[0], trace)).toContainEqual(charge[0]);
    expect(delivery[0].attributes['kassa.webhook_event.id']).toBe(delivered.id);
    // The POST to the receiver, under the delivery: its origin only.
    const post = trace.filter((s) => s.kind === 3 && s.name === 'POST' && s.parentSpanId === delivery[0].spanId);
    expect(post.map((s) => s.attributes['url.full'])).toEqual([new URL(hooks.url).origin]);

    // Every span the confirm request made itself (not the work it enqueued) carries its request id.
    const ofRequest = trace.filter((s) => s === confirm[0] || (ancestors(s, trace).includes(confirm[0]) && !ancestors(s, trace).includes(charge[0]) && s !== charge[0]));
    expect(ofRequest.length).toBeGreaterThan(1);
    for (const span of ofRequest) expect(span.attributes['kassa.request_id'], span.name).toBe('confirm-under-trace');
    // On PostgreSQL the statements are spans, placeholders in place of values; the embedded database has no driver to see.
    const statements = trace.filter((s) => s.name.startsWith('pg.query'));
    if (usePostgres) {
      expect(statements.filter((s) => ofRequest.includes(s)).length).toBeGreaterThan(0);
      expect(statements.filter((s) => ancestors(s, trace).includes(charge[0])).length).toBeGreaterThan(0);
      expect(statements.some((s) => /\$1/.test(String(s.attributes['db.query.text'])))).toBe(true);
    } else {
      expect(statements).toEqual([]);
    }

    // No span, of any trace, holds a token, a secret or the card.
    const secrets = [token, clientSecret, hooks.secret, 'tok_visa', token.slice(-36), clientSecret.slice(-32)];
    const texts = spans.flatMap((s) => [s.name, ...Object.values(s.attributes).flat().map(String)]);
    for (const secret of secrets) expect(texts.filter((text) => text.includes(secret))).toEqual([]);
  });

  it('are not recorded when OTEL_TRACES_EXPORTER is unset, though a collector is configured', async () => {
    // A collector of its own: nothing another server sent can be mistaken for this one's.
    const quiet = await startOtlpReceiver();
    const server = await serve({ OTEL_EXPORTER_OTLP_ENDPOINT: quiet.url });
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const checkouts = await fetch(`${server.url}/sandbox/v1/checkouts/`);
    expect(checkouts.status).toBe(401);
    await stop(server);
    await quiet.close();
    expect(quiet.requests).toEqual([]);
  });
});
