// The webhook worker of one environment. It drains the outbox into one WebhookEvent per
// subscribed endpoint (dispatch), then sends the events that are due (delivery), at least once:
//
// - Dispatch takes undispatched events in sequence order, creates their WebhookEvents and marks
//   them dispatched in one transaction, so an event is handed to its endpoints exactly once.
// - An attempt is claimed by setting `lockedUntil` past the send's timeout, with FOR UPDATE SKIP
//   LOCKED, so several processes on one database never make the same attempt at once; a process
//   that dies mid-send leaves the lock to lapse and the attempt is made again, never lost.
// - An event is not claimed while an earlier event of the same resource is still pending for the
//   endpoint: each endpoint receives a resource's events in the order they were recorded.
// - The attempt's outcome, the event's next state and the endpoint's failure run are written in
//   one transaction. An endpoint failing for `disableAfterMs` is disabled; its events then wait.
// - Recording an event announces it (NOTIFY, events/outbox.ts): a worker listening on the
//   environment's notification connection wakes at the commit; `pollMs` is the fallback, and the
//   pace of retries.
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
  /** Deliveries in flight at once. */
  concurrency: number;
  /** Where recorded events are announced; without it the worker only polls. */
  notifications?: Notifications;
}

/** How long past the send's timeout a claim holds, for the time it takes to record the outcome. */
const lockMarginMs = 30_000;

/** A claimed attempt: the event, the number of this attempt, and where and how to send it. */
interface Claimed {
  id: string;
  endpoint_id: string;
  payload: string;
  attempts: number;
  url: string;
  secret_ciphertext: Uint8Array;
}

export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<unknown> | null = null;
  /** A wake-up came during a pass: another pass follows at once. */
  private wokenWhileTicking = false;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private unsubscribe: () => void = () => {};
  private readonly agents: Agents = newAgents();
  /** Decrypted signing secrets by their ciphertext: a reset secret has a new ciphertext, so none goes stale. */
  private readonly secrets = new Map<string, string>();

  constructor(
    private readonly ctx: JobContext,
    private readonly options: WebhookWorkerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
    this.unsubscribe = this.options.notifications?.subscribe(eventsChannel, { message: () => this.wake() }) ?? (() => {});
  }

  /** Stops claiming and lets the deliveries in flight finish (each is bounded by the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    clearTimeout(this.timer);
    await this.ticking;
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

  /** A pass as soon as possible: events were recorded. */
  private wake(): void {
    if (this.ticking) this.wokenWhileTicking = true;
    else this.schedule(0);
  }

  // One pass of the background loop: attempts run on without it, up to `concurrency` at once; a
  // finished attempt frees its slot and calls for the next pass.
  private tick(): void {
    if (this.ticking || this.stopped) return;
    this.wokenWhileTicking = false;
    this.ticking = (async () => {
      let busy = false;
      try {
        busy = (await this.dispatchAll()) > 0;
        const free = this.options.concurrency - this.inFlight.size;
        if (free > 0) {
          const claimed = await this.claim(free);
          busy ||= claimed.length === free;
          for (const event of claimed) this.track(this.attempt(event));
        }
      } catch (error) {
        this.ctx.logger.error({ err: error }, 'webhook worker failed');
      } finally {
        this.ticking = null;
        // With every slot taken, the next pass comes when one frees (track).
        const full = this.inFlight.size >= this.options.concurrency;
        this.schedule((busy || this.wokenWhileTicking) && !full ? 0 : this.options.pollMs);
      }
    })();
  }

  private track(attempt: Promise<void>): void {
    const tracked = attempt
      .catch((error) => this.ctx.logger.error({ err: error }, 'recording a webhook attempt failed'))
      .finally(() => {
        this.inFlight.delete(tracked);
        // A freed slot, and perhaps the next event of the same resource now free to go.
        this.wake();
      });
    this.inFlight.add(tracked);
  }

  private async dispatchAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const count = await dispatch(this.ctx.prisma, this.ctx.now(), this.options.dispatchBatch, (events) => this.ctx.environment.live.publish(events));
      total += count;
      if (count < this.options.dispatchBatch) return total;
    }
  }

  private async claim(limit: number): Promise<Claimed[]> {
    if (limit <= 0) return [];
    const now = this.ctx.now();
    const until = new Date(now.getTime() + this.ctx.environment.config.webhooks.timeoutMs + lockMarginMs);
    return this.ctx.prisma.$queryRaw<Claimed[]>`
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
      RETURNING claimed.id, claimed.endpoint_id, claimed.payload, claimed.attempts, w.url, w.secret_ciphertext`;
  }

  private attempt(event: Claimed): Promise<void> {
    return inDeliverySpan(this.ctx, event, () => this.deliver(event));
  }

  private async deliver(event: Claimed): Promise<void> {
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
    const outcome = await record(this.ctx, event, at, result);
    environment.metrics.webhookAttempt(outcome);
    // Never the URL: it may carry the receiver's own credentials (Discord and Slack URLs do).
    logger[outcome.succeeded ? 'info' : 'warn'](
      { webhookEventId: event.id, endpointId: event.endpoint_id, attempt: event.attempts, httpCode: result.httpCode, durationMs: result.durationMs, ...outcome },
      outcome.succeeded ? 'webhook delivered' : 'webhook attempt failed',
    );
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

/**
 * Hands up to `limit` undispatched outbox events, in sequence order, to the endpoints of their
 * organization that are enabled, subscribed to the type and existed when the event was recorded.
 * One dispatcher at a time per database (an advisory lock), so a later event of a resource is never
 * handed out before an earlier one. Once the transaction has committed, the events are handed to
 * `committed` (the live stream), in sequence order.
 */
export async function dispatch(prisma: Db, now: Date, limit: number, committed?: (events: LiveEvent[]) => void): Promise<number> {
  if (!(await prisma.event.findFirst({ where: { dispatchedAt: null }, select: { id: true } }))) return 0;
  const events = await prisma.$transaction(async (tx) => {
    const [{ locked }] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(hashtext('kassa.webhooks.dispatch')) AS locked`;
    if (!locked) return [];
    const ids = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY sequence LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
    if (ids.length === 0) return [];
    const events = await tx.event.findMany({ where: { id: { in: ids.map((e) => e.id) } }, orderBy: { sequence: 'asc' } });
    const endpoints = await tx.webhookEndpoint.findMany({
      where: { organizationId: { in: [...new Set(events.map((e) => e.organizationId))] }, enabled: true, deletedAt: null },
      select: { id: true, organizationId: true, format: true, events: true, createdAt: true },
    });
    const rows = events.flatMap((event) =>
      endpoints
        .filter((w) => w.organizationId === event.organizationId && w.events.includes(event.type) && w.createdAt <= event.createdAt)
        .map((w) => ({
          organizationId: event.organizationId,
          endpointId: w.id,
          eventId: event.id,
          type: event.type,
          resourceId: event.resourceId,
          sequence: event.sequence,
          payload: webhookBody(w.format, event),
          nextAttemptAt: now,
          createdAt: now,
        })),
    );
    if (rows.length) await tx.webhookEvent.createMany({ data: rows, skipDuplicates: true });
    await tx.event.updateMany({ where: { id: { in: events.map((e) => e.id) } }, data: { dispatchedAt: now } });
    return events;
  });
  committed?.(
    events.map((e) => ({
      id: e.id,
      type: e.type,
      timestamp: e.createdAt.toISOString(),
      organizationId: e.organizationId,
      resourceId: e.resourceId,
      data: e.data as Record<string, unknown>,
    })),
  );
  return events.length;
}

/** The wait after failed attempt number `attempt` (from 1): the base doubled each time, ±20%. */
export function retryDelayMs(retryBaseMs: number, attempt: number): number {
  return Math.round(retryBaseMs * 2 ** (attempt - 1) * (0.8 + 0.4 * Math.random()));
}

/**
 * Records the attempt and moves the event and its endpoint on, in one transaction. The endpoint's
 * row is taken before the event's, the order in which deleting an endpoint takes them.
 */
async function record(ctx: JobContext, event: Claimed, at: Date, result: SendResult) {
  const { maxAttempts, retryBaseMs } = ctx.environment.config.webhooks;
  const succeeded = result.httpCode !== null && result.httpCode >= 200 && result.httpCode < 300;
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
