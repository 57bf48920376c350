// The embedded database, run on a worker thread (./embedded-worker.js) and used from the server's
// thread as if it were PGlite itself: the calls the Prisma adapter and the migration runner make
// (query, exec, transaction) go to the worker as messages, and their results and errors come back
// as PGlite would have given them. The SQL then runs beside the server's JavaScript, on another
// core, instead of stalling the event loop while it executes.
import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { messages, type PGlite, type QueryOptions, type Results, type Transaction } from '@electric-sql/pglite';

type Parsers = NonNullable<QueryOptions['parsers']>;

/** What the worker reports of a failed call. */
interface FailureReport {
  message: string;
  database?: boolean;
  fields?: Record<string, string | number>;
}

interface Reply {
  id?: number;
  /** A NOTIFY on a channel listened on, posted once its transaction committed. */
  notification?: { channel: string; payload: string };
  ready?: boolean;
  value?: unknown;
  error?: FailureReport;
}

/** The error the caller would have had from PGlite: a DatabaseError keeps its code and detail. */
function errorOf(report: FailureReport): Error {
  if (!report.database) return new Error(report.message);
  const error = new messages.DatabaseError(report.message, Number(report.fields?.length ?? 0), 'error');
  const { name: _name, length: _length, ...fields } = report.fields ?? {};
  return Object.assign(error, fields);
}

/**
 * Applies the caller's own parsers to the columns the worker left as text. The worker parses every
 * other type itself, with PGlite's defaults, exactly as an in-thread query would have.
 */
function parsed<T>(results: Results<T>, options: QueryOptions | undefined): Results<T> {
  const parsers = options?.parsers;
  if (!parsers) return results;
  const arrays = options.rowMode === 'array';
  results.fields.forEach((field, column) => {
    const parse = parsers[field.dataTypeID];
    if (!parse) return;
    for (const row of results.rows as Record<string | number, unknown>[]) {
      const key = arrays ? column : field.name;
      const text = row[key];
      if (text !== null && text !== undefined) row[key] = (parse as (text: string, type: number) => unknown)(text as string, field.dataTypeID);
    }
  });
  return results;
}

/** Only what can cross to the worker: the parsers' type ids, not the parsers. */
function posted(options: QueryOptions | undefined) {
  const parsers: Parsers | undefined = options?.parsers;
  return { rowMode: options?.rowMode, rawTypes: parsers ? Object.keys(parsers).map(Number) : undefined };
}

interface Waiting {
  resolve(value: unknown): void;
  reject(error: Error): void;
  /** Settles with the answer, whichever way it goes. */
  settled: Promise<void>;
}

let compiledPglite: Promise<WebAssembly.Module> | undefined;
let inMemoryExtras: Promise<{ initdbWasmModule: WebAssembly.Module; fsBundle: Blob }> | undefined;

const pgliteFile = (name: string) => readFile(new URL(name, new URL('.', import.meta.resolve('@electric-sql/pglite'))));

/** A read or compile that failed is not kept: the next database tries again. */
function kept<T>(promise: Promise<T>, forget: () => void): Promise<T> {
  promise.catch(forget);
  return promise;
}

/**
 * PostgreSQL's WebAssembly (9 MB), compiled once for every database thread of the process: each
 * thread instantiates the same module, so its machine code is resident once, not once per
 * environment (about 20 MB less at idle on the embedded default).
 */
function pgliteWasmModule(): Promise<WebAssembly.Module> {
  compiledPglite ??= kept(pgliteFile('pglite.wasm').then((bytes) => WebAssembly.compile(bytes)), () => (compiledPglite = undefined));
  return compiledPglite;
}

/**
 * What else a `memory://` database's thread would read and compile: initdb's WebAssembly and
 * PGlite's file bundle. A process that opens many short-lived databases (the tests start two per
 * server) hands them over too, which with the shared module halved a test server's start; a
 * server on data directories opens its two for good and does not hold them.
 */
function inMemoryArtifacts(): Promise<{ initdbWasmModule: WebAssembly.Module; fsBundle: Blob }> {
  inMemoryExtras ??= kept(
    Promise.all([pgliteFile('initdb.wasm').then((bytes) => WebAssembly.compile(bytes)), pgliteFile('pglite.data')]).then(([initdbWasmModule, bundle]) => ({ initdbWasmModule, fsBundle: new Blob([bundle]) })),
    () => (inMemoryExtras = undefined),
  );
  return inMemoryExtras;
}

export class EmbeddedDatabase {
  private readonly pending = new Map<number, Waiting>();
  private readonly listeners = new Map<string, (payload: string) => void>();
  private nextId = 1;
  private stopped: Error | null = null;
  private closing: Promise<void> | null = null;
  /** Set once closing starts: calls made from then on are refused. */
  private refusing: Error | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly onFailure: (error: Error) => void,
  ) {
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`The embedded database thread stopped (exit code ${code}).`)));
    worker.unref();
  }

  /**
   * Starts the worker and opens the database in `dataDir` (a directory, or `memory://`).
   * `onFailure` hears, once, of a thread that stops without being closed: every call fails from then on.
   * `image`, for a `memory://` database, is a data directory as PGlite dumps it (an uncompressed
   * tar) to start from instead of creating an empty cluster, which takes seconds.
   */
  static async open(dataDir: string, onFailure: (error: Error) => void = () => {}, image?: ArrayBuffer): Promise<EmbeddedDatabase> {
    const inMemory = dataDir.startsWith('memory://');
    const compiled = { pgliteWasmModule: await pgliteWasmModule(), ...(inMemory ? await inMemoryArtifacts() : {}) };
    const worker = new Worker(new URL('./embedded-worker.js', import.meta.url), { workerData: { dataDir, image: inMemory ? image : undefined, ...compiled } });
    await new Promise<void>((resolve, reject) => {
      // Whichever comes first settles the opening; the others stop listening with it.
      const settle = (error?: Error) => {
        worker.off('message', ready).off('error', settle).off('exit', exited);
        if (error) reject(error);
        else resolve();
      };
      const ready = (reply: Reply) => reply.ready && settle();
      const exited = (code: number) => settle(new Error(`The embedded database thread stopped while opening (exit code ${code}).`));
      worker.on('message', ready).on('error', settle).on('exit', exited);
    });
    return new EmbeddedDatabase(worker, onFailure);
  }

  /** Calls sent to the database's thread and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  get closed(): boolean {
    return this.stopped !== null;
  }

  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.call<Results<T>>({ op: 'query', sql, params, ...posted(options) }).then((results) => parsed(results, options));
  }

  exec(sql: string): Promise<Results[]> {
    return this.call<Results[]>({ op: 'exec', sql });
  }

  /**
   * Runs `work` in one transaction, as PGlite's own `transaction` does: committed when `work`
   * resolves, rolled back when it throws or rolls back itself. The worker's PGlite runs no other
   * statement while it is open.
   */
  async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    const transaction = this.nextId++;
    await this.call({ op: 'begin', transaction });
    let closed = false;
    let rollingBack = null as Promise<unknown> | null;
    const open = () => {
      if (closed) throw new Error('Transaction is closed');
    };
    const tx = {
      query: async <R>(sql: string, params?: unknown[], options?: QueryOptions) => {
        open();
        return parsed(await this.call<Results<R>>({ op: 'txQuery', transaction, sql, params, ...posted(options) }), options);
      },
      exec: async (sql: string) => {
        open();
        return this.call<Results[]>({ op: 'txExec', transaction, sql });
      },
      rollback: async () => {
        open();
        rollingBack = this.send({ op: 'txRollback', transaction });
        await rollingBack;
        closed = true;
      },
      get closed() {
        return closed;
      },
    } as unknown as Transaction;
    let result: T;
    try {
      result = await work(tx);
    } catch (error) {
      await rollingBack?.catch(() => undefined);
      closed = true;
      await this.send({ op: 'end', transaction, fail: true }).catch(() => undefined);
      throw error;
    }
    // A rollback asked for without waiting for it (as the Prisma adapter does) ends first.
    await rollingBack;
    closed = true;
    await this.send({ op: 'end', transaction });
    return result;
  }

  /** A consistent image of the data directory while it serves: a gzipped tar PGlite can load. */
  dumpDataDir(): Promise<Uint8Array> {
    return this.call<Uint8Array>({ op: 'dump' });
  }

  /** Hands every NOTIFY on `channel` to `onNotification` from now on (one listener per channel). */
  async listen(channel: string, onNotification: (payload: string) => void): Promise<void> {
    this.listeners.set(channel, onNotification);
    await this.call({ op: 'listen', channel });
  }

  /**
   * Takes no more calls, lets the ones already made finish, closes the database (PGlite writes
   * what it holds to its directory), then ends the thread.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const inFlight = [...this.pending.values()].map((waiting) => waiting.settled);
      this.refusing = new Error('The embedded database is closing.');
      await Promise.all(inFlight);
      if (!this.stopped) await this.send({ op: 'close' }).catch(() => undefined);
      this.stop(new Error('The embedded database is closed.'));
      await this.worker.terminate();
    })();
    return this.closing;
  }

  /** As the Prisma adapter and the migration runner take PGlite. */
  asPGlite(): PGlite {
    return this as unknown as PGlite;
  }

  private call<T = unknown>(message: Record<string, unknown>): Promise<T> {
    if (this.refusing) return Promise.reject(this.refusing);
    return this.send<T>(message);
  }

  private send<T = unknown>(message: Record<string, unknown>): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    // The thread keeps the process alive only while an answer is awaited.
    if (this.pending.size === 0) this.worker.ref();
    let waiting!: Waiting;
    const answer = new Promise<T>((resolve, reject) => {
      waiting = { resolve: resolve as (value: unknown) => void, reject, settled: Promise.resolve() };
    });
    waiting.settled = answer.then(
      () => undefined,
      () => undefined,
    );
    this.pending.set(id, waiting);
    this.worker.postMessage({ ...message, id });
    return answer;
  }

  private settle(reply: Reply): void {
    if (reply.notification) return this.listeners.get(reply.notification.channel)?.(reply.notification.payload);
    const waiting = reply.id === undefined ? undefined : this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id!);
    if (this.pending.size === 0) this.worker.unref();
    if (reply.error) waiting.reject(errorOf(reply.error));
    else waiting.resolve(reply.value);
  }

  private fail(error: Error): void {
    if (this.stopped) return;
    this.stop(error);
    this.onFailure(error);
  }

  private stop(reason: Error): void {
    this.stopped ??= reason;
    for (const waiting of this.pending.values()) waiting.reject(reason);
    this.pending.clear();
  }
}
