/**
 * Fixed-point quantization of real vectors into Z_(2^32) for masked summation.
 *
 * Bonawitz et al. 2017 (§3) sum vectors over Z_R; fedscore uses R = 2^32 so masks are plain
 * uint32 additions. A configuration {range c, n summands} clips every value to [−c, c] and maps
 * it to an integer level q ∈ [−K, K] with
 *
 *   K = ⌊(2^31 − 1) / n⌋,   s = K / c (levels per unit),   q = round(s · clip(x)),
 *
 * rounding half away from zero (deterministic, and q(−x) = −q(x)). Any sum of at most n levels
 * lies in [−nK, nK] ⊆ [−(2^31 − 1), 2^31 − 1], so it never wraps in Z_(2^32): reading the
 * uint32 sum as a two's-complement int32 gives the exact integer Σq, and the dequantized sum is
 * Σq / s, rounded once to the nearest float64.
 *
 * Error bound (per element, stated and tested): for every finite x,
 *
 *   |dequantize(quantize(x)) − clip(x)| ≤ ε = (c / (2K)) · (1 + 2^−19),
 *
 * where c/(2K) is half a level and the factor (1 + 2^−19) covers the three float64 roundings
 * (in s, in s·x and in q/s; each ≤ 2^−53 relative, and K < 2^31 makes their total below
 * 2^−19 of a half level). The dequantized sum of m ≤ n quantized values is within m·ε of the sum
 * of the clipped values. With n = 30 and c = 1, ε ≈ 7.0·10^−9.
 *
 * The bound needs a finite scale and a level c/K that is a normal float64: a tiny c (below
 * MIN_LEVEL·K, about 2·10^−299 for n = 1) would make s = K/c infinite — every value would then
 * encode to 0 and the sum be meaningless — or leave the roundings above subnormal, where they are
 * no longer relative; {@link quantizer} refuses such a c.
 */
import { checkFinite, checkInt } from './check.js';

/** Largest n accepted: keeps at least 2^15 levels on each side of zero (K ≥ 32768). */
export const MAX_SUMMANDS = 65535;

/** Smallest level c/K accepted: the smallest normal float64, 2^−1022. */
export const MIN_LEVEL = 2 ** -1022;

/** A quantizer configuration. */
export interface QuantizerConfig {
  /** Clipping bound c > 0: values are clipped to [−c, c]. */
  readonly range: number;
  /** Largest number of quantized vectors that will be summed, 1 ≤ n ≤ 65535. */
  readonly n: number;
}

/** The derived constants of a configuration. */
export interface Quantizer extends QuantizerConfig {
  /** Largest level K = ⌊(2^31 − 1) / n⌋. */
  readonly levels: number;
  /** Levels per unit, s = K / c. */
  readonly scale: number;
  /** Per-element error bound ε (module comment). */
  readonly errorBound: number;
}

/**
 * Validates a configuration and derives its constants.
 *
 * @throws TypeError if `config` is not an object or a field is not a number; RangeError naming
 *   `range` when it is ≤ 0, not finite or so small that the scale K/range is not finite or a level
 *   range/K is below {@link MIN_LEVEL}, or naming `n` when it is not an integer in [1, 65535]
 *   (more summands would leave too few levels in Z_(2^32)).
 */
export function quantizer(config: QuantizerConfig): Quantizer {
  if (typeof config !== 'object' || config === null) throw new TypeError('config: expected an object');
  const range = checkFinite('range', config.range);
  if (!(range > 0)) throw new RangeError(`range: must be > 0, got ${range}`);
  if (typeof config.n !== 'number' || !Number.isInteger(config.n))
    throw new TypeError(`n: expected an integer, got ${String(config.n)}`);
  if (config.n < 1) throw new RangeError(`n: must be ≥ 1, got ${config.n}`);
  if (config.n > MAX_SUMMANDS)
    throw new RangeError(
      `n: ${config.n} summands do not fit Z_(2^32) with ≥ 2^15 levels (max ${MAX_SUMMANDS})`,
    );
  const n = config.n;
  const levels = Math.floor(0x7fffffff / n);
  const scale = levels / range;
  if (!Number.isFinite(scale) || range / levels < MIN_LEVEL)
    throw new RangeError(
      `range: ${range} is too small: the scale K/range = ${scale} must be finite and a level range/K at least 2^-1022`,
    );
  return { range, n, levels, scale, errorBound: (range / (2 * levels)) * (1 + 2 ** -19) };
}

/** Round half away from zero (Math.round is correct for |v| < 2^52 and rounds halves up). */
function roundHalfAway(v: number): number {
  return v < 0 ? -Math.round(-v) : Math.round(v);
}

/**
 * Quantizes `values` into Z_(2^32) (two's complement levels, see the module comment).
 *
 * @param values - real values; ±Infinity clip to ±c. Not modified.
 * @returns a fresh Uint32Array of the same length, owned by the caller.
 * @throws TypeError if `values` is not a Float32Array, Float64Array or number array; RangeError
 *   naming the element if one is NaN; the errors of {@link quantizer}.
 */
export function quantize(
  values: Float32Array | Float64Array | readonly number[],
  config: QuantizerConfig,
): Uint32Array {
  const q = quantizer(config);
  if (!(values instanceof Float32Array || values instanceof Float64Array || Array.isArray(values)))
    throw new TypeError('values: expected Float32Array, Float64Array or number[]');
  const out = new Uint32Array(values.length);
  quantizeInto(out, 0, values, q);
  return out;
}

/**
 * Quantizes `factor · values[i]` (in double precision; factor 1 by default) into `out[offset …]`
 * with precomputed constants (used to append a weight, and by protocol/weighted.ts to quantize
 * w·Δ without a temporary vector of products).
 *
 * @throws TypeError / RangeError naming the bad argument (see {@link quantize}).
 */
export function quantizeInto(
  out: Uint32Array,
  offset: number,
  values: Float32Array | Float64Array | readonly number[],
  q: Quantizer,
  factor = 1,
): void {
  if (!(out instanceof Uint32Array)) throw new TypeError('out: expected Uint32Array');
  checkInt('offset', offset, 0, out.length - values.length);
  checkFinite('factor', factor);
  const c = q.range;
  const s = q.scale;
  const typed = values instanceof Float32Array || values instanceof Float64Array;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!typed && typeof v !== 'number') throw new TypeError(`values[${i}]: expected a number`);
    const x = factor * v;
    if (Number.isNaN(x)) throw new RangeError(`values[${i}]: NaN cannot be quantized`);
    const clipped = Math.min(c, Math.max(-c, x));
    out[offset + i] = roundHalfAway(clipped * s); // stored mod 2^32 (two's complement)
  }
}

/**
 * Dequantizes a sum of at most n quantized vectors: each word is read as an int32 (exact Σq, no
 * wrap by construction) and divided by s.
 *
 * @param sum - Σ of quantized vectors over Z_(2^32); not modified.
 * @returns a fresh Float64Array owned by the caller.
 * @throws TypeError if `sum` is not a Uint32Array; the errors of {@link quantizer}.
 */
export function dequantizeSum(sum: Uint32Array, config: QuantizerConfig): Float64Array {
  const q = quantizer(config);
  if (!(sum instanceof Uint32Array)) throw new TypeError('sum: expected Uint32Array');
  const out = new Float64Array(sum.length);
  for (let i = 0; i < sum.length; i++) out[i] = (sum[i]! | 0) / q.scale;
  return out;
}
