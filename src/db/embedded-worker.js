// The embedded PostgreSQL (PGlite) of one environment, on a thread of its own: the SQL runs in
// WebAssembly, and on the server's thread it would stall every request while it ran. The server
// talks to it through ./embedded.ts, which hands it the same calls the Prisma adapter and the
// migration runner make of PGlite, one message each. Plain JavaScript: a worker thread starts
// without the server's TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, messages } from '@electric-sql/pglite';

/** Types whose text the caller parses itself (its parsers are functions, which cannot be posted). */
function rawText(types) {
  if (!types?.length) return undefined;
  const key = types.join(',');
  let parsers = rawParsers.get(key);
  if (!parsers) rawParsers.set(key, (parsers = Object.fromEntries(types.map((type) => [type, (text) => text]))));
  return parsers;
}
const rawParsers = new Map();

/**
 * An error as plain data: a PostgreSQL error keeps its own text fields (code, detail, constraint…);
 * what PGlite adds of the query (its text, parameters and options) stays here.
 */
function describe(error) {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields = {};
  for (const [name, value] of Object.entries(error)) {
    if (!['query', 'params', 'queryOptions'].includes(name) && (typeof value === 'string' || typeof value === 'number')) fields[name] = value;
  }
  return { message: error.message, database: error instanceof messages.DatabaseError, fields };
}

/** Answers the call; an answer that cannot be posted is answered with why. */
function reply(id, answer) {
  try {
    parentPort.postMessage({ id, ...answer });
  } catch (error) {
    parentPort.postMessage({ id, error: { message: `The embedded database could not answer: ${error.message}` } });
  }
}

// A `memory://` database may start from an image of a data directory (see EmbeddedDatabase.open).
const image = workerData.image ? { loadDataDir: new Blob([workerData.image]) } : undefined;
// PGlite's own settings, with a smaller buffer pool: PostgreSQL touches all of shared_buffers as
// it starts, so PGlite's default of 128 MB is resident from the first second, per environment.
// A block PostgreSQL evicts from its buffers is still in the operating system's page cache, a
// copy away (docs/operations.md, "Memory").
const startParams = [
  ...PGlite.defaultStartParams,
  '-c',
  'shared_buffers=16MB',
  '-c',
  'wal_buffers=1MB',
];
// PostgreSQL's WebAssembly arrives compiled from the server's thread (embedded.ts), shared by every
// database thread; for a `memory://` database, initdb's and PGlite's file bundle too.
const { pgliteWasmModule, initdbWasmModule, fsBundle } = workerData;
const pglite = await PGlite.create(workerData.dataDir, { ...image, startParams, pgliteWasmModule, initdbWasmModule, fsBundle });
/** The channels listened on (see `listen`). */
const listening = new Set();
/** Open transactions by id: the transaction handle, and how to end it. */
const transactions = new Map();

function queryOf(on, { sql, params, rowMode, rawTypes }) {
  return on.query(sql, params, { rowMode, parsers: rawText(rawTypes) });
}

const operations = {
  query: (message) => queryOf(pglite, message),
  exec: ({ sql }) => pglite.exec(sql),
  /** Opens a transaction and holds it open until `end`: PGlite runs nothing else meanwhile. */
  begin: ({ transaction }) =>
    new Promise((begun, failed) => {
      const open = {};
      open.ended = pglite
        .transaction(
          (tx) =>
            new Promise((commit, rollback) => {
              Object.assign(open, { tx, commit, rollback });
              begun();
            }),
        )
        .finally(() => transactions.delete(transaction));
      // A failed BEGIN fails `begin`; a later failure is reported by `end`.
      open.ended.catch(failed);
      transactions.set(transaction, open);
    }),
  txQuery: (message) => queryOf(transactionOf(message).tx, message),
  txExec: (message) => transactionOf(message).tx.exec(message.sql),
  txRollback: (message) => transactionOf(message).tx.rollback(),
  /** Ends a transaction: committed unless rolled back already, or rolled back with `fail`. */
  end: (message) => {
    const open = transactionOf(message);
    if (message.fail) open.rollback(new Error('The transaction failed.'));
    else open.commit();
    return open.ended.then(() => undefined);
  },
  /**
   * An image of the data directory (a gzipped tar, as PGlite dumps it), consistent: taken after a
   * checkpoint, while no transaction is open and none may begin.
   */
  dump: async () => {
    await pglite.exec('CHECKPOINT');
    const image = await pglite._runExclusiveTransaction(() => pglite.dumpDataDir('gzip'));
    return new Uint8Array(await image.arrayBuffer());
  },
  /** Listens on a channel: its notifications are posted to the server's thread as they arrive (after their commit). */
  listen: async ({ channel }) => {
    if (listening.has(channel)) return;
    listening.add(channel);
    await pglite.listen(channel, (payload) => parentPort.postMessage({ notification: { channel, payload } }));
  },
  /** Closes the database once the open transactions have ended. */
  close: async () => {
    await Promise.allSettled([...transactions.values()].map((open) => open.ended));
    await pglite.close();
  },
};

function transactionOf({ transaction }) {
  const open = transactions.get(transaction);
  if (!open?.tx) throw new Error(`No open transaction ${transaction}.`);
  return open;
}

parentPort.on('message', async (message) => {
  try {
    reply(message.id, { value: await operations[message.op](message) });
  } catch (error) {
    reply(message.id, { error: describe(error) });
  }
});
parentPort.postMessage({ ready: true });
