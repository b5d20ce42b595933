/**
 * Weighted FedAvg under secure aggregation: a silo sends x_i = (w_i·Δ_i, w_i), quantized, so the
 * server learns only Σ w_iΔ_i and Σ w_i (docs/architecture.md, "One round, private mode", step 2;
 * McMahan et al. 2017, FedAvg: M = M0 + Σ w_iΔ_i / Σ w_i).
 *
 * Two quantizers share the ring: values w·Δ are clipped to [−valueRange, valueRange] and the
 * weight, which is never clipped, must lie in [0, weightRange]. Each has the error bound of
 * crypto/quantize.ts for n summands.
 */
import { checkFinite } from '../crypto/_check.js';
import { dequantizeSum, quantizeInto, quantizer } from '../crypto/quantize.js';

/** How weighted inputs are quantized. */
export interface WeightedEncoding {
  /** Clipping bound of the entries of w·Δ. */
  readonly valueRange: number;
  /** Largest weight a silo may send. */
  readonly weightRange: number;
  /** Number of silos summed (the n of the quantizer). */
  readonly n: number;
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
 * The quantized vector (w·Δ, w) of length d + 1, ready to be the client's input.
 *
 * @throws TypeError if `update` is not a Float32Array/Float64Array; RangeError naming `weight`
 *   when it is outside [0, weightRange]; the quantizer's errors naming `range` (for valueRange or
 *   weightRange) or `n`.
 */
export function encodeWeightedInput(
  update: Float32Array | Float64Array,
  weight: number,
  encoding: WeightedEncoding,
): Uint32Array {
  if (!(update instanceof Float32Array || update instanceof Float64Array))
    throw new TypeError('update: expected Float32Array or Float64Array');
  checkFinite('weight', weight);
  const qv = quantizer({ range: encoding.valueRange, n: encoding.n });
  const qw = quantizer({ range: encoding.weightRange, n: encoding.n });
  if (weight < 0 || weight > encoding.weightRange)
    throw new RangeError(`weight: ${weight} is outside [0, weightRange = ${encoding.weightRange}]`);
  const scaled = new Float64Array(update.length);
  for (let i = 0; i < update.length; i++) scaled[i] = weight * update[i]!;
  const out = new Uint32Array(update.length + 1);
  quantizeInto(out, 0, scaled, qv);
  quantizeInto(out, update.length, [weight], qw);
  return out;
}

/**
 * Decodes the securely aggregated Σ (w_iΔ_i, w_i).
 *
 * @throws TypeError if `sum` is not a Uint32Array; RangeError if it is empty; quantizer errors.
 */
export function decodeWeightedSum(sum: Uint32Array, encoding: WeightedEncoding): WeightedSum {
  if (!(sum instanceof Uint32Array)) throw new TypeError('sum: expected Uint32Array');
  if (sum.length < 1) throw new RangeError('sum: expected at least the weight word');
  const d = sum.length - 1;
  const weightedSum = dequantizeSum(sum.subarray(0, d), { range: encoding.valueRange, n: encoding.n });
  const totalWeight = dequantizeSum(sum.subarray(d), { range: encoding.weightRange, n: encoding.n })[0]!;
  const average = new Float64Array(d);
  if (totalWeight > 0) for (let i = 0; i < d; i++) average[i] = weightedSum[i]! / totalWeight;
  return { weightedSum, totalWeight, average };
}
