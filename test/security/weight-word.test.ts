/**
 * Attack family: a silo's weight word outside the configured weight range (trust issue,
 * finding 4). The weighted input is x_i = (w_i·Δ_i, w_i) quantized (protocol/weighted.ts); the
 * server learns only the sums, so it cannot see that one silo's weight word is not a weight in
 * [minWeight, weightRange]. Old behaviour (commit f34f0a2): a total weight of one level multiplied
 * the FedAvg step Σw·Δ / Σw by 1.5·10^9, and a negative total made the decoder return a zero step
 * (the round silently void) — both without an error.
 *
 * Now the protocol server checks every aggregate (RoundConfig.encoding; protocol/weighted.ts
 * checkWeightedSum): the total weight must lie in |U_3|·[minWeight, weightRange] and every
 * coordinate of Σ w·Δ in ±|U_3|·valueRange, else the round aborts with AGGREGATE_OUT_OF_RANGE.
 * What remains possible is stated and checked at the end.
 */
import { describe, expect, it } from 'vitest';
import { SecAggError } from '../../protocol/errors.js';
import { simulatedIdentities, simulateRound } from '../../protocol/simulate.js';
import {
  checkWeightedSum,
  decodeWeightedSum,
  encodeWeightedInput,
  GUARD_BITS,
  type WeightedEncoding,
} from '../../protocol/weighted.js';

const N = 5;
const T = 4; // ⌊(5 + 1)/2⌋ + 1 for the default n_C = 1
const D = 3;
const encoding: WeightedEncoding = { valueRange: 1, weightRange: 1, n: N, minWeight: 0.25 };
const weights = [0.5, 1, 0.75, 1, 0.25];
const updates = weights.map((_, i) => Float64Array.from({ length: D }, (_, j) => -0.1 * (i + 1) + 0.05 * j));
const honestInputs = updates.map((u, i) => encodeWeightedInput(u, weights[i]!, encoding));
const CORRUPT = 4;
/** Weight levels per unit of weight (the weight quantizer's scale, n·2^GUARD_BITS summands). */
const SCALE = Math.floor(0x7fffffff / (N * 2 ** GUARD_BITS)) / encoding.weightRange;

/** Silo 4's input with its weight word replaced so that the total weight level is `total`. */
function withTotalLevel(total: number): Uint32Array[] {
  const inputs = honestInputs.map((x) => x.slice());
  let others = 0;
  for (let i = 0; i < N; i++) if (i !== CORRUPT) others += inputs[i]![D]! | 0;
  inputs[CORRUPT]![D] = (total - others) >>> 0;
  return inputs;
}

async function round(inputs: Uint32Array[], enc: WeightedEncoding = encoding) {
  return simulateRound({
    session: 'weight-word',
    round: 1,
    threshold: T,
    encoding: enc,
    inputs,
    signingKeys: simulatedIdentities(N, 3),
    seed: 3,
  });
}

const honestSum = honestInputs.reduce((s, x) => s.map((v, j) => (v + x[j]!) >>> 0), new Uint32Array(D + 1));
const honest = decodeWeightedSum(honestSum, encoding, N);

describe('security: the weight word', () => {
  it('a total weight of one level (step × 10^7) aborts the round with AGGREGATE_OUT_OF_RANGE', async () => {
    const r = await round(withTotalLevel(1));
    expect(r).toMatchObject({ ok: false, code: 'AGGREGATE_OUT_OF_RANGE', stage: 'unmask', culprits: [] });
    if (r.ok) return;
    expect(r.detail).toMatch(
      /^total weight .* is outside \|U_3\|·\[minWeight, weightRange\] = \[1\.25, 5\]$/,
    );
  });

  it('a negative total weight (a silently void round before) aborts with AGGREGATE_OUT_OF_RANGE', async () => {
    const r = await round(withTotalLevel(-1000));
    expect(r).toMatchObject({ ok: false, code: 'AGGREGATE_OUT_OF_RANGE' });
  });

  it('a total weight above |U_3|·weightRange aborts too', async () => {
    const r = await round(withTotalLevel(Math.round(5.5 * SCALE)));
    expect(r).toMatchObject({ ok: false, code: 'AGGREGATE_OUT_OF_RANGE' });
  });

  it('the decoder applies the same checks (the engine and the service decode with |U_3|)', () => {
    const forged = honestSum.slice();
    forged[D] = 1;
    expect(() => decodeWeightedSum(forged, encoding, N)).toThrow(SecAggError);
    expect(() => decodeWeightedSum(forged, encoding, N)).toThrow(/^AGGREGATE_OUT_OF_RANGE: total weight/);
    expect(decodeWeightedSum(honestSum, encoding, N).totalWeight).toBeCloseTo(3.5, 6);
  });

  it('what remains: any total in |U_3|·[minWeight, weightRange] passes — the step grows by at most Σw_honest / (|U_3|·minWeight)', async () => {
    const lowest = Math.round(N * 0.25 * SCALE);
    const r = await round(withTotalLevel(lowest));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const got = decodeWeightedSum(r.result.sum, encoding, N);
    expect(got.totalWeight).toBeCloseTo(N * 0.25, 6);
    const factor = got.average[0]! / honest.average[0]!;
    expect(factor).toBeCloseTo(honest.totalWeight / (N * 0.25), 5); // 3.5 / 1.25 = 2.8, not 1.5·10^9
  });

  it('what remains: with minWeight = 0 the total can shrink to one level — the step is then unbounded (documented)', async () => {
    const open = { ...encoding, minWeight: 0 };
    const inputs = withTotalLevel(1);
    const r = await round(inputs, open);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const got = decodeWeightedSum(r.result.sum, open, N);
    expect(got.average[0]! / honest.average[0]!).toBeGreaterThan(1e7);
  });

  it('a zero total weight passes only with a zero weighted sum (FedMS "aggregate nothing"), not as a void', () => {
    const open = { ...encoding, minWeight: 0 };
    const zero = new Uint32Array(D + 1);
    expect(checkWeightedSum(zero, open, N)).toBeNull();
    const forged = honestSum.slice();
    forged[D] = 0;
    expect(checkWeightedSum(forged, open, N)).toMatch(/^total weight 0 with a non-zero weighted sum/);
  });
});
