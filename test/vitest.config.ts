import { defineConfig } from 'vitest/config';

export default defineConfig({
  // One graphql module instance for everyone: the ESM and CommonJS builds would be two realms.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Each end-to-end file starts its own server with two embedded databases; two at a time fit
    // the machine.
    maxWorkers: 2,
    // A worker runs its files one after another in one module graph: the app, Prisma and PGlite's
    // compiled module are loaded once per worker instead of once per file (about a third of the
    // suite's time). Files share no state through it: each starts its own servers and databases, a
    // server's limits, caches and listeners live in the server, and what a module keeps is derived
    // from constant inputs (parsed documents, compiled queries, schema types).
    isolate: false,
    reporters: ['default'],
  },
});
