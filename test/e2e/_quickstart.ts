/**
 * The two commands docs/consortium.md starts with, as test/e2e/up.test.ts runs them
 * (test/docs/consortium-doc.test.ts checks the doc shows exactly these; the tests add only
 * `--backend cpu`).
 */
export const INIT_ARGS = [
  'init',
  'hospitals',
  '--silos',
  '3',
  '--format',
  'idx,npy,csv',
  '--rounds',
  '2',
  '--examples',
  '60',
] as const;
export const UP_ARGS = ['up', 'hospitals'] as const;
export const TEST_ONLY_ARGS = ['--backend', 'cpu'] as const;
