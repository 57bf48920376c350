// The process's background work, per environment: jobs are rows, claimed with FOR UPDATE SKIP
// LOCKED so several processes on one database share them and a job runs in one place at a time.
//
// - One statement claims up to `batchSize` due jobs, as many as there are free slots: a claim is a
//   lease (`locked_until`), so the jobs of a process that dies mid-job are claimed again once it
//   lapses. A job's outcome is written only while the lease is still the runner's own.
// - Up to `concurrency` jobs run at once; a finished job frees its slot and the runner claims again.
// - Enqueueing announces the job (NOTIFY) in the enqueuing transaction, so runners listening on the
//   environment's notification connection wake at its commit; `pollMs` is the fallback, and the pace
//   of the sweeps.
// - A job that fails is retried with backoff; one that keeps failing is given up and kept with its
//   last error. Stopping waits for the jobs in flight up to a grace period, then hands the ones
//   still running back: their claim is released, so another process runs them without waiting for
//   it to lapse.
import type { Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import type { Notifications } from '../db/notifications.ts';
import type { Logger } from '../logger.ts';
import { inJobSpan } from './tracing.ts';

export interface JobContext {
  environment: Environment;
  prisma: Db;
  now(): Date;
  logger: Logger;
}

/**
 * Every kind of job there is. A kind is enqueued by name (services need not import the code that
 * runs it), so the names are listed here and the runner refuses to start without a definition for
 * each.
 */
export const jobKinds = ['benefits.sync', 'benefits.sync-product', 'payment.charge', 'payment.reconcile', 'refund.process', 'email.event', 'email.send'] as const;
export type JobKind = (typeof jobKinds)[number];

export interface JobDefinition<P = any> {
  kind: JobKind;
  run(payload: P, ctx: JobContext): Promise<void>;
  /** Called once when the job is given up after its last attempt, to leave its subject in a final state. */
  onGiveUp?(payload: P, ctx: JobContext): Promise<void>;
  maxAttempts: number;
  /** The wait before attempt `attempt + 1`. */
  backoffMs(attempt: number): number;
}

/** Work the runner does on every tick, such as expiring what is past due. */
export interface Sweep {
  name: string;
  run(ctx: JobContext): Promise<void>;
}

export function sweep(name: string, run: (ctx: JobContext) => Promise<void>): Sweep {
  return { name, run };
}

/** A job's definition, for the runner's list (see background.ts). */
export function job<P>(
  kind: JobKind,
  run: (payload: P, ctx: JobContext) => Promise<void>,
  options: Partial<Omit<JobDefinition<P>, 'kind' | 'run' | 'onGiveUp'>> & { onGiveUp?: (payload: P, ctx: JobContext) => Promise<void> } = {},
): JobDefinition<P> {
  return {
    kind,
    run,
    onGiveUp: options.onGiveUp,
    maxAttempts: options.maxAttempts ?? 5,
    backoffMs: options.backoffMs ?? ((attempt) => Math.min(60_000, 1000 * 2 ** attempt)),
  };
}

/**
 * Schedules a job; pass the transaction of the change that calls for it. With `uniqueKey`, a job
 * already enqueued under that key (done or not) makes this a no-op: a cause that is seen twice
 * (a retried job, two runners) still gets one job.
 */
export async function enqueueJob(tx: Db, kind: JobKind, payload: object, runAt: Date, uniqueKey?: string): Promise<void> {
  if (uniqueKey === undefined) await tx.job.create({ data: { kind, payload, runAt } });
  else await tx.job.createMany({ data: [{ kind, payload, runAt, uniqueKey }], skipDuplicates: true });
  // Several in one transaction are delivered as one (same channel and payload).
  await tx.$executeRaw`SELECT pg_notify(${jobsChannel}, '')`;
}

/** Announced (NOTIFY) by every transaction that enqueues a job. */
export const jobsChannel = 'kassa_jobs';

/** What a runner runs: every job kind's definition, and the sweeps. */
export interface BackgroundWork {
  jobs: readonly JobDefinition[];
  sweeps: readonly Sweep[];
}

export interface JobRunnerOptions {
  /** How often the sweeps run, and the runner looks for due jobs without being woken. */
  pollMs: number;
  /** Jobs claimed by one statement at most. */
  batchSize: number;
  /** Jobs running at once at most; `batchSize` when not given. */
  concurrency?: number;
  /** How long a claimed job stays claimed; a process that dies mid-job frees it after this. */
  lockMs: number;
  /** Where enqueued jobs are announced; without it the runner only polls. */
  notifications?: Notifications;
}

interface ClaimedJob {
  id: string;
  kind: string;
  payload: unknown;
  attempts: number;
}

export class JobRunner {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> = Promise.resolve();
  private claiming: Promise<unknown> | null = null;
  /** A wake-up came while claiming: claim once more after. */
  private wokenWhileClaiming = false;
  /** More jobs may be due than the last claim took (it filled every free slot, or none was free). */
  private backlog = false;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  /** The jobs running now, by id, with the `locked_until` of this runner's claim on each. */
  private readonly claims = new Map<string, Date>();
  private unsubscribe: () => void = () => {};

  private readonly definitions: ReadonlyMap<string, JobDefinition>;
  private readonly sweeps: readonly Sweep[];
  private readonly concurrency: number;

  constructor(
    private readonly ctx: JobContext,
    private readonly options: JobRunnerOptions,
    work: BackgroundWork,
  ) {
    this.definitions = new Map(work.jobs.map((definition) => [definition.kind, definition]));
    const missing = jobKinds.filter((kind) => !this.definitions.has(kind));
    if (missing.length || this.definitions.size !== work.jobs.length) {
      throw new Error(`The job runner needs one definition per job kind: missing ${missing.join(', ') || 'none'}, ${work.jobs.length - this.definitions.size} given twice.`);
    }
    this.sweeps = work.sweeps;
    this.concurrency = options.concurrency ?? options.batchSize;
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.sweeping = this.runSweeps()
        .then(() => {
          this.wake();
          return this.claiming;
        })
        .catch((error) => this.ctx.logger.error({ err: error, environment: this.ctx.environment.name }, 'job runner failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.options.pollMs);
        });
    };
    this.timer = setTimeout(tick, this.options.pollMs);
    this.unsubscribe = this.options.notifications?.subscribe(jobsChannel, { message: () => this.wake() }) ?? (() => {});
  }

  /**
   * Frees the jobs a process that ended without stopping (killed, crashed) had claimed, so they run
   * now rather than when their claim expires. Only for a database no other process can use: on a
   * shared one, a live process may hold them.
   */
  async releaseClaims(): Promise<number> {
    return this.ctx.prisma.$executeRaw`UPDATE jobs SET locked_until = NULL WHERE completed_at IS NULL AND locked_until IS NOT NULL`;
  }

  /**
   * Stops claiming and waits up to `graceMs` for the jobs in flight. A job still running then is
   * handed back: its claim is released (and the cut-short attempt not counted) when it is still
   * this runner's, so another process may run it at once; a claim that lapsed and was taken since is
   * left alone.
   */
  async stop(graceMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const graceEnded = new Promise<boolean>((resolve) => {
      if (Number.isFinite(graceMs)) timer = setTimeout(() => resolve(true), Math.max(0, graceMs));
    });
    const finished = (async () => {
      await this.sweeping;
      await this.claiming;
      await Promise.all(this.inFlight);
      return false;
    })();
    const cutShort = await Promise.race([finished, graceEnded]);
    clearTimeout(timer);
    if (!cutShort) return;
    for (const [id, until] of this.claims) {
      const released = await this.ctx.prisma.$executeRaw`
        UPDATE jobs SET locked_until = NULL, attempts = attempts - 1
        WHERE id = ${id}::uuid AND completed_at IS NULL AND locked_until = ${until}`;
      if (released) this.ctx.logger.warn({ environment: this.ctx.environment.name, jobId: id }, 'job still running at shutdown: handed back');
    }
  }

  /** Runs the sweeps, then claims the jobs that are due (up to `batchSize`) and runs them; returns how many jobs ran. */
  async runDue(): Promise<number> {
    await this.runSweeps();
    const claimed = await this.claim(this.options.batchSize);
    await Promise.all(claimed.map((job) => this.runJob(job)));
    return claimed.length;
  }

  /** Claims soon: called when a job was enqueued, or a slot freed. */
  private wake(): void {
    if (this.stopped) return;
    if (this.claiming) this.wokenWhileClaiming = true;
    else this.claiming = this.claimDue().finally(() => (this.claiming = null));
  }

  // Claims into the free slots until none is free or nothing is due; the jobs run on without it.
  private async claimDue(): Promise<void> {
    try {
      for (;;) {
        this.wokenWhileClaiming = false;
        const free = Math.min(this.options.batchSize, this.concurrency - this.inFlight.size);
        if (this.stopped) return;
        if (free <= 0) {
          this.backlog = true;
          return;
        }
        const claimed = await this.claim(free);
        this.backlog = claimed.length === free;
        for (const job of claimed) this.track(this.runJob(job));
        if (!this.backlog && !this.wokenWhileClaiming) return;
      }
    } catch (error) {
      this.ctx.logger.error({ err: error, environment: this.ctx.environment.name }, 'claiming jobs failed');
    }
  }

  private track(running: Promise<void>): void {
    const tracked = running
      .catch((error) => this.ctx.logger.error({ err: error }, 'recording a job outcome failed'))
      .finally(() => {
        this.inFlight.delete(tracked);
        if (this.backlog) this.wake();
      });
    this.inFlight.add(tracked);
  }

  private async runSweeps(): Promise<void> {
    for (const sweep of this.sweeps) {
      await sweep.run(this.ctx).catch((error) => this.ctx.logger.error({ err: error, sweep: sweep.name }, 'sweep failed'));
    }
  }

  /** Claims up to `limit` due jobs in one statement, each under a lease of `lockMs`. */
  private async claim(limit: number): Promise<ClaimedJob[]> {
    const now = this.ctx.now();
    const until = new Date(now.getTime() + this.options.lockMs);
    const claimed = await this.ctx.prisma.$queryRaw<ClaimedJob[]>`
      UPDATE jobs SET locked_until = ${until}, attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM jobs
        WHERE completed_at IS NULL AND run_at <= ${now} AND (locked_until IS NULL OR locked_until <= ${now})
        ORDER BY run_at, created_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, payload, attempts`;
    for (const job of claimed) this.claims.set(job.id, until);
    return claimed;
  }

  /** Runs one claimed job (in its trace span when traces are on) and records its outcome. */
  private runJob(job: ClaimedJob): Promise<void> {
    return inJobSpan(this.ctx, job, () => this.runAndRecord(job)).finally(() => this.claims.delete(job.id));
  }

  private async runAndRecord(job: ClaimedJob): Promise<void> {
    const definition = this.definitions.get(job.kind);
    const { prisma, logger } = this.ctx;
    // Only while the lease is this runner's: once it lapsed and another runner claimed the job again, the outcome is that run's to write.
    const ours = { id: job.id, attempts: job.attempts, completedAt: null };
    try {
      if (!definition) throw new Error(`Unknown job kind ${job.kind}`);
      await definition.run(job.payload, this.ctx);
      await prisma.job.updateMany({ where: ours, data: { completedAt: this.ctx.now(), lockedUntil: null, lastError: null } });
      this.ctx.environment.metrics.jobRun(job.kind, 'succeeded');
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const givingUp = !definition || job.attempts >= definition.maxAttempts;
      this.ctx.environment.metrics.jobRun(job.kind, givingUp ? 'given_up' : 'failed');
      logger[givingUp ? 'error' : 'warn']({ err: error, jobId: job.id, kind: job.kind, attempt: job.attempts }, givingUp ? 'job failed for good' : 'job failed, will retry');
      if (givingUp && definition?.onGiveUp) {
        await definition.onGiveUp(job.payload, this.ctx).catch((failure) => logger.error({ err: failure, jobId: job.id, kind: job.kind }, 'giving up a job failed'));
      }
      const retryAt = new Date(this.ctx.now().getTime() + (definition?.backoffMs(job.attempts) ?? 0));
      await prisma.job.updateMany({
        where: ours,
        data: givingUp ? { completedAt: this.ctx.now(), lockedUntil: null, lastError: message } : { runAt: retryAt, lockedUntil: null, lastError: message },
      });
    }
  }
}
