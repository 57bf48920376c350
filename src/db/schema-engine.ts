// Prisma's schema engine, run in-process from its WebAssembly build: the CLI's native engine
// cannot be downloaded on machines without outside network, and this one needs no download.
// It writes new migrations (`kassa migration create`) and checks them against schema.prisma.
import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bindMigrationAwareSqlAdapterFactory, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaEngine } from '@prisma/schema-engine-wasm';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const schemaPath = path.join(root, 'prisma', 'schema.prisma');
export const migrationsDir = path.join(root, 'prisma', 'migrations');
const noFilters = { externalTables: [], externalEnums: [] };

type EngineModule = { SchemaEngine: typeof SchemaEngine };
let engineModule: Promise<EngineModule> | undefined;

// The package's exports hide the .wasm file and Node cannot import .wasm as ESM, so it is
// instantiated by file path against the package's own JS glue.
function loadEngineModule(): Promise<EngineModule> {
  engineModule ??= (async () => {
    const require = createRequire(import.meta.url);
    const dir = path.dirname(require.resolve('@prisma/schema-engine-wasm'));
    const bg = await import(path.join(dir, 'schema_engine_bg.js'));
    const module = new WebAssembly.Module(await readFile(path.join(dir, 'schema_engine_bg.wasm')));
    const instance = new WebAssembly.Instance(module, { './schema_engine_bg.js': bg });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports as { __wbindgen_start: () => void }).__wbindgen_start();
    return bg as EngineModule;
  })();
  return engineModule;
}

export async function openSchemaEngine(factory: SqlMigrationAwareDriverAdapterFactory, log: (line: string) => void = () => {}) {
  const { SchemaEngine } = await loadEngineModule();
  const schema = await readFile(schemaPath, 'utf8');
  return SchemaEngine.new({ datamodels: [[schemaPath, schema]] }, log, bindMigrationAwareSqlAdapterFactory(factory));
}

/** The migrations directory as the engine reads it: `<timestamp>_<name>/migration.sql`, in order. */
export async function readMigrations(): Promise<MigrationList> {
  const entries = await readdir(migrationsDir, { withFileTypes: true }).catch(() => []);
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  const lockPath = path.join(migrationsDir, 'migration_lock.toml');
  return {
    baseDir: migrationsDir,
    lockfile: { path: 'migration_lock.toml', content: await readFile(lockPath, 'utf8').catch(() => null) },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      names.map(async (name) => ({
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: await readFile(path.join(migrationsDir, name, 'migration.sql'), 'utf8').then(
            (value) => ({ tag: 'ok' as const, value }),
            (error: Error) => ({ tag: 'error' as const, value: error.message }),
          ),
        },
      })),
    ),
  };
}

/**
 * The SQL that takes a database built from the migrations to `schema.prisma`; empty when they agree.
 * `shadow` is a throwaway database the engine replays the migrations into.
 */
export async function pendingSchemaChange(shadow: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  const engine = await openSchemaEngine(shadow);
  try {
    const schema = await readFile(schemaPath, 'utf8');
    const result = await engine.diff({
      from: { tag: 'migrations', ...(await readMigrations()) },
      to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: schema }] },
      script: true,
      exitCode: null,
      filters: noFilters,
    });
    const sql = (result.stdout ?? "").trim();
    return sql === "" || sql === "-- This is an empty migration." ? "" : `${sql}\n`;
  } finally {
    engine.free();
  }
}
