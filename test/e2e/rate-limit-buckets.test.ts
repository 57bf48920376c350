// The GraphQL points buckets, in memory and in a real Redis alike: exact under concurrent takes,
// refilled by the clock at the restore rate, never above capacity when points are given back, and
// emptied (not overdrawn) by a forced take for work already done.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { MemoryStore, RedisStore, type BucketCharge, type RateLimitStore } from '../../src/rate-limits/store.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { eventually } from '../helpers/waiting.ts';

let redis: TestRedis;
const stores: Record<string, RateLimitStore> = {};
beforeAll(async () => {
  redis = await startRedis();
  stores.memory = new MemoryStore();
  stores.redis = new RedisStore(redis.url, createLogger('silent'));
  // The store queues nothing while it connects: wait until it answers.
  await eventually(() => stores.redis.take({ ...bucket('probe'), units: 0 }, 0).then(() => true, () => false), (ok) => ok, 'the Redis store to connect');
});
afterAll(async () => {
  await Promise.all(Object.values(stores).map((store) => store.close()));
  redis?.stop();
});

const bucket = (key: string): BucketCharge => ({ key, units: 0, capacity: 100, restorePerSecond: 20 });

describe.each(['memory', 'redis'])('a points bucket in %s', (name) => {
  const now = 1_800_000_000_000;

  test('admits exactly its capacity among 30 concurrent takes of 10, and reports what is left', async () => {
    const store = stores[name];
    const key = `${name}:race`;
    const results = await Promise.all(Array.from({ length: 30 }, () => store.take({ ...bucket(key), units: 10 }, now)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(results.filter((r) => !r.allowed).every((r) => r.available === 0)).toBe(true);
  });

  test('fills again at its restore rate, up to its capacity, and a refused take records nothing', async () => {
    const store = stores[name];
    const key = `${name}:refill`;
    expect(await store.take({ ...bucket(key), units: 100 }, now)).toEqual({ allowed: true, available: 0 });
    // Half a second at 20 a second: 10 points.
    expect(await store.take({ ...bucket(key), units: 11 }, now + 500)).toEqual({ allowed: false, available: 10 });
    expect(await store.take({ ...bucket(key), units: 10 }, now + 500)).toEqual({ allowed: true, available: 0 });
    // An hour on it holds its capacity, not more.
    expect(await store.take({ ...bucket(key), units: 1 }, now + 3_600_000)).toEqual({ allowed: true, available: 99 });
  });

  test('takes back given points up to its capacity, and a forced take empties it without going below zero', async () => {
    const store = stores[name];
    const key = `${name}:settle`;
    expect(await store.take({ ...bucket(key), units: 60 }, now)).toEqual({ allowed: true, available: 40 });
    expect(await store.take({ ...bucket(key), units: -50 }, now)).toEqual({ allowed: true, available: 90 });
    expect(await store.take({ ...bucket(key), units: -50 }, now)).toEqual({ allowed: true, available: 100 });
    expect(await store.take({ ...bucket(key), units: 150, force: true }, now)).toEqual({ allowed: true, available: 0 });
    expect(await store.take({ ...bucket(key), units: 1 }, now)).toEqual({ allowed: false, available: 0 });
  });
});
