import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { describe, expect, it } from 'vitest';
import { pendingSchemaChange } from '../../src/db/schema-engine.ts';

describe('prisma/migrations', () => {
  it('build exactly prisma/schema.prisma (run `npm run migration:create -- <name>` after a model change)', async () => {
    const sql = await pendingSchemaChange(new PrismaPGlite(new PGlite()));
    expect(sql).toBe('');
  });
});
