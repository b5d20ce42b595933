/**
 * The record step of the round pipeline (../round-loop.ts): the round's `RoundRecord` (docs/results.md),
 * and the state the next round starts from — the history, the strategy's `observe`, the new model.
 */
import type { RoundRecord } from '../../records/results.js';
import { type RoundOutcome, recordRound } from '../../strategies/strategy.js';
import type { References } from './references.js';
import { bySilo, type PrivateScores } from './score.js';
import type { Run, RunState } from './setup.js';

/** Everything the earlier steps produced for one round. */
export interface RoundParts {
  round: number;
  selected: number[];
  dropped: number[];
  weights: readonly number[];
  /** The strategy's state after weighting, and its own evaluations (full visibility). */
  strategyState: unknown;
  strategyEvaluations?: number;
  /** The next global model. */
  next: Float32Array;
  private: PrivateScores;
  references: References;
  timingsMs: { training: number; secureAggregation: number };
}

/** Builds the round's record and the next round's state. */
export function recordStep(
  run: Run,
  state: RunState,
  parts: RoundParts,
): { record: RoundRecord; state: RunState } {
  const { round, selected, dropped } = parts;
  const priv = parts.private;
  const refs = parts.references;
  const scores: Record<string, (number | null)[]> = { ...priv.scores, ...refs.scores };
  const evaluations: Record<string, number> = {};
  if (parts.strategyEvaluations !== undefined) evaluations.strategy = parts.strategyEvaluations;
  Object.assign(evaluations, refs.evaluations);
  const record: RoundRecord = {
    round,
    selected,
    dropped,
    aggregationWeights: bySilo(run.cfg.silos, selected, parts.weights),
    testAccuracy: priv.fullUtilities.accuracy,
    testLoss: priv.fullUtilities.loss,
    utilities: { full: priv.full, empty: priv.empty, withOnly: priv.withOnly, without: priv.without },
    scores,
    ...(priv.quarantined.length > 0 ? { quarantined: priv.quarantined } : {}),
    evaluations,
    timingsMs: { ...parts.timingsMs, privateScoring: priv.ms, ...refs.timingsMs },
  };
  const outcome: RoundOutcome = { round, selected, dropped, scores };
  const history = recordRound(state.history, outcome);
  const next: RunState = {
    strategy: run.strategy.observe(parts.strategyState, outcome),
    history,
    harness: refs.harness,
    params: parts.next,
  };
  run.progress(round, 'done', `accuracy ${priv.fullUtilities.accuracy.toFixed(4)}`);
  return { record, state: next };
}
