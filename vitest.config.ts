import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    setupFiles: ['test/setup/fast-check.ts'],
    include: ['test/**/*.test.ts'],
    exclude: ['test/**/*.slow.test.ts', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two test files at a time even on 2 cores (vitest's default there is one): many files spend
    // most of their time waiting on processes they started (services, silos, workers, Python,
    // PostgreSQL), so a second file fills that time. Measured on the 2-core CI machine: the suite
    // in 646 s instead of 957 s, with the same results (issue 34).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
