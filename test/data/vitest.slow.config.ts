/**
 * Runs the slow data suites (excluded from `npm test`):
 *   npx vitest run --config test/data/vitest.slow.config.ts
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: resolve(dirname(fileURLToPath(import.meta.url)), '../..'),
  test: { include: ['test/data/**/*.slow.test.ts'], testTimeout: 300_000 },
});
