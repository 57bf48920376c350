// The digest of every file under src/: `npm run build` records the one it compiled from, and the
// launcher (kassa.js) runs dist/ only while it matches. Plain JavaScript: the launcher loads it
// before any TypeScript loader exists.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export const digestFile = 'sources.sha256';

/** SHA-256 over the sorted relative paths and contents of the files under `srcDir`. */
export async function sourcesDigest(srcDir) {
  const entries = await readdir(srcDir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(srcDir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(await readFile(path.join(srcDir, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}
