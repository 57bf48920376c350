// Where rate-limit budgets are counted: fixed windows (a budget of `limit` units per `windowMs`,
// the window starting at a multiple of `windowMs`), in this process or in Redis for several
// processes. Invariant: within one window, the units admitted for a key never exceed its limit,
// however many requests race: a charge is checked and recorded in one atomic step (a JavaScript
// turn in memory, a Lua script in Redis). A refused charge records nothing.
import { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';

export interface Charge {
  /** What is counted: `<environment>:<limit>:<who>`. */
  key: string;
  units: number;
  limit: number;
  windowMs: number;
}

export interface ChargeResult {
  allowed: boolean;
  /** Units left in the window after this charge (or, refused, before it). */
  remaining: number;
  /** When the window ends, in milliseconds since the epoch. */
  resetAt: number;
}

export interface RateLimitStore {
  charge(charge: Charge, now: number): Promise<ChargeResult>;
  close(): Promise<void>;
}

function windowOf(charge: Charge, now: number) {
  const start = Math.floor(now / charge.windowMs) * charge.windowMs;
  return { id: `${charge.key}:${start}`, resetAt: start + charge.windowMs };
}

/** Budgets of this process only: the default, exact for a single process. */
export class MemoryStore implements RateLimitStore {
  private readonly used = new Map<string, { units: number; resetAt: number }>();
  private sweptAt = 0;

  async charge(charge: Charge, now: number): Promise<ChargeResult> {
    this.sweep(now);
    const { id, resetAt } = windowOf(charge, now);
    const entry = this.used.get(id) ?? { units: 0, resetAt };
    if (entry.units + charge.units > charge.limit) return { allowed: false, remaining: charge.limit - entry.units, resetAt };
    entry.units += charge.units;
    this.used.set(id, entry);
    return { allowed: true, remaining: charge.limit - entry.units, resetAt };
  }

  /** Forgets ended windows, at most once a second, so the map holds only live windows. */
  private sweep(now: number): void {
    if (now - this.sweptAt < 1000) return;
    this.sweptAt = now;
    for (const [id, entry] of this.used) if (entry.resetAt <= now) this.used.delete(id);
  }

  async close(): Promise<void> {}
}

// KEYS[1]: the window's counter. ARGV: units, limit, window length in ms.
// Returns {allowed (0|1), units used after the call}.
const chargeScript = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local units = tonumber(ARGV[1])
if used + units > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], units)
if used == units then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {1, used}
`;

export class RedisUnavailableError extends Error {}

/** Budgets shared by every process on one Redis. A command that cannot reach Redis fails fast. */
export class RedisStore implements RateLimitStore {
  private readonly redis: Redis;

  constructor(url: string, logger: Logger, commandTimeoutMs = 500) {
    // No offline queue and one try: a charge must not wait for a reconnection, it takes the
    // configured fallback instead.
    this.redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: commandTimeoutMs, lazyConnect: false });
    this.redis.on('error', (error) => logger.debug({ err: error }, 'rate limit store: redis connection failed'));
    this.redis.defineCommand('kassaCharge', { numberOfKeys: 1, lua: chargeScript });
  }

  async charge(charge: Charge, now: number): Promise<ChargeResult> {
    const { id, resetAt } = windowOf(charge, now);
    let reply: [number, number];
    try {
      reply = await (this.redis as unknown as { kassaCharge(key: string, units: number, limit: number, windowMs: number): Promise<[number, number]> }).kassaCharge(
        `kassa:rate:${id}`,
        charge.units,
        charge.limit,
        charge.windowMs,
      );
    } catch (error) {
      throw new RedisUnavailableError(`Redis did not answer: ${(error as Error).message}`);
    }
    const [allowed, used] = reply;
    return { allowed: allowed === 1, remaining: charge.limit - used, resetAt };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
