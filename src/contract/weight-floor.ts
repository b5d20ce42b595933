/**
 * The weight floor (issue 27, A1): no aggregation weight may leave one silo's update alone — or
 * nearly alone — in the sum Σ ŵ_iΔ_i the secure aggregation reveals.
 *
 * Score-weighted aggregation normalises scores as (s − min)/mean (papers/003 §5), so the lowest
 * selected silo gets weight exactly 0; FedMS and FedTSV may give 0 as well. With two selected silos
 * (docs/consortium.md), or a server serving `/scores` with one high score and the rest equal, the
 * unmasked sum is then one silo's update: Bonawitz et al.'s secure aggregation hides individual
 * inputs only among inputs that actually count.
 *
 * Two public parameters, fixed by the consortium file (`encoding.weightFloor`,
 * `encoding.maxWeightShare`) and the experiment configuration (`secureAggregation.…`):
 * - the floor f ∈ (0, 1]: every selected silo's normalized weight ŵ_i = w_i / max_j w_j is ≥ f;
 * - the largest share s ∈ [1/2, 1): no selected silo holds more than s of Σ_j w_j.
 *
 * A round of k ≥ 2 selected silos lifts every weight below f_k·max_j w_j to f_k·max_j w_j, with
 * f_k = max(f, (1 − s) / (s·(k − 1))): the largest weight stays the largest, every ratio w_i / w_j
 * is ≥ f_k, and any one silo's share is ≤ 1 / (1 + (k − 1)·f_k) ≤ s. The lift needs only k and
 * the largest weight, so the engine (round/weigh.ts), a silo's plan (networked-strategy.ts) and a
 * silo that knows only the public scale max_j w_j (networked.ts, local-run.ts) compute it alike:
 * this module is the one owner of the rule. A weight already above the floor is unchanged (FedAvg
 * weights within a ratio of f_k are exactly the old ones).
 */

/** The two public weight parameters. */
export interface WeightBounds {
  /** f: the smallest normalized weight ŵ_i = w_i / max_j w_j of a selected silo, in (0, 1]. */
  readonly weightFloor: number;
  /** s: the largest share w_i / Σ_j w_j one selected silo may hold, in [1/2, 1). */
  readonly maxWeightShare: number;
}

/** Default floor: every selected silo's weight is at least a tenth of the largest. */
export const DEFAULT_WEIGHT_FLOOR = 0.1;
/** Default largest share: no silo holds more than 90 % of Σ w (two silos: ratio ≥ 1/9). */
export const DEFAULT_MAX_WEIGHT_SHARE = 0.9;

/** The defaults: a consortium is protected unless it says otherwise. */
export const DEFAULT_WEIGHT_BOUNDS: WeightBounds = {
  weightFloor: DEFAULT_WEIGHT_FLOOR,
  maxWeightShare: DEFAULT_MAX_WEIGHT_SHARE,
};

/** What is wrong with the two parameters (f not in (0, 1], s not in [1/2, 1)), or undefined. */
export function weightBoundsProblem(b: WeightBounds): WeightBoundsViolation | undefined {
  const { weightFloor: f, maxWeightShare: s } = b;
  if (!(typeof f === 'number' && Number.isFinite(f) && f > 0 && f <= 1))
    return {
      field: 'weightFloor',
      detail: `expected a number in (0, 1] (the smallest weight relative to the largest), got ${f}`,
    };
  if (!(typeof s === 'number' && Number.isFinite(s) && s >= 0.5 && s < 1))
    return {
      field: 'maxWeightShare',
      detail: `expected a number in [0.5, 1) (the largest share of Σ w one silo may hold), got ${s}`,
    };
  return undefined;
}

/**
 * Checks the two parameters (`where` prefixes the field names: `secureAggregation`, `encoding`).
 * @throws RangeError naming the field when f is not in (0, 1] or s not in [1/2, 1).
 */
export function checkWeightBounds(b: WeightBounds, where: string): WeightBounds {
  const problem = weightBoundsProblem(b);
  if (problem) throw new RangeError(`${where}.${problem.field}: ${problem.detail}`);
  return b;
}

/** The bounds a configuration section gives (`secureAggregation`), defaults filled in and checked. */
export function weightBoundsOf(
  section: { readonly weightFloor?: number; readonly maxWeightShare?: number } | undefined,
  where = 'secureAggregation',
): WeightBounds {
  return checkWeightBounds(
    {
      weightFloor: section?.weightFloor ?? DEFAULT_WEIGHT_FLOOR,
      maxWeightShare: section?.maxWeightShare ?? DEFAULT_MAX_WEIGHT_SHARE,
    },
    where,
  );
}

/**
 * f_k = max(f, (1 − s) / (s·(k − 1))): the floor of a round of k ≥ 2 selected silos, so that one
 * silo's share 1 / (1 + (k − 1)·f_k) is ≤ s. A round of one silo has no floor that helps (its share
 * is 1): f is returned and {@link weightBoundsViolation} refuses the plan.
 */
export function roundFloor(k: number, b: WeightBounds): number {
  if (k < 2) return b.weightFloor;
  return Math.min(1, Math.max(b.weightFloor, (1 - b.maxWeightShare) / (b.maxWeightShare * (k - 1))));
}

/**
 * f·scale, rounded up until (f·scale) / scale ≥ f in floating point: the lifted weight, divided by
 * the scale as the encoding does (protocol/weighted.ts), is never below the floor.
 */
function lifted(floor: number, scale: number): number {
  let x = floor * scale;
  while (x / scale < floor) x += Math.max(Number.MIN_VALUE, Math.abs(x) * Number.EPSILON);
  return x;
}

/**
 * The round's weights with the floor applied: each of the k selected silos' weights below
 * f_k·max_j w_j is lifted to it ({@link roundFloor}); the others, the largest among them, are
 * unchanged. `scale` is the largest weight when the caller knows it publicly rather than from
 * `weights` (a silo on its own data: the consortium file's `weights.scale`); `k` the number of
 * selected silos when `weights` holds only some of them (default: all of `weights`).
 * All weights 0 (an aggregation of nothing) is returned unchanged.
 * @throws RangeError for a weight that is negative or not finite.
 */
export function floorWeights(
  weights: readonly number[],
  b: WeightBounds,
  o: { readonly scale?: number; readonly k?: number } = {},
): number[] {
  weights.forEach((w, j) => {
    if (!(Number.isFinite(w) && w >= 0))
      throw new RangeError(`weights[${j}]: expected a finite number ≥ 0, got ${w}`);
  });
  const scale = o.scale ?? Math.max(0, ...weights);
  if (!(scale > 0)) return [...weights];
  const least = lifted(roundFloor(o.k ?? weights.length, b), scale);
  return weights.map((w) => (w < least ? least : w));
}

/** Which bound a round's weights break, and how. */
export interface WeightBoundsViolation {
  readonly field: 'weightFloor' | 'maxWeightShare';
  readonly detail: string;
}

/**
 * Why a round's weights break the bounds — a selected silo's normalized weight below f (all
 * weights 0, a weight per silo missing), one silo's share above s (a single selected silo) — or
 * undefined when they keep them. What every silo checks of its plan before it masks
 * (src/client/silo.ts).
 */
export function weightBoundsViolation(
  selected: readonly number[],
  weights: readonly number[],
  b: WeightBounds,
): WeightBoundsViolation | undefined {
  const floor = (detail: string) => ({ field: 'weightFloor' as const, detail });
  if (weights.length !== selected.length)
    return floor(`the plan has ${weights.length} weights for ${selected.length} selected silos`);
  const max = Math.max(0, ...weights);
  const total = weights.reduce((a, w) => a + w, 0);
  if (!(max > 0 && Number.isFinite(total)))
    return floor(`the weights of silos ${selected.join(', ')} are all 0 (or not finite): no sum to hide in`);
  for (const [k, w] of weights.entries())
    if (!(w / max >= b.weightFloor))
      return floor(
        `silo ${selected[k]}'s normalized weight ${w / max} is below the floor ${b.weightFloor}: the sum would be close to the other silos' updates alone`,
      );
  for (const [k, w] of weights.entries()) {
    // A relative slack for the rounding of the sum (the lift guarantees ≤ s in exact arithmetic).
    if (w / total > b.maxWeightShare * (1 + 1e-12))
      return {
        field: 'maxWeightShare',
        detail: `silo ${selected[k]} would hold ${w / total} of Σ w, above the largest share ${b.maxWeightShare}: the sum would be close to its update alone`,
      };
  }
  return undefined;
}
