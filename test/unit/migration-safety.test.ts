// What `kassa migrate --check` calls unsafe to apply under live traffic, statement by statement.
import { describe, expect, it } from 'vitest';
import { checkPending, describeVerdicts, findUnsafeStatements, largeTableBytes, splitStatements } from '../../src/db/migration-safety.ts';

/** `products` is large, `tags` small, and nothing else exists yet. */
const state = { tableBytes: { products: largeTableBytes * 4, tags: 8192 } };
const reasons = (sql: string) => findUnsafeStatements(sql, state).map((f) => f.reason);

describe('a statement that breaks the running version or stops its writes is unsafe', () => {
  it.each([
    ['DROP TABLE "tags";', 'drops tags, which the running version still reads and writes'],
    ['ALTER TABLE "tags" DROP COLUMN "label";', 'drops tags.label'],
    ['ALTER TABLE "tags" RENAME COLUMN "label" TO "name";', 'renames a column of tags'],
    ['ALTER TABLE tags RENAME TO labels;', 'renames the table tags'],
    ['ALTER TABLE "tags" ALTER COLUMN "label" SET DATA TYPE VARCHAR(20);', 'changes the type of tags.label'],
    ['ALTER TABLE "tags" ALTER COLUMN "label" TYPE TEXT;', 'changes the type of tags.label'],
    ['ALTER TABLE "tags" ALTER COLUMN "label" SET NOT NULL;', 'makes tags.label NOT NULL without a default'],
    ['ALTER TABLE "tags" ADD COLUMN "kind" TEXT NOT NULL;', 'adds tags.kind NOT NULL without a default'],
    ['CREATE INDEX "products_name_idx" ON "products"("name");', 'builds an index on products (40.0 MB) without CONCURRENTLY: it locks writes to products'],
    ['CREATE UNIQUE INDEX "products_name_key" ON public."products"("name");', 'locks writes to products'],
    ['ALTER TABLE "products" ADD CONSTRAINT "products_org_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id");', 'validates a constraint on every row of products'],
    ['ALTER TYPE "OrderStatus" RENAME TO "OrderStatus_old";', 'renames a type'],
    ['DROP TYPE "OrderStatus_old";', 'an enum value removed'],
    ['TRUNCATE "tags";', 'deletes every row'],
  ])('%s', (sql, reason) => {
    const found = reasons(sql);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(reason);
  });
});

describe('an expand step is safe', () => {
  it.each([
    ['a nullable column', 'ALTER TABLE "tags" ADD COLUMN "color" TEXT;'],
    ['a NOT NULL column with a default', 'ALTER TABLE "products" ADD COLUMN "rank" INTEGER NOT NULL DEFAULT 0;'],
    ['NOT NULL once the migration gives the column a default', 'ALTER TABLE "tags" ALTER COLUMN "label" SET DEFAULT \'\';\nALTER TABLE "tags" ALTER COLUMN "label" SET NOT NULL;'],
    ['an index built concurrently', 'CREATE INDEX CONCURRENTLY "products_name_idx" ON "products"("name");'],
    ['an index on a small table', 'CREATE INDEX "tags_label_idx" ON "tags"("label");'],
    ['a foreign key added NOT VALID', 'ALTER TABLE "products" ADD CONSTRAINT "f" FOREIGN KEY ("x") REFERENCES "tags"("id") NOT VALID;'],
    ['a new enum value', 'ALTER TYPE "OrderStatus" ADD VALUE \'disputed\';'],
    ['a new table, and changes to it', 'CREATE TABLE "badges" ("id" UUID NOT NULL);\nALTER TABLE "badges" ADD COLUMN "label" TEXT NOT NULL;\nDROP TABLE "badges";'],
    ['a dropped index', 'DROP INDEX "tags_label_idx";'],
  ])('%s', (_what, sql) => {
    expect(reasons(sql)).toEqual([]);
  });
});

it('statements split on semicolons outside quotes, dollar quotes and comments', () => {
  const sql = `-- a comment; not a statement
INSERT INTO t VALUES ('a;b', "c;d"); /* x; y */
CREATE FUNCTION f() RETURNS void AS $body$ BEGIN PERFORM 1; END; $body$ LANGUAGE plpgsql;
SELECT 1`;
  expect(splitStatements(sql)).toEqual([
    `INSERT INTO t VALUES ('a;b', "c;d")`,
    'CREATE FUNCTION f() RETURNS void AS $body$ BEGIN PERFORM 1; END; $body$ LANGUAGE plpgsql',
    'SELECT 1',
  ]);
});

it('each pending migration is reported with the reason per unsafe statement; applied ones are left out', () => {
  const verdicts = checkPending(
    [
      { name: '1_applied', sql: 'DROP TABLE "tags";' },
      { name: '2_expand', sql: 'ALTER TABLE "tags" ADD COLUMN "color" TEXT;' },
      { name: '3_contract', sql: 'ALTER TABLE "tags" DROP COLUMN "label";' },
    ],
    { migrations: ['1_applied'], tableBytes: state.tableBytes },
  );
  expect(verdicts.map((v) => [v.name, v.findings.length])).toEqual([
    ['2_expand', 0],
    ['3_contract', 1],
  ]);
  expect(describeVerdicts('production', verdicts)).toBe(
    [
      'production: 2 pending migrations',
      '  2_expand: safe under live traffic',
      '  3_contract: UNSAFE under live traffic',
      '    ALTER TABLE "tags" DROP COLUMN "label"',
      '      drops tags.label, which the running version still reads and writes: stop using it first, drop it in a later release (contract)',
      '',
    ].join('\n'),
  );
  expect(describeVerdicts('sandbox', [])).toBe('sandbox: up to date\n');
});
