/**
 * Attack family: a forged Unmasking correction (trust issue, finding 4).
 *
 * A survivor's correction (its summed pairwise masks with the dropped silos, UnmaskResponse.
 * correction) used to be subtracted from the sum unchecked. A corrupt survivor sends its true
 * correction plus a small vector: the sum shifts by it, stays in the quantizer's range and was
 * decoded as if nothing happened (old behaviour, commit f34f0a2 with n = 5: Σw·Δ[0] = −1.341
 * decoded instead of the survivors' −0.875; with this file's n = 6, checked against the code
 * before the fix: −1.641 instead of −1.175).
 *
 * Now RoundConfig.corrections (protocol/config.ts CorrectionMode) decides, default 'off':
 *  - 'off': no corrections are sent; one sent anyway is refused; the server rebuilds the masks;
 *  - 'recompute': every correction is recomputed; a wrong one is replaced and its sender named;
 *  - 'fallback': corrections are trusted; when the aggregate fails its range check, the server
 *    rebuilds the masks and names the forger. A forgery that keeps the aggregate in range passes:
 *    it is indistinguishable from the same silo sending a wrong input, which no mode can detect.
 */
import { describe, expect, it } from 'vitest';
import type { CorrectionMode } from '../../protocol/config.js';
import type { UnmaskResponse } from '../../protocol/messages.js';
import { decodeWeightedSum, encodeWeightedInput, type WeightedEncoding } from '../../protocol/weighted.js';
import { type Party, parties, plainSum, resign, runHonestServer, type Tamper } from './_round.js';

const N = 6;
const T = 4; // ⌊(6 + 1)/2⌋ + 1 for the default n_C = 1
const D = 3;
const encoding: WeightedEncoding = { valueRange: 1, weightRange: 1, n: N, minWeight: 0.25 };
const weights = [0.5, 1, 0.75, 1, 0.25, 0.5];
const updates = weights.map((_, i) => Float64Array.from({ length: D }, (_, j) => -0.1 * (i + 1) + 0.05 * j));
const inputs = updates.map((u, i) => encodeWeightedInput(u, weights[i]!, encoding));
const DROPPED = 4;
const SURVIVORS = [0, 1, 2, 3, 5];
const honest = plainSum(inputs, SURVIVORS);
/** 0.466 in value levels: the shift of the reproduction. */
const levels = (x: number) => Math.round(x * (Math.floor(0x7fffffff / (N * 16)) / encoding.valueRange));

const party = (corrections?: CorrectionMode): Party =>
  parties(inputs, {
    session: 'forged',
    round: 1,
    threshold: T,
    encoding,
    ...(corrections ? { corrections } : {}),
  });

/** Silo 0 (corrupt) sends its correction plus `delta` levels in word 0 (or a correction of its own). */
function forge(p: Party, delta: number): Tamper {
  return (stage, from, m) => {
    if (stage !== 'unmask' || from !== 0) return m;
    const r = m as UnmaskResponse;
    const correction = (r.correction ?? new Uint32Array(inputs[0]!.length)).slice();
    correction[0] = (correction[0]! + delta) >>> 0; // the server subtracts it: Σ[0] drops by delta
    return resign(p, r, { correction });
  };
}

const run = (p: Party, delta: number) =>
  runHonestServer(p, { drop: new Map([[DROPPED, 1]]), tamper: forge(p, delta) });

describe('security: a forged Unmasking correction', () => {
  it("'off' (the default): a correction is refused (MALFORMED); the server rebuilds the masks and the sum is exact", async () => {
    const r = await run(party(), levels(0.466));
    expect(r.kind).toBe('result');
    if (r.kind !== 'result') return;
    expect(r.rejected).toEqual(['0:MALFORMED']);
    expect(r.output.result.sets[4]).toEqual([1, 2, 3, 5]); // silo 0 is not among the responders
    expect(r.output.result.sum).toEqual(honest);
  });

  it("'recompute': the forged correction is replaced, its sender named (BAD_CORRECTION); the sum is exact", async () => {
    const r = await run(party('recompute'), levels(0.466));
    expect(r.kind).toBe('result');
    if (r.kind !== 'result') return;
    expect(r.rejected).toEqual([]);
    expect(r.output.result.faults).toEqual([
      {
        silo: 0,
        code: 'BAD_CORRECTION',
        detail: 'the correction of 0 differs from its masks with 4; the recomputed one is used',
      },
    ]);
    expect(r.output.result.sum).toEqual(honest);
    const sum = decodeWeightedSum(r.output.result.sum, encoding, SURVIVORS.length);
    expect(sum.weightedSum[0]).toBeCloseTo(decodeWeightedSum(honest, encoding).weightedSum[0]!, 9);
  });

  it("'fallback': a forgery that breaks the aggregate's range is caught, the masks rebuilt and the forger named", async () => {
    const r = await run(party('fallback'), 0x40000000);
    expect(r.kind).toBe('result');
    if (r.kind !== 'result') return;
    expect(r.output.result.faults.map((f) => [f.silo, f.code])).toEqual([[0, 'BAD_CORRECTION']]);
    expect(r.output.result.sum).toEqual(honest);
  });

  it("'fallback': a forgery that keeps the aggregate in range passes — exactly as a wrong input would (documented)", async () => {
    const delta = levels(0.466);
    const r = await run(party('fallback'), delta);
    expect(r.kind).toBe('result');
    if (r.kind !== 'result') return;
    expect(r.output.result.faults).toEqual([]);
    // the same sum as an honest round in which silo 0 had sent x_0 − δ·e_0 as its input
    const wrongInput = honest.slice();
    wrongInput[0] = (wrongInput[0]! - delta) >>> 0;
    expect(r.output.result.sum).toEqual(wrongInput);
  });

  it('in every mode the decoded aggregate is range-checked: a forged input out of range aborts with AGGREGATE_OUT_OF_RANGE', async () => {
    for (const mode of ['off', 'recompute', 'fallback'] as const) {
      const bad = inputs.map((x) => x.slice());
      bad[0]![1] = 0x40000000; // a value word no clipped w·Δ produces
      const p = parties(bad, { session: 'forged', round: 1, threshold: T, encoding, corrections: mode });
      const r = await runHonestServer(p, { drop: new Map([[DROPPED, 1]]) });
      expect(r.kind).toBe('server-abort');
      if (r.kind !== 'server-abort') continue;
      expect(r.output.code).toBe('AGGREGATE_OUT_OF_RANGE');
      expect(r.output.detail).toMatch(/^coordinate 1: Σ w·Δ = .* is outside ±\|U_3\|·valueRange = ±5$/);
    }
  });
});
