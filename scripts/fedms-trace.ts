/**
 * A `--plugin` module that registers `fedms-trace`: FedMS (src/strategies/fedms.ts, same parameters)
 * that also appends one JSON line per round to `$FEDMS_TRACE` (default `fedms-trace.jsonl`), so a
 * run shows why FedMS selects whom (docs/reproductions.md, "FedMS's selection"):
 *
 *   npx fedscore experiment --plugin scripts/fedms-trace.ts --config <fedms config with
 *     "name": "fedms-trace"> --out runs/x
 *
 * Each line: the round, the selected silos, the coreset (global ids), the aggregation weights, the
 * class β weighs most and its β, and Ŝ and the selection probability P (Eq. 12) of
 * every silo for the next round (Eq. 12 with the run's `scoreUnit`).
 */
import { appendFileSync } from 'node:fs';
import {
  type FedMsState,
  fedMsEntry,
  SCORE_UNITS,
  type ScoreUnit,
  selectionProbabilities,
} from '../src/strategies/fedms.js';
import { registerStrategy } from '../src/strategies/registry.js';
import type { Strategy } from '../src/strategies/strategy.js';

const file = process.env.FEDMS_TRACE ?? 'fedms-trace.jsonl';
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

registerStrategy({
  ...fedMsEntry,
  name: 'fedms-trace',
  description: 'FedMS with a per-round trace of its selection (scripts/fedms-trace.ts)',
  create(params) {
    const unit: ScoreUnit = params.oneOf('scoreUnit', SCORE_UNITS[0], SCORE_UNITS);
    const inner = fedMsEntry.create(params) as Strategy<FedMsState>;
    return {
      ...inner,
      name: 'fedms-trace',
      async aggregationWeights(state: unknown, ctx) {
        const out = await inner.aggregationWeights(state as FedMsState, ctx);
        const next = out.state;
        const p = selectionProbabilities(next.scores, unit);
        let top = 0;
        const beta = next.beta;
        for (let c = 1; c < beta.length; c++) if (beta[c]! > beta[top]!) top = c;
        appendFileSync(
          file,
          `${JSON.stringify({
            round: ctx.round,
            selected: ctx.selected,
            coreset: next.coreset,
            weights: Array.from(out.weights),
            betaTop: { class: top, beta: round6(beta[top]!) },
            scores: Array.from(next.scores, round6),
            p: Array.from(p, round6),
          })}\n`,
        );
        return out;
      },
    };
  },
});
