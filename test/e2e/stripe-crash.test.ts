// A Kassa process killed between Stripe's charge and the commit of its outcome: Stripe has made
// the charge, Kassa has not recorded it. The next process on the same data runs the payment job
// again with the same idempotency key, gets the same PaymentIntent back, and pays the order: one
// charge, never two.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStripeDouble, type StripeDouble } from '../stripe-double/index.ts';
import { kassaBin, serveProcess, type ServeProcess } from '../helpers/processes.ts';
import { eventually } from '../helpers/waiting.ts';

// Two Kassa processes start one after the other, each opening two embedded databases.
vi.setConfig({ testTimeout: 180_000 });

let double: StripeDouble;
let dataDir: string;
let env: Record<string, string>;
const running: ServeProcess[] = [];

beforeAll(async () => {
  double = await startStripeDouble();
  dataDir = await mkdtemp(path.join(tmpdir(), 'kassa-stripe-crash-'));
  env = {
    DATA_DIR: dataDir,
    SANDBOX_STRIPE_SECRET_KEY: 'sk_test_crash1',
    SANDBOX_STRIPE_PUBLISHABLE_KEY: 'pk_test_crash1',
    SANDBOX_STRIPE_WEBHOOK_SECRET: 'whsec_crash1',
    STRIPE_API_URL: double.url,
    JOB_POLL_INTERVAL_MS: '50',
  };
});
afterAll(async () => {
  for (const server of running) server.child.kill('SIGKILL');
  await double?.close();
  await rm(dataDir, { recursive: true, force: true });
});

function bootstrap(): Promise<{ organization_access_token: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [kassaBin, 'bootstrap', '--environment', 'sandbox', '--json'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`bootstrap exited with ${code}: ${stderr}`))));
  });
}

async function serve(): Promise<ServeProcess> {
  // Webhooks are not what settles the payment here: they are dropped.
  const server = await serveProcess(env);
  running.push(server);
  return server;
}

describe('a process killed between the charge and its commit', () => {
  it('leaves one charge at Stripe, and the next process pays the order with it', async () => {
    const { organization_access_token: token } = await bootstrap();
    double.webhooks.mode('drop');
    const first = await serve();
    const api = async (server: ServeProcess, method: string, route: string, body?: unknown, auth = true) => {
      const response = await fetch(`${server.url}/sandbox/v1${route}`, {
        method,
        headers: { ...(auth ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: await response.json() };
    };
    const product = await api(first, 'POST', '/products/', { name: 'Crash', recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 2100, price_currency: 'usd' }] });
    expect(product.status).toBe(201);
    const checkout = await api(first, 'POST', '/checkouts/', { products: [product.body.id] });
    const confirmationToken = await double.stripe('sk_test_crash1').testHelpers.confirmationTokens.create({ payment_method: 'pm_card_visa' });

    // Stripe makes the charge, then takes its time answering: the process dies before it hears.
    double.latency(1500, { path: 'POST /v1/payment_intents' });
    const confirmed = await api(first, 'POST', `/checkouts/client/${checkout.body.client_secret}/confirm`, { customer_email: 'crash@example.com', confirmation_token_id: confirmationToken.id }, false);
    expect(confirmed.status).toBe(200);
    const [intent] = await eventually(
      async () => double.objects<Stripe.PaymentIntent>('payment_intent'),
      (intents) => intents.length === 1,
      'Stripe to make the charge',
    );
    expect(intent.status).toBe('succeeded');
    first.child.kill('SIGKILL');
    await first.exited;
    double.latency(0);

    const second = await serve();
    const orders = await eventually(
      async () => (await api(second, 'GET', `/orders/?checkout_id=${checkout.body.id}`)).body.items as { status: string; paid: boolean }[],
      (items) => items.length === 1 && items[0].status === 'paid',
      'the order to be paid by the next process',
      90_000,
    );
    expect(orders[0].paid).toBe(true);
    expect(double.objects<Stripe.PaymentIntent>('payment_intent')).toHaveLength(1);
    const creates = double.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents');
    expect(creates.length).toBeGreaterThanOrEqual(2);
    expect(new Set(creates.map((r) => r.idempotencyKey)).size).toBe(1);
    expect(second.output()).toContain('released jobs a previous process left claimed');
  });
});
