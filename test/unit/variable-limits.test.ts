import { describe, expect, test } from 'vitest';
import { maxListItems, overlongList } from '../../src/graphql/variable-limits.ts';

describe('lists in variables', () => {
  test('a list of more than the limit is found where it sits', () => {
    const value = { input: { items: [{ tags: Array.from({ length: maxListItems + 1 }, () => 'x') }] } };
    expect(overlongList(value, ['body'])).toEqual({ loc: ['body', 'input', 'items', 0, 'tags'], length: maxListItems + 1 });
    expect(overlongList({ tags: Array.from({ length: maxListItems }, () => 'x') }, [])).toBeNull();
  });

  test('nesting far deeper than a call stack is walked without overflowing it', () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(overlongList(deep, [])).toBeNull();
    let hidden: unknown = Array.from({ length: maxListItems + 1 }, () => 0);
    for (let i = 0; i < 50_000; i++) hidden = { next: hidden };
    expect(overlongList(hidden, [])?.loc).toHaveLength(50_000);
  });
});
