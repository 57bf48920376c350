// Backup and restore of the embedded databases (DATA_DIR/production and DATA_DIR/sandbox). Each
// environment's part is the image PGlite dumps of its data directory, taken between transactions
// after a checkpoint. A running server is asked for the images through its control socket (only
// one process may open a data directory); a stopped one's directories are opened here. A restore
// loads each image with PGlite into a directory aside, checks it, and only then moves both into
// DATA_DIR, so a failed restore leaves DATA_DIR as it was.
import { mkdir, mkdtemp, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { PGlite } from '@electric-sql/pglite';
import { environmentNames, type Config, type EnvironmentName } from '../config.ts';
import { dataDirOwner, openDatabase } from '../db/client.ts';
import { databaseState } from '../db/state.ts';
import { askServer, controlSocketPath, type BackupAnswer } from './control.ts';
import { BackupError, backupPath, digest, writeBackup, type Manifest, type VerifiedBackup } from './archive.ts';
import { checkRestorable, kassaVersion, pgliteVersion, sameMigrations } from './versions.ts';

/** DATA_DIR, the directory that holds both environments' data directories. */
function dataRootOf(config: Config): string {
  const production = config.databases.production;
  if (production.kind !== 'embedded') throw new Error('not an embedded database');
  if (production.dataDir.startsWith('memory://')) throw new BackupError('DATA_DIR is memory://: the databases are kept in memory only, and there is nothing on disk to back up or restore into.');
  return path.dirname(production.dataDir);
}

interface Image {
  environment: EnvironmentName;
  image: Uint8Array;
  migrations: string[];
}

/** The images, from the server that holds the data directories (pid `owner`). */
async function imagesFromServer(root: string, owner: number): Promise<Image[]> {
  const { answer, rest } = await askServer(root, 'backup').catch((error: NodeJS.ErrnoException) => {
    throw new BackupError(
      `The Kassa server (pid ${owner}) holds ${root} open, and its control socket ${controlSocketPath(root)} does not answer (${error.code ?? error.message}). ` +
        'A server of an older version has none: stop it and back up again, or restart it.',
    );
  });
  const reply = answer as BackupAnswer;
  if (!reply.ok) throw new BackupError(`The Kassa server (pid ${owner}) could not take the backup: ${reply.error}`);
  let offset = 0;
  const images = reply.parts.map((part) => {
    const image = rest.subarray(offset, offset + part.bytes);
    offset += part.bytes;
    return { environment: part.environment, image, migrations: part.migrations };
  });
  if (offset !== rest.length) throw new BackupError(`The Kassa server (pid ${owner}) sent ${rest.length} bytes of images where it announced ${offset}: run the backup again.`);
  return images;
}

/** The images, opening each data directory here (no server holds them). */
async function imagesFromDirectories(config: Config): Promise<Image[]> {
  const images: Image[] = [];
  for (const environment of environmentNames) {
    const database = config.databases[environment];
    if (database.kind !== 'embedded') throw new Error('not an embedded database');
    if (!(await stat(path.join(database.dataDir, 'PG_VERSION')).catch(() => null))) {
      throw new BackupError(`There is no embedded database in ${database.dataDir}: check DATA_DIR (nothing was written).`);
    }
    const opened = await openDatabase(database);
    try {
      const { migrations } = await databaseState((sql) => opened.migrationTarget.query(sql));
      images.push({ environment, image: await opened.dumpDataDir!(), migrations });
    } finally {
      await opened.close();
    }
  }
  return images;
}

/** Writes a backup of both embedded databases to `target` (a new file, or a directory to write one in). */
export async function backupEmbedded(config: Config, target: string, now: Date): Promise<{ file: string; manifest: Manifest }> {
  const root = dataRootOf(config);
  const file = await backupPath(target, now);
  let owner: number | null = null;
  for (const name of environmentNames) owner ??= await dataDirOwner((config.databases[name] as { dataDir: string }).dataDir);
  const images = owner ? await imagesFromServer(root, owner) : await imagesFromDirectories(config);
  const parts = await Promise.all(
    images.map(async ({ environment, image, migrations }) => ({
      environment,
      file: `${environment}.tar.gz`,
      migrations,
      ...(await digest(Readable.from([image]))),
      content: () => Readable.from([image]),
    })),
  );
  const manifest = await writeBackup(file, { kassaVersion, createdAt: now.toISOString(), database: 'embedded', pgliteVersion: await pgliteVersion() }, parts);
  return { file, manifest };
}

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Restores a verified backup into DATA_DIR, which must be empty (or, with `force`, whose databases
 * are replaced), with no server running on it.
 */
export async function restoreEmbedded(config: Config, backup: VerifiedBackup, force: boolean): Promise<string> {
  const root = dataRootOf(config);
  if (backup.manifest.database !== 'embedded') {
    throw new BackupError('This backup is of PostgreSQL databases: set DATABASE_URL and SANDBOX_DATABASE_URL to the empty databases to restore it into.');
  }
  await checkRestorable(backup.manifest);
  for (const name of environmentNames) {
    const owner = await dataDirOwner((config.databases[name] as { dataDir: string }).dataDir);
    if (owner) throw new BackupError(`A Kassa server (pid ${owner}) is running on ${root}: stop it before restoring (nothing was written).`);
  }
  const existing = await readdir(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (existing?.length && !force) throw new BackupError(`${root} is not empty: restore into a new DATA_DIR, or pass --force to replace its databases (nothing was written).`);
  await mkdir(root, { recursive: true });
  const stage = await mkdtemp(path.join(root, '.restore-'));
  try {
    for (const part of backup.manifest.environments) {
      const dir = path.join(stage, part.environment);
      const pglite = await PGlite.create(dir, { loadDataDir: new Blob([new Uint8Array(await bytesOf(backup.read(part.environment)))]) }).catch((error: Error) => {
        throw new BackupError(`The ${part.environment} database in the backup cannot be opened: ${error.message}`);
      });
      try {
        const { migrations } = await databaseState(async (sql) => (await pglite.query(sql)).rows as never[]);
        if (!sameMigrations(migrations, part.migrations)) throw new BackupError(`The ${part.environment} database in the backup does not hold the migrations its manifest lists.`);
      } finally {
        await pglite.close();
      }
      // The image holds the lock file of the server it was taken from.
      await rm(path.join(dir, 'kassa.lock'), { force: true });
    }
    for (const part of backup.manifest.environments) {
      const dataDir = (config.databases[part.environment] as { dataDir: string }).dataDir;
      if (force) await rm(dataDir, { recursive: true, force: true });
      await rename(path.join(stage, part.environment), dataDir);
    }
  } catch (error) {
    await rm(stage, { recursive: true, force: true });
    if (existing === null) await rmdir(root).catch(() => undefined);
    throw error;
  }
  await rm(stage, { recursive: true, force: true });
  return root;
}
