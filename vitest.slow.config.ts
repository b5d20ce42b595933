import { defineConfig } from 'vitest/config';

/** Slow suites (long randomized sweeps, real-data training): `npm run test:slow`. */
export default defineConfig({
  test: {
    setupFiles: ['test/setup/fast-check.ts'],
    include: ['test/**/*.slow.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
