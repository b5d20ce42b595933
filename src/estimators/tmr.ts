/**
 * TMR (Wei et al. 2020): MR-SV that skips rounds whose gain |v(N) − v(∅)| is below `threshold`
 * and discounts older rounds by `decay`. It folds, after the run, the exact tables MR-SV computes
 * each round, so MR-SV's per-round run happens whenever TMR is configured.
 */
import Type from 'typebox';
import { truncatedMultiRoundShapley } from '../../scoring/multi-round.js';
import { options } from './_schema.js';
import { defineEstimator } from './estimator.js';
import { mrsv } from './mrsv.js';

/** The options a configuration leaves out (the schema documents them as defaults). */
const DEFAULTS = { threshold: 1e-3, decay: 1 } as const;

export const tmr = defineEstimator({
  name: 'tmr',
  family: 'shapley',
  title: 'truncated multi-round Shapley (TMR; Wei et al. 2020)',
  schema: options({
    threshold: Type.Optional(
      Type.Number({
        minimum: 0,
        default: DEFAULTS.threshold,
        description: 'Rounds whose gain |v(N) − v(∅)| is below it are skipped.',
      }),
    ),
    decay: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        default: DEFAULTS.decay,
        description: 'Weight decay of older rounds (1: none).',
      }),
    ),
  }),
  // A new stream: the one its name once gave (length 3, 't' = 116) is Trajectory Shapley's.
  // TMR draws no random numbers; the stream stays reserved.
  stream: [0xe5, 1],
  compare: 'cumulative',
  needs: { estimators: [mrsv] },
  fold: async ({ config, n, tables }) =>
    (
      await truncatedMultiRoundShapley(tables, {
        n,
        threshold: config.threshold ?? DEFAULTS.threshold,
        decay: config.decay ?? DEFAULTS.decay,
      })
    ).values,
});
