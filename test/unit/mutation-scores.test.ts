// The recorded mutation scores (test/mutation/scores/<module>.json, written by `npm run mutate`)
// must describe the code as it is: a module whose source changed since its score was measured
// fails here until it is measured again. Every mutant no test kills must be explained in
// docs/testing.md, whose score table must state the recorded score.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { moduleSources, mutationModules, sourcesDigest, type MutationScore } from '../mutation/modules.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const scoreFile = (name: string) => join(root, 'test/mutation/scores', `${name}.json`);
const measured = Object.keys(mutationModules).filter((name) => existsSync(scoreFile(name)));
const readScore = (name: string) => JSON.parse(readFileSync(scoreFile(name), 'utf8')) as MutationScore;

describe('recorded mutation scores', () => {
  it('exist for at least one module, each naming source files that exist', () => {
    expect(measured.length).toBeGreaterThan(0);
    for (const name of Object.keys(mutationModules)) {
      const sources = moduleSources(mutationModules[name], root);
      expect(sources.length, name).toBeGreaterThan(0);
      for (const file of sources) expect(existsSync(join(root, file)), file).toBe(true);
    }
  });

  it.each(measured)('%s: was measured on the module source as it is now', (name) => {
    expect(readScore(name).sources, `${name} changed since its mutation score was recorded: run npm run mutate -- ${name}`).toBe(
      sourcesDigest(mutationModules[name], root),
    );
  });

  it.each(measured)('%s: every surviving mutant is explained in docs/testing.md', (name) => {
    const docs = readFileSync(join(root, 'docs/testing.md'), 'utf8');
    const unexplained = readScore(name).survivors.filter((survivor) => !docs.includes(survivor.at));
    expect(unexplained, 'kill these mutants with a test, or say in docs/testing.md why each is equivalent').toEqual([]);
  });

  it.each(measured)('%s: is the score README.md and docs/testing.md state', (name) => {
    const score = readScore(name);
    for (const file of ['README.md', 'docs/testing.md']) expect(readFileSync(join(root, file), 'utf8'), file).toContain(`| ${name} | ${score.score.toFixed(2)}% |`);
  });

  it('README.md and docs/testing.md list every module, measured or not', () => {
    for (const file of ['README.md', 'docs/testing.md']) {
      const doc = readFileSync(join(root, file), 'utf8');
      for (const name of Object.keys(mutationModules)) expect(doc, `${file}: run npm run mutate -- --table`).toMatch(new RegExp(`^\\| ${name} \\| `, 'm'));
    }
  });
});
