// The documented limits, one place: per client IP on every request, per IP on the unauthenticated
// license key endpoints, per principal (organization, customer, user or OAuth client) per
// minute, where a REST request and a GraphQL operation count one each, and per client IP per
// minute for GraphQL sent without a token. Apart from those, GraphQL cost is taken from a bucket
// of points per principal (or per address without a token). Each environment counts on its own. Several limits on one
// request are charged in order and the first exhausted one refuses; a refused request does not
// count against the limits after it.
import type { RateLimitConfig } from '../config.ts';
import type { Principal } from '../context.ts';
import type { Logger } from '../logger.ts';
import type { EnvironmentMetrics } from '../observability/metrics.ts';
import { addressKey } from './address-key.ts';
import { RedisUnavailableError, type BucketCharge, type ChargeResult, type RateLimitStore } from './store.ts';

export type LimitName = 'ip' | 'license' | 'checkout_link' | 'principal' | 'anonymous';

interface LimitCharge {
  name: LimitName;
  /** Who is counted, within the limit: an address, `organization:<id>`, `oauth_client:<id>`. */
  who: string;
  units: number;
  limit: number;
  windowMs: number;
}

/** What the RateLimit-* headers and a refusal say about one limit. */
export interface LimitState {
  name: LimitName;
  /** What is counted, in words: "client address", "organization", "OAuth client". */
  subject: string;
  limit: number;
  windowSeconds: number;
  remaining: number;
  /** Whole seconds until the window ends, at least 1. */
  resetSeconds: number;
}

export type Verdict =
  | { allowed: true; state: LimitState | null }
  | { allowed: false; reason: 'exhausted'; state: LimitState }
  | { allowed: false; reason: 'store_unavailable' };

const windowWords: Record<number, string> = { 1: 'second', 60: 'minute' };

function subjectOf(charge: LimitCharge): string {
  if (charge.name !== 'principal') return 'client address';
  return { organization: 'organization', oauth_client: 'OAuth client', user: 'user', customer: 'customer' }[charge.who.split(':')[0]] ?? 'caller';
}

export class RateLimiter {
  private warnedAt = 0;

  constructor(
    readonly environment: string,
    readonly config: RateLimitConfig,
    private readonly store: RateLimitStore,
    private readonly logger: Logger,
    private readonly metrics: Pick<EnvironmentMetrics, 'rateLimitRefused'>,
  ) {}

  ip(address: string): LimitCharge {
    return { name: 'ip', who: addressKey(address), units: 1, limit: this.config.perIpPerSecond, windowMs: 1000 };
  }

  license(address: string, units = 1): LimitCharge {
    return { name: 'license', who: addressKey(address), units, limit: this.config.licensePerIpPerSecond, windowMs: 1000 };
  }

  /** Visits to checkout links' public URLs, per client address: each visit writes a checkout. */
  checkoutLink(address: string): LimitCharge {
    return { name: 'checkout_link', who: addressKey(address), units: 1, limit: this.config.checkoutLinkPerIpPerMinute, windowMs: 60_000 };
  }

  /** The cost budget of GraphQL operations sent without a token, per client address. */
  anonymous(address: string, units = 1): LimitCharge {
    return { name: 'anonymous', who: addressKey(address), units, limit: this.config.anonymousPerMinute, windowMs: 60_000 };
  }

  /** The principal's budget, or null for an anonymous caller (counted by address only). */
  principal(principal: Principal, units = 1): LimitCharge | null {
    const who = identityOf(principal);
    if (!who) return null;
    const override = principal.kind === 'organization' && who.startsWith('organization:') ? this.config.organizationOverrides.get(principal.organizationId) : undefined;
    return { name: 'principal', who, units, limit: override ?? this.config.perPrincipalPerMinute, windowMs: 60_000 };
  }

  /** The GraphQL points bucket of a principal, or of a client address without a token. */
  points(principal: Principal, address: string): BucketCharge {
    const who = identityOf(principal) ?? `address:${addressKey(address)}`;
    return { key: `${this.environment}:points:${who}`, units: 0, capacity: this.config.pointsMaximum, restorePerSecond: this.config.pointsRestorePerSecond };
  }

  /**
   * Takes points from a bucket (gives them back when negative). Null when the store cannot be
   * reached and the deployment fails open; throws RedisUnavailableError when it fails closed.
   */
  async take(bucket: BucketCharge, units: number, now: number, force = false): Promise<{ allowed: boolean; available: number } | null> {
    try {
      const taken = await this.store.take({ ...bucket, units, force }, now);
      if (!taken.allowed) this.metrics.rateLimitRefused('points');
      return taken;
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      this.warn(error);
      if (this.config.onStoreFailure === 'closed') {
        this.metrics.rateLimitRefused('store_unavailable');
        throw error;
      }
      return null;
    }
  }

  /** Charges every limit in order until one refuses. */
  async charge(charges: (LimitCharge | null)[], now: number): Promise<Verdict> {
    if (!this.config.enabled) return { allowed: true, state: null };
    let state: LimitState | null = null;
    for (const charge of charges) {
      if (!charge) continue;
      let result: ChargeResult;
      try {
        result = await this.store.charge({ key: `${this.environment}:${charge.name}:${charge.who}`, units: charge.units, limit: charge.limit, windowMs: charge.windowMs }, now);
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) throw error;
        this.warn(error);
        if (this.config.onStoreFailure === 'closed') {
          this.metrics.rateLimitRefused('store_unavailable');
          return { allowed: false, reason: 'store_unavailable' };
        }
        return { allowed: true, state: null };
      }
      state = { name: charge.name, subject: subjectOf(charge), limit: charge.limit, windowSeconds: charge.windowMs / 1000, remaining: Math.max(0, result.remaining), resetSeconds: Math.max(1, Math.ceil((result.resetAt - now) / 1000)) };
      if (!result.allowed) {
        this.metrics.rateLimitRefused(charge.name);
        return { allowed: false, reason: 'exhausted', state };
      }
    }
    return { allowed: true, state };
  }

  /** The sentence a refusal carries. */
  explain(state: LimitState): string {
    const where = { license: ' on the license key endpoints', anonymous: ' for GraphQL without a token', checkout_link: ' opening checkout links' }[state.name as string] ?? '';
    const operations = state.name === 'principal' || state.name === 'anonymous' ? ' (a GraphQL operation counts as one)' : '';
    const seconds = `${state.resetSeconds} second${state.resetSeconds === 1 ? '' : 's'}`;
    return `Rate limit exceeded: ${state.limit} requests per ${windowWords[state.windowSeconds]} per ${state.subject}${where}${operations}. Retry after ${seconds}.`;
  }

  /** One warning per 10 s while the store is down, not one per request. */
  private warn(error: Error): void {
    const now = Date.now();
    if (now - this.warnedAt < 10_000) return;
    this.warnedAt = now;
    this.logger.warn({ err: error, environment: this.environment, fallback: this.config.onStoreFailure }, `rate limit store unavailable: failing ${this.config.onStoreFailure}`);
  }
}

/** The principal behind the token, as the limits count it: an OAuth token counts against its client. */
function identityOf(principal: Principal): string | null {
  switch (principal.kind) {
    case 'organization':
      return principal.credential === 'oauth' ? `oauth_client:${principal.clientId}` : `organization:${principal.organizationId}`;
    case 'user':
      return principal.credential === 'oauth' ? `oauth_client:${principal.clientId}` : `user:${principal.userId}`;
    case 'customer':
      return `customer:${principal.customerId}`;
    default:
      return null;
  }
}

/** RateLimit-* headers (IETF draft), and Retry-After when refusing. */
export function rateLimitHeaders(state: LimitState | null, refused = false): Record<string, string> {
  if (!state) return {};
  const headers: Record<string, string> = {
    'ratelimit-limit': String(state.limit),
    'ratelimit-remaining': String(state.remaining),
    'ratelimit-reset': String(state.resetSeconds),
    'ratelimit-policy': `${state.limit};w=${state.windowSeconds}`,
  };
  if (refused) headers['retry-after'] = String(state.resetSeconds);
  return headers;
}

/** The JSON body of a refusal: `error`, a `detail` sentence, and which limit. */
export function refusalBody(limiter: RateLimiter, verdict: Exclude<Verdict, { allowed: true }>) {
  if (verdict.reason === 'store_unavailable') {
    return { status: 503, headers: { 'retry-after': '1' }, body: { error: 'RateLimiterUnavailable', detail: 'The rate limit store cannot be reached, and this deployment refuses requests it cannot count. Retry shortly.' } };
  }
  const { state } = verdict;
  return {
    status: 429,
    headers: rateLimitHeaders(state, true),
    body: { error: 'RateLimitExceeded', detail: limiter.explain(state), limit: { name: state.name, limit: state.limit, window_seconds: state.windowSeconds, retry_after: state.resetSeconds } },
  };
}
