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
 * Three public parameters, fixed by the consortium file (`encoding.weightFloor`,
 * `encoding.maxWeightShare`, `encoding.minEffectiveSilos`) and the experiment configuration
 * (`secureAggregation.…`); this module owns their defaults:
 * - the floor f ∈ (0, 1]: every selected silo's normalized weight ŵ_i = w_i / max_j w_j is ≥ f;
 * - the largest share s ∈ [1/2, 1): no selected silo holds more than s of Σ_j w_j (default 1/2);
 * - the effective number m: (Σ_j w_j)² / Σ_j w_j² ≥ m (default 3, issue 32 W1: with the floor
 *   alone a server serving one high score got a sum at cosine 0.99 to the target's update);
 * and a fixed one: a round selects at least {@link MIN_SELECTED_SILOS} = 3 silos.
 * {@link capWeights} is the one rule that makes honest weights keep all of them.
 *
 * A round of k ≥ 2 selected silos lifts every weight below f_k·max_j w_j to f_k·max_j w_j, with
 * f_k = max(f, (1 − s) / (s·(k − 1))): the largest weight stays the largest, every ratio w_i / w_j
 * is ≥ f_k, and any one silo's share is ≤ 1 / (1 + (k − 1)·f_k) ≤ s. The lift needs only k and
 * the largest weight, so the engine (round/weigh.ts), a silo's plan (src/strategies/networked-plan.ts) and a
 * silo that knows only the public scale max_j w_j (src/fl/networked.ts, src/fl/own-data.ts) compute it alike:
 * this module is the one owner of the rule. A weight already above the floor is unchanged (FedAvg
 * weights within a ratio of f_k are exactly the old ones).
 */

/** The three public weight parameters. */
export interface WeightBounds {
  /** f: the smallest normalized weight ŵ_i = w_i / max_j w_j of a selected silo, in (0, 1]. */
  readonly weightFloor: number;
  /** s: the largest share w_i / Σ_j w_j one selected silo may hold, in [1/2, 1). */
  readonly maxWeightShare: number;
  /** m: the smallest effective number of participants (Σ_j w_j)² / Σ_j w_j² of a round, in [1, 255]. */
  readonly minEffectiveSilos: number;
}

/** Default floor: every selected silo's weight is at least a tenth of the largest. */
export const DEFAULT_WEIGHT_FLOOR = 0.1;
/** Default largest share: no silo holds more than half of Σ w (issue 32, W1). */
export const DEFAULT_MAX_WEIGHT_SHARE = 0.5;
/** Default smallest effective number of participants (Σw)²/Σw² of a round (issue 32, W1). */
export const DEFAULT_MIN_EFFECTIVE_SILOS = 3;
/**
 * The fewest silos a round may select: in a round of 2 each silo reads the other's update off the
 * published sum by subtracting its own (issue 32, W1). Fixed, not a parameter.
 */
export const MIN_SELECTED_SILOS = 3;

/** The defaults: a consortium is protected unless it says otherwise. */
export const DEFAULT_WEIGHT_BOUNDS: WeightBounds = {
  weightFloor: DEFAULT_WEIGHT_FLOOR,
  maxWeightShare: DEFAULT_MAX_WEIGHT_SHARE,
  minEffectiveSilos: DEFAULT_MIN_EFFECTIVE_SILOS,
};

/** What is wrong with the parameters (f not in (0, 1], s not in [1/2, 1), m not in [1, 255]), or undefined. */
export function weightBoundsProblem(b: WeightBounds): WeightBoundsViolation | undefined {
  const { weightFloor: f, maxWeightShare: s, minEffectiveSilos: m } = b;
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
  if (!(typeof m === 'number' && Number.isFinite(m) && m >= 1 && m <= 255))
    return {
      field: 'minEffectiveSilos',
      detail: `expected a number in [1, 255] (the smallest effective number of participants (Σw)²/Σw²), got ${m}`,
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

/** A section that may set the three bounds: a configuration's `secureAggregation`, a consortium's `encoding`. */
export interface WeightBoundsSection {
  readonly weightFloor?: number | undefined;
  readonly maxWeightShare?: number | undefined;
  readonly minEffectiveSilos?: number | undefined;
}

/**
 * The bounds a section gives, each missing one the default: the one place the defaults are applied
 * (the configuration, the served consortium a silo checks, the consortium file's comparison).
 */
export function withDefaultWeightBounds(section: WeightBoundsSection | undefined): WeightBounds {
  return {
    weightFloor: section?.weightFloor ?? DEFAULT_WEIGHT_FLOOR,
    maxWeightShare: section?.maxWeightShare ?? DEFAULT_MAX_WEIGHT_SHARE,
    minEffectiveSilos: section?.minEffectiveSilos ?? DEFAULT_MIN_EFFECTIVE_SILOS,
  };
}

/** The bounds a configuration section gives (`secureAggregation`), defaults filled in and checked. */
export function weightBoundsOf(
  section: WeightBoundsSection | undefined,
  where = 'secureAggregation',
): WeightBounds {
  return checkWeightBounds(withDefaultWeightBounds(section), where);
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

/** (Σ_j w_j)² / Σ_j w_j²: the effective number of participants of a weighted sum (k for equal weights, 1 for one silo alone). */
export function effectiveSilos(weights: readonly number[]): number {
  // Relative to the largest, so that tiny (subnormal) weights do not underflow.
  const max = Math.max(0, ...weights);
  if (!(max > 0)) return 0;
  let sum = 0;
  let squares = 0;
  for (const w of weights) {
    sum += w / max;
    squares += (w / max) * (w / max);
  }
  return (sum * sum) / squares;
}

/** Whether floored weights keep the largest share s and the effective number m (as computed here, no slack). */
function keepsBounds(weights: readonly number[], b: WeightBounds): boolean {
  const total = weights.reduce((a, w) => a + w, 0);
  return (
    effectiveSilos(weights) >= b.minEffectiveSilos && weights.every((w) => w / total <= b.maxWeightShare)
  );
}

/**
 * The public cap every silo, the server's plan and the engine apply identically (issue 32, W1):
 * the weights are floored ({@link floorWeights}), then, when the round's effective number
 * (Σw)²/Σw² is below m or a share above s, clipped from above at the largest level c for which
 * both hold — min(w_i, c), water-filling: the largest weights come down to c, the others are
 * unchanged, so FedAvg by example counts with one large silo is capped rather than refused. c is
 * found by bisection between the smallest floored weight (every weight equal: k effective
 * participants, share 1/k) and the largest, 200 halvings in IEEE double arithmetic: the same
 * inputs give the same bits in every process. Clipping keeps the floor (every ratio w_i / max_j w_j
 * grows). Weights that already keep the bounds are {@link floorWeights}' unchanged; a round of
 * fewer than max(3, ⌈m⌉) silos cannot keep them and is returned floored, for
 * {@link weightBoundsViolation} to refuse.
 * @throws RangeError for a weight that is negative or not finite.
 */
export function capWeights(weights: readonly number[], b: WeightBounds): number[] {
  const floored = floorWeights(weights, b);
  const k = floored.length;
  const max = Math.max(0, ...floored);
  if (!(max > 0) || k < Math.max(MIN_SELECTED_SILOS, Math.ceil(b.minEffectiveSilos))) return floored;
  if (keepsBounds(floored, b)) return floored;
  const clip = (c: number) => floored.map((w) => Math.min(w, c));
  let lo = Math.min(...floored);
  let hi = max;
  for (let i = 0; i < 200; i++) {
    const mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) break;
    if (keepsBounds(clip(mid), b)) lo = mid;
    else hi = mid;
  }
  return clip(lo);
}

/** Which bound a round's weights break, and how. */
export interface WeightBoundsViolation {
  readonly field: 'weightFloor' | 'maxWeightShare' | 'minEffectiveSilos' | 'selected';
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
  if (selected.length < MIN_SELECTED_SILOS)
    return {
      field: 'selected',
      detail: `the round selects ${selected.length} silo${selected.length === 1 ? '' : 's'} (${selected.join(', ')}), fewer than ${MIN_SELECTED_SILOS}: ${selected.length === 2 ? "each would read the other's update off the sum by subtracting its own" : 'the sum would be its update'}`,
    };
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
  const effective = effectiveSilos(weights);
  if (effective < b.minEffectiveSilos * (1 - 1e-12))
    return {
      field: 'minEffectiveSilos',
      detail: `the weights of silos ${selected.join(', ')} give ${effective} effective participants (Σw)²/Σw², below the consortium's ${b.minEffectiveSilos}: the sum would be close to few silos' updates`,
    };
  return undefined;
}
