// src/kassa.js runs dist/ only when `npm run build` compiled it from the sources as they are now.
// Exercised on a copy of the launcher in a scratch project whose cli.ts and dist/cli.js say which
// one ran, so no real build is needed.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
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

beforeAll(async () => {
  project = await mkdtemp(path.join(tmpdir(), 'kassa-launcher-'));
  await mkdir(path.join(project, 'src'));
  await mkdir(path.join(project, 'dist'));
  await writeFile(path.join(project, 'package.json'), '{"type":"module"}\n');
  await cp('src/kassa.js', path.join(project, 'src/kassa.js'));
  await cp('src/sources-digest.js', path.join(project, 'src/sources-digest.js'));
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
