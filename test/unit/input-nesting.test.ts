// The walks over untrusted JSON keep their own stack: no depth a client can send makes them throw.
import { describe, expect, it } from 'vitest';
import { maxInputNesting, tooDeepAt } from '../../src/graphql/nesting.ts';
import { nulCharacterIssues } from '../../src/graphql/text.ts';

/** `depth` arrays one inside the other, the innermost holding `leaf`, built without recursion. */
function nestedArrays(depth: number, leaf: unknown): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe('tooDeepAt', () => {
  it('finds nothing in a value nested exactly to the limit', () => {
    expect(tooDeepAt(nestedArrays(maxInputNesting, 1), ['body'])).toBeNull();
    expect(tooDeepAt({ a: nestedArrays(maxInputNesting - 2, {}) }, [])).toBeNull();
    expect(tooDeepAt({ a: nestedArrays(maxInputNesting - 1, {}) }, [])).toEqual(['a', ...Array(maxInputNesting - 1).fill(0)]);
    expect(tooDeepAt('text', ['body'])).toBeNull();
  });

  it('names the first array or object past the limit, under the given loc', () => {
    expect(tooDeepAt(nestedArrays(maxInputNesting + 1, 1), ['body'])).toEqual(['body', ...Array(maxInputNesting).fill(0)]);
    expect(tooDeepAt({ ok: 1, deep: [1, { x: nestedArrays(maxInputNesting, null) }] }, ['input'])).toEqual(['input', 'deep', 1, 'x', ...Array(maxInputNesting - 3).fill(0)]);
  });

  it('measures a million levels without overflowing the stack', () => {
    expect(tooDeepAt(nestedArrays(1_000_000, 1), [])).toHaveLength(maxInputNesting);
  });
});

describe('nulCharacterIssues', () => {
  it('finds a NUL a million levels down without overflowing the stack', () => {
    const issues = nulCharacterIssues(nestedArrays(1_000_000, 'a\u0000b'), ['body']);
    expect(issues).toHaveLength(1);
    expect(issues[0].loc).toHaveLength(1_000_001);
  });

  it('reports NULs in keys and values in the order they appear', () => {
    const issues = nulCharacterIssues({ a: 'x\u0000', 'b\u0000': 1, c: ['ok', 'y\u0000'] }, ['input']);
    expect(issues.map((i) => i.loc)).toEqual([
      ['input', 'a'],
      ['input', 'b\u0000'],
      ['input', 'c', 1],
    ]);
  });
});
