/**
 * The coalition model M_S = M0 + s(S)·Σ_{i∈S} aᵢΔᵢ (../consortium/convention.ts owns s(S), coalitionScale): the
 * checked inputs, the coefficients aᵢ and scale of a setup, and M_S's parameters. The evaluator
 * (./coalition.ts) and its kernels build every coalition model from these.
 */
import {
  ADDITIVE_CONVENTION,
  CONVENTIONS,
  type Convention,
  coalitionScale,
  DEFAULT_CONVENTION,
  FEDAVG_CONVENTION,
} from '../consortium/convention.js';
import { checkExamples, checkParams, type Examples, type ModelSpec } from './models.js';

/** Inputs of a coalition evaluator. */
export interface CoalitionSetup {
  readonly spec: ModelSpec;
  /** Global model M0. */
  readonly m0: Float32Array;
  /** Updates Δᵢ = Mᵢ − M0, one per silo (player i). */
  readonly updates: readonly Float32Array[];
  /** FedAvg weights wᵢ > 0 (e.g. example counts; default all 1). Unused by `additive`. */
  readonly weights?: ArrayLike<number>;
  /** A name of ../consortium/convention.ts (default `DEFAULT_CONVENTION`, FedAvg's). */
  readonly convention?: Convention;
  /** The common test set. */
  readonly data: Examples;
}

export interface Coefficients {
  /** aᵢ per silo. */
  readonly a: Float64Array;
  /** s(S) is the same for every coalition (the additive convention). */
  readonly fixedScale: boolean;
  /** Some silo has weight 0: the native kernel, which computes 1/Σ_{i∈S} aᵢ itself, is not used. */
  readonly zeroWeight: boolean;
  /** s(S) from the members. */
  scale(members: readonly number[]): number;
}

export function checkSetup(setup: CoalitionSetup): Coefficients {
  if (!setup || typeof setup !== 'object') throw new TypeError('setup: expected an object');
  const { spec, m0, updates } = setup;
  checkParams(spec, m0, 'm0');
  checkExamples(spec, setup.data, 'data');
  if (!Array.isArray(updates) || updates.length < 1)
    throw new RangeError('updates: expected at least one update');
  for (const [i, u] of updates.entries()) checkParams(spec, u, `updates[${i}]`);
  const n = updates.length;
  const convention = setup.convention ?? DEFAULT_CONVENTION;
  if (!CONVENTIONS.includes(convention))
    throw new RangeError(`convention: expected ${CONVENTIONS.join(' or ')}, got ${String(convention)}`);
  const w = setup.weights ?? new Float64Array(n).fill(1);
  if (w.length !== n) throw new RangeError(`weights: expected ${n} weights, got ${w.length}`);
  // Zero weights are fine under both conventions: a silo of weight 0 adds nothing to a coalition,
  // and a coalition without weight is M0 (coalitionScale, the one owner of s(S)).
  const a = Float64Array.from(w);
  let grand = 0;
  a.forEach((x, i) => {
    if (!(Number.isFinite(x) && x >= 0))
      throw new RangeError(`weights[${i}]: expected a number ≥ 0, got ${x}`);
    grand += x;
  });
  if (!(grand > 0)) throw new RangeError('weights: at least one weight must be positive');
  const zeroWeight = a.some((x) => x === 0);
  if (convention === ADDITIVE_CONVENTION) {
    const s = coalitionScale(ADDITIVE_CONVENTION, grand, grand);
    return { a, fixedScale: true, zeroWeight, scale: () => s };
  }
  return {
    a,
    fixedScale: false,
    zeroWeight,
    scale: (ms) => {
      let total = 0;
      for (const i of ms) total += a[i]!;
      return coalitionScale(FEDAVG_CONVENTION, total, grand);
    },
  };
}

/**
 * Parameters of the coalition model M_S (see the module comment), accumulated in float64 and
 * rounded once to float32. `members` are player indices. Throws RangeError on bad input.
 */
export function coalitionParams(setup: CoalitionSetup, memberList: readonly number[]): Float32Array {
  const coef = checkSetup(setup);
  const n = setup.updates.length;
  for (const i of memberList)
    if (!Number.isInteger(i) || i < 0 || i >= n)
      throw new RangeError(`members: ${i} is not a player in [0, ${n})`);
  return combine(
    setup.m0,
    setup.updates,
    coef,
    [...new Set(memberList)].sort((x, y) => x - y),
    0,
    setup.m0.length,
  );
}

/** aᵢ and s(S) of M_S = M0 + s(S)·Σ_{i∈S} aᵢΔᵢ (see the module comment). Throws RangeError on a bad setup. */
export function coalitionCoefficients(
  setup: CoalitionSetup,
  memberList: readonly number[],
): { a: Float64Array; s: number } {
  const coef = checkSetup(setup);
  return { a: coef.a, s: coef.scale(memberList) };
}

/** m0[lo..hi) + s·Σ aᵢΔᵢ[lo..hi) over `ms`, in float64, rounded to float32. */
export function combine(
  m0: Float32Array,
  updates: readonly Float32Array[],
  coef: Coefficients,
  ms: readonly number[],
  lo: number,
  hi: number,
): Float32Array {
  const out = new Float32Array(hi - lo);
  const acc = new Float64Array(hi - lo);
  for (const i of ms) {
    const u = updates[i]!;
    const ai = coef.a[i]!;
    for (let k = lo; k < hi; k++) acc[k - lo]! += ai * u[k]!;
  }
  const s = coef.scale(ms);
  for (let k = lo; k < hi; k++) out[k - lo] = m0[k]! + s * acc[k - lo]!;
  return out;
}
