/**
 * What a silo checks of a round's weights before it masks anything (issues 27 A1 and 32 W1): the
 * consortium's public weight bounds (src/consortium/weight-floor.ts) are the silo's own, and its
 * round's weights keep them — at least 3 selected silos, every normalized weight ≥ the floor, no
 * share above maxWeightShare, an effective number of participants (Σw)²/Σw² ≥ minEffectiveSilos.
 * The weights are the plan's (src/strategies/networked-plan.ts, capped by `capWeights` from what the
 * service published) or, without a strategy, every silo's FedAvg weight as a round of all silos
 * caps it (src/fl/networked.ts).
 */

import {
  DEFAULT_MAX_WEIGHT_SHARE,
  DEFAULT_MIN_EFFECTIVE_SILOS,
  DEFAULT_WEIGHT_FLOOR,
  MIN_SELECTED_SILOS,
  type WeightBounds,
  weightBoundsProblem,
  weightBoundsViolation,
} from '../consortium/weight-floor.js';
import type { NetworkedRun } from '../fl/networked.js';
import type { RoundPlan } from '../strategies/networked-plan.js';
import { SiloSetupError } from './silo-errors.js';

/**
 * The round's weights would break the consortium's weight floor, largest share or effective
 * number of participants: the unmasked sum would be (close to) one silo's update. `code`
 * FEDSCORE_ERR_WEIGHT_BOUNDS (docs/errors.md, "Silo-side refusals"); `field` names the parameter.
 */
export class WeightBoundsError extends SiloSetupError {
  readonly code: 'FEDSCORE_ERR_WEIGHT_BOUNDS' | 'FEDSCORE_ERR_TOO_FEW_SILOS' = 'FEDSCORE_ERR_WEIGHT_BOUNDS';
  constructor(field: string, detail: string) {
    super(field, `FEDSCORE_ERR_WEIGHT_BOUNDS: ${detail}`);
    this.name = 'WeightBoundsError';
  }
}

/**
 * The round selects fewer than 3 silos (issue 32 W1): in a round of 2 each silo reads the other's
 * update off the sum. `code` FEDSCORE_ERR_TOO_FEW_SILOS (docs/errors.md); `field` is `selected`.
 */
export class TooFewSilosError extends SiloSetupError {
  readonly code = 'FEDSCORE_ERR_TOO_FEW_SILOS';
  constructor(detail: string) {
    super('selected', `FEDSCORE_ERR_TOO_FEW_SILOS: ${detail}`);
    this.name = 'TooFewSilosError';
  }
}

/**
 * Checks a round's plan against the weight bounds before the silo masks anything.
 * @throws TooFewSilosError for fewer than 3 selected silos; WeightBoundsError naming
 *   `encoding.weightFloor`, `encoding.maxWeightShare` or `encoding.minEffectiveSilos`.
 */
export function checkPlanWeights(plan: RoundPlan, bounds: WeightBounds): void {
  const why = weightBoundsViolation(plan.selected, plan.weights ?? [], bounds);
  if (why === undefined) return;
  const detail = `round ${plan.round}: ${why.detail}; refusing to mask`;
  if (why.field === 'selected') throw new TooFewSilosError(detail);
  throw new WeightBoundsError(`encoding.${why.field}`, detail);
}

/**
 * Checks round `round`'s weights: the plan's, or without one every silo with its FedAvg weight
 * (`run.weights`, capped as a round of all silos: networked.ts). A silo on its own data knows
 * only its own weight and the pinned scale: it checks the number of silos, and its file pins the
 * cap (consortium-of-run.ts).
 * @throws TooFewSilosError or WeightBoundsError as {@link checkPlanWeights}.
 */
export function checkRoundWeights(run: NetworkedRun, round: number, plan: RoundPlan | undefined): void {
  if (plan) {
    checkPlanWeights(plan, run.weightBounds);
    return;
  }
  const selected = Array.from({ length: run.config.silos }, (_, i) => i);
  const known = run.weights.filter((w) => w !== undefined).length === selected.length;
  if (known) checkPlanWeights({ round, selected, weights: run.weights }, run.weightBounds);
  else if (selected.length < MIN_SELECTED_SILOS)
    throw new TooFewSilosError(
      `round ${round}: the consortium has ${selected.length} silos, fewer than ${MIN_SELECTED_SILOS}: each would read the other's update off the sum by subtracting its own; refusing to mask`,
    );
}

/**
 * Checks that the consortium's weight bounds are in range and this silo's own (a service without
 * them runs the defaults).
 * @throws WeightBoundsError naming `encoding.<key>`.
 */
export function checkServedWeightBounds(
  encoding: {
    readonly weightFloor?: number;
    readonly maxWeightShare?: number;
    readonly minEffectiveSilos?: number;
  },
  mine: WeightBounds,
): void {
  const served: WeightBounds = {
    weightFloor: encoding.weightFloor ?? DEFAULT_WEIGHT_FLOOR,
    maxWeightShare: encoding.maxWeightShare ?? DEFAULT_MAX_WEIGHT_SHARE,
    minEffectiveSilos: encoding.minEffectiveSilos ?? DEFAULT_MIN_EFFECTIVE_SILOS,
  };
  const problem = weightBoundsProblem(served);
  if (problem) throw new WeightBoundsError(`encoding.${problem.field}`, problem.detail);
  for (const key of ['weightFloor', 'maxWeightShare', 'minEffectiveSilos'] as const)
    if (served[key] !== mine[key])
      throw new WeightBoundsError(
        `encoding.${key}`,
        `the consortium's ${key} is ${served[key]}, this silo's ${mine[key]}; refusing to weigh by other bounds`,
      );
}
