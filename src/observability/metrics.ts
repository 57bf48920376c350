// The operators' metrics, in Prometheus' text format (GET /metrics, see docs/operations.md#metrics).
// Each subsystem calls one typed recorder; what is read from the databases (the backlogs, the
// connection pools) is read when the metrics are scraped, with one query per environment.
//
// No label ever holds an id, an email or a token: routes are their templates, GraphQL operations
// their names (capped), and every other label takes a value from a short fixed list.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EnvironmentName } from '../config.ts';

/** `none` for requests under neither environment (/healthz, /metrics, unknown paths). */
export type EnvironmentLabel = EnvironmentName | 'none';
export type JobOutcome = 'succeeded' | 'failed' | 'given_up';
/** What the processor answered: settled either way, or not yet (the buyer must act, the bank is slow). */
export type PaymentOutcome = 'succeeded' | 'failed' | 'pending';

/** What the backlogs of one environment are at scrape time (server.ts reads them). */
export interface Backlog {
  /** Jobs due and not done. */
  jobsDue: number;
  /** When the longest-waiting due job was due; null when none is. */
  oldestDueAt: Date | null;
  /** When the oldest event not yet delivered (or given up) was recorded; null when there is none. */
  oldestUndeliveredAt: Date | null;
}

/** An environment's database connections: a PostgreSQL pool's, or the embedded database's one. */
export interface PoolConnections {
  total: number;
  idle: number;
  waiting: number;
}

export interface EnvironmentSources {
  backlog(): Promise<Backlog>;
  connections(): PoolConnections;
  now(): Date;
}

/** The recorders of one environment's subsystems. */
export interface EnvironmentMetrics {
  jobRun(kind: string, outcome: JobOutcome): void;
  webhookAttempt(outcome: { succeeded: boolean; givenUp: boolean }): void;
  payment(outcome: PaymentOutcome): void;
  rateLimitRefused(limit: string): void;
  /** A GraphQL operation received over HTTP: its name (or none), its type, its requested cost. */
  graphqlOperation(name: string | null | undefined, type: string, cost: number): void;
}

export interface MetricsOptions {
  /** How long a scrape waits for an environment's backlog query before leaving its gauges out. */
  backlogTimeoutMs?: number;
  /** Hears of a backlog query that failed or timed out. */
  onSourceFailure?(environment: EnvironmentName, error: unknown): void;
}

const methods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Values of a label that callers name (GraphQL operation names, job kinds): the first `max`
 * distinct ones of at most `length` characters are kept, every other becomes `other`, so no
 * client can grow the number of series without bound.
 */
export class CappedLabel {
  private readonly seen = new Set<string>();

  constructor(
    private readonly max: number,
    private readonly length: number,
  ) {}

  of(value: string): string {
    if (this.seen.has(value)) return value;
    if (value.length > this.length || !/^[A-Za-z_][\w.-]*$/.test(value) || this.seen.size >= this.max) return 'other';
    this.seen.add(value);
    return value;
  }
}

export class Metrics {
  readonly registry = new Registry();
  private readonly sources = new Map<EnvironmentName, EnvironmentSources>();
  private readonly operationNames = new CappedLabel(200, 64);
  private readonly jobKinds = new CappedLabel(50, 64);

  private readonly httpRequests = new Counter({ name: 'kassa_http_requests_total', help: 'HTTP requests answered, by route template and status.', labelNames: ['method', 'route', 'status', 'environment'], registers: [this.registry] });
  private readonly httpDuration = new Histogram({
    name: 'kassa_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being written, by route template and status class.',
    labelNames: ['method', 'route', 'status_class', 'environment'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly graphqlOperations = new Counter({ name: 'kassa_graphql_operations_total', help: 'GraphQL operations received over HTTP, by operation name (anonymous, or other past the cap) and type.', labelNames: ['operation', 'type', 'environment'], registers: [this.registry] });
  private readonly graphqlCost = new Histogram({
    name: 'kassa_graphql_operation_cost',
    help: 'The requested cost of GraphQL operations received over HTTP, in points.',
    labelNames: ['type', 'environment'],
    buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000],
    registers: [this.registry],
  });
  private readonly rateLimitRefusals = new Counter({ name: 'kassa_rate_limit_refusals_total', help: 'Requests refused by a rate limit, by the limit that refused them.', labelNames: ['limit', 'environment'], registers: [this.registry] });
  private readonly jobRuns = new Counter({ name: 'kassa_jobs_runs_total', help: 'Background job runs, by kind and outcome (succeeded, failed and to be retried, given_up).', labelNames: ['kind', 'outcome', 'environment'], registers: [this.registry] });
  private readonly webhookDeliveries = new Counter({ name: 'kassa_webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome (succeeded, failed and to be retried, given_up).', labelNames: ['outcome', 'environment'], registers: [this.registry] });
  private readonly payments = new Counter({ name: 'kassa_payments_total', help: 'Charges answered by the payment processor, by outcome (succeeded, failed, pending: not settled yet).', labelNames: ['outcome', 'environment'], registers: [this.registry] });
  private readonly jobsQueueDepth = new Gauge({ name: 'kassa_jobs_queue_depth', help: 'Background jobs due and not done, at scrape time.', labelNames: ['environment'], registers: [this.registry] });
  private readonly jobsOldestDueAge = new Gauge({ name: 'kassa_jobs_oldest_due_age_seconds', help: 'How long the longest-waiting due job has been due, at scrape time (0 when none is).', labelNames: ['environment'], registers: [this.registry] });
  private readonly webhookLag = new Gauge({ name: 'kassa_webhook_endpoint_lag_seconds', help: 'Age of the oldest event not yet delivered to an enabled endpoint (or not yet dispatched), at scrape time.', labelNames: ['environment'], registers: [this.registry] });
  private readonly poolConnections = new Gauge({ name: 'kassa_db_pool_connections', help: 'Database connections by state (total, idle, waiting), at scrape time.', labelNames: ['environment', 'state'], registers: [this.registry] });

  private readonly backlogTimeoutMs: number;
  private readonly onSourceFailure: (environment: EnvironmentName, error: unknown) => void;

  constructor(options: MetricsOptions = {}) {
    this.backlogTimeoutMs = options.backlogTimeoutMs ?? 2000;
    this.onSourceFailure = options.onSourceFailure ?? (() => {});
    // Process metrics (CPU, memory, event-loop lag, GC) under the same prefix.
    collectDefaultMetrics({ register: this.registry, prefix: 'kassa_' });
  }

  /**
   * A request answered: `route` is its template (`/v1/products/{id}`) or `unmatched`. `seconds` is
   * null for an event stream, which lasts as long as its subscriber listens: it is counted, but
   * its length is no latency.
   */
  httpRequest(method: string, route: string, status: number, environment: EnvironmentLabel, seconds: number | null): void {
    const verb = methods.has(method) ? method : 'other';
    this.httpRequests.inc({ method: verb, route, status: String(status), environment });
    if (seconds !== null) this.httpDuration.observe({ method: verb, route, status_class: `${Math.floor(status / 100)}xx`, environment }, seconds);
  }

  /** Registers what an environment's gauges are read from, and returns its subsystems' recorders. */
  environment(name: EnvironmentName, sources: EnvironmentSources): EnvironmentMetrics {
    this.sources.set(name, sources);
    const environment = name;
    return {
      jobRun: (kind, outcome) => this.jobRuns.inc({ kind: this.jobKinds.of(kind), outcome, environment }),
      webhookAttempt: ({ succeeded, givenUp }) => this.webhookDeliveries.inc({ outcome: succeeded ? 'succeeded' : givenUp ? 'given_up' : 'failed', environment }),
      payment: (outcome) => this.payments.inc({ outcome, environment }),
      rateLimitRefused: (limit) => this.rateLimitRefusals.inc({ limit, environment }),
      graphqlOperation: (name, type, cost) => {
        this.graphqlOperations.inc({ operation: name ? this.operationNames.of(name) : 'anonymous', type, environment });
        this.graphqlCost.observe({ type, environment }, cost);
      },
    };
  }

  /** The exposition: the scrape-time gauges are read first, each environment's backlog within the timeout. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    await Promise.all([...this.sources].map(([name, sources]) => this.readSources(name, sources)));
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private async readSources(environment: EnvironmentName, sources: EnvironmentSources): Promise<void> {
    const connections = sources.connections();
    for (const state of ['total', 'idle', 'waiting'] as const) this.poolConnections.set({ environment, state }, connections[state]);
    let timer: NodeJS.Timeout | undefined;
    try {
      const backlog = await Promise.race([
        sources.backlog(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the backlog query took longer than ${this.backlogTimeoutMs} ms`)), this.backlogTimeoutMs);
        }),
      ]);
      const now = sources.now().getTime();
      const age = (at: Date | null) => (at ? Math.max(0, (now - at.getTime()) / 1000) : 0);
      this.jobsQueueDepth.set({ environment }, backlog.jobsDue);
      this.jobsOldestDueAge.set({ environment }, age(backlog.oldestDueAt));
      this.webhookLag.set({ environment }, age(backlog.oldestUndeliveredAt));
    } catch (error) {
      // Left out rather than reported stale: an absent series is what alerts on absence see.
      for (const gauge of [this.jobsQueueDepth, this.jobsOldestDueAge, this.webhookLag]) gauge.remove({ environment });
      this.onSourceFailure(environment, error);
    } finally {
      clearTimeout(timer);
    }
  }
}
