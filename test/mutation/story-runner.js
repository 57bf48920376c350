// A Stryker test runner around Stryker's vitest runner, for a suite whose tests are stories: a
// test may rely on what the tests before it in its `describe` did (created an order, refunded part
// of it, then checks the rest). Stryker runs only the tests that cover a mutant; run alone, the
// second chapter of a story fails for want of the first, and that failure would count as a kill.
//
// Two rules keep every kill honest:
// 1. A covering test runs with the tests it may depend on: those before it in its own describe
//    and in each enclosing describe (tests inside sibling describes have their own setup).
// 2. A file whose own hooks fail (its server does not start with the mutant) has no test results,
//    which Stryker's vitest runner reads as a survivor: it counts as a kill of that file's tests.
// 3. A kill counts only if the same selection passes with no mutant active. That baseline is run
//    once per selection and remembered; a selection that fails on its own is replaced by the whole
//    files of its tests, and if even those fail without the mutant, the mutant counts as an error
//    (left out of the score, and listed in the report) rather than as killed.
import { declareFactoryPlugin, PluginKind, commonTokens, tokens } from '@stryker-mutator/api/plugin';
import { strykerPlugins as vitestPlugins } from '@stryker-mutator/vitest-runner';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { usePersistentPool } from './persistent-pool.js';

/** Where the dry run leaves the stories for the mutant runs, which Stryker gives other processes. */
const storiesFile = 'stryker-stories.json';

const vitestFactory = vitestPlugins.find((plugin) => plugin.name === 'vitest').factory;

/** The test id Stryker's vitest runner gives a test: the file relative to the working directory, `#`, then the names. */
function testId(test) {
  const names = [test.name];
  for (let suite = test.suite; suite; suite = suite.suite) names.unshift(suite.name);
  return `${path.relative(process.cwd(), test.file.filepath).replace(/\\/g, '/')}#${names.join(' ').trim()}`;
}

class StoryRunner {
  /** Test id → the ids that run with it, in file order, itself last. */
  #chapters = new Map();
  /** Test file → every test id in it. */
  #files = new Map();
  /** Selection key → whether it passes with no mutant. */
  #baselines = new Map();

  constructor(inner, log) {
    this.inner = inner;
    this.log = log;
  }

  capabilities() {
    return this.inner.capabilities();
  }

  async init() {
    await this.inner.init();
    if (process.env.KASSA_MUTATION_FRESH_WORKERS !== '1') usePersistentPool(this.inner.ctx);
  }

  dispose() {
    return this.inner.dispose();
  }

  async dryRun(options) {
    const result = await this.inner.dryRun(options);
    this.#learnStories();
    return result;
  }

  #learnStories() {
    const walk = (suite, before) => {
      const direct = [];
      for (const task of suite.tasks) {
        if (task.type === 'test') {
          const id = testId(task);
          direct.push(id);
          this.#chapters.set(id, [...before, ...direct]);
          const file = id.slice(0, id.indexOf('#'));
          if (!this.#files.has(file)) this.#files.set(file, []);
          this.#files.get(file).push(id);
        } else if (task.type === 'suite') {
          walk(task, [...before, ...direct]);
        }
      }
    };
    for (const file of this.inner.ctx.state.getFiles()) walk(file, []);
    writeFileSync(storiesFile, JSON.stringify({ chapters: [...this.#chapters], files: [...this.#files] }));
  }

  #readStories() {
    if (this.#chapters.size > 0) return;
    const stories = JSON.parse(readFileSync(storiesFile, 'utf8'));
    this.#chapters = new Map(stories.chapters);
    this.#files = new Map(stories.files);
  }

  #selection(testFilter) {
    const unknown = testFilter.filter((id) => !this.#chapters.has(id));
    if (unknown.length) this.log.warn(`Tests the dry run did not list, run alone: ${unknown.slice(0, 3).join(', ')}`);
    const ids = new Set();
    for (const id of testFilter) for (const chapter of this.#chapters.get(id) ?? [id]) ids.add(chapter);
    return [...ids];
  }

  #wholeFiles(testFilter) {
    const ids = new Set();
    for (const id of testFilter) for (const other of this.#files.get(id.slice(0, id.indexOf('#'))) ?? [id]) ids.add(other);
    return [...ids];
  }

  async #passesAlone(options, selection) {
    const key = [...selection].sort().join('\n');
    if (!this.#baselines.has(key)) {
      const baseline = await this.#run({
        ...options,
        testFilter: selection,
        activeMutant: { ...options.activeMutant, id: 'none' },
        hitLimit: undefined,
      });
      this.#baselines.set(key, baseline.status === 'survived');
      if (baseline.status !== 'survived') {
        this.log.info(`A selection of ${selection.length} tests fails without a mutant (${baseline.killedBy ?? ''}: ${baseline.failureMessage ?? baseline.errorMessage ?? baseline.status}); its mutants run whole files instead.`);
      }
    }
    return this.#baselines.get(key);
  }

  /** A survivor of a run in which a test file failed outside its tests (a `beforeAll`) is a kill. */
  async #run(options) {
    const result = await this.inner.mutantRun(options);
    if (result.status !== 'survived') return result;
    const failed = this.inner.ctx.state.getFiles().filter((file) => file.result?.state === 'fail');
    if (failed.length === 0) return result;
    const ids = failed.flatMap((file) => this.#files.get(path.relative(process.cwd(), file.filepath).replace(/\\/g, '/')) ?? []);
    const message = failed[0].result.errors?.[0]?.message ?? 'the test file failed outside its tests';
    return { status: 'killed', killedBy: ids.filter((id) => options.testFilter?.includes(id) ?? true), failureMessage: message, nrOfTests: result.nrOfTests };
  }

  async mutantRun(options) {
    if (!options.testFilter) return this.#run(options);
    this.#readStories();
    const selection = this.#selection(options.testFilter);
    const started = Date.now();
    const result = await this.#run({ ...options, testFilter: selection });
    if (process.env.KASSA_MUTATION_TRACE) {
      const files = new Set(selection.map((id) => id.slice(0, id.indexOf('#'))));
      this.log.info(`mutant ${options.activeMutant.id}: ${result.status} in ${Date.now() - started} ms, ${options.testFilter.length} covering of ${selection.length} tests in ${files.size} files`);
    }
    if (result.status !== 'killed' || (await this.#passesAlone(options, selection))) return result;
    const files = this.#wholeFiles(options.testFilter);
    const whole = await this.#run({ ...options, testFilter: files });
    if (whole.status !== 'killed' || (await this.#passesAlone(options, files))) return whole;
    // Not even the whole files pass without the mutant: nothing can be said of it.
    return { status: 'error', errorMessage: `The tests covering this mutant fail without it: ${whole.killedBy?.join(', ')}` };
  }
}

function createStoryRunner(injector, log) {
  return new StoryRunner(injector.injectFunction(vitestFactory), log);
}
createStoryRunner.inject = tokens(commonTokens.injector, commonTokens.logger);

export const strykerPlugins = [declareFactoryPlugin(PluginKind.TestRunner, 'vitest-stories', createStoryRunner)];
