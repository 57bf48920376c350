// Stopping a job runner (as the server does at shutdown) waits for the jobs in flight for its grace
// period, then hands back the ones still running: their claim is released and the cut-short attempt
// is not counted, so another runner picks them up at once instead of when the claim would lapse.
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { enqueueJob, job, jobKinds, JobRunner, type JobContext } from '../../src/jobs/runner.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';

const t = useTestServer({ stopSandboxJobs: true });

const quiet = { warn() {}, error() {}, info() {}, debug() {}, child: () => quiet } as unknown as JobContext['logger'];

/** A runner on the sandbox database whose every job kind runs `run` (the runner needs one definition per kind). */
function runnerOf(run: (payload: { marker: string }) => Promise<void>): JobRunner {
  const { environment } = t.server.kassa.environments.sandbox;
  const ctx: JobContext = { environment, prisma: environment.prisma, now: () => new Date(), logger: quiet };
  return new JobRunner(ctx, { pollMs: 20, batchSize: 10, lockMs: 60_000 }, { jobs: jobKinds.map((kind) => job(kind, run)), sweeps: [] });
}

async function enqueued(marker: string) {
  const prisma = t.server.kassa.environments.sandbox.environment.prisma;
  await enqueueJob(prisma, 'email.send', { marker }, new Date(Date.now() - 1000));
  return () => prisma.job.findFirstOrThrow({ where: { payload: { path: ['marker'], equals: marker } } });
}

it('a job still running when the grace period ends is handed back and another runner runs it', async () => {
  const marker = randomUUID();
  const row = await enqueued(marker);
  let started = false;
  const hanging = runnerOf(async (payload) => {
    if (payload.marker !== marker) return;
    started = true;
    await new Promise(() => {});
  });
  hanging.start();
  await eventually(async () => started, Boolean, 'the job to start');
  expect((await row()).lockedUntil).not.toBeNull();

  const stopping = Date.now();
  await hanging.stop(200);
  expect(Date.now() - stopping).toBeLessThan(5_000);
  const handedBack = await row();
  expect(handedBack).toMatchObject({ lockedUntil: null, completedAt: null, attempts: 0, lastError: null });

  const ran: string[] = [];
  const other = runnerOf(async (payload) => void ran.push(payload.marker));
  await other.runDue();
  expect(ran).toContain(marker);
  expect(await row()).toMatchObject({ lockedUntil: null, attempts: 1, lastError: null });
  expect((await row()).completedAt).not.toBeNull();
});

it('a job that finishes within the grace period completes and is not handed back', async () => {
  const marker = randomUUID();
  const row = await enqueued(marker);
  let started = false;
  let finish!: () => void;
  const runner = runnerOf(async (payload) => {
    if (payload.marker !== marker) return;
    started = true;
    await new Promise<void>((resolve) => (finish = resolve));
  });
  runner.start();
  await eventually(async () => started, Boolean, 'the job to start');
  const stopped = runner.stop(10_000);
  setTimeout(() => finish(), 100);
  await stopped;
  const done = await row();
  expect(done.completedAt).not.toBeNull();
  expect(done).toMatchObject({ lockedUntil: null, attempts: 1 });
});
