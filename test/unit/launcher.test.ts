// src/kassa.js runs dist/ only when `npm run build` compiled it from the sources as they are now.
// Exercised on a copy of the launcher in a scratch project whose cli.ts and dist/cli.js say which
// one ran, so no real build is needed.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestFile, sourcesDigest } from '../../src/sources-digest.js';

const run = promisify(execFile);
let project: string;

async function launch(): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(project, 'src/kassa.js')]);
  return stdout.trim();
}

/** A scratch ES module project holding src/sources-digest.js and copies of `files` (paths from the project root). */
async function scratchProject(prefix: string, files: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await writeFile(path.join(dir, 'package.json'), '{"type":"module"}\n');
  for (const file of ['src/sources-digest.js', ...files]) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await cp(file, path.join(dir, file));
  }
  return dir;
}

beforeAll(async () => {
  project = await scratchProject('kassa-launcher-', ['src/kassa.js']);
  await mkdir(path.join(project, 'dist'));
  // Typed, so only tsx can run it.
  await writeFile(path.join(project, 'src/cli.ts'), "const ran: string = 'sources';\nconsole.log(ran);\n");
  await writeFile(path.join(project, 'dist/cli.js'), "console.log('dist');\n");
  // The launcher starts traces (when asked) before the command: a stand-in on each side that does nothing.
  await mkdir(path.join(project, 'src/tracing'));
  await mkdir(path.join(project, 'dist/tracing'));
  await writeFile(path.join(project, 'src/tracing/start.ts'), 'export async function startTracing(_argv: string[], _env: object): Promise<void> {}\n');
  await writeFile(path.join(project, 'dist/tracing/start.js'), 'export async function startTracing() {}\n');
  await symlink(path.resolve('node_modules'), path.join(project, 'node_modules'));
});

afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

describe('the kassa launcher', () => {
  it('runs the sources through tsx when dist/ has no recorded digest (a fresh clone, or a failed build)', async () => {
    expect(await launch()).toBe('sources');
  });

  it('runs dist/ when its digest is that of the sources, and the sources again once one of them changes', async () => {
    await writeFile(path.join(project, 'dist', digestFile), `${await sourcesDigest(path.join(project, 'src'))}\n`);
    expect(await launch()).toBe('dist');

    await writeFile(path.join(project, 'src/cli.ts'), "const ran: string = 'sources';\nconsole.log(ran); // edited after the build\n");
    expect(await launch()).toBe('sources');
  });
});

describe('sourcesDigest', () => {
  it('changes with a file name as well as with its contents', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kassa-digest-'));
    try {
      await writeFile(path.join(dir, 'a.ts'), 'x');
      const before = await sourcesDigest(dir);
      expect(before).toMatch(/^[0-9a-f]{64}$/);
      expect(await sourcesDigest(dir)).toBe(before);
      await rm(path.join(dir, 'a.ts'));
      await writeFile(path.join(dir, 'b.ts'), 'x');
      expect(await sourcesDigest(dir)).not.toBe(before);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run build, as `npm install` runs it (--if-possible)', () => {
  let scratch: string;
  const build = (...args: string[]) =>
    run(process.execPath, [path.join(scratch, 'scripts/build.js'), ...args]).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );

  beforeAll(async () => {
    scratch = await scratchProject('kassa-build-', ['scripts/build.js']);
    await writeFile(path.join(scratch, 'tsconfig.build.json'), JSON.stringify({ compilerOptions: { outDir: 'dist', rootDir: 'src', noCheck: true, module: 'nodenext' }, include: ['src'] }));
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it('without TypeScript installed, goes on when asked to and fails when built on purpose, keeping the dist/ already there', async () => {
    await writeFile(path.join(scratch, 'src/cli.ts'), 'export const ran: string = "sources";\n');
    // A build copied in beside its sources (as a deployment without development dependencies has it).
    await mkdir(path.join(scratch, 'dist'));
    const copiedIn = `${await sourcesDigest(path.join(scratch, 'src'))}\n`;
    await writeFile(path.join(scratch, 'dist', digestFile), copiedIn);
    const quiet = await build('--if-possible');
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toContain('TypeScript is not installed, so dist/ is not built');
    const asked = await build();
    expect(asked.code).toBe(1);
    expect(asked.stderr).toContain('TypeScript is not installed');
    expect(await readFile(path.join(scratch, 'dist', digestFile), 'utf8')).toBe(copiedIn);
  });

  it('when the compiler fails, records no digest, and fails only when built on purpose', async () => {
    await symlink(path.resolve('node_modules'), path.join(scratch, 'node_modules'));
    await writeFile(path.join(scratch, 'src/cli.ts'), 'export const = ;\n');
    const quiet = await build('--if-possible');
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toContain('tsc failed');
    await expect(readFile(path.join(scratch, 'dist', digestFile), 'utf8')).rejects.toThrow(/ENOENT/);
    expect((await build()).code).not.toBe(0);

    await writeFile(path.join(scratch, 'src/cli.ts'), 'export const ran: string = "dist";\n');
    const built = await build('--if-possible');
    expect(built.code, built.stderr).toBe(0);
    expect((await readFile(path.join(scratch, 'dist', digestFile), 'utf8')).trim()).toBe(await sourcesDigest(path.join(scratch, 'src')));
    expect(await readFile(path.join(scratch, 'dist/cli.js'), 'utf8')).toContain('"dist"');
  });
});
