/**
 * Attack family: a silo's weight word outside the configured weight range (trust issue,
 * finding 4). The weighted input is x_i = (w_i·Δ_i, w_i) quantized (protocol/weighted.ts); the
 * server learns only the sums, so it cannot see that one silo's weight word is not a weight in
 * [0, weightRange]: it can make the total weight tiny (the FedAvg step Σw·Δ / Σw explodes) or
 * negative (the decoder returns a zero step: the round is silently void).
 */
import { describe, expect, it } from 'vitest';
import { quantizer } from '../../crypto/quantize.js';
import { simulatedIdentities, simulateRound } from '../../protocol/simulate.js';
import { decodeWeightedSum, encodeWeightedInput, type WeightedEncoding } from '../../protocol/weighted.js';

const N = 5;
const T = 4;
const D = 3;
const encoding: WeightedEncoding = { valueRange: 1, weightRange: 1, n: N };
const weights = [0.5, 1, 0.75, 1, 0.25];
const updates = weights.map((_, i) => Float64Array.from({ length: D }, (_, j) => -0.1 * (i + 1) + 0.05 * j));
const honestInputs = updates.map((u, i) => encodeWeightedInput(u, weights[i]!, encoding));
const CORRUPT = 4;

/** Silo 4's input with its weight word replaced so that the total weight level is `total`. */
function withTotalLevel(total: number): Uint32Array[] {
  const inputs = honestInputs.map((x) => x.slice());
  let others = 0;
  for (let i = 0; i < N; i++) if (i !== CORRUPT) others += inputs[i]![D]! | 0;
  inputs[CORRUPT]![D] = (total - others) >>> 0;
  return inputs;
}

async function round(inputs: Uint32Array[]) {
  return simulateRound({
    session: 'weight-word',
    round: 1,
    threshold: T,
    inputs,
    signingKeys: simulatedIdentities(N, 3),
    seed: 3,
  });
}

describe('security: the weight word', () => {
  const honest = decodeWeightedSum(
    honestInputs.reduce((s, x) => s.map((v, j) => (v + x[j]!) >>> 0), new Uint32Array(D + 1)),
    encoding,
  );

  it('old behaviour: a total weight of one level multiplies the model step by ~10^8, silently', async () => {
    const r = await round(withTotalLevel(1));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const got = decodeWeightedSum(r.result.sum, encoding);
    const factor = got.average[0]! / honest.average[0]!;
    // one weight level is 1/scale: the step is multiplied by (honest total)·scale ≈ 1.5·10^9
    expect(factor).toBeCloseTo(honest.totalWeight * quantizer({ range: 1, n: N }).scale, -3);
    expect(factor).toBeGreaterThan(1e9);
  });

  it('old behaviour: a negative total weight voids the step (zeros) without an error', async () => {
    const r = await round(withTotalLevel(-1000));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const got = decodeWeightedSum(r.result.sum, encoding);
    expect(got.totalWeight).toBeLessThan(0);
    expect(Array.from(got.average)).toEqual([0, 0, 0]);
  });
});
