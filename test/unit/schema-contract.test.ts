import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { printContract } from '../../src/graphql/schema.ts';

describe('schema.graphql', () => {
  it('is exactly the schema the code builds (run `npm run schema:write` after a schema change)', async () => {
    const committed = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(printContract()).toBe(committed);
  });
});
