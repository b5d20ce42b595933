/**
 * results.json without what depends on the run and not on the seeds' results: times, the date,
 * and the native kernels' thread count in `kernels` (each process gets its share of the cores —
 * src/sweep/local.ts, src/ml/core-share.ts, a queue worker the machine's — and the bits do not
 * depend on it: test/ml/_blas_kernels.test.ts).
 */
export function timingsAside(r: object) {
  const { createdAt: _c, wallTimeMs: _w, runs, kernels, ...rest } = JSON.parse(JSON.stringify(r));
  return {
    ...rest,
    kernels: typeof kernels === 'string' ? kernels.replace(/ \(\d+ threads?\)$/, '') : kernels,
    runs: runs.map(
      ({ timingsMs: _t, rounds, ...run }: { timingsMs: unknown; rounds: { timingsMs: unknown }[] }) => ({
        ...run,
        rounds: rounds.map(({ timingsMs: _rt, ...rd }) => rd),
      }),
    ),
  };
}
