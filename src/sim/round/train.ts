/**
 * The training step of the round pipeline (../round-loop.ts): the selected silos train from the global
 * model. Whatever wraps training (update-side attacks, ../../fl/update-attacks.ts) is inside `run.train`; this
 * step does not know whether it is on.
 */
import type { Run } from './setup.js';

/** The updates the selected silos send, in `selected` order, and the wall time it took. */
export async function trainStep(
  run: Run,
  base: Float32Array,
  round: number,
  selected: readonly number[],
): Promise<{ updates: Float32Array[]; ms: number }> {
  run.progress(round, 'training', `${selected.length} silos`);
  const t0 = performance.now();
  const updates = await run.train(base, round, selected);
  return { updates, ms: performance.now() - t0 };
}
