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

  test('measured by its values, as the persisted query store is: a hash key holds its document\'s bytes', () => {
    const cache = new DocumentCache<string>(1_000, 10, (_hash, document) => Buffer.byteLength(document));
    cache.set('h1', 'aaaa');
    cache.set('h2', 'ééé'); // 6 bytes
    expect(cache.heldSize).toBe(10);
    cache.set('h3', 'b');
    expect(cache.get('h1')).toBeUndefined();
    expect(cache.heldSize).toBe(7);
    cache.set('h2', 'cc');
    expect(cache.heldSize).toBe(3);
    cache.set('h4', 'x'.repeat(11));
    expect(cache.get('h4')).toBeUndefined();
    expect([cache.get('h2'), cache.get('h3')]).toEqual(['cc', 'b']);
  });
});
