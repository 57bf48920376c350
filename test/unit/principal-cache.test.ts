import { describe, expect, it } from 'vitest';
import { PrincipalCache } from '../../src/auth/principal-cache.ts';
import type { Principal } from '../../src/context.ts';

const principal: Principal = { kind: 'organization', organizationId: 'org', credential: 'oat', tokenId: 'token', clientId: null, userId: null, scopes: new Set() };
const now = new Date('2027-01-01T00:00:00Z');
const entry = (validUntil: number | null = null) => ({ principal, validUntil, lastUsedAt: null });

describe('the principal cache', () => {
  it('keeps nothing while it is not listening for changes made by other processes', () => {
    const cache = new PrincipalCache(10, false);
    cache.keep('a', entry(), cache.currentGeneration);
    expect(cache.get('a', now)).toBeUndefined();
    cache.setListening(true);
    cache.keep('a', entry(), cache.currentGeneration);
    expect(cache.get('a', now)?.principal).toBe(principal);
  });

  it('drops an entry once its token has expired by the request’s clock', () => {
    const cache = new PrincipalCache(10, true);
    cache.keep('a', entry(now.getTime() + 1000), cache.currentGeneration);
    expect(cache.get('a', now)).toBeDefined();
    expect(cache.get('a', new Date(now.getTime() + 1000))).toBeUndefined();
    expect(cache.get('a', now)).toBeUndefined();
  });

  it('does not keep a lookup that started before a token was forgotten', () => {
    const cache = new PrincipalCache(10, true);
    const startedIn = cache.currentGeneration;
    cache.forget(['a']);
    cache.keep('a', entry(), startedIn);
    expect(cache.get('a', now)).toBeUndefined();
  });

  it('forgets one token, or every token for "*", and everything when it stops listening', () => {
    const cache = new PrincipalCache(10, true);
    for (const hash of ['a', 'b', 'c']) cache.keep(hash, entry(), cache.currentGeneration);
    cache.forget(['a']);
    expect(['a', 'b', 'c'].map((hash) => cache.get(hash, now) !== undefined)).toEqual([false, true, true]);
    cache.forget(['*']);
    expect(['b', 'c'].map((hash) => cache.get(hash, now))).toEqual([undefined, undefined]);
    cache.keep('d', entry(), cache.currentGeneration);
    cache.setListening(false);
    expect(cache.get('d', now)).toBeUndefined();
  });

  it('holds at most its capacity, dropping the oldest entry first', () => {
    const cache = new PrincipalCache(2, true);
    for (const hash of ['a', 'b', 'c']) cache.keep(hash, entry(), cache.currentGeneration);
    expect(['a', 'b', 'c'].map((hash) => cache.get(hash, now) !== undefined)).toEqual([false, true, true]);
  });
});
