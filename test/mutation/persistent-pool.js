// A vitest pool whose worker thread outlives a run. Stryker's vitest runner starts one vitest run
// per mutant, and vitest stops its workers at the end of every run, so each mutant would load the
// code, the client library and the test helpers again (about 3 s of a mutant's 5 to 15). This pool
// hands vitest a worker that keeps one thread per process: `stop` detaches from it instead of
// ending it, and the worker's own "stop" message (which would tear the thread's environment down)
// is answered here. Each run still sends "start", so the thread takes that run's config (the test
// name pattern of the tests that cover the mutant), and vitest evaluates the setup files and the
// test files again; only the modules they import stay loaded.
//
// Stryker's instrumented sources switch mutants at run time (the active mutant is read when a
// mutated line runs), so a loaded module serves every mutant; static mutants are left out of the
// runs (`ignoreStatic`). A mutant that times out makes Stryker end the process, thread and all.
import { Worker } from 'node:worker_threads';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const persistentPoolName = 'kassa-persistent-threads';

/** Runs served by one thread, and the process's memory, beyond which the thread is replaced, so
 * that what runs leave behind cannot pile up. */
const runsPerThread = 200;
const recycleAboveBytes = 3 * 1024 ** 3;

let kept = null;

class PersistentThreadsWorker {
  name = persistentPoolName;
  #listeners = [];
  #thread = null;
  /** Whether this worker's thread is its own (ended at stop) rather than the kept one. */
  #own = false;

  constructor(options) {
    this.project = options.project;
    this.entrypoint = resolve(options.distPath, 'workers/threads.js');
    this.execArgv = options.execArgv;
    this.env = options.env;
    this.stdout = options.project.vitest.logger.outputStream;
    this.stderr = options.project.vitest.logger.errorStream;
  }

  async start() {
    // A mutant active while modules load (Stryker's static activation) needs them loaded afresh,
    // and must not stay in the modules later runs use: it gets a thread of its own, ended after.
    if (this.project.getProvidedContext().mutantActivation === 'static') {
      this.#thread = this.#newThread();
      this.#own = true;
      return;
    }
    if (kept && (kept.runs >= runsPerThread || process.memoryUsage().rss > recycleAboveBytes)) {
      const old = kept.thread;
      kept = null;
      await old.terminate();
    }
    if (!kept) {
      const thread = this.#newThread();
      thread.once('exit', () => {
        if (kept?.thread === thread) kept = null;
      });
      kept = { thread, runs: 0 };
    }
    kept.runs += 1;
    this.#thread = kept.thread;
  }

  #newThread() {
    const thread = new Worker(this.entrypoint, { env: this.env, execArgv: this.execArgv, stdout: true, stderr: true });
    thread.stdout.pipe(this.stdout);
    thread.stderr.pipe(this.stderr);
    return thread;
  }

  on(event, callback) {
    this.#listeners.push([event, callback]);
    this.#thread.on(event, callback);
  }

  off(event, callback) {
    this.#listeners = this.#listeners.filter(([e, c]) => e !== event || c !== callback);
    this.#thread.off(event, callback);
  }

  send(message) {
    if (message?.type === 'stop' && !this.#own) {
      const reply = { type: 'stopped', __vitest_worker_response__: true };
      queueMicrotask(() => {
        for (const [event, callback] of [...this.#listeners]) if (event === 'message') callback(reply);
      });
      return;
    }
    this.#thread.postMessage(message);
  }

  async stop() {
    if (this.#own) {
      await this.#thread.terminate();
      return;
    }
    for (const [event, callback] of this.#listeners) this.#thread.off(event, callback);
    this.#listeners = [];
  }

  deserialize(data) {
    return data;
  }
}

/** The pool as vitest's `poolRunner` option takes it. */
export const persistentPool = { name: persistentPoolName, createPoolWorker: (options) => new PersistentThreadsWorker(options) };

/** Makes every project of a vitest instance run its files in the kept thread. */
export function usePersistentPool(vitest) {
  for (const project of vitest.projects) {
    project.config.pool = persistentPoolName;
    project.config.poolRunner = persistentPool;
    project.config.isolate = false;
    project.config.setupFiles = [...project.config.setupFiles, fileURLToPath(new URL('./between-runs.js', import.meta.url))];
  }
}
