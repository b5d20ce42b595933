/**
 * The server's transcript holds no individual input: every masked vector y_u it receives — and
 * even y_u − PRG(b_u) after it reconstructs the self-mask seeds — looks uniform over Z_(2^32) and
 * is uncorrelated with the inputs, and so are the survivors' Unmasking corrections (Bonawitz et
 * al. 2017, §6: the server's view is simulatable from the sum). Statistical tests with fixed seeds, so they are deterministic; each
 * is run on the raw inputs too, as a negative control showing the statistic does detect structure.
 */
import { describe, expect, it } from 'vitest';
import { applyMask } from '../../crypto/prg.js';
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import { combineShares } from '../../crypto/shamir.js';
import type { MaskedInput, UnmaskResponse } from '../../protocol/messages.js';
import { simulatedIdentities, simulateRound } from '../../protocol/simulate.js';
import { pearson } from '../../scoring/metrics.js';
import { tolerated } from './_inputs.js';

const D = 1 << 16;
/** χ²(255) quantile at 1 − 10^−6 (Wilson–Hilferty): ≈ 377. */
const CHI2_CRIT = 377;

/** χ² statistic of the top byte over 256 equiprobable buckets. */
function chi2TopByte(y: Uint32Array): number {
  const counts = new Float64Array(256);
  for (const v of y) counts[v >>> 24]! += 1;
  const e = y.length / 256;
  let s = 0;
  for (const c of counts) s += ((c - e) * (c - e)) / e;
  return s;
}

/** Largest |z|-score of the 32 bit frequencies (each bit should be 1 with probability 1/2). */
function worstBitZ(y: Uint32Array): number {
  let worst = 0;
  for (let b = 0; b < 32; b++) {
    let ones = 0;
    for (const v of y) ones += (v >>> b) & 1;
    worst = Math.max(worst, Math.abs(ones - y.length / 2) / Math.sqrt(y.length / 4));
  }
  return worst;
}

/** Pearson correlation of two word vectors read as numbers in [0, 2^32) (0 when one is constant). */
function corr(a: Uint32Array, b: Uint32Array): number {
  const r = pearson(a, b);
  return Number.isNaN(r) ? 0 : r;
}
/** 6 standard errors of a correlation of independent vectors: the test fails with prob. ≈ 2·10^−9. */
const CORR_CRIT = 6 / Math.sqrt(D);

describe('protocol: the server transcript reveals no individual input (statistical)', async () => {
  const n = 5;
  const inputs = [
    new Uint32Array(D), // all zeros
    Uint32Array.from({ length: D }, (_, j) => j), // ramp
    new Uint32Array(D).fill(7), // constant
    Uint32Array.from({ length: D }, (_, j) => (j % 2 === 0 ? 0 : 0xffffffff)), // alternating
    Uint32Array.from({ length: D }, (_, j) => (j * j) >>> 0),
  ];
  const masked = new Map<number, Uint32Array>();
  const unmasks: UnmaskResponse[] = [];
  const session = 'privacy';
  const round = 3;
  const r = await simulateRound({
    session,
    round,
    threshold: 3,
    corruptTolerated: tolerated(n, 3),
    inputs,
    signingKeys: simulatedIdentities(n, 21),
    random: (i) => seededRandomFromInts(21, i),
    dropouts: new Map([[4, 'after-share']]),
    // the corrections' privacy is what this file checks: have the survivors send them
    corrections: 'recompute',
    observe: (e) => {
      if (e.direction !== 'up') return;
      if (e.message.type === 'mask') masked.set(e.from, (e.message as MaskedInput).masked);
      if (e.message.type === 'unmask') unmasks.push(e.message as UnmaskResponse);
    },
  });

  it('the round succeeded and the server never saw silo 4 (dropped) mask anything', () => {
    expect(r.ok).toBe(true);
    expect([...masked.keys()]).toEqual([0, 1, 2, 3]);
  });

  it('negative control: the statistics flag the raw inputs', () => {
    expect(chi2TopByte(inputs[1]!)).toBeGreaterThan(CHI2_CRIT);
    expect(worstBitZ(inputs[2]!)).toBeGreaterThan(6);
    expect(Math.abs(corr(inputs[1]!, inputs[4]!))).toBeGreaterThan(CORR_CRIT);
  });

  it('each masked vector is uniform-looking: top-byte χ² and every bit frequency', () => {
    for (const y of masked.values()) {
      expect(chi2TopByte(y)).toBeLessThan(CHI2_CRIT);
      expect(worstBitZ(y)).toBeLessThan(6);
    }
  });

  it('masked vectors are uncorrelated with every input and with each other', () => {
    for (const [u, y] of masked) {
      for (const x of [inputs[1]!, inputs[3]!, inputs[4]!])
        expect(Math.abs(corr(y, x))).toBeLessThan(CORR_CRIT);
      for (const [v, z] of masked) if (v > u) expect(Math.abs(corr(y, z))).toBeLessThan(CORR_CRIT);
    }
  });

  it('after reconstructing the self-mask seeds, y_v − PRG(b_v) is still masked (pairwise masks among survivors)', async () => {
    for (const [v, y] of masked) {
      const shares = unmasks.slice(0, 3).map((m) => m.seedShares.find((s) => s.owner === v)!.share);
      const b = await combineShares(shares);
      const view = y.slice();
      applyMask(view, b, { kind: 'self', session, round, owner: v, vector: 0 }, -1);
      expect(chi2TopByte(view)).toBeLessThan(CHI2_CRIT);
      expect(Math.abs(corr(view, inputs[1]!))).toBeLessThan(CORR_CRIT);
      // and it is not the input itself
      expect(view).not.toEqual(inputs[v]);
    }
  });

  it('Unmasking corrections look uniform, and y_v − PRG(b_v) − correction_v is still masked', async () => {
    expect(unmasks.length).toBe(4);
    for (const m of unmasks) {
      const c = m.correction!;
      expect(c.length).toBe(D);
      expect(chi2TopByte(c)).toBeLessThan(CHI2_CRIT);
      expect(worstBitZ(c)).toBeLessThan(6);
      for (const x of [inputs[1]!, inputs[3]!, inputs[4]!])
        expect(Math.abs(corr(c, x))).toBeLessThan(CORR_CRIT);
      const v = m.sender;
      const shares = unmasks.slice(0, 3).map((u) => u.seedShares.find((s) => s.owner === v)!.share);
      const b = await combineShares(shares);
      const view = masked.get(v)!.slice();
      applyMask(view, b, { kind: 'self', session, round, owner: v, vector: 0 }, -1);
      for (let j = 0; j < D; j++) view[j] = (view[j]! - c[j]!) >>> 0;
      // what is left is x_v plus the pairwise masks with the other three survivors
      expect(chi2TopByte(view)).toBeLessThan(CHI2_CRIT);
      expect(worstBitZ(view)).toBeLessThan(6);
      expect(Math.abs(corr(view, inputs[1]!))).toBeLessThan(CORR_CRIT);
    }
  });
});
