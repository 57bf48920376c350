// Webhook delivery by several Kassa processes on one PostgreSQL database (only PostgreSQL lets two
// processes share a database; the embedded one is locked to a single process): they share the
// work without sending any attempt twice, a process killed mid-send loses nothing, and production
// on PostgreSQL refuses destinations that resolve to private addresses.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { startKassa, type Kassa } from '../../src/server.ts';
import { encryptSecret } from '../../src/webhooks/secrets.ts';
import { usePostgres } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { expectStatus } from '../helpers/responses.ts';
import { eventually } from '../helpers/waiting.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

vi.setConfig({ testTimeout: 60_000 });

const webhookEnv = { WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_TIMEOUT_MS: '2000', JOB_POLL_INTERVAL_MS: '50' };

describe.runIf(usePostgres)('webhook workers in several processes on one PostgreSQL database', () => {
  const t = useTestServer({ env: webhookEnv });
  const receivers: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  const sandboxDb = () => t.server.kassa.environments.sandbox.environment.prisma;

  async function receiver() {
    const started = await startReceiver();
    receivers.push(started);
    return started;
  }

  async function endpoint(org: Org, to: Receiver, events: string[]) {
    const created = expectStatus(await org.api('POST', '/webhooks/endpoints', { url: to.url, format: 'raw', events }), 201);
    to.secret = created.secret;
    return created as { id: string };
  }

  describe('two processes', () => {
    let other: Kassa;
    const otherLogs: string[] = [];
    beforeAll(async () => {
      const sink = new Writable({
        write(chunk, _encoding, done) {
          otherLogs.push(...String(chunk).split('\n').filter(Boolean));
          done();
        },
      });
      other = await startKassa(t.server.config, createLogger('info', sink));
    });
    afterAll(() => other?.close());

    it('share the deliveries and never send one attempt twice', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const [first, second] = [await receiver(), await receiver()];
      // Every event fails once, so retries race too.
      for (const to of [first, second]) to.answer = (_receipt, nth) => (nth === 1 ? 500 : 200);
      const endpoints = [await endpoint(org, first, ['customer.created', 'customer.updated']), await endpoint(org, second, ['customer.created'])];
      const customers = 60;
      // Recorded while both processes are delivering, ten clients at a time.
      for (let batch = 0; batch < customers; batch += 10) {
        await Promise.all(
          Array.from({ length: 10 }, async (_, i) => {
            const customer = expectStatus(await org.api('POST', '/customers/', { email: `shared${batch + i}@example.com` }), 201);
            expectStatus(await org.api('PATCH', `/customers/${customer.id}`, { name: `Shared ${batch + i}` }), 200);
          }),
        );
      }
      const expected = customers * 3;
      await eventually(
        () => sandboxDb().webhookEvent.count({ where: { endpointId: { in: endpoints.map((e) => e.id) }, succeeded: true } }),
        (delivered) => delivered === expected,
        'every event to be delivered',
        45_000,
      );
      const events = await sandboxDb().webhookEvent.findMany({ where: { endpointId: { in: endpoints.map((e) => e.id) } }, include: { deliveries: true } });
      expect(events).toHaveLength(expected);
      const receipts = [...first.receipts, ...second.receipts];
      expect(receipts.filter((r) => r.refused)).toEqual([]);
      // Each event: one failed attempt and one delivered, each received once and logged once.
      for (const event of events) {
        const received = receipts.filter((r) => r.id === event.id);
        expect([received.length, event.deliveries.length, event.attempts], event.id).toEqual([2, 2, 2]);
        expect(event.deliveries.map((d) => d.httpCode).sort()).toEqual([200, 500]);
      }
      const attemptsLogged = (logs: string[]) => logs.filter((line) => /"msg":"webhook (delivered|attempt failed)"/.test(line)).length;
      const [here, there] = [attemptsLogged(t.server.logs), attemptsLogged(otherLogs)];
      expect(here + there).toBe(expected * 2);
      expect(here, 'this process made attempts').toBeGreaterThan(0);
      expect(there, 'the other process made attempts').toBeGreaterThan(0);
    });
  });

  describe('a process killed mid-send', () => {
    let child: ChildProcess | undefined;
    afterAll(() => {
      child?.kill('SIGKILL');
    });

    function serve(): Promise<{ child: ChildProcess; output: () => string; exited: Promise<unknown> }> {
      const { production, sandbox } = t.server.config.databases as Record<string, { url: string }>;
      const spawned = spawn(process.execPath, [path.resolve('src/kassa.js'), 'serve'], {
        env: { ...process.env, ...webhookEnv, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: production.url, SANDBOX_DATABASE_URL: sandbox.url, DATABASE_POOL_SIZE: '3' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const exited = new Promise((resolve) => spawned.on('close', resolve));
      return new Promise((resolve, reject) => {
        spawned.stdout!.on('data', (d) => {
          output += d;
          if (output.includes('Kassa is listening')) resolve({ child: spawned, output: () => output, exited });
        });
        spawned.stderr!.on('data', (d) => (output += d));
        spawned.on('close', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
      });
    }

    it('leaves its claim to lapse, and the attempt is made again by another process: nothing is lost', async () => {
      await t.server.kassa.environments.sandbox.webhooks.stop();
      const org = await newOrganization(t.server, 'sandbox');
      const to = await receiver();
      to.answer = (_receipt, nth) => (nth === 1 ? 'hang' : 200);
      const { id: endpointId } = await endpoint(org, to, ['customer.created']);
      const started = await serve();
      child = started.child;
      const customer = expectStatus(await org.api('POST', '/customers/', { email: 'killed@example.com' }), 201);
      await eventually(async () => to.hanging.length, (n) => n === 1, 'the other process to send', 20_000);
      started.child.kill('SIGKILL');
      await started.exited;

      const claimed = await sandboxDb().webhookEvent.findFirstOrThrow({ where: { endpointId }, include: { deliveries: true } });
      expect([claimed.succeeded, claimed.attempts, claimed.deliveries.length]).toEqual([null, 1, 0]);
      expect(claimed.lockedUntil!.getTime()).toBeGreaterThan(Date.now());
      // Until the claim lapses no one takes the attempt over; then this process does.
      await t.server.kassa.environments.sandbox.webhooks.runDue();
      expect(to.receipts).toHaveLength(1);
      t.server.clock.now = new Date(claimed.lockedUntil!.getTime() + 1);
      try {
        while ((await t.server.kassa.environments.sandbox.webhooks.runDue()) > 0);
      } finally {
        t.server.clock.now = null;
      }
      expect(to.receipts.map((r) => r.id)).toEqual([claimed.id, claimed.id]);
      expect(to.receipts.map((r) => r.refused)).toEqual([null, null]);
      expect(to.receipts[1].event.data.id).toBe(customer.id);
      const delivered = await sandboxDb().webhookEvent.findUniqueOrThrow({ where: { id: claimed.id }, include: { deliveries: true } });
      expect([delivered.succeeded, delivered.attempts, delivered.deliveries.map((d) => d.httpCode)]).toEqual([true, 2, [200]]);
    });
  });

  describe('production on PostgreSQL', () => {
    it('does not contact a destination whose name resolves to a loopback address, and logs the failed delivery', async () => {
      const org = await newOrganization(t.server, 'production');
      const to = await receiver();
      const { environment } = t.server.kassa.environments.production;
      // The API refuses to save such a URL in production; the row stands for a name whose address changed since.
      const endpoint = await environment.prisma.webhookEndpoint.create({
        data: {
          organizationId: org.organizationId,
          url: to.url.replace('127.0.0.1', 'localhost'),
          format: 'raw',
          events: ['customer.created'],
          secretCiphertext: await encryptSecret(environment, 'whsec_strict_policy_test_secret_000000'),
          secretHint: '0000',
        },
      });
      await org.api('POST', '/customers/', { email: 'strict@example.com' });
      const [delivery] = await eventually(
        () => environment.prisma.webhookDelivery.findMany({ where: { endpointId: endpoint.id } }),
        (found) => found.length > 0,
        'the attempt to be logged',
      );
      expect([delivery.succeeded, delivery.httpCode, delivery.response]).toEqual([false, null, 'localhost resolves to a private or reserved address: not delivered']);
      expect(to.receipts).toEqual([]);
    });
  });
});
