// One Prisma client per environment: embedded PGlite (a directory per environment) by default,
// or a PostgreSQL server through a connection pool.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { DatabaseConfig } from '../config.ts';
import { PrismaClient } from '../generated/prisma/client.ts';

export type Db = PrismaClient;

export interface Database {
  prisma: PrismaClient;
  /** The same connection, as the schema engine takes it (for migrations). */
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  close(): Promise<void>;
}

export class DatabaseLockedError extends Error {}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * An embedded database directory may be open in one process only: a second one would corrupt it.
 * A lock file holds the owner's pid; a lock left by a process that is gone is taken over.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = path.join(dataDir, 'kassa.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(lockPath, String(process.pid), { flag: 'wx' });
      return () => rm(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(await readFile(lockPath, 'utf8').catch(() => ''));
      if (owner && owner !== process.pid && isRunning(owner)) {
        throw new DatabaseLockedError(
          `The embedded database in ${dataDir} is in use by another Kassa process (pid ${owner}). ` +
            'Stop that server first, or use a PostgreSQL server (DATABASE_URL and SANDBOX_DATABASE_URL).',
        );
      }
      await rm(lockPath, { force: true });
    }
  }
  throw new DatabaseLockedError(`Could not lock the embedded database in ${dataDir}.`);
}

async function openPGlite(dataDir: string): Promise<{ pglite: PGlite; unlock: () => Promise<void> }> {
  if (dataDir.startsWith('memory://')) return { pglite: await PGlite.create(dataDir), unlock: async () => {} };
  await mkdir(dataDir, { recursive: true });
  const unlock = await lockDataDir(dataDir);
  try {
    return { pglite: await PGlite.create(dataDir), unlock };
  } catch (error) {
    await unlock();
    throw error;
  }
}

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  if (config.kind === 'embedded') {
    const { pglite, unlock } = await openPGlite(config.dataDir);
    const adapterFactory = new PrismaPGlite(pglite);
    const prisma = new PrismaClient({ adapter: adapterFactory });
    return {
      prisma,
      adapterFactory,
      async close() {
        await prisma.$disconnect();
        await pglite.close();
        await unlock();
      },
    };
  }
  const adapterFactory = new PrismaPg({ connectionString: config.url, max: config.poolSize });
  const prisma = new PrismaClient({ adapter: adapterFactory });
  return {
    prisma,
    adapterFactory,
    async close() {
      await prisma.$disconnect();
    },
  };
}
