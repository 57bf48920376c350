// `npm run build`: compiles src/ (the generated Prisma client included) to JavaScript in dist/, with
// tsc rewriting the `.ts` import extensions to `.js`; copies src/'s plain JavaScript modules (the
// embedded database's worker); and records the digest of the sources it compiled, which the
// launcher (src/kassa.js) compares before it runs dist/.
import { spawnSync } from 'node:child_process';
import { cp, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { digestFile, sourcesDigest } from '../src/sources-digest.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
// The launcher and its digest module stay in src/: dist/ is entered through dist/cli.js.
const launcherFiles = new Set(['kassa.js', 'sources-digest.js']);

// `--if-possible` (how `npm install` runs it): a missing or failing compiler is not an error; the
// launcher then runs the sources through tsx.
const ifPossible = process.argv.includes('--if-possible');
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  // An install without the development dependencies (`npm ci --omit=dev`) has no compiler. dist/ is
  // left as it is: a build copied in beside the sources it was compiled from still runs.
  if (ifPossible) {
    process.stdout.write('build: TypeScript is not installed, so dist/ is not built (one already there is kept, and runs while current).\n');
    process.exit(0);
  }
  process.stderr.write('build: TypeScript is not installed; run `npm install` with the development dependencies.\n');
  process.exit(1);
}
// Taken before compiling, so a source edited during the build leaves a digest that no longer matches.
const digest = await sourcesDigest(src);
await rm(dist, { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (compiled.status !== 0) {
  process.stderr.write('build: tsc failed; dist/ is left without a digest, so `kassa` keeps running the sources.\n');
  process.exit(ifPossible ? 0 : (compiled.status ?? 1));
}
for (const entry of await readdir(src, { recursive: true, withFileTypes: true })) {
  const file = path.relative(src, path.join(entry.parentPath, entry.name));
  if (entry.isFile() && file.endsWith('.js') && !launcherFiles.has(file)) await cp(path.join(src, file), path.join(dist, file));
}
await writeFile(path.join(dist, digestFile), `${digest}\n`);
process.stdout.write(`build: dist/ compiled from sources ${digest.slice(0, 12)}\n`);
