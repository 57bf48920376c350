import { describe, expect, test } from 'vitest';
import { DocumentCache } from '../../src/graphql/document-cache.ts';

describe('the GraphQL parse cache', () => {
  test('keeps at most its count of entries, dropping the least recently used', () => {
    const cache = new DocumentCache<number>(2, 1_000);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
  });

  test('keeps at most its total of text, however few the entries', () => {
    const cache = new DocumentCache<number>(1_000, 10);
    cache.set('aaaa', 1);
    cache.set('bbbb', 2);
    cache.set('cccc', 3);
    expect(cache.size).toBe(2);
    expect(cache.get('aaaa')).toBeUndefined();
    cache.set('bbbb', 4);
    expect(cache.size).toBe(2);
    expect(cache.get('bbbb')).toBe(4);
  });

  test('never holds a text longer than its whole budget', () => {
    const cache = new DocumentCache<number>(1_000, 10);
    cache.set('short', 1);
    cache.set('x'.repeat(11), 2);
    expect(cache.get('x'.repeat(11))).toBeUndefined();
    expect(cache.get('short')).toBe(1);
  });
});
