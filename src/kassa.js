#!/usr/bin/env node
// The `kassa` command. It runs the compiled JavaScript in dist/ when `npm run build` made it from
// the sources as they are now (their digest matches the one the build recorded); otherwise it runs
// the TypeScript sources through tsx's ESM hooks. So a fresh clone starts without a build, and an
// edit made after a build is never shadowed by stale output.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { digestFile, sourcesDigest } from './sources-digest.js';

const dist = new URL('../dist/', import.meta.url);
const built = await readFile(new URL(digestFile, dist), 'utf8').catch(() => null);
const compiled = built !== null && built.trim() === (await sourcesDigest(fileURLToPath(new URL('.', import.meta.url))));
if (!compiled) {
  const { register } = await import('tsx/esm/api');
  register();
}
const entry = (name) => (compiled ? new URL(`${name}.js`, dist).href : `./${name}.ts`);
// Traces, when OTEL_TRACES_EXPORTER turns them on, start before the application's modules load.
const { startTracing } = await import(entry('tracing/start'));
await startTracing(process.argv.slice(2), process.env);
await import(entry('cli'));
