// Two versions of the schema side by side on one PostgreSQL database, as during a rolling upgrade:
// the running version's queries keep working after an expand migration is applied under them, and
// the next version's queries work too. `kassa migrate --check` calls that migration safe, and calls
// the migrations that would break the running version unsafe, statement by statement.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { bootstrapEnvironment } from '../../src/bootstrap.ts';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { migrate, readMigrationFiles } from '../../src/db/migrate.ts';
import { checkPending, findUnsafeStatements } from '../../src/db/migration-safety.ts';
import { migrationsDir } from '../../src/db/schema-engine.ts';
import { databaseState } from '../../src/db/state.ts';
import { kassaBin } from '../helpers/processes.ts';
import { postgresAdminUrl, usePostgres } from '../helpers/server.ts';

vi.setConfig({ testTimeout: 90_000 });

/** An expand migration: a nullable column, a column with a default, a new table. */
const expand = `-- AlterTable
ALTER TABLE "products" ADD COLUMN "subtitle" TEXT,
ADD COLUMN "display_order" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "product_badges" (
    "id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "label" TEXT NOT NULL,
    CONSTRAINT "product_badges_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "product_badges_product_id_idx" ON "product_badges"("product_id");

-- AddForeignKey
ALTER TABLE "product_badges" ADD CONSTRAINT "product_badges_product_id_fkey" FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE CASCADE ON UPDATE CASCADE;
`;

describe.runIf(usePostgres)('a rolling upgrade on PostgreSQL', () => {
  const name = `kassa_upgrade_${randomBytes(4).toString('hex')}`;
  const url = Object.assign(new URL(postgresAdminUrl), { pathname: `/${name}` }).toString();
  let dir: string;
  let running: Database;

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    dir = await mkdtemp(path.join(tmpdir(), 'kassa-migrations-'));
    await cp(migrationsDir, dir, { recursive: true });
  });
  afterAll(async () => {
    await running?.close();
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  });

  it("the running version's queries keep working once an expand migration is applied, beside the next version's", async () => {
    // Version N-1: every migration Kassa has, and its own client.
    running = await openDatabase({ kind: 'postgres', url, poolSize: 2 });
    expect(await migrate(running.migrationTarget, dir)).toEqual((await readMigrationFiles()).map((m) => m.name));
    const config = loadConfig({ DATABASE_URL: url, SANDBOX_DATABASE_URL: `${url}_unused` });
    const { organization_id: organizationId } = await bootstrapEnvironment(running.prisma, config);
    // What the running version does: its Prisma client, and its raw SQL.
    const runningQueries = async (label: string) => {
      const product = await running.prisma.product.create({ data: { organizationId, name: `${label} (client)`, isRecurring: false } });
      await running.prisma.$executeRaw`INSERT INTO products (id, organization_id, name, is_recurring) VALUES (gen_random_uuid(), ${organizationId}::uuid, ${`${label} (sql)`}, false)`;
      const listed = await running.prisma.product.findMany({ where: { organizationId }, orderBy: { createdAt: 'asc' } });
      await running.prisma.product.update({ where: { id: product.id }, data: { description: 'updated' } });
      return listed.map((p) => p.name);
    };
    expect(await runningQueries('before')).toEqual(['before (client)', 'before (sql)']);

    // Version N's migration, judged against the database as it is, then applied under the running version.
    await mkdir(path.join(dir, '29991231000000_product_badges'));
    await writeFile(path.join(dir, '29991231000000_product_badges', 'migration.sql'), expand);
    const state = await databaseState(async (sql) => (await running.prisma.$queryRawUnsafe(sql)) as never[]);
    expect(checkPending(await readMigrationFiles(dir), state)).toEqual([{ name: '29991231000000_product_badges', findings: [] }]);
    expect(await migrate(running.migrationTarget, dir)).toEqual(['29991231000000_product_badges']);

    expect(await runningQueries('after')).toEqual(['before (client)', 'before (sql)', 'after (client)', 'after (sql)']);
    // Version N's queries, on the same database at the same time.
    const next = new pg.Client({ connectionString: url });
    await next.connect();
    try {
      const { rows } = await next.query(
        `INSERT INTO products (id, organization_id, name, is_recurring, subtitle, display_order) VALUES (gen_random_uuid(), $1, 'next', false, 'A subtitle', 3) RETURNING id`,
        [organizationId],
      );
      await next.query(`INSERT INTO product_badges (id, product_id, label) VALUES (gen_random_uuid(), $1, 'new')`, [rows[0].id]);
      const read = await next.query(
        `SELECT p.name, p.subtitle, p.display_order, b.label FROM products p LEFT JOIN product_badges b ON b.product_id = p.id WHERE p.organization_id = $1 ORDER BY p.created_at, p.name`,
        [organizationId],
      );
      expect(read.rows.at(-1)).toEqual({ name: 'next', subtitle: 'A subtitle', display_order: 3, label: 'new' });
      // Rows the running version wrote read as the defaults.
      expect(read.rows[0]).toMatchObject({ subtitle: null, display_order: 0, label: null });
    } finally {
      await next.end();
    }

    // A contract step in the same release would break the running version: the check says which statement and why.
    const contract = `ALTER TABLE "products" RENAME COLUMN "name" TO "title";\nALTER TABLE "products" DROP COLUMN "description";`;
    const findings = findUnsafeStatements(contract, state);
    expect(findings.map((f) => f.statement)).toEqual(['ALTER TABLE "products" RENAME COLUMN "name" TO "title"', 'ALTER TABLE "products" DROP COLUMN "description"']);
    expect(findings[0].reason).toContain('the running version still uses the old name');
    expect(findings[1].reason).toContain('drops products.description, which the running version still reads and writes');
  });

  it('kassa migrate --check lists the pending migrations of a fresh database as safe and exits 0, then says up to date', async () => {
    const fresh = `${name}_check`;
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${fresh}`);
    await admin.query(`CREATE DATABASE ${fresh}_sandbox`);
    await admin.end();
    const env = {
      DATABASE_URL: Object.assign(new URL(postgresAdminUrl), { pathname: `/${fresh}` }).toString(),
      SANDBOX_DATABASE_URL: Object.assign(new URL(postgresAdminUrl), { pathname: `/${fresh}_sandbox` }).toString(),
    };
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [kassaBin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
        let stdout = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.on('close', (code) => resolve({ code, stdout }));
      });
    try {
      const migrations = await readMigrationFiles();
      const pending = await run(['migrate', '--check']);
      expect(pending.code).toBe(0);
      expect(pending.stdout).toContain(`production: ${migrations.length} pending migrations\n  ${migrations[0].name}: safe under live traffic\n`);
      expect(pending.stdout).not.toContain('UNSAFE');
      // The sandbox only migrated: production stays pending.
      const sandbox = await openDatabase({ kind: 'postgres', url: env.SANDBOX_DATABASE_URL, poolSize: 1 });
      await migrate(sandbox.migrationTarget);
      await sandbox.close();
      const after = await run(['migrate', '--check']);
      expect(after.code).toBe(0);
      expect(after.stdout).toContain('sandbox: up to date\n');
    } finally {
      const cleanup = new pg.Client({ connectionString: postgresAdminUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${fresh} WITH (FORCE)`);
      await cleanup.query(`DROP DATABASE IF EXISTS ${fresh}_sandbox WITH (FORCE)`);
      await cleanup.end();
    }
  });
});
