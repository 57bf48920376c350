// A setup file of mutation runs in the kept worker thread (persistent-pool.js), evaluated before
// each run's test files: the mutant the last run left active is cleared, so that a module loaded
// for the first time while the test files are imported is evaluated unmutated, as it would be in a
// fresh thread. Stryker's own setup activates this run's mutant in a beforeAll, after the imports.
import { inject } from 'vitest';

const namespace = globalThis[inject('globalNamespace')];
if (namespace && inject('mutantActivation') !== 'static') namespace.activeMutant = undefined;
