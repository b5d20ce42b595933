/**
 * Attack family: a forged Unmasking correction (trust issue, finding 4).
 *
 * A survivor's correction (its summed pairwise masks with the dropped silos, UnmaskResponse.
 * correction) is subtracted from the sum. A corrupt survivor sends its true correction minus a
 * small vector: the sum shifts by that vector, stays in the quantizer's range and is decoded
 * as if nothing happened.
 */
import { describe, expect, it } from 'vitest';
import type { UnmaskResponse } from '../../protocol/messages.js';
import { decodeWeightedSum, encodeWeightedInput, type WeightedEncoding } from '../../protocol/weighted.js';
import { parties, plainSum, resign, runHonestServer, type Tamper } from './_round.js';

const N = 5;
const T = 4;
const D = 3;
const encoding: WeightedEncoding = { valueRange: 1, weightRange: 1, n: N };
const weights = [0.5, 1, 0.75, 1, 0.25];
const updates = weights.map((_, i) => Float64Array.from({ length: D }, (_, j) => -0.1 * (i + 1) + 0.05 * j));
const inputs = updates.map((u, i) => encodeWeightedInput(u, weights[i]!, encoding));
const DROPPED = 4;
const SURVIVORS = [0, 1, 2, 3];

/** Silo 0 (corrupt) lowers its correction's first word by `delta` levels. */
function forge(delta: number, p: ReturnType<typeof parties>): Tamper {
  return (stage, from, m) => {
    if (stage !== 'unmask' || from !== 0) return m;
    const r = m as UnmaskResponse;
    const correction = r.correction!.slice();
    correction[0] = (correction[0]! + delta) >>> 0; // the server subtracts it: Σ[0] drops by delta
    return resign(p, r, { correction });
  };
}

describe('security: a forged Unmasking correction', () => {
  it('old behaviour: the shifted sum is decoded without an error', async () => {
    const p = parties(inputs, { session: 'forged', round: 1, threshold: T });
    const honest = decodeWeightedSum(plainSum(inputs, SURVIVORS), encoding);
    const delta = Math.round(0.466 * (Math.floor(0x7fffffff / N) / encoding.valueRange));
    const r = await runHonestServer(p, { drop: new Map([[DROPPED, 1]]), tamper: forge(delta, p) });
    expect(r.kind).toBe('result');
    if (r.kind !== 'result') return;
    const got = decodeWeightedSum(r.output.result.sum, encoding);
    // Σw·Δ[0] = −1.341 is decoded instead of the survivors' −0.875
    expect(got.weightedSum[0]).toBeCloseTo(honest.weightedSum[0]! - 0.466, 6);
    expect(got.totalWeight).toBeCloseTo(honest.totalWeight, 6);
  });
});
