/** scoring/manipulation/influence.ts: influence (papers/003 Table 9) and sensitivity matrices. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { influenceMatrix, sensitivityMatrix } from '../../../scoring/manipulation/influence.js';
import { SCHEMES, type Scheme, schemeScores, scoreScheme } from '../../../scoring/private.js';
import { lateRound, sum, withReports } from './_rounds.js';

describe('influence (papers/003 Table 9)', () => {
  it('rows sum to 1; EE has a zero diagonal; LOO, IOI, FP are the identity', () => {
    fc.assert(
      fc.property(lateRound(2, 12), (u) => {
        for (const s of SCHEMES) {
          const m = influenceMatrix(s, u);
          m.forEach((row, i) => {
            expect(sum(row)).toBeCloseTo(1, 12);
            for (const x of row) expect(x).toBeGreaterThanOrEqual(0);
            if (s === 'ee' || s === 'eeMedian') expect(row[i]).toBe(0);
            if (s === 'loo' || s === 'ioi' || s === 'fp') expect(row[i]).toBe(1);
          });
        }
      }),
      { numRuns: 100 },
    );
  });

  it('EE row i is t_j / Σ_{k≠i} t_k (positive terms)', () => {
    const u = { full: 0.9, empty: 0.5, withOnly: [0.8, 0.75, 0.85], without: [0.6, 0.7, 0.55] };
    const t = [0.1 + 0.1, 0.15 + 0.2, 0.05 + 0.05];
    const m = influenceMatrix('ee', u);
    expect(m[0]![1]).toBeCloseTo(t[1]! / (t[1]! + t[2]!), 14);
    expect(m[2]![0]).toBeCloseTo(t[0]! / (t[0]! + t[1]!), 14);
  });

  it("reproduces all 36 entries of Table 9 from 6 per-silo terms (transposed: the table's columns are our rows)", () => {
    // Table 9 (Brain, 6 clients, round 10), row = reporting client, column = scored client.
    const table = [
      [0.0, 0.145, 0.151, 0.169, 0.15, 0.167],
      [0.129, 0.0, 0.132, 0.147, 0.131, 0.145],
      [0.17, 0.167, 0.0, 0.194, 0.172, 0.192],
      [0.273, 0.268, 0.28, 0.0, 0.278, 0.309],
      [0.164, 0.161, 0.167, 0.187, 0.0, 0.185],
      [0.262, 0.257, 0.268, 0.3, 0.266, 0.0],
    ];
    // Terms t_j fitted to the table (one scale-free vector; 36 entries, 5 degrees of freedom).
    const t = [0.129, 0.1124, 0.1482, 0.2387, 0.1429, 0.2287];
    const u = {
      full: 0.9,
      empty: 0.5,
      withOnly: t.map((x) => 0.9 - x / 2),
      without: t.map((x) => 0.5 + x / 2),
    };
    const m = influenceMatrix('ee', u);
    // The table is rounded to 3 decimals and averaged over runs ("variance below 0.01").
    for (let i = 0; i < 6; i++)
      for (let j = 0; j < 6; j++) expect(Math.abs(m[i]![j]! - table[j]![i]!)).toBeLessThan(0.0015);
    // Normalizing by Σ_k t_k (all silos) instead of Σ_{k≠i} t_k does not fit the table:
    const total = sum(t);
    expect(Math.abs(t[3]! / total - table[3]![5]!)).toBeGreaterThan(0.05);
  });

  it('EE-median: the reporters whose terms are the median of the others', () => {
    // β-terms v(M) − withOnly: 0.1, 0.2, 0.3, 0.4; γ-terms without − v(M0): 0.4, 0.3, 0.2, 0.1.
    const u = { full: 1, empty: 0, withOnly: [0.9, 0.8, 0.7, 0.6], without: [0.4, 0.3, 0.2, 0.1] };
    const m = influenceMatrix('eeMedian', u);
    // Silo 0: others' β = {0.2, 0.3, 0.4} → median from silo 2; γ = {0.3, 0.2, 0.1} → median from silo 2.
    expect(Array.from(m[0]!)).toEqual([0, 0, 1, 0]);
    // Silo 1: β others {0.1, 0.3, 0.4} → silo 2 (0.3); γ others {0.4, 0.2, 0.1} → silo 2 (0.2).
    expect(Array.from(m[1]!)).toEqual([0, 0, 1, 0]);
    // Silo 2: β others {0.1, 0.2, 0.4} → silo 1 (0.2); γ others {0.4, 0.3, 0.1} → silo 1 (0.3).
    expect(Array.from(m[2]!)).toEqual([0, 1, 0, 0]);
  });
});

describe('sensitivity (normalizer included)', () => {
  it('matches finite differences of the scores; rows sum to 1', () => {
    fc.assert(
      fc.property(lateRound(3, 8), (u) => {
        for (const s of ['loo', 'ioi', 'fp', 'ee'] as const) {
          // Within the normalizer's margin (issue 32) the scores are a fallback: Eq. 2/4's derivative does not apply.
          if (scoreScheme(s, u).fallback !== 'none') continue;
          const m = sensitivityMatrix(s, u);
          const base = schemeScores(s, u);
          const n = base.length;
          const h = 1e-7;
          for (let i = 0; i < n; i++) {
            const raw = new Float64Array(n);
            for (let j = 0; j < n; j++) {
              const da = schemeScores(s, withReports(u, j, u.withOnly[j]! + h, u.without[j]!));
              const db = schemeScores(s, withReports(u, j, u.withOnly[j]!, u.without[j]! + h));
              raw[j] = Math.abs((da[i]! - base[i]!) / h) + Math.abs((db[i]! - base[i]!) / h);
            }
            const total = sum(raw);
            for (let j = 0; j < n; j++) expect(m[i]![j]!).toBeCloseTo(raw[j]! / total, 4);
            expect(sum(m[i]!)).toBeCloseTo(1, 12);
          }
        }
      }),
      { numRuns: 30 },
    );
  });

  it("EE's diagonal is not zero: own reports move the score through the normalizer", () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.78, 0.83, 0.8],
      without: [0.84, 0.845, 0.83, 0.845],
    };
    for (const [i, row] of sensitivityMatrix('ee', u).entries()) expect(row[i]).toBeGreaterThan(0.1);
  });
});

describe('input checks', () => {
  const u = { full: 1, empty: 0, withOnly: [0.5, 0.5], without: [0.5, 0.5] };
  it('name the parameter', () => {
    expect(() => influenceMatrix('sv' as Scheme, u)).toThrow(/^scheme:/);
    expect(() => sensitivityMatrix('fp', { ...u, without: [0.5] })).toThrow(/^utilities\.without:/);
  });
});
