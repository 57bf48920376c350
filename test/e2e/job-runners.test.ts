// The background pipeline's wake-ups and its sharing. A confirmed checkout's payment job, the
// order.paid event it records and that event's delivery are each announced at commit (NOTIFY), so
// with polling set to a minute a purchase still reaches its webhook receiver within moments, on the
// embedded database and on PostgreSQL. On PostgreSQL, two job runners with their own connections
// share hundreds of jobs: each job runs exactly once, no runner exceeds its concurrency, and a job
// whose runner died mid-run (its lease lapsed) is run again by the other, whose outcome stands.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { JobRunner, enqueueJob, jobKinds, job, type BackgroundWork, type JobContext } from '../../src/jobs/runner.ts';
import { createLogger } from '../../src/logger.ts';
import { usePostgres } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { createAndConfirmCheckout, fixedProduct } from '../helpers/purchases.ts';
import { expectStatus } from '../helpers/responses.ts';
import { eventually } from '../helpers/waiting.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

vi.setConfig({ testTimeout: 60_000 });

describe('a purchase with polling set to a minute', () => {
  const t = useTestServer({ env: { JOB_POLL_INTERVAL_MS: '60000', TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox' } });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.close());

  it('is charged and its order.paid delivered within seconds: the job and the event wake the workers at their commit', async () => {
    const created = expectStatus(await t.org.api('POST', '/webhooks/endpoints', { url: receiver.url, format: 'raw', events: ['order.paid'] }), 201);
    receiver.secret = created.secret;
    const product = await fixedProduct(t.org);
    const started = Date.now();
    const checkout = await createAndConfirmCheckout(t.org, product.id, 'woken@example.com');
    const [receipt] = await eventually(async () => receiver.receipts, (receipts) => receipts.length === 1, 'order.paid to arrive', 20_000);
    expect(receipt.refused).toBeNull();
    expect([receipt.event.type, receipt.event.data.checkoutId, receipt.event.data.status]).toEqual(['order.paid', checkout.id, 'paid']);
    // Far below the minute a poll would take: only the announcements can have woken the runner and the worker.
    expect(receipt.at - started).toBeLessThan(15_000);
  });
});

describe.runIf(usePostgres)('two job runners on one PostgreSQL database', () => {
  const t = useTestServer({ stopSandboxJobs: true });
  let second: Database;
  const logger = createLogger('silent');
  beforeAll(async () => {
    // The second runner's own pool and listening connection, as another process would have.
    second = await openDatabase(t.server.config.databases.sandbox, logger);
  });
  afterAll(() => second?.close());

  const sandbox = () => t.server.kassa.environments.sandbox;

  /** Every job kind defined as `run`, so the runner accepts the list. */
  function work(run: (payload: { n: number }, ctx: JobContext) => Promise<void>): BackgroundWork {
    return { jobs: jobKinds.map((kind) => job<{ n: number }>(kind, run, { maxAttempts: 1 })), sweeps: [] };
  }

  /** A runner that counts its runs, and the most it had running at once. */
  function countingRunner(database: Database, concurrency: number, lockMs = 60_000, hold?: (n: number) => Promise<void>) {
    const ran: number[] = [];
    let running = 0;
    let most = 0;
    const ctx: JobContext = { environment: sandbox().environment, prisma: database.prisma, now: () => new Date(), logger };
    const runner = new JobRunner(
      ctx,
      // Polling once a minute: the runners here are woken by the enqueuing transactions' announcements.
      { pollMs: 60_000, batchSize: concurrency, concurrency, lockMs, notifications: database.notifications },
      work(async ({ n }) => {
        running++;
        most = Math.max(most, running);
        try {
          await (hold?.(n) ?? new Promise((resolve) => setTimeout(resolve, 2)));
          ran.push(n);
        } finally {
          running--;
        }
      }),
    );
    return { runner, ran, most: () => most };
  }

  async function enqueue(from: number, count: number) {
    const db = sandbox().environment.prisma;
    // In batches of one transaction each: every batch is one announcement, heard at its commit.
    for (let start = from; start < from + count; start += 50) {
      await db.$transaction(async (tx) => {
        for (let n = start; n < Math.min(from + count, start + 50); n++) await enqueueJob(tx as typeof db, 'email.send', { n }, new Date());
      });
    }
  }

  it('run each of 400 jobs exactly once between them, never more at once than their concurrency', async () => {
    const a = countingRunner(t.server.kassa.environments.sandbox.database, 8);
    const b = countingRunner(second, 5);
    a.runner.start();
    b.runner.start();
    try {
      await enqueue(0, 400);
      await eventually(async () => a.ran.length + b.ran.length, (n) => n >= 400, 'every job to run', 30_000);
    } finally {
      await Promise.all([a.runner.stop(), b.runner.stop()]);
    }
    const all = [...a.ran, ...b.ran].sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: 400 }, (_, n) => n));
    expect(a.ran.length, 'the first runner ran jobs').toBeGreaterThan(0);
    expect(b.ran.length, 'the second runner ran jobs').toBeGreaterThan(0);
    expect(a.most()).toBeLessThanOrEqual(8);
    expect(b.most()).toBeLessThanOrEqual(5);
    const rows = await sandbox().environment.prisma.job.findMany({ where: { kind: 'email.send' } });
    expect(rows).toHaveLength(400);
    expect(rows.filter((row) => row.completedAt === null || row.attempts !== 1 || row.lastError !== null)).toEqual([]);
  });

  it('run a job again once the lease of a runner that stopped answering lapsed; the late runner writes nothing', async () => {
    await sandbox().environment.prisma.job.deleteMany({});
    let release: () => void = () => {};
    const stuck = new Promise<void>((resolve) => (release = resolve));
    // The first runner takes the job under a short lease and hangs, as a process that froze or died would.
    const frozen = countingRunner(t.server.kassa.environments.sandbox.database, 1, 300, () => stuck);
    frozen.runner.start();
    const backup = countingRunner(second, 1);
    try {
      await enqueue(1000, 1);
      const claimed = await eventually(
        () => sandbox().environment.prisma.job.findFirstOrThrow({ where: { kind: 'email.send' } }),
        (row) => row.attempts === 1,
        'the first runner to claim the job',
      );
      expect(claimed.lockedUntil).not.toBeNull();
      // Nothing announces a lapsed lease: a poll finds it, asked for here.
      await eventually(
        async () => {
          await backup.runner.runDue();
          return backup.ran;
        },
        (ran) => ran.length === 1,
        'the other runner to run it once the lease lapsed',
      );
      const done = await sandbox().environment.prisma.job.findFirstOrThrow({ where: { kind: 'email.send' } });
      expect([done.attempts, done.completedAt !== null, done.lockedUntil]).toEqual([2, true, null]);
      release();
      await eventually(async () => frozen.ran, (ran) => ran.length === 1, 'the frozen run to end');
      const after = await sandbox().environment.prisma.job.findFirstOrThrow({ where: { kind: 'email.send' } });
      expect(after).toEqual(done);
      expect(backup.ran).toEqual([1000]);
    } finally {
      release();
      await Promise.all([frozen.runner.stop(), backup.runner.stop()]);
    }
  });
});
