// `kassa backup <dir or file>` and `kassa restore <backup> [--force]`: one file holding both
// environments' databases and a manifest (see archive.ts). On the embedded database a running
// server is read through its control socket; on PostgreSQL pg_dump and pg_restore do the work.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { BackupError, verifyBackup } from './archive.ts';
import { backupEmbedded, restoreEmbedded } from './embedded.ts';
import { backupPostgres, restorePostgres } from './postgres.ts';

export const backupUsage = `  backup <directory or file>     Write a backup of both environments' databases, with a manifest
                                 (Kassa version, migrations, checksums), while the server runs or not:
                                 into the directory under a new name, or as the new file named.
  restore <backup> [--force]     Check a backup against its manifest and restore it into an empty
                                 DATA_DIR (the server stopped) or into the empty PostgreSQL databases
                                 of DATABASE_URL and SANDBOX_DATABASE_URL. --force replaces what is there.`;

class UsageError extends Error {}

async function guarded(command: string, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`kassa ${command}: ${(error as Error).message}\n\nUsage:\n${backupUsage}\n`);
      return 2;
    }
    if (error instanceof BackupError) {
      process.stderr.write(`kassa ${command}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

export function runBackupCommand(args: string[]): Promise<number> {
  return guarded('backup', async () => {
    const { positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: {} });
    if (positionals.length !== 1) throw new UsageError('name one directory or file to write the backup to');
    const config = loadConfig();
    const now = new Date();
    const { file, manifest } = config.databases.production.kind === 'postgres' ? await backupPostgres(config, positionals[0], now) : await backupEmbedded(config, positionals[0], now);
    const sizes = manifest.environments.map((p) => `${p.environment} ${p.bytes} bytes, ${p.migrations.length} migrations`).join('; ');
    process.stdout.write(`Wrote ${file} (${manifest.database}: ${sizes}).\n`);
    return 0;
  });
}

export function runRestoreCommand(args: string[]): Promise<number> {
  return guarded('restore', async () => {
    const { positionals, values } = parseArgs({ args, strict: true, allowPositionals: true, options: { force: { type: 'boolean', default: false } } });
    if (positionals.length !== 1) throw new UsageError('name the backup file to restore');
    const config = loadConfig();
    const backup = await verifyBackup(positionals[0]);
    const { manifest } = backup;
    if (config.databases.production.kind === 'postgres') await restorePostgres(config, backup, values.force);
    else await restoreEmbedded(config, backup, values.force);
    const where = config.databases.production.kind === 'postgres' ? 'the databases of DATABASE_URL and SANDBOX_DATABASE_URL' : `DATA_DIR (${config.databases.production.dataDir.replace(/\/production$/, '')})`;
    process.stdout.write(`Restored the backup of ${manifest.createdAt} (Kassa ${manifest.kassaVersion}) into ${where}. Start the server: pending migrations are applied at start.\n`);
    return 0;
  });
}
