// What a backup records of the software that made it, and the check that this Kassa can restore it:
// every migration applied to a backed-up database must be one this Kassa has (a backup made by a
// newer Kassa may hold tables this one does not know). Older backups are migrated forward at start.
import { readFile } from 'node:fs/promises';
import { readMigrationFiles } from '../db/migrate.ts';
import { BackupError, type Manifest } from './archive.ts';

export const { version: kassaVersion } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The PGlite version that writes the embedded images, when it can be read. */
export async function pgliteVersion(): Promise<string | undefined> {
  const file = new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url);
  return readFile(file, 'utf8').then((text) => (JSON.parse(text) as { version: string }).version, () => undefined);
}

export function sameMigrations(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

export async function checkRestorable(manifest: Manifest): Promise<void> {
  const known = new Set((await readMigrationFiles()).map((m) => m.name));
  for (const part of manifest.environments) {
    const unknown = part.migrations.filter((name) => !known.has(name));
    if (unknown.length) {
      throw new BackupError(
        `The ${part.environment} database in this backup has migrations this Kassa does not have (${unknown.join(', ')}): ` +
          `restore it with Kassa ${manifest.kassaVersion} or newer (nothing was written).`,
      );
    }
  }
}
