// The suite as mutation testing runs it: only the test files of one module (KASSA_MUTATION_TESTS,
// comma separated), so the dry run and every mutant run see the same files.
import { defineConfig } from 'vitest/config';
import base from '../vitest.config.ts';

const tests = process.env.KASSA_MUTATION_TESTS?.split(',').filter(Boolean);
if (!tests?.length) throw new Error('KASSA_MUTATION_TESTS names no test files: run mutation testing with npm run mutate.');

// Each mutant's run loads the module afresh, as the scores on record were measured.
export default defineConfig({ ...base, test: { ...base.test, isolate: true, include: tests } });
