// What the operator's commands read of a database: the migrations applied to it and the size of
// each table (`kassa backup` records the first, `kassa migrate --check` weighs the second).
export interface DatabaseState {
  /** The migrations applied, by name, in order. */
  migrations: string[];
  /** Each table's size on disk, in bytes. */
  tableBytes: Record<string, number>;
}

/** The state `kassa migrate --check` reads: what is applied, and how large each table is. */
export async function databaseState(query: <T>(sql: string) => Promise<T[]>): Promise<DatabaseState> {
  const applied = await query<{ name: string }>(
    `SELECT migration_name AS name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  ).catch(() => []);
  const tables = await query<{ name: string; bytes: number }>(
    `SELECT c.relname AS name, pg_table_size(c.oid)::float8 AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`,
  );
  return { migrations: applied.map((row) => row.name), tableBytes: Object.fromEntries(tables.map((t) => [t.name, Number(t.bytes)])) };
}
