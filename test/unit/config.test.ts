import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('configuration', () => {
  it('defaults to port 8000 on the embedded databases, one directory per environment', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8000);
    expect(config.tokenPrefix).toBe('service');
    expect(config.databases.production).toMatchObject({ kind: 'embedded' });
    expect(config.databases.production).not.toEqual(config.databases.sandbox);
  });

  it('uses PostgreSQL when both database URLs are set', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://a@h/prod', SANDBOX_DATABASE_URL: 'postgres://a@h/sandbox', DATABASE_POOL_SIZE: '7' });
    expect(config.databases.production).toEqual({ kind: 'postgres', url: 'postgres://a@h/prod', poolSize: 7 });
    expect(config.databases.sandbox).toEqual({ kind: 'postgres', url: 'postgres://a@h/sandbox', poolSize: 7 });
  });

  it('takes a Redis URL for the live event stream, none by default', () => {
    expect(loadConfig({}).redisUrl).toBeNull();
    expect(loadConfig({ REDIS_URL: 'redis://:secret@127.0.0.1:6379/0' }).redisUrl).toBe('redis://:secret@127.0.0.1:6379/0');
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT must be a whole number from 0 to 65535 (got "abc")'],
    [{ PORT: '70000' }, 'PORT must be a whole number'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [{ TOKEN_PREFIX: 'Bad_Prefix' }, 'TOKEN_PREFIX must be 2 to 16 lowercase letters or digits'],
    [{ DATABASE_URL: 'postgres://a@h/prod' }, 'SANDBOX_DATABASE_URL must be set when DATABASE_URL is set'],
    [{ SANDBOX_DATABASE_URL: 'postgres://a@h/s' }, 'DATABASE_URL must be set when SANDBOX_DATABASE_URL is set'],
    [{ DATABASE_URL: 'postgres://a@h/x', SANDBOX_DATABASE_URL: 'postgres://a@h/x' }, 'SANDBOX_DATABASE_URL must name a different database'],
    [{ DATABASE_URL: 'mysql://a@h/x', SANDBOX_DATABASE_URL: 'postgres://a@h/y' }, 'DATABASE_URL must be a postgres:// connection URL'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE must be a whole number from 1'],
    [{ SHUTDOWN_TIMEOUT_MS: '-1' }, 'SHUTDOWN_TIMEOUT_MS must be a whole number'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL must be a redis:// or rediss:// URL'],
    [{ REDIS_URL: 'http://localhost:6379' }, 'REDIS_URL must be a redis:// or rediss:// URL (got protocol "http:")'],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
