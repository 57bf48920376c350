// `npm run mutate [-- <module>…] [--full]`: Stryker over the money and identity modules, one
// module at a time. Reports go to reports/mutation/<module>/ (ignored); the score, the digest of the
// sources it was measured on, and every surviving mutant go to test/mutation/scores/<module>.json
// (committed), and the score table in docs/testing.md is rewritten from those files.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Stryker } from '@stryker-mutator/core';
import type { MutantResult, PartialStrykerOptions } from '@stryker-mutator/api/core';
import { moduleGroups, mutationModules, parsePattern, sourcesDigest, type MutationScore } from './modules.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    full: { type: 'boolean', default: false },
    table: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '2' },
  },
});

const named = positionals.flatMap((name) => moduleGroups[name] ?? [name]);
const unknown = named.filter((name) => !(name in mutationModules));
if (unknown.length > 0) {
  console.error(`Unknown module ${unknown.join(', ')}; the modules are: ${Object.keys(mutationModules).join(', ')} (and ${Object.keys(moduleGroups).join(', ')} for all of its parts).`);
  process.exit(2);
}
const concurrency = Number(values.concurrency);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`--concurrency takes a whole number of mutants to run at once, 1 or more; got ${values.concurrency}.`);
  process.exit(2);
}
const selected = named.length > 0 ? [...new Set(named)] : Object.keys(mutationModules);

function options(name: string): PartialStrykerOptions {
  const module = mutationModules[name];
  const reports = `reports/mutation/${name}`;
  return {
    mutate: module.mutate,
    testRunner: 'vitest-stories',
    plugins: ['@stryker-mutator/vitest-runner', fileURLToPath(new URL('./story-runner.js', import.meta.url))],
    vitest: { configFile: 'test/mutation/vitest.config.ts', related: false },
    coverageAnalysis: 'perTest',
    // A mutant reached only while a test file starts (module load, a beforeAll) has no test of its
    // own to run; docs/testing.md says what that leaves out.
    ignoreStatic: true,
    concurrency,
    // A mutant runs with the tests before it in its story, which the dry run timed apart: room for that.
    timeoutMS: 60_000,
    incremental: true,
    incrementalFile: `${reports}/incremental.json`,
    force: values.full,
    reporters: ['html', 'json', 'progress'],
    htmlReporter: { fileName: `${reports}/index.html` },
    jsonReporter: { fileName: `${reports}/mutation.json` },
    tempDirName: '.stryker-tmp',
    cleanTempDir: 'always',
    // The Prisma client is generated, and ignored by git, but every test needs it.
    ignorePatterns: ['!src/generated/**', 'reports', 'test-artifacts', 'scratch', '.data'],
    checkers: [],
  };
}

const detected = new Set(['Killed', 'Timeout']);
const undetected = new Set(['Survived', 'NoCoverage']);

/**
 * Whether a mutant lies in the module's sources: its file named by a pattern, and its line within
 * the pattern's range. Stryker also reports the results an incremental file holds for code outside
 * the range it mutated (a module's file measured whole before it was cut into parts).
 */
function inModule(name: string, result: MutantResult): boolean {
  const file = relative(root, result.fileName).split(sep).join('/');
  return mutationModules[name].mutate.some((pattern) => {
    const { path, lines } = parsePattern(pattern);
    if (path.endsWith('/**/*.ts')) return file.startsWith(path.slice(0, -'**/*.ts'.length)) && file.endsWith('.ts');
    if (path !== file) return false;
    return lines === null || (result.location.start.line >= lines[0] && result.location.start.line <= lines[1]);
  });
}

function summarise(name: string, all: MutantResult[]): MutationScore {
  const results = all.filter((result) => inModule(name, result));
  const count = (status: string) => results.filter((result) => result.status === status).length;
  const counts = {
    killed: count('Killed'),
    timeout: count('Timeout'),
    survived: count('Survived'),
    noCoverage: count('NoCoverage'),
    ignored: count('Ignored'),
    errors: count('RuntimeError') + count('CompileError'),
  };
  const valid = results.filter((result) => detected.has(result.status) || undetected.has(result.status)).length;
  const score = valid === 0 ? 100 : Math.floor((10_000 * (counts.killed + counts.timeout)) / valid) / 100;
  const survivors = results
    .filter((result) => undetected.has(result.status))
    .map((result) => ({
      at: `${relative(root, result.fileName)}:${result.location.start.line} ${result.mutatorName}`,
      replacement: (result.replacement ?? '').replace(/\s+/g, ' ').slice(0, 160),
    }))
    .sort((a, b) => a.at.localeCompare(b.at, 'en', { numeric: true }));
  return { module: name, score, counts, sources: sourcesDigest(mutationModules[name], root), testedAt: new Date().toISOString(), survivors };
}

function scorePath(name: string): string {
  return join(root, 'test/mutation/scores', `${name}.json`);
}

/** The score table, from the recorded files. */
function scoreTable(): string {
  const rows = Object.keys(mutationModules).map((name) => {
    if (!existsSync(scorePath(name))) return `| ${name} | not measured | | |`;
    const score = JSON.parse(readFileSync(scorePath(name), 'utf8')) as MutationScore;
    const total = score.counts.killed + score.counts.timeout + score.counts.survived + score.counts.noCoverage;
    return `| ${name} | ${score.score.toFixed(2)}% | ${score.counts.killed + score.counts.timeout} of ${total} | ${score.testedAt.slice(0, 10)} |`;
  });
  return ['| Module | Score | Mutants detected | Measured |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** Rewrites the score table in README.md and docs/testing.md. */
function writeScoreTables(): void {
  const start = '<!-- mutation-scores:start -->';
  const end = '<!-- mutation-scores:end -->';
  const table = scoreTable();
  for (const file of ['README.md', 'docs/testing.md']) {
    const path = join(root, file);
    const doc = readFileSync(path, 'utf8');
    const from = doc.indexOf(start);
    const to = doc.indexOf(end);
    if (from < 0 || to < from) throw new Error(`${file} has no ${start} … ${end} section to write the scores into.`);
    writeFileSync(path, `${doc.slice(0, from + start.length)}\n${table}\n${doc.slice(to)}`);
  }
}

/** `--table`: only rewrite the tables from the recorded files. */
if (values.table) {
  writeScoreTables();
  process.exit(0);
}

/**
 * Drops the timed-out mutants from the last run's results, so this run tries them again: a time-out
 * may come from a loaded machine rather than from the mutant, and it counts as detected.
 */
function retryTimeouts(name: string): void {
  const file = join(root, `reports/mutation/${name}/incremental.json`);
  if (!existsSync(file)) return;
  const report = JSON.parse(readFileSync(file, 'utf8')) as { files: Record<string, { mutants: { status: string }[] }> };
  for (const entry of Object.values(report.files)) entry.mutants = entry.mutants.filter((mutant) => mutant.status !== 'Timeout');
  writeFileSync(file, JSON.stringify(report));
}

let failed = false;
for (const name of selected) {
  retryTimeouts(name);
  process.env.KASSA_MUTATION_TESTS = mutationModules[name].tests.join(',');
  const started = Date.now();
  console.log(`\nmutation testing ${name}: ${mutationModules[name].mutate.join(', ')}`);
  const results = await new Stryker(options(name)).runMutationTest();
  const score = summarise(name, results);
  writeFileSync(scorePath(name), `${JSON.stringify(score, null, 2)}\n`);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  console.log(`${name}: ${score.score.toFixed(2)}% (${score.counts.killed + score.counts.timeout} detected, ${score.survivors.length} undetected, ${score.counts.ignored} static) in ${minutes} min`);
  for (const survivor of score.survivors) console.log(`  ${survivor.at}: ${survivor.replacement}`);
  if (score.score < 85) failed = true;
}
writeScoreTables();
process.exit(failed ? 1 : 0);
