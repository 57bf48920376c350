// The webhook worker of one environment. It drains the outbox into one WebhookEvent per
// subscribed endpoint (dispatch), then sends the events that are due (delivery), at least once:
//
// - Dispatch takes undispatched events in sequence order, creates their WebhookEvents and marks
//   them dispatched in one transaction, so an event is handed to its endpoints exactly once. It runs
//   beside the deliveries, a batch at a time, each batch claimable once committed.
// - An attempt is claimed by setting `lockedUntil` past the send's timeout, with FOR UPDATE SKIP
//   LOCKED, so several processes on one database never make the same attempt at once; a process
//   that dies mid-send leaves the lock to lapse and the attempt is made again, never lost. Up to
//   `concurrency` requests are under way and up to twice as many claimed ahead, waiting for a slot; one
//   that waited too long for its claim to cover the request is handed back unsent, and so is every
//   waiting one at a graceful stop.
// - An event is not claimed while an earlier event of the same resource is still pending for the
//   endpoint: each endpoint receives a resource's events in the order they were recorded.
// - The attempt's outcome, the event's next state and the endpoint's failure run are written in
//   one transaction. An endpoint failing for `disableAfterMs` is disabled; its events then wait.
//   Successful attempts that end while earlier ones are being written are written together, in one
//   transaction; a slot frees as soon as its answer is in, not when it is written.
// - Recording an event announces it (NOTIFY, events/outbox.ts): a worker listening on the
//   environment's notification connection wakes at the commit; `pollMs` is the fallback, and the
//   pace of retries.
import { randomUUID } from 'node:crypto';
import type { JobContext } from '../jobs/runner.ts';
import type { Db } from '../db/client.ts';
import type { Notifications } from '../db/notifications.ts';
import type { LiveEvent } from '../events/live.ts';
import { eventsChannel } from '../events/outbox.ts';
import { destinationPolicy } from './destinations.ts';
import { webhookBody } from './formats.ts';
import { decryptSecret } from './secrets.ts';
import { newAgents, send, type Agents, type SendResult } from './send.ts';
import { signatureHeaders } from './signing.ts';
import { inDeliverySpan } from './tracing.ts';

export interface WebhookWorkerOptions {
  pollMs: number;
  /** Outbox events dispatched per transaction. */
  dispatchBatch: number;
  /** Requests to endpoints under way at once; as many more attempts are claimed ahead. */
  concurrency: number;
  /** Where recorded events are announced; without it the worker only polls. */
  notifications?: Notifications;
}

/** How long past the send's timeout a claim holds, for the time it takes to record the outcome. */
const lockMarginMs = 30_000;
/** A queued attempt is sent only while its claim holds this long past the send's timeout; otherwise it is handed back. */
const recordingMarginMs = lockMarginMs / 2;

/** A claimed attempt: the event, the number of this attempt, and where and how to send it. */
interface Claimed {
  id: string;
  endpoint_id: string;
  payload: string;
  attempts: number;
  locked_until: Date;
  next_attempt_at: Date;
  sequence: bigint;
  url: string;
  secret_ciphertext: Uint8Array;
}

/** What recording an attempt did. */
interface Outcome {
  succeeded: boolean;
  givenUp: boolean;
  /** The claim had lapsed and another attempt was made since: the event's state was not this attempt's to set. */
  superseded: boolean;
  endpointDisabled: boolean;
}

/** A successful attempt made, waiting to be written with the others that finished meanwhile. */
interface Delivered {
  event: Claimed;
  at: Date;
  result: SendResult;
  recorded: (outcome: Outcome) => void;
  failed: (error: unknown) => void;
}

export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<unknown> | null = null;
  /** A wake-up came during a pass: another pass follows at once. */
  private wokenWhileTicking = false;
  /** Attempts made and not yet recorded. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts whose request is under way: at most `concurrency`. */
  private sending = 0;
  /** Claimed attempts waiting for a free slot, in claim order: at most twice `concurrency`, once a claim adds to it. */
  private readonly queue: Claimed[] = [];
  /** Dispatching the outbox, apart from the passes: claims go on meanwhile. */
  private dispatching: Promise<void> | null = null;
  /** Events were announced, or the worker started: the outbox is read at the next pass. */
  private outboxDue = true;
  /** When the outbox was last read (the process's clock): it is read again after `pollMs`. */
  private lastDispatch = 0;
  private stopped = false;
  private unsubscribe: () => void = () => {};
  private readonly agents: Agents = newAgents();
  /** Decrypted signing secrets by their ciphertext: a reset secret has a new ciphertext, so none goes stale. */
  private readonly secrets = new Map<string, string>();
  /** Successful attempts not yet written, and the writing of the previous ones while it lasts. */
  private delivered: Delivered[] = [];
  private writing: Promise<void> | null = null;
  /** Claimed attempts being handed back. */
  private handingBack: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: JobContext,
    private readonly options: WebhookWorkerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.outboxDue = true;
    this.schedule(0);
    this.unsubscribe =
      this.options.notifications?.subscribe(eventsChannel, {
        message: () => {
          this.outboxDue = true;
          this.wake();
        },
      }) ?? (() => {});
  }

  /**
   * Stops claiming, hands the claimed attempts not yet started back (another worker may make them
   * at once), and lets the attempts under way finish and be recorded (each send is bounded by the timeout).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    clearTimeout(this.timer);
    await this.ticking;
    await this.dispatching;
    // Not handed back (the database unreachable), the claims lapse as a dead process's would.
    await this.handBack(this.queue.splice(0)).catch((error) => this.ctx.logger.error({ err: error }, 'handing back webhook attempts failed'));
    await this.handingBack;
    await Promise.all(this.inFlight);
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Dispatches the whole outbox, then makes the attempts that are due and waits for them; returns how many events and attempts it handled. */
  async runDue(): Promise<number> {
    const dispatched = await this.dispatchAll();
    const claimed = await this.claim(this.options.concurrency);
    await Promise.all(claimed.map((event) => this.attempt(event)));
    return dispatched + claimed.length;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
  }

  /** A pass as soon as possible: events were recorded, or an attempt ended. */
  private wake(): void {
    if (this.ticking) this.wokenWhileTicking = true;
    else this.schedule(0);
  }

  /** Claims are made once the queue is down to one round of slots: each then takes at least that many. */
  private get queueLow(): boolean {
    return this.queue.length <= this.options.concurrency;
  }

  // One pass of the background loop. Up to `concurrency` requests are under way at once, and up to
  // twice as many attempts are claimed ahead, so the next requests start as soon as slots free,
  // without waiting for a claim; an attempt that ends calls for the next pass. The outbox is read
  // when events were announced, and every `pollMs`.
  private tick(): void {
    if (this.ticking || this.stopped) return;
    this.wokenWhileTicking = false;
    if (this.outboxDue || Date.now() - this.lastDispatch >= this.options.pollMs) this.dispatchInBackground();
    this.ticking = this.claimAhead()
      .catch((error) => {
        this.ctx.logger.error({ err: error }, 'webhook worker failed');
        return false;
      })
      .then((busy) => {
        this.ticking = null;
        // With the queue still long, the next pass comes when an attempt ends (begin).
        this.schedule((busy || this.wokenWhileTicking) && this.queueLow ? 0 : this.options.pollMs);
      });
  }

  /** Fills the queue once it is low and starts what slots allow; true when due attempts may be left. */
  private async claimAhead(): Promise<boolean> {
    if (!this.queueLow) return false;
    const room = 2 * this.options.concurrency - this.queue.length;
    const claimed = await this.claim(room);
    if (this.stopped) await this.handBack(claimed);
    else this.queue.push(...claimed);
    this.startQueued();
    return claimed.length === room;
  }

  /**
   * Starts queued attempts while slots are free. One that waited so long that its request and its
   * recording might outlast its claim (slow endpoints) is handed back instead: another worker could
   * take the attempt over while it is being made.
   */
  private startQueued(): void {
    const late: Claimed[] = [];
    const latestStart = (event: Claimed) => event.locked_until.getTime() - this.ctx.environment.config.webhooks.timeoutMs - recordingMarginMs;
    while (!this.stopped && this.sending < this.options.concurrency && this.queue.length > 0) {
      const event = this.queue.shift()!;
      if (this.ctx.now().getTime() > latestStart(event)) late.push(event);
      else this.begin(event);
    }
    if (late.length > 0) this.handingBack = this.handingBack.then(() => this.handBack(late)).catch((error) => this.ctx.logger.error({ err: error }, 'webhook worker failed'));
  }

  private begin(event: Claimed): void {
    this.sending++;
    let freed = false;
    // The slot frees once the answer is in: recording joins a batch, and waits for none of the requests.
    const free = () => {
      if (freed) return;
      freed = true;
      this.sending--;
      this.startQueued();
    };
    const tracked = this.attempt(event, free)
      .catch((error) => this.ctx.logger.error({ err: error }, 'recording a webhook attempt failed'))
      .finally(() => {
        free();
        this.inFlight.delete(tracked);
        // Room to claim, and perhaps the next event of the same resource now free to go.
        this.wake();
      });
    this.inFlight.add(tracked);
  }

  /** Gives claimed attempts that were not made back, as they were before the claim. */
  private async handBack(claimed: Claimed[]): Promise<void> {
    if (claimed.length === 0) return;
    await this.ctx.prisma.$executeRaw`
      UPDATE webhook_events AS e SET locked_until = NULL, attempts = e.attempts - 1
      FROM unnest(${claimed.map((c) => c.id)}::uuid[], ${claimed.map((c) => c.attempts)}::int[]) AS c(id, attempts)
      WHERE e.id = c.id AND e.attempts = c.attempts AND e.succeeded IS NULL`;
  }

  /** Dispatches the outbox unless a dispatch is under way; each batch dispatched calls for a pass. */
  private dispatchInBackground(): void {
    if (this.dispatching) return;
    this.outboxDue = false;
    this.lastDispatch = Date.now();
    this.dispatching = this.dispatchAll(() => this.wake())
      .then(() => {}, (error) => this.ctx.logger.error({ err: error }, 'webhook worker failed'))
      .finally(() => {
        this.dispatching = null;
        // Events announced while this dispatch had passed them.
        if (this.outboxDue) this.wake();
      });
  }

  private async dispatchAll(dispatched: () => void = () => {}): Promise<number> {
    if (!(await this.ctx.prisma.event.findFirst({ where: { dispatchedAt: null }, select: { id: true } }))) return 0;
    let total = 0;
    for (;;) {
      const count = await dispatch(this.ctx.prisma, this.ctx.now(), this.options.dispatchBatch, (events) => this.ctx.environment.live.publish(events));
      total += count;
      if (count > 0) dispatched();
      if (count < this.options.dispatchBatch || this.stopped) return total;
    }
  }

  private async claim(limit: number): Promise<Claimed[]> {
    if (limit <= 0) return [];
    const now = this.ctx.now();
    const until = new Date(now.getTime() + this.ctx.environment.config.webhooks.timeoutMs + lockMarginMs);
    const claimed = await this.ctx.prisma.$queryRaw<Claimed[]>`
      UPDATE webhook_events AS claimed SET locked_until = ${until}, attempts = claimed.attempts + 1
      FROM webhook_endpoints AS w
      WHERE w.id = claimed.endpoint_id AND claimed.id IN (
        SELECT e.id FROM webhook_events e JOIN webhook_endpoints ew ON ew.id = e.endpoint_id
        WHERE e.succeeded IS NULL AND e.next_attempt_at <= ${now} AND (e.locked_until IS NULL OR e.locked_until <= ${now})
          AND ew.enabled AND ew.deleted_at IS NULL
          AND NOT EXISTS (
            SELECT 1 FROM webhook_events earlier
            WHERE earlier.endpoint_id = e.endpoint_id AND earlier.resource_id = e.resource_id
              AND earlier.sequence < e.sequence AND earlier.succeeded IS NULL)
        ORDER BY e.next_attempt_at, e.sequence
        LIMIT ${limit}
        FOR UPDATE OF e SKIP LOCKED)
      RETURNING claimed.id, claimed.endpoint_id, claimed.payload, claimed.attempts, claimed.locked_until, claimed.next_attempt_at, claimed.sequence, w.url, w.secret_ciphertext`;
    // RETURNING keeps no order: the queue sends in the order the attempts fell due.
    return claimed.sort((a, b) => a.next_attempt_at.getTime() - b.next_attempt_at.getTime() || (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0));
  }

  /** Makes the attempt and records it; `answered` is called once the request is over. */
  private attempt(event: Claimed, answered: () => void = () => {}): Promise<void> {
    return inDeliverySpan(this.ctx, event, () => this.deliver(event, answered));
  }

  private async deliver(event: Claimed, answered: () => void): Promise<void> {
    const { environment, logger } = this.ctx;
    const at = this.ctx.now();
    const secret = await this.secret(event.secret_ciphertext).catch(() => null);
    // Unsigned is never sent: an undecryptable secret (the secrets key changed) is a failed attempt.
    const result: SendResult =
      secret === null
        ? { httpCode: null, response: 'The signing secret cannot be decrypted (was SECRETS_KEY changed?); reset the secret: not delivered', durationMs: 0 }
        : await send(event.url, event.payload, { ...signatureHeaders(secret, event.id, at, event.payload) }, {
            policy: destinationPolicy(environment),
            timeoutMs: environment.config.webhooks.timeoutMs,
            agents: this.agents,
          });
    answered();
    const outcome = isSuccess(result) ? await this.recordDelivered(event, at, result) : await record(this.ctx, event, at, result);
    environment.metrics.webhookAttempt(outcome);
    // Never the URL: it may carry the receiver's own credentials (Discord and Slack URLs do).
    logger[outcome.succeeded ? 'info' : 'warn'](
      { webhookEventId: event.id, endpointId: event.endpoint_id, attempt: event.attempts, httpCode: result.httpCode, durationMs: result.durationMs, ...outcome },
      outcome.succeeded ? 'webhook delivered' : 'webhook attempt failed',
    );
  }

  /** Records a successful attempt with those that finish while the ones before are written. */
  private recordDelivered(event: Claimed, at: Date, result: SendResult): Promise<Outcome> {
    return new Promise<Outcome>((recorded, failed) => {
      this.delivered.push({ event, at, result, recorded, failed });
      this.writing ??= this.writeDelivered();
    });
  }

  private async writeDelivered(): Promise<void> {
    // The attempts that finish in the same turn of the event loop join the first write.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.delivered.length > 0) {
      const batch = this.delivered.splice(0);
      try {
        const current = await recordSuccesses(this.ctx, batch);
        for (const d of batch) d.recorded({ succeeded: true, givenUp: false, superseded: !current.has(d.event.id), endpointDisabled: false });
      } catch {
        // One row the batch could not write (an event deleted with its endpoint meanwhile) fails
        // the whole transaction: each is then recorded on its own, and only its own failure is reported.
        await Promise.all(batch.map((d) => record(this.ctx, d.event, d.at, d.result).then(d.recorded, d.failed)));
      }
    }
    this.writing = null;
  }

  private async secret(ciphertext: Uint8Array): Promise<string> {
    const key = Buffer.from(ciphertext).toString('base64');
    let secret = this.secrets.get(key);
    if (secret === undefined) {
      secret = await decryptSecret(this.ctx.environment, ciphertext);
      if (this.secrets.size >= 10_000) this.secrets.clear();
      this.secrets.set(key, secret);
    }
    return secret;
  }
}

/** An outbox event as `dispatch` reads it. */
interface OutboxRow {
  id: string;
  organization_id: string;
  type: string;
  resource_id: string | null;
  sequence: bigint;
  data: unknown;
  created_at: Date;
}

/**
 * Hands up to `limit` undispatched outbox events, in sequence order, to the endpoints of their
 * organization that are enabled, subscribed to the type and existed when the event was recorded.
 * One dispatcher at a time per database (an advisory lock), so a later event of a resource is never
 * handed out before an earlier one. Once the transaction has committed, the events are handed to
 * `committed` (the live stream), in sequence order.
 */
export async function dispatch(prisma: Db, now: Date, limit: number, committed?: (events: LiveEvent[]) => void): Promise<number> {
  const events = await prisma.$transaction(async (tx) => {
    const [{ locked }] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(hashtext('kassa.webhooks.dispatch')) AS locked`;
    if (!locked) return [];
    // Read and written in plain SQL, a statement each for the whole batch: through the client,
    // rendering thousands of rows' arguments cost more than the database's work. The events are
    // marked dispatched by the statement that takes them, and handed out in sequence order.
    const events = (
      await tx.$queryRaw<OutboxRow[]>`
        UPDATE events SET dispatched_at = ${now} WHERE id IN (
          SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY sequence LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING id, organization_id, type, resource_id, sequence, data, created_at`
    ).sort((a, b) => (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0));
    if (events.length === 0) return [];
    const endpoints = await tx.webhookEndpoint.findMany({
      where: { organizationId: { in: [...new Set(events.map((e) => e.organization_id))] }, enabled: true, deletedAt: null },
      select: { id: true, organizationId: true, format: true, events: true, createdAt: true },
    });
    const rows = events.flatMap((event) =>
      endpoints
        .filter((w) => w.organizationId === event.organization_id && w.events.includes(event.type) && w.createdAt <= event.created_at)
        .map((w) => ({ endpoint: w.id, event, payload: webhookBody(w.format, { type: event.type, createdAt: event.created_at, data: event.data }) })),
    );
    if (rows.length) {
      await tx.$executeRaw`
        INSERT INTO webhook_events (id, organization_id, endpoint_id, event_id, type, resource_id, sequence, payload, next_attempt_at, created_at, modified_at)
        SELECT r.id, r.organization_id, r.endpoint_id, r.event_id, r.type, r.resource_id, r.sequence, r.payload, ${now}, ${now}, ${now}
        FROM unnest(${rows.map(() => randomUUID())}::uuid[], ${rows.map((r) => r.event.organization_id)}::uuid[], ${rows.map((r) => r.endpoint)}::uuid[],
          ${rows.map((r) => r.event.id)}::uuid[], ${rows.map((r) => r.event.type)}::text[], ${rows.map((r) => r.event.resource_id)}::uuid[],
          ${rows.map((r) => String(r.event.sequence))}::bigint[], ${rows.map((r) => r.payload)}::text[])
          AS r(id, organization_id, endpoint_id, event_id, type, resource_id, sequence, payload)
        ON CONFLICT (endpoint_id, event_id) DO NOTHING`;
    }
    return events;
  });
  committed?.(
    events.map((e) => ({
      id: e.id,
      type: e.type,
      timestamp: e.created_at.toISOString(),
      organizationId: e.organization_id,
      resourceId: e.resource_id,
      data: e.data as Record<string, unknown>,
    })),
  );
  return events.length;
}

/** The wait after failed attempt number `attempt` (from 1): the base doubled each time, ±20%. */
export function retryDelayMs(retryBaseMs: number, attempt: number): number {
  return Math.round(retryBaseMs * 2 ** (attempt - 1) * (0.8 + 0.4 * Math.random()));
}

const isSuccess = (result: SendResult) => result.httpCode !== null && result.httpCode >= 200 && result.httpCode < 300;

/**
 * Records successful attempts as `record` records each, in one transaction for them all: their
 * endpoints' failure runs end, their deliveries are logged, and their events are done unless
 * another attempt was made since. Returns the events whose state these attempts set.
 */
async function recordSuccesses(ctx: JobContext, batch: Pick<Delivered, 'event' | 'at' | 'result'>[]): Promise<Set<string>> {
  const now = ctx.now();
  const endpointIds = [...new Set(batch.map((d) => d.event.endpoint_id))];
  const updated = await ctx.prisma.$transaction(async (tx) => {
    // The endpoints' rows before the events', as in `record`.
    await tx.$executeRaw`
      UPDATE webhook_endpoints SET failing_since = NULL, modified_at = ${now}
      WHERE id = ANY(${endpointIds}::uuid[]) AND failing_since IS NOT NULL`;
    // Every attempt is logged; the event is done only while the claim is ours (see `record`).
    return tx.$queryRaw<{ id: string }[]>`
      WITH logged AS (
        INSERT INTO webhook_deliveries (id, webhook_event_id, endpoint_id, succeeded, http_code, response, duration_ms, created_at)
        SELECT d.id, d.event_id, d.endpoint_id, true, d.http_code, d.response, d.duration_ms, d.created_at
        FROM unnest(${batch.map(() => randomUUID())}::uuid[], ${batch.map((d) => d.event.id)}::uuid[], ${batch.map((d) => d.event.endpoint_id)}::uuid[],
          ${batch.map((d) => d.result.httpCode)}::int[], ${batch.map((d) => d.result.response)}::text[], ${batch.map((d) => d.result.durationMs)}::int[],
          ${batch.map((d) => d.at.toISOString())}::timestamptz[]) AS d(id, event_id, endpoint_id, http_code, response, duration_ms, created_at))
      UPDATE webhook_events AS e SET last_http_code = d.http_code, locked_until = NULL, succeeded = true, next_attempt_at = NULL, modified_at = ${now}
      FROM unnest(${batch.map((d) => d.event.id)}::uuid[], ${batch.map((d) => d.event.attempts)}::int[], ${batch.map((d) => d.result.httpCode)}::int[]) AS d(id, attempts, http_code)
      WHERE e.id = d.id AND e.attempts = d.attempts
      RETURNING e.id`;
  });
  return new Set(updated.map((row) => row.id));
}

/**
 * Records the attempt and moves the event and its endpoint on, in one transaction. The endpoint's
 * row is taken before the event's, the order in which deleting an endpoint takes them.
 */
async function record(ctx: JobContext, event: Claimed, at: Date, result: SendResult): Promise<Outcome> {
  const { maxAttempts, retryBaseMs } = ctx.environment.config.webhooks;
  const succeeded = isSuccess(result);
  const givenUp = !succeeded && event.attempts >= maxAttempts;
  const now = ctx.now();
  return ctx.prisma.$transaction(async (tx) => {
    let endpointDisabled = false;
    if (succeeded) await tx.webhookEndpoint.updateMany({ where: { id: event.endpoint_id, failingSince: { not: null } }, data: { failingSince: null } });
    else endpointDisabled = await recordFailure(ctx, tx as Db, event.endpoint_id, at, result);
    await tx.webhookDelivery.create({
      data: { webhookEventId: event.id, endpointId: event.endpoint_id, succeeded, httpCode: result.httpCode, response: result.response, durationMs: result.durationMs, createdAt: at },
    });
    // Only while the claim is ours: once it lapsed and another worker made a later attempt, the
    // event's state is that attempt's to set. A failure does not revive an event given up meanwhile.
    const { count } = await tx.webhookEvent.updateMany({
      where: { id: event.id, attempts: event.attempts, ...(succeeded ? {} : { succeeded: null }) },
      data: {
        lastHttpCode: result.httpCode,
        lockedUntil: null,
        ...(succeeded ? { succeeded: true, nextAttemptAt: null } : givenUp ? { succeeded: false, nextAttemptAt: null } : { nextAttemptAt: new Date(now.getTime() + retryDelayMs(retryBaseMs, event.attempts)) }),
      },
    });
    return { succeeded, givenUp, superseded: count === 0, endpointDisabled };
  });
}

/** Starts or continues the endpoint's run of failures; disables it once the run has lasted `disableAfterMs`. */
async function recordFailure(ctx: JobContext, tx: Db, endpointId: string, at: Date, result: SendResult): Promise<boolean> {
  const now = ctx.now();
  const [endpoint] = await tx.$queryRaw<{ failing_since: Date | null; enabled: boolean }[]>`
    SELECT failing_since, enabled FROM webhook_endpoints WHERE id = ${endpointId}::uuid FOR UPDATE`;
  const failingSince = endpoint.failing_since ?? at;
  const disable = endpoint.enabled && now.getTime() - failingSince.getTime() >= ctx.environment.config.webhooks.disableAfterMs;
  if (!disable && endpoint.failing_since) return false;
  const last = result.httpCode !== null ? `HTTP ${result.httpCode}` : result.response;
  await tx.webhookEndpoint.update({
    where: { id: endpointId },
    data: {
      failingSince,
      ...(disable
        ? {
            enabled: false,
            disabledAt: now,
            disabledReason: `Every delivery failed since ${failingSince.toISOString()} (the last: ${last}). Fix the receiver, then enable the endpoint again.`,
          }
        : {}),
    },
  });
  return disable;
}
