// Backup and restore on PostgreSQL, with PostgreSQL's own tools: `pg_dump` (custom format; one
// consistent snapshot per database, taken while the servers keep serving) and `pg_restore` (in one
// transaction, into empty databases). Both must be on PATH, of the server's major version or newer.
// The password of a connection URL is handed to them in PGPASSWORD, never on their command line.
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { environmentNames, type Config, type EnvironmentName } from '../config.ts';
import { databaseState } from '../db/state.ts';
import { BackupError, backupPath, digest, writeBackup, type Manifest, type VerifiedBackup } from './archive.ts';
import { checkRestorable, kassaVersion, sameMigrations } from './versions.ts';

const variableOf: Record<EnvironmentName, string> = { production: 'DATABASE_URL', sandbox: 'SANDBOX_DATABASE_URL' };

function urlOf(config: Config, environment: EnvironmentName): string {
  const database = config.databases[environment];
  if (database.kind !== 'postgres') throw new Error('not a PostgreSQL database');
  return database.url;
}

/** The URL without its password, and the password for PGPASSWORD. */
function connection(url: string): { dbname: string; env: Record<string, string> } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  return { dbname: parsed.toString(), env: password ? { PGPASSWORD: password } : {} };
}

async function run(tool: 'pg_dump' | 'pg_restore', args: string[], url: string, environment: EnvironmentName): Promise<void> {
  const { dbname, env } = connection(url);
  const child = spawn(tool, [...args, `--dbname=${dbname}`], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new BackupError(`${tool} is not on PATH: install PostgreSQL's client tools, of the server's major version or newer.`);
    throw error;
  });
  if (code !== 0) throw new BackupError(`${tool} failed for the ${environment} database (${variableOf[environment]}): ${stderr.trim() || `exit code ${code}`}`);
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const stateOf = (url: string) => withClient(url, (client) => databaseState(async (sql) => (await client.query(sql)).rows));

/** Writes a backup of both PostgreSQL databases to `target` (a new file, or a directory to write one in). */
export async function backupPostgres(config: Config, target: string, now: Date): Promise<{ file: string; manifest: Manifest }> {
  const file = await backupPath(target, now);
  const work = await mkdtemp(path.join(tmpdir(), 'kassa-backup-'));
  try {
    const parts = [];
    for (const environment of environmentNames) {
      const url = urlOf(config, environment);
      const { migrations } = await stateOf(url).catch((error: Error) => {
        throw new BackupError(`The ${environment} database (${variableOf[environment]}) cannot be read: ${error.message} (nothing was written).`);
      });
      const dump = path.join(work, `${environment}.dump`);
      await run('pg_dump', ['--format=custom', `--file=${dump}`], url, environment);
      parts.push({ environment, file: `${environment}.dump`, migrations, ...(await digest(createReadStream(dump))), content: () => createReadStream(dump) });
    }
    const manifest = await writeBackup(file, { kassaVersion, createdAt: now.toISOString(), database: 'postgres' }, parts);
    return { file, manifest };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** How many tables, views and sequences a database holds outside PostgreSQL's own schemas. */
async function relations(url: string): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ count: string }>(
      `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND c.relkind IN ('r', 'p', 'v', 'm', 'S')`,
    );
    return Number(rows[0].count);
  });
}

/** Restores a verified backup into the databases DATABASE_URL and SANDBOX_DATABASE_URL name, which must be empty (or, with `force`, are cleaned). */
export async function restorePostgres(config: Config, backup: VerifiedBackup, force: boolean): Promise<void> {
  if (backup.manifest.database !== 'postgres') {
    throw new BackupError('This backup is of the embedded databases: unset DATABASE_URL and SANDBOX_DATABASE_URL and set DATA_DIR to an empty directory to restore it.');
  }
  await checkRestorable(backup.manifest);
  for (const environment of environmentNames) {
    const count = await relations(urlOf(config, environment)).catch((error: Error) => {
      throw new BackupError(`The ${environment} database (${variableOf[environment]}) cannot be reached: ${error.message}`);
    });
    if (count > 0 && !force) {
      throw new BackupError(`The ${environment} database (${variableOf[environment]}) is not empty: restore into new, empty databases, or pass --force to replace what they hold (nothing was written).`);
    }
  }
  const work = await mkdtemp(path.join(tmpdir(), 'kassa-restore-'));
  try {
    for (const part of backup.manifest.environments) {
      const url = urlOf(config, part.environment);
      const dump = path.join(work, part.file);
      await pipeline(backup.read(part.environment), createWriteStream(dump, { mode: 0o600 }));
      await run('pg_restore', ['--no-owner', '--no-acl', '--exit-on-error', '--single-transaction', ...(force ? ['--clean', '--if-exists'] : []), dump], url, part.environment);
      const { migrations } = await stateOf(url);
      if (!sameMigrations(migrations, part.migrations)) throw new BackupError(`The ${part.environment} database restored does not hold the migrations the manifest lists.`);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
