/**
 * Weighted FedAvg under secure aggregation: a silo sends x_i = (w_i·Δ_i, w_i), quantized, so the
 * server learns only Σ w_iΔ_i and Σ w_i (docs/architecture.md, "One round, private mode", step 2;
 * McMahan et al. 2017, FedAvg: M = M0 + Σ w_iΔ_i / Σ w_i).
 *
 * Two quantizers share the ring: values w·Δ are clipped to [−valueRange, valueRange] and the
 * weight, which is never clipped, must lie in [minWeight, weightRange]. Each has the error bound
 * of crypto/quantize.ts for n·2^GUARD_BITS summands.
 *
 * Why guard bits. A quantizer for n summands uses K = ⌊(2^31 − 1)/n⌋ levels per side, so that n
 * levels never wrap — which also means that, with all n silos in the sum, EVERY int32 is a
 * possible honest sum: a corrupted word (a wrong mask, a forged correction, a silo's garbage)
 * cannot be told from a true one. fedscore quantizes for n·2^GUARD_BITS summands instead: an
 * honest sum of m ≤ n inputs lies in [−m·K, m·K] with K = ⌊(2^31 − 1)/(n·2^GUARD_BITS)⌋, a
 * 2^−GUARD_BITS·m/n fraction of the ring, so a word that is uniformly random passes the range
 * check {@link checkWeightedSum} with probability ≤ 2^−GUARD_BITS, and a uniformly random vector
 * of d + 1 words with probability ≤ 2^(−GUARD_BITS·(d+1)). The price is GUARD_BITS bits of
 * precision: the per-value error bound is 2^GUARD_BITS times that of a quantizer for n.
 *
 * What the check cannot do: a corrupted silo chooses its input, so it can move the aggregate
 * anywhere inside the checked box — every coordinate of Σ w·Δ in [−m·valueRange, m·valueRange],
 * Σ w in [m·minWeight, m·weightRange] — and the average step Σ w·Δ / Σ w then anywhere with
 * |step_j| ≤ valueRange / minWeight. With minWeight = 0 the total weight can be made as small as
 * one weight level, and the step as large as m·valueRange·scale (docs/threat-model.md).
 */
import { checkFinite, checkInt } from '../crypto/check.js';
import { dequantizeSum, MAX_SUMMANDS, quantizeInto, quantizer } from '../crypto/quantize.js';
import { SecAggError } from './errors.js';

/** Headroom of the ring per summand: the quantizers are configured for n·2^GUARD_BITS summands. */
export const GUARD_BITS = 4;

/** Largest n of a weighted encoding (n·2^GUARD_BITS must be a valid number of summands). */
export const MAX_WEIGHTED_SUMMANDS = Math.floor(MAX_SUMMANDS / 2 ** GUARD_BITS);

/** How weighted inputs are quantized. */
export interface WeightedEncoding {
  /** Clipping bound of the entries of w·Δ. */
  readonly valueRange: number;
  /** Largest weight a silo may send. */
  readonly weightRange: number;
  /** Number of silos summed at most (the roster size). */
  readonly n: number;
  /** Smallest weight a silo may send, 0 ≤ minWeight ≤ weightRange (default 0). */
  readonly minWeight?: number;
}

/** The decoded aggregate. */
export interface WeightedSum {
  /** Σ w_iΔ_i over the survivors. */
  readonly weightedSum: Float64Array;
  /** Σ w_i over the survivors. */
  readonly totalWeight: number;
  /** Σ w_iΔ_i / Σ w_i (zeros when the total weight is 0). */
  readonly average: Float64Array;
}

/**
 * Validates an encoding.
 *
 * @returns the same object.
 * @throws TypeError / RangeError naming `${name}.<field>`.
 */
export function checkWeightedEncoding(name: string, e: WeightedEncoding): WeightedEncoding {
  if (typeof e !== 'object' || e === null) throw new TypeError(`${name}: expected an object`);
  for (const f of ['valueRange', 'weightRange'] as const) {
    checkFinite(`${name}.${f}`, e[f]);
    if (!(e[f] > 0)) throw new RangeError(`${name}.${f}: must be > 0, got ${e[f]}`);
  }
  checkInt(`${name}.n`, e.n, 1, MAX_WEIGHTED_SUMMANDS);
  if (e.minWeight !== undefined) {
    checkFinite(`${name}.minWeight`, e.minWeight);
    if (e.minWeight < 0 || e.minWeight > e.weightRange)
      throw new RangeError(
        `${name}.minWeight: ${e.minWeight} is outside [0, weightRange = ${e.weightRange}]`,
      );
  }
  return e;
}

/** The value and weight quantizers of an encoding (n·2^GUARD_BITS summands). */
function quantizers(e: WeightedEncoding) {
  checkInt('n', e.n, 1, MAX_WEIGHTED_SUMMANDS);
  const n = e.n * 2 ** GUARD_BITS;
  return { qv: quantizer({ range: e.valueRange, n }), qw: quantizer({ range: e.weightRange, n }) };
}

/** The per-value error bound of an encoding (crypto/quantize.ts ε for its value quantizer). */
export function valueErrorBound(e: WeightedEncoding): number {
  return quantizers(e).qv.errorBound;
}

/** The per-weight error bound of an encoding. */
export function weightErrorBound(e: WeightedEncoding): number {
  return quantizers(e).qw.errorBound;
}

/**
 * The quantized vector (w·Δ, w) of length d + 1, ready to be the client's input.
 *
 * @throws TypeError if `update` is not a Float32Array/Float64Array; RangeError naming `weight`
 *   when it is outside [minWeight, weightRange]; the quantizer's errors naming `range` (for
 *   valueRange or weightRange) or `n`.
 */
export function encodeWeightedInput(
  update: Float32Array | Float64Array,
  weight: number,
  encoding: WeightedEncoding,
): Uint32Array {
  if (!(update instanceof Float32Array || update instanceof Float64Array))
    throw new TypeError('update: expected Float32Array or Float64Array');
  checkFinite('weight', weight);
  const { qv, qw } = quantizers(encoding);
  const min = encoding.minWeight ?? 0;
  if (weight < min || weight > encoding.weightRange)
    throw new RangeError(
      `weight: ${weight} is outside [minWeight = ${min}, weightRange = ${encoding.weightRange}]`,
    );
  const out = new Uint32Array(update.length + 1);
  quantizeInto(out, 0, update, qv, weight); // weight·Δ_i in double, as a product vector would hold it
  quantizeInto(out, update.length, [weight], qw);
  return out;
}

/**
 * Whether `sum` can be the sum of `summands` honest weighted inputs — the checks the server runs
 * on every aggregate (AGGREGATE_OUT_OF_RANGE), exact in integer levels:
 *  - every value word, read as int32, within ±m·K_v (|Σ w·Δ_j| ≤ m·valueRange);
 *  - the weight word within [m·q(minWeight), m·K_w] (Σ w ∈ m·[minWeight, weightRange]);
 *  - a total weight of 0 only with a zero weighted sum (the step is then 0, "aggregate nothing").
 * The average Σ w·Δ / Σ w is then finite.
 *
 * @returns null when the sum passes, else what failed.
 * @throws TypeError / RangeError on a malformed sum, encoding or count.
 */
export function checkWeightedSum(
  sum: Uint32Array,
  encoding: WeightedEncoding,
  summands: number,
): string | null {
  if (!(sum instanceof Uint32Array)) throw new TypeError('sum: expected Uint32Array');
  if (sum.length < 1) throw new RangeError('sum: expected at least the weight word');
  const m = checkInt('summands', summands, 1, encoding.n);
  const { qv, qw } = quantizers(encoding);
  const d = sum.length - 1;
  const maxValue = m * qv.levels;
  const show = (x: number) => Number(x.toPrecision(6));
  for (let j = 0; j < d; j++) {
    const q = sum[j]! | 0;
    if (q > maxValue || q < -maxValue)
      return `coordinate ${j}: Σ w·Δ = ${show(q / qv.scale)} is outside ±|U_3|·valueRange = ±${show(m * encoding.valueRange)}`;
  }
  const w = sum[d]! | 0;
  const lo = m * Math.round((encoding.minWeight ?? 0) * qw.scale);
  const hi = m * qw.levels;
  if (w < lo || w > hi)
    return `total weight ${show(w / qw.scale)} is outside |U_3|·[minWeight, weightRange] = [${show(lo / qw.scale)}, ${show(hi / qw.scale)}]`;
  if (w === 0)
    for (let j = 0; j < d; j++)
      if (sum[j] !== 0) return `total weight 0 with a non-zero weighted sum at coordinate ${j}`;
  return null;
}

/**
 * Decodes the securely aggregated Σ (w_iΔ_i, w_i); with `summands` (|U_3|), checks it first
 * ({@link checkWeightedSum}).
 *
 * @throws SecAggError AGGREGATE_OUT_OF_RANGE when the check fails; TypeError if `sum` is not a
 *   Uint32Array; RangeError if it is empty; quantizer errors.
 */
export function decodeWeightedSum(
  sum: Uint32Array,
  encoding: WeightedEncoding,
  summands?: number,
): WeightedSum {
  if (!(sum instanceof Uint32Array)) throw new TypeError('sum: expected Uint32Array');
  if (sum.length < 1) throw new RangeError('sum: expected at least the weight word');
  if (summands !== undefined) {
    const bad = checkWeightedSum(sum, encoding, summands);
    if (bad !== null) throw new SecAggError('AGGREGATE_OUT_OF_RANGE', bad);
  }
  const { qv, qw } = quantizers(encoding);
  const d = sum.length - 1;
  const weightedSum = dequantizeSum(sum.subarray(0, d), qv);
  const totalWeight = dequantizeSum(sum.subarray(d), qw)[0]!;
  const average = averageStep(weightedSum, totalWeight);
  if (summands !== undefined && !average.every(Number.isFinite))
    throw new SecAggError('AGGREGATE_OUT_OF_RANGE', 'the average step is not finite');
  return { weightedSum, totalWeight, average };
}

/** Σ w_iΔ_i / Σ w_i, coordinate by coordinate in double (zeros when the total weight is 0). */
export function averageStep(weightedSum: Float64Array, totalWeight: number): Float64Array {
  const average = new Float64Array(weightedSum.length);
  if (totalWeight > 0) for (let i = 0; i < average.length; i++) average[i] = weightedSum[i]! / totalWeight;
  return average;
}

/**
 * The next global model M = M_base + Σ w_iΔ_i / Σ w_i (McMahan et al. 2017), each coordinate
 * rounded once to Float32: what the service stores as a round's result
 * (src/server/service/aggregation.ts) and what a silo derives from the published Σ w_iΔ_i and
 * Σ w_i to check the next model it is served (src/client/model-chain.ts) — one function, so the
 * two agree bit for bit.
 *
 * @throws RangeError when the lengths differ.
 */
export function stepModel(base: Float32Array, weightedSum: Float64Array, totalWeight: number): Float32Array {
  if (weightedSum.length !== base.length)
    throw new RangeError(`weightedSum: ${weightedSum.length} values for a model of ${base.length}`);
  const average = averageStep(weightedSum, totalWeight);
  const next = new Float32Array(base.length);
  for (let j = 0; j < base.length; j++) next[j] = base[j]! + average[j]!;
  return next;
}
