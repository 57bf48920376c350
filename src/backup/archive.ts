// A Kassa backup is one file: a tar archive (ustar) whose first entry is `manifest.json` and whose
// other entries are the environments' databases, one each. The manifest names the Kassa version, when
// it was made, the kind of database, and per environment its part's size, SHA-256 and the migrations
// applied to it. A backup is written aside and renamed into place, so a failed one leaves nothing;
// it is read back only after every part has matched its checksum.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { environmentNames, type EnvironmentName } from '../config.ts';

/** Why a backup cannot be made or restored, said for the operator; the command exits 1 with it. */
export class BackupError extends Error {}

export const manifestName = 'manifest.json';
const format = 'kassa-backup';
const formatVersion = 1;

export type DatabaseKind = 'embedded' | 'postgres';

export interface EnvironmentPart {
  environment: EnvironmentName;
  /** The entry's name in the archive. */
  file: string;
  bytes: number;
  sha256: string;
  /** The migrations applied to the database, by name, in order. */
  migrations: string[];
}

export interface Manifest {
  format: typeof format;
  formatVersion: typeof formatVersion;
  kassaVersion: string;
  createdAt: string;
  database: DatabaseKind;
  /** For an embedded backup: the PGlite version that wrote the images. */
  pgliteVersion?: string;
  environments: EnvironmentPart[];
}

/** A part to write: its description and its content, read once. */
export interface PartSource extends EnvironmentPart {
  content(): Readable | AsyncIterable<Uint8Array>;
}

const block = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** A ustar header for a regular file. */
function header(name: string, size: number, mtime: Date): Buffer {
  const h = Buffer.alloc(block);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(0o600, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write('0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

const padding = (size: number) => Buffer.alloc((block - (size % block)) % block);

/** The SHA-256 and size of a stream of bytes. */
export async function digest(content: Readable | AsyncIterable<Uint8Array>): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of content) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/**
 * Where `target` says to write: into an existing directory under a name of its own, or as the file
 * it names, whose directory must exist. An existing file is never overwritten.
 */
export async function backupPath(target: string, now: Date): Promise<string> {
  const resolved = path.resolve(target);
  const found = await stat(resolved).catch(() => null);
  if (found?.isDirectory()) return path.join(resolved, `kassa-backup-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.tar`);
  if (found) throw new BackupError(`${resolved} already exists: name a new file or a directory to write the backup in.`);
  const parent = await stat(path.dirname(resolved)).catch(() => null);
  if (!parent?.isDirectory()) throw new BackupError(`The directory ${path.dirname(resolved)} does not exist: create it first, or name an existing directory.`);
  return resolved;
}

/** Writes the manifest and the parts to `file`, aside first, so a failure leaves nothing behind. */
export async function writeBackup(file: string, manifest: Omit<Manifest, 'environments' | 'format' | 'formatVersion'>, parts: PartSource[]): Promise<Manifest> {
  const full: Manifest = {
    format,
    formatVersion,
    ...manifest,
    environments: parts.map(({ environment, file: name, bytes, sha256, migrations }) => ({ environment, file: name, bytes, sha256, migrations })),
  };
  const partial = `${file}.${randomBytes(4).toString('hex')}.partial`;
  const handle = await open(partial, 'wx', 0o600);
  try {
    const mtime = new Date(manifest.createdAt);
    const manifestBytes = Buffer.from(`${JSON.stringify(full, null, 2)}\n`);
    await handle.write(Buffer.concat([header(manifestName, manifestBytes.length, mtime), manifestBytes, padding(manifestBytes.length)]));
    for (const part of parts) {
      await handle.write(header(part.file, part.bytes, mtime));
      const written = await digest(
        (async function* () {
          for await (const chunk of part.content()) {
            await handle.write(chunk);
            yield chunk as Uint8Array;
          }
        })(),
      );
      if (written.bytes !== part.bytes || written.sha256 !== part.sha256) throw new BackupError(`The ${part.environment} database changed while it was written: run the backup again.`);
      await handle.write(padding(part.bytes));
    }
    await handle.write(Buffer.alloc(block * 2));
    await handle.sync();
    await handle.close();
    await rename(partial, file);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw error;
  }
  return full;
}

/** A verified backup: its manifest, and a reader for each environment's part. */
export interface VerifiedBackup {
  manifest: Manifest;
  read(environment: EnvironmentName): Readable;
}

interface Entry {
  name: string;
  offset: number;
  size: number;
}

async function entriesOf(file: string): Promise<Entry[]> {
  const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new BackupError(error.code === 'ENOENT' ? `There is no backup at ${file}.` : `The backup ${file} cannot be read: ${error.message}`);
  });
  try {
    const { size: total } = await handle.stat();
    const entries: Entry[] = [];
    let offset = 0;
    const h = Buffer.alloc(block);
    while (offset + block <= total) {
      await handle.read(h, 0, block, offset);
      if (h.every((byte) => byte === 0)) return entries;
      let sum = 0;
      for (let i = 0; i < block; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
      if (h.toString('ascii', 257, 262) !== 'ustar' || parseInt(h.toString('ascii', 148, 156), 8) !== sum) break;
      const name = h.toString('utf8', 0, 100).replace(/\0.*$/s, '');
      const size = parseInt(h.toString('ascii', 124, 136), 8);
      if (!Number.isSafeInteger(size) || offset + block + size > total) break;
      entries.push({ name, offset: offset + block, size });
      offset += block + size + ((block - (size % block)) % block);
    }
    throw new BackupError(`${file} is not a Kassa backup, or it is cut short or damaged (no readable archive).`);
  } finally {
    await handle.close();
  }
}

async function textOf(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function manifestOf(text: string, file: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BackupError(`The manifest of ${file} is not valid JSON: the backup is damaged.`);
  }
  const m = value as Partial<Manifest> | null;
  const isPart = (p: Partial<EnvironmentPart> | null) =>
    !!p &&
    environmentNames.includes(p.environment as EnvironmentName) &&
    typeof p.file === 'string' &&
    Number.isSafeInteger(p.bytes) &&
    typeof p.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(p.sha256) &&
    Array.isArray(p.migrations) &&
    p.migrations.every((name) => typeof name === 'string');
  if (
    !m ||
    m.format !== format ||
    typeof m.kassaVersion !== 'string' ||
    typeof m.createdAt !== 'string' ||
    (m.database !== 'embedded' && m.database !== 'postgres') ||
    !Array.isArray(m.environments) ||
    !m.environments.every(isPart) ||
    environmentNames.some((name) => m.environments!.filter((p) => p.environment === name).length !== 1)
  ) {
    throw new BackupError(`The manifest of ${file} is not a Kassa backup manifest (format, version, database, and one part per environment): the backup is damaged.`);
  }
  if (m.formatVersion !== formatVersion) throw new BackupError(`${file} is a backup of format version ${m.formatVersion}; this Kassa reads version ${formatVersion}.`);
  return m as Manifest;
}

/** Reads a backup's manifest and checks every part against it, before anything is restored from it. */
export async function verifyBackup(file: string): Promise<VerifiedBackup> {
  const resolved = path.resolve(file);
  const entries = await entriesOf(resolved);
  const first = entries[0];
  if (first?.name !== manifestName) throw new BackupError(`${resolved} has no ${manifestName} first: it is not a Kassa backup.`);
  const range = (entry: Entry) => createReadStream(resolved, { start: entry.offset, end: entry.offset + entry.size - 1 });
  const manifest = manifestOf(await textOf(range(first)), resolved);
  const byEnvironment = new Map<EnvironmentName, Entry>();
  for (const part of manifest.environments) {
    const entry = entries.find((e) => e.name === part.file);
    if (!entry) throw new BackupError(`${resolved} lacks ${part.file}, the ${part.environment} database its manifest lists.`);
    const actual = entry.size === 0 ? { bytes: 0, sha256: createHash('sha256').digest('hex') } : await digest(range(entry));
    if (actual.bytes !== part.bytes || actual.sha256 !== part.sha256) {
      throw new BackupError(`The ${part.environment} database in ${resolved} does not match its checksum in the manifest: the backup is damaged.`);
    }
    byEnvironment.set(part.environment, entry);
  }
  return { manifest, read: (environment) => range(byEnvironment.get(environment)!) };
}
