/**
 * The two commands docs/trainer.md starts with, as test/e2e/trainer-up.test.ts runs them
 * (test/docs/trainer-doc.test.ts checks the doc shows exactly these; the e2e test adds a small data
 * set, `--backend cpu` and `--keep-serving`).
 */
export const TORCH_INIT = ['init', 'demo', '--trainer', 'torch', '--silos', '3'] as const;
export const TORCH_UP = ['up', 'demo'] as const;
