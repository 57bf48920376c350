// Where rate-limit budgets are counted, in this process or in Redis for several processes:
// - fixed windows (a budget of `limit` units per `windowMs`, the window starting at a multiple of
//   `windowMs`): within one window, the units admitted for a key never exceed its limit;
// - buckets of points (GraphQL cost, as Shopify's API counts it): a bucket holds at most `capacity`
//   points and fills again at `restorePerSecond`; an operation takes its requested cost before it
//   runs and gives back what it did not use once it has.
// However many requests race, a charge is checked and recorded in one atomic step (a JavaScript
// turn in memory, a Lua script in Redis). A refused charge records nothing.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
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

/** Points taken from (or, negative, given back to) a bucket. */
export interface BucketCharge {
  /** What is counted: `<environment>:points:<who>`. */
  key: string;
  /** Points to take; a negative number gives points back, never above `capacity`. */
  units: number;
  capacity: number;
  restorePerSecond: number;
  /** Take the points even when the bucket holds fewer, leaving it empty: for work already done. */
  force?: boolean;
}

export interface BucketResult {
  allowed: boolean;
  /** Points in the bucket after this charge (or, refused, before it), rounded down. */
  available: number;
}

export interface RateLimitStore {
  charge(charge: Charge, now: number): Promise<ChargeResult>;
  take(charge: BucketCharge, now: number): Promise<BucketResult>;
  close(): Promise<void>;
}

/** A bucket's points at `now`, from what it held at `at`. */
function refilled(points: number, at: number, charge: BucketCharge, now: number): number {
  return Math.min(charge.capacity, points + (Math.max(0, now - at) * charge.restorePerSecond) / 1000);
}

/** How long a bucket takes to fill from empty: after that an entry says nothing a new one would not. */
function fillMs(charge: BucketCharge): number {
  return Math.ceil((charge.capacity / charge.restorePerSecond) * 1000);
}

function windowOf(charge: Charge, now: number) {
  const start = Math.floor(now / charge.windowMs) * charge.windowMs;
  return { id: `${charge.key}:${start}`, resetAt: start + charge.windowMs };
}

/** Budgets of this process only: the default, exact for a single process. */
export class MemoryStore implements RateLimitStore {
  private readonly used = new Map<string, { units: number; resetAt: number }>();
  private readonly buckets = new Map<string, { points: number; at: number; fullAt: number }>();
  private sweptAt = 0;

  async take(charge: BucketCharge, now: number): Promise<BucketResult> {
    this.sweep(now);
    const entry = this.buckets.get(charge.key);
    const points = entry ? refilled(entry.points, entry.at, charge, now) : charge.capacity;
    if (charge.units > 0 && !charge.force && points < charge.units) return { allowed: false, available: Math.floor(points) };
    const left = Math.min(charge.capacity, Math.max(0, points - charge.units));
    this.buckets.set(charge.key, { points: left, at: now, fullAt: now + fillMs(charge) });
    return { allowed: true, available: Math.floor(left) };
  }

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
    for (const [key, entry] of this.buckets) if (entry.fullAt <= now) this.buckets.delete(key);
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

// KEYS[1]: the bucket (a hash of points and the time they were counted). ARGV: units, capacity,
// restore per second, now in ms, force (0|1), time to fill in ms. The caller's clock is the
// bucket's, as it is the windows'. Returns {allowed (0|1), points after the call, times 1000}.
const takeScript = `
local state = redis.call('HMGET', KEYS[1], 'points', 'at')
local units = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
local points = capacity
if state[1] then
  local elapsed = math.max(0, now - tonumber(state[2]))
  points = math.min(capacity, tonumber(state[1]) + elapsed * tonumber(ARGV[3]) / 1000)
end
if units > 0 and ARGV[5] == '0' and points < units then return {0, math.floor(points * 1000)} end
points = math.min(capacity, math.max(0, points - units))
redis.call('HSET', KEYS[1], 'points', tostring(points), 'at', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {1, math.floor(points * 1000)}
`;

export class RedisUnavailableError extends Error {}

/** Budgets shared by every process on one Redis. A command that cannot reach Redis fails fast. */
export class RedisStore implements RateLimitStore {
  private readonly redis: Redis;

  constructor(url: string, logger: Logger, commandTimeoutMs = 500) {
    // No offline queue and one try: a charge must not wait for a reconnection, it takes the
    // configured fallback instead.
    const Client = redisClientClass();
    this.redis = new Client(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: commandTimeoutMs, lazyConnect: false });
    this.redis.on('error', (error) => logger.debug({ err: error }, 'rate limit store: redis connection failed'));
    this.redis.defineCommand('kassaCharge', { numberOfKeys: 1, lua: chargeScript });
    this.redis.defineCommand('kassaTake', { numberOfKeys: 1, lua: takeScript });
  }

  async take(charge: BucketCharge, now: number): Promise<BucketResult> {
    let reply: [number, number];
    try {
      reply = await (this.redis as unknown as { kassaTake(...args: (string | number)[]): Promise<[number, number]> }).kassaTake(
        `kassa:rate:${charge.key}`,
        charge.units,
        charge.capacity,
        charge.restorePerSecond,
        now,
        charge.force ? 1 : 0,
        fillMs(charge),
      );
    } catch (error) {
      throw new RedisUnavailableError(`Redis did not answer: ${(error as Error).message}`);
    }
    return { allowed: reply[0] === 1, available: Math.floor(reply[1] / 1000) };
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

/** ioredis (with its dependencies, several megabytes resident) is loaded only where REDIS_URL is set. */
function redisClientClass(): typeof Redis {
  return (createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis;
}
