/**
 * The aggregation step of the round pipeline (../round-loop.ts): the run's aggregator (secure or
 * plaintext, chosen once per run, ../aggregator.ts) sums the weighted updates, and the server forms
 * the next global model M = M0 + Σ w_iΔ_i / Σ w_i.
 */
import { type AggregateSum, applyAverage } from '../aggregator.js';
import type { Run } from './setup.js';

/** The round's sum over the survivors, the next global model and the wall time of the aggregation. */
export async function aggregateStep(
  run: Run,
  base: Float32Array,
  round: number,
  selected: readonly number[],
  updates: readonly Float32Array[],
  weights: readonly number[],
): Promise<{ sum: AggregateSum; next: Float32Array; ms: number }> {
  run.progress(round, 'secure-aggregation');
  const t0 = performance.now();
  const sum = await run.aggregator.aggregate({ round, selected, updates, weights, dim: base.length });
  const ms = performance.now() - t0;
  return { sum, next: applyAverage(base, sum.average), ms };
}
