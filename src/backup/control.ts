// The control socket of a server on the embedded database: a Unix socket in DATA_DIR/.control/, a
// directory only the server's user may enter, so reaching the socket takes the same rights as
// the server's own. PGlite lets one process open a data directory, so the commands
// that read a running server's databases (`kassa backup`, `kassa migrate --check`) ask the server
// through it. One request per connection: a JSON line; the answer is a JSON line, followed for a
// backup by the environments' images, byte for byte, in the order the answer lists them.
import { chmod, mkdir, rm } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import path from 'node:path';
import { environmentNames, type EnvironmentName } from '../config.ts';
import type { Database } from '../db/client.ts';
import { databaseState, type DatabaseState } from '../db/state.ts';
import type { Logger } from '../logger.ts';

export function controlSocketPath(dataRoot: string): string {
  return path.join(dataRoot, '.control', 'kassa.sock');
}

/** Unix socket paths are limited to 107 bytes on Linux (103 on macOS). */
const maxSocketPath = 103;

/** What the server answers about its databases. */
export type StatusAnswer = { ok: true; environments: Record<EnvironmentName, DatabaseState> } | { ok: false; error: string };
export type BackupAnswer = { ok: true; parts: { environment: EnvironmentName; bytes: number; migrations: string[] }[] } | { ok: false; error: string };

/**
 * Listens on the control socket until the returned function is called. A socket left by a server
 * that is gone is replaced (the data directory's lock already proved this process its owner).
 */
export async function serveControlSocket(dataRoot: string, databases: Record<EnvironmentName, Database>, logger: Logger): Promise<() => Promise<void>> {
  const socketPath = controlSocketPath(dataRoot);
  if (Buffer.byteLength(socketPath) > maxSocketPath) {
    logger.warn({ socketPath }, 'DATA_DIR is too long a path for the control socket: `kassa backup` cannot read this server while it runs');
    return async () => {};
  }
  await mkdir(path.dirname(socketPath), { recursive: true, mode: 0o700 });
  await chmod(path.dirname(socketPath), 0o700);
  await rm(socketPath, { force: true });
  const server = createServer((socket) => {
    let request = '';
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk) => {
      request += chunk;
      if (!request.includes('\n')) {
        if (request.length > 1024) socket.destroy();
        return;
      }
      socket.removeAllListeners('data');
      answer(request.slice(0, request.indexOf('\n')), socket).catch((error) => {
        logger.error({ err: error }, 'control socket request failed');
        socket.end(`${JSON.stringify({ ok: false, error: (error as Error).message })}\n`);
      });
    });
  });

  async function answer(line: string, socket: Socket): Promise<void> {
    const command = (JSON.parse(line) as { command?: string }).command;
    if (command === 'status') {
      const environments = {} as Record<EnvironmentName, DatabaseState>;
      for (const name of environmentNames) environments[name] = await databaseState((sql) => databases[name].migrationTarget.query(sql));
      socket.end(`${JSON.stringify({ ok: true, environments } satisfies StatusAnswer)}\n`);
      return;
    }
    if (command === 'backup') {
      const parts = [];
      for (const name of environmentNames) {
        const { migrations } = await databaseState((sql) => databases[name].migrationTarget.query(sql));
        const image = await databases[name].dumpDataDir!();
        parts.push({ environment: name, image, migrations });
      }
      logger.info({ environments: parts.map((p) => ({ environment: p.environment, bytes: p.image.length })) }, 'backup taken through the control socket');
      socket.write(`${JSON.stringify({ ok: true, parts: parts.map((p) => ({ environment: p.environment, bytes: p.image.length, migrations: p.migrations })) } satisfies BackupAnswer)}\n`);
      for (const part of parts) socket.write(part.image);
      socket.end();
      return;
    }
    socket.end(`${JSON.stringify({ ok: false, error: `unknown command ${JSON.stringify(command)}` })}\n`);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(path.dirname(socketPath), { recursive: true, force: true });
  };
}

/** Sends one command to the server's control socket; the answer's JSON line, and the bytes after it. */
export async function askServer(dataRoot: string, command: 'status' | 'backup'): Promise<{ answer: unknown; rest: Buffer }> {
  const socket = createConnection(controlSocketPath(dataRoot));
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on('connect', () => socket.write(`${JSON.stringify({ command })}\n`));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', resolve);
    socket.on('error', reject);
  });
  const all = Buffer.concat(chunks);
  const newline = all.indexOf(10);
  if (newline < 0) throw new Error('The server closed the control socket without answering.');
  return { answer: JSON.parse(all.subarray(0, newline).toString('utf8')), rest: all.subarray(newline + 1) };
}
