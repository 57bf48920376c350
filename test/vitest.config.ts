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
    reporters: ['default'],
  },
});
