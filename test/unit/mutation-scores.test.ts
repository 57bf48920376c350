// The recorded mutation scores (test/mutation/scores/<module>.json, written by `npm run mutate`)
// must describe the code as it is: a module whose source changed since its score was measured
// fails here until it is measured again. Every mutant no test kills must be explained in
// docs/testing.md, whose score table must state the recorded score.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { filePart, moduleSources, mutationModules, parsePattern, sourcesDigest, type MutationScore } from '../mutation/modules.ts';

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

describe('filePart', () => {
  const file = 'src/modules/checkouts/service.ts';
  const range = (pattern: string) => parsePattern(pattern).lines!;
  const lineCount = readFileSync(join(root, file), 'utf8').split('\n').length;

  it('cuts a file into parts that follow one another and cover it', () => {
    const parts = [1, 2, 3].map((part) => range(filePart(file, part, 3)));
    expect(parts[0][0]).toBe(1);
    expect(parts[1][0]).toBe(parts[0][1] + 1);
    expect(parts[2][0]).toBe(parts[1][1] + 1);
    expect(parts[2][1]).toBe(lineCount);
  });

  it('cuts a part into parts that follow one another and cover just that part', () => {
    const whole = filePart(file, 3, 3);
    const [first, last] = range(whole);
    const pieces = [1, 2, 3].map((part) => range(filePart(file, part, 3, whole)));
    expect(pieces[0][0]).toBe(first);
    expect(pieces[1][0]).toBe(pieces[0][1] + 1);
    expect(pieces[2][0]).toBe(pieces[1][1] + 1);
    expect(pieces[2][1]).toBe(last);
    for (const [start, end] of pieces) expect(end, `${start}-${end}`).toBeGreaterThan(start);
  });

  // A cut may also fall at a statement of a top-level function's body (two spaces in): Stryker
  // mutates by line, so only the lengths of the parts depend on where it falls.
  it('starts every cut at a line of the top level or two spaces in, or the comment above one', () => {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    const cuts = [2, 3].flatMap((part) => [range(filePart(file, part, 3))[0], range(filePart(file, part, 3, filePart(file, 3, 3)))[0]]);
    for (const cut of cuts) expect(lines[cut - 1], `line ${cut}`).toMatch(/^(\/\*\*|\/\/|(export\s+)?(async\s+)?(function|const)\b| {2}\w)/);
  });

  it('refuses a range that is not one of the file', () => {
    expect(() => filePart(file, 1, 2, file)).toThrow(/is not a line range/);
    expect(() => filePart(file, 1, 2, `${file}:20-10`)).toThrow(/is not a line range/);
    expect(() => filePart(file, 1, 2, `${file}:1-${lineCount + 1}`)).toThrow(/is not a line range/);
  });

  it('refuses more parts than the range has declarations', () => {
    expect(() => filePart(file, 1, 40, filePart(file, 3, 3))).toThrow(/too few top-level declarations/);
  });
});
