// One Prisma client per environment: embedded PGlite (a directory per environment) by default,
// or a PostgreSQL server through a connection pool.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, Transaction } from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';
import type { DatabaseConfig } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { PoolConnections } from '../observability/metrics.ts';
import { PrismaClient } from '../generated/prisma/client.ts';
import { migrate, type MigrationTarget } from './migrate.ts';
import { EmbeddedDatabase } from './embedded.ts';
import { withClock } from './clock.ts';
import { withTraceContext } from './trace-context.ts';
import { embeddedNotifications, postgresNotifications, type Notifications } from './notifications.ts';

export type Db = PrismaClient;

export interface Database {
  prisma: PrismaClient;
  /** The SQL statements sent so far: what a test counts to prove a nested page is not read row by row. */
  statements(): number;
  /**
   * The connections as the metrics report them: a PostgreSQL pool's own counts; the embedded
   * database's one connection, idle while no statement is in flight, and the statements queued behind it.
   */
  connections(): PoolConnections;
  /** The same database, as the migration runner takes it. */
  migrationTarget: MigrationTarget;
  /** An embedded database's consistent image, taken while it serves (see EmbeddedDatabase.dumpDataDir). */
  dumpDataDir?: () => Promise<Uint8Array>;
  /** What the database announces (NOTIFY), heard on one connection for every channel. */
  notifications: Notifications;
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

/** The pid of the live process that holds an embedded database directory open, if one does. */
export async function dataDirOwner(dataDir: string): Promise<number | null> {
  const owner = Number(await readFile(path.join(dataDir, 'kassa.lock'), 'utf8').catch(() => ''));
  return owner && owner !== process.pid && isRunning(owner) ? owner : null;
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

async function openPGlite(dataDir: string, onFailure?: (error: Error) => void, image?: ArrayBuffer): Promise<{ embedded: EmbeddedDatabase; unlock: () => Promise<void> }> {
  if (dataDir.startsWith('memory://')) return { embedded: await EmbeddedDatabase.open(dataDir, onFailure, image), unlock: async () => {} };
  await mkdir(dataDir, { recursive: true });
  const unlock = await lockDataDir(dataDir);
  try {
    // Creating the cluster (initdb) grows the database thread's memory by about half a gigabyte,
    // which WebAssembly never gives back: a new cluster is opened once to create it, closed, and
    // opened again in a fresh thread, which holds only what serving needs.
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await (await EmbeddedDatabase.open(dataDir)).close();
    return { embedded: await EmbeddedDatabase.open(dataDir, onFailure), unlock };
  } catch (error) {
    await unlock();
    throw error;
  }
}

/** Counts the statements a client sends, from Prisma's query events (one per SQL statement). */
function countingStatements(client: PrismaClient<'query'>) {
  let sent = 0;
  client.$on('query', () => {
    sent++;
  });
  return { client: client as unknown as PrismaClient, statements: () => sent };
}

/**
 * `logger`, when given, hears of an embedded database whose thread stopped without being closed.
 * `clock` stamps the rows' `createdAt` and `modifiedAt` (see clock.ts): the server passes the clock its requests read.
 * `memoryImage` is what a `memory://` embedded database starts from (see `migratedMemoryImage`).
 */
export async function openDatabase(config: DatabaseConfig, logger?: Logger, clock: () => Date = () => new Date(), memoryImage?: ArrayBuffer): Promise<Database> {
  if (config.kind === 'embedded') {
    const { embedded, unlock } = await openPGlite(
      config.dataDir,
      (error) => logger?.error({ err: error }, 'the embedded database stopped: every query fails until the server restarts'),
      memoryImage,
    );
    const pglite = embedded.asPGlite();
    // One connection serves every transaction in turn: under a burst a transaction may queue for
    // longer than Prisma's 2 s default before it starts.
    const { client, statements } = countingStatements(new PrismaClient({ adapter: exactDecimals(new PrismaPGlite(pglite)), transactionOptions: { maxWait: 30_000, timeout: 30_000 }, log: [{ emit: 'event', level: 'query' }] }));
    const prisma = withTraceContext(withClock(client, clock));
    const notifications = embeddedNotifications(embedded, quiet(logger));
    return {
      prisma,
      statements,
      connections: () => ({ total: 1, idle: embedded.inFlight === 0 ? 1 : 0, waiting: Math.max(0, embedded.inFlight - 1) }),
      migrationTarget: pgliteTarget(pglite),
      dumpDataDir: () => embedded.dumpDataDir(),
      notifications,
      async close() {
        if (embedded.closed) return;
        await notifications.close();
        await prisma.$disconnect();
        await embedded.close();
        await unlock();
      },
    };
  }
  // The pool is Kassa's own, handed to the adapter, so its counts can be read (and it is ended here).
  const pool = new pg.Pool({ connectionString: config.url, max: config.poolSize });
  // PostgreSQL may end an idle connection (a restart, a terminated backend, a database dropped at
  // shutdown). The pool drops it and opens another when next needed; without a listener, its
  // 'error' event would end the process.
  pool.on('error', (error) => quiet(logger).warn({ err: error }, 'PostgreSQL ended an idle database connection; a new one is opened when needed'));
  const { client, statements } = countingStatements(
    new PrismaClient({ adapter: exactDecimals(oneStatementAtATime(new PrismaPg(pool))), transactionOptions: { maxWait: 10_000, timeout: 15_000 }, log: [{ emit: 'event', level: 'query' }] }),
  );
  const prisma = withTraceContext(withClock(client, clock));
  const notifications = postgresNotifications(config.url, quiet(logger));
  return {
    prisma,
    statements,
    connections: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    migrationTarget: postgresTarget(config.url),
    notifications,
    async close() {
      await notifications.close();
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/** The logger given, or one that drops everything (a CLI command opening a database for a moment). */
function quiet(logger: Logger | undefined): Logger {
  return logger ?? ({ warn: () => {}, error: () => {}, info: () => {}, debug: () => {} } as unknown as Logger);
}

/**
 * The Decimal fields of prisma/schema.prisma, by field and column name. Prisma reads a relation as
 * JSON built in the statement (relationJoins), and parses that JSON into JavaScript numbers: a
 * decimal of more than 15 significant digits (a unit amount of 99999998.123456789012) would come
 * back rounded. Built as text instead, it reaches Prisma's Decimal whole.
 */
export const decimalColumns: readonly (readonly [field: string, column: string])[] = [['unitAmount', 'unit_amount']];
const decimalsInJson = new RegExp(`'(${decimalColumns.map(([field]) => field).join('|')})', ("t\\d+"\\."(?:${decimalColumns.map(([, column]) => column).join('|')})")(?=[,)])`, 'g');

/** The statement with each Decimal field of a relation read as JSON built from its column as text. */
export function decimalsAsText(sql: string): string {
  return sql.includes('JSONB_BUILD_OBJECT') ? sql.replace(decimalsInJson, "'$1', $2::text") : sql;
}

/** A driver adapter whose statements build JSON decimals as text (see `decimalsAsText`), in transactions and out. */
function exactDecimals(factory: SqlDriverAdapterFactory): SqlDriverAdapterFactory {
  const rewritten = <T extends Pick<SqlDriverAdapter, 'queryRaw'>>(queryable: T): T =>
    Object.assign(Object.create(queryable) as T, { queryRaw: (query: SqlQuery) => queryable.queryRaw({ ...query, sql: decimalsAsText(query.sql) }) });
  const connect = async (): Promise<SqlDriverAdapter> => {
    const adapter = await factory.connect();
    const startTransaction = async (...args: Parameters<SqlDriverAdapter['startTransaction']>) => rewritten(await adapter.startTransaction(...args));
    return Object.assign(rewritten(adapter), { startTransaction });
  };
  return Object.assign(Object.create(factory) as SqlDriverAdapterFactory, { connect });
}

/**
 * A transaction is one connection, and Prisma sends some statements of one query at once (the
 * related rows of a nested read, its query plan's joins). pg queues such statements itself, a use
 * it deprecates ("client is already executing a query") and drops in pg@9: here each transaction
 * sends its statements one after another instead.
 */
function oneStatementAtATime(factory: SqlDriverAdapterFactory): SqlDriverAdapterFactory {
  const connect = async (): Promise<SqlDriverAdapter> => {
    const adapter = await factory.connect();
    const startTransaction = async (...args: Parameters<SqlDriverAdapter['startTransaction']>) => inTurn(await adapter.startTransaction(...args));
    return Object.assign(Object.create(adapter) as SqlDriverAdapter, { startTransaction });
  };
  return Object.assign(Object.create(factory) as SqlDriverAdapterFactory, { connect });
}

function inTurn(transaction: Transaction): Transaction {
  let last: Promise<unknown> = Promise.resolve();
  const turn = <T>(statement: () => Promise<T>): Promise<T> => {
    const result = last.then(statement);
    last = result.catch(() => {});
    return result;
  };
  // Savepoints are statements too: the adapter sends them through `executeRaw`, which resolves to the one below.
  return Object.assign(Object.create(transaction) as Transaction, {
    queryRaw: (query: SqlQuery) => turn(() => transaction.queryRaw(query)),
    executeRaw: (query: SqlQuery) => turn(() => transaction.executeRaw(query)),
    commit: () => turn(() => transaction.commit()),
    rollback: () => turn(() => transaction.rollback()),
  });
}

// An embedded directory is held by one process (see lockDataDir), so it needs no database lock.
function pgliteTarget(pglite: PGlite): MigrationTarget {
  const on = (db: Pick<PGlite, 'exec' | 'query'>) => ({
    exec: async (sql: string) => void (await db.exec(sql)),
    query: async <T>(sql: string, params?: unknown[]) => (await db.query<T>(sql, params)).rows,
  });
  return {
    ...on(pglite),
    transaction: (work) => pglite.transaction((tx) => work(on(tx))),
    locked: (work) => work(),
  };
}

// Prisma's own advisory lock key, so Kassa and `prisma migrate deploy` exclude each other too.
const migrationLockKey = 72707369;

function postgresTarget(url: string): MigrationTarget {
  let client: pg.Client | undefined;
  const connection = () => {
    if (!client) throw new Error('migration target used outside locked()');
    return client;
  };
  const on = () => ({
    exec: async (sql: string) => void (await connection().query(sql)),
    query: async <T>(sql: string, params?: unknown[]) => (await connection().query(sql, params)).rows as T[],
  });
  return {
    ...on(),
    async transaction(work) {
      await connection().query('BEGIN');
      try {
        await work(on());
        await connection().query('COMMIT');
      } catch (error) {
        await connection().query('ROLLBACK');
        throw error;
      }
    },
    async locked(work) {
      client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [migrationLockKey]);
        return await work();
      } finally {
        await client.end();
        client = undefined;
      }
    },
  };
}

/**
 * An image of a `memory://` embedded database with every migration applied, for servers that open
 * many short-lived databases (the tests): each then starts in a fraction of a second, instead of
 * creating a cluster and migrating it. Kassa uses only the `postgres` database, so the cluster's
 * template databases are left out: a third of the image's files and bytes, which every start
 * would unpack.
 */
export async function migratedMemoryImage(): Promise<ArrayBuffer> {
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = await PGlite.create('memory://');
  try {
    await migrate(pgliteTarget(pglite));
    await pglite.exec("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')");
    await pglite.exec('DROP DATABASE template0');
    await pglite.exec('DROP DATABASE template1');
    await pglite.exec('CHECKPOINT');
    const image = await pglite.dumpDataDir('none');
    return await image.arrayBuffer();
  } finally {
    await pglite.close();
  }
}
