// Applies prisma/migrations/*/migration.sql in order and records each in `_prisma_migrations`,
// exactly as `prisma migrate deploy` does, so either tool can take over from the other. Each
// migration runs in one transaction with its record; on PostgreSQL an advisory lock (Prisma's own
// key) makes concurrent starts apply each migration once.
import { createHash, randomUUID } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { migrationsDir } from './schema-engine.ts';

/** What the runner needs of a database: run a script, and run work inside one transaction. */
export interface MigrationTarget {
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  transaction(work: (tx: Pick<MigrationTarget, 'exec' | 'query'>) => Promise<void>): Promise<void>;
  /** Holds the migration lock across processes for the duration of `work`. */
  locked<T>(work: () => Promise<T>): Promise<T>;
}

export class MigrationError extends Error {}

const historyTable = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"            VARCHAR(64) NOT NULL,
  "finished_at"         TIMESTAMPTZ,
  "migration_name"      VARCHAR(255) NOT NULL,
  "logs"                TEXT,
  "rolled_back_at"      TIMESTAMPTZ,
  "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export async function readMigrationFiles(dir = migrationsDir): Promise<{ name: string; sql: string; checksum: string }[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/** Applies every migration not yet recorded (from `dir`, prisma/migrations unless told); returns the names applied. */
export async function migrate(target: MigrationTarget, dir = migrationsDir): Promise<string[]> {
  const migrations = await readMigrationFiles(dir);
  return target.locked(async () => {
    await target.exec(historyTable);
    const history = await target.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
    );
    const failed = history.find((h) => h.finished_at === null && h.rolled_back_at === null);
    if (failed) throw new MigrationError(`Migration ${failed.migration_name} failed earlier and needs attention before others can run.`);
    const done = new Map(history.filter((h) => h.finished_at !== null).map((h) => [h.migration_name, h.checksum]));
    for (const [name, checksum] of done) {
      const file = migrations.find((m) => m.name === name);
      if (file && file.checksum !== checksum) throw new MigrationError(`Migration ${name} was modified after it was applied.`);
    }
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.name)) continue;
      const apply = async (on: Pick<MigrationTarget, 'exec' | 'query'>) => {
        await on.exec(migration.sql);
        await on.query(
          'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), now(), 1)',
          [randomUUID(), migration.checksum, migration.name],
        );
      };
      // CREATE INDEX CONCURRENTLY cannot run in a transaction: a migration holding it (alone) runs without one.
      if (/\bCONCURRENTLY\b/i.test(migration.sql)) await apply(target);
      else await target.transaction(apply);
      applied.push(migration.name);
    }
    return applied;
  });
}
