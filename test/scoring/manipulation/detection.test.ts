/** scoring/manipulation/detection.ts: z against the others, flags, and the reports the detector lets through. */
import { describe, expect, it } from 'vitest';
import { EVIDENCE_SCALE, evidenceOf } from '../../../scoring/manipulation/_evidence.js';
import {
  DEFAULT_RESOLUTION,
  detectReports,
  robustZ,
  SCALE_FLOOR_STEPS,
  SCALE_FLOOR_TYPICAL,
  undetectedBox,
} from '../../../scoring/manipulation/detection.js';
import { EXACT_UP_TO } from '../../../scoring/manipulation/reference-z.js';
import { singleSiloBounds } from '../../../scoring/manipulation/single-silo.js';
import { type PrivateUtilities, ratioScoreBound, SCHEMES, schemeScores } from '../../../scoring/private.js';
import { createRng } from '../../../scoring/seeded-rng.js';
import { sum, unitRange, withReports } from './_rounds.js';

/** Median of a small array (the oracle's own, not the module's). */
const med = (a: readonly number[]) => {
  const s = [...a].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
/** The floors of the scale with the default resolution (no rounding). */
const FLOOR = SCALE_FLOOR_STEPS * DEFAULT_RESOLUTION;
/**
 * The oracle: z of silo j's marginal against one reference set H (positions), the formula of
 * docs/audit.md — 0.6745 (x_j − med_H) / max(MAD_H, floor, κ · median_H max(|IOI|, |LOO|)).
 */
function zAgainst(u: PrivateUtilities, marginal: 'ioi' | 'loo', j: number, h: readonly number[]): number {
  const ioi = Array.from(u.withOnly, (a) => a - u.empty);
  const loo = Array.from(u.without, (b) => u.full - b);
  const x = marginal === 'ioi' ? ioi : loo;
  const ref = h.map((k) => x[k]!);
  const m = med(ref);
  const mad = med(ref.map((v) => Math.abs(v - m)));
  const typical = med(h.map((k) => Math.max(Math.abs(ioi[k]!), Math.abs(loo[k]!))));
  return (0.6745 * (x[j]! - m)) / Math.max(mad, FLOOR, SCALE_FLOOR_TYPICAL * typical);
}

/** A round of n silos whose marginals are drawn in [c − δ, c + δ]. */
function honestRound(
  rng: ReturnType<typeof createRng>,
  n: number,
  c: number,
  d: number,
): { full: number; empty: number; withOnly: number[]; without: number[] } {
  const draw = () => c - d + 2 * d * rng.next();
  return {
    full: 0.85,
    empty: 0.8,
    withOnly: Array.from({ length: n }, () => 0.8 + draw()),
    without: Array.from({ length: n }, () => 0.85 - draw()),
  };
}

describe('detection', () => {
  it('judges a silo against the others only, and two liars cannot raise an honest silo’s z', () => {
    // For n ≥ 5 one reference set of silo h is "the others but the pair": whatever the pair
    // reports, h's z is at most its z against the honest silos alone.
    // (above EXACT_UP_TO others, one enclosing reference stands for the sets: the bound still holds)
    const rng = createRng(3);
    for (let trial = 0; trial < 200; trial++) {
      const n = trial % 10 === 9 ? EXACT_UP_TO + 2 + (trial % 23) : 5 + (trial % 8);
      const u = honestRound(rng, n, 0.02 * rng.next() - 0.01, 0.001 + 0.01 * rng.next());
      const a = trial % n;
      const b = (a + 1 + (trial % (n - 1))) % n;
      const lie = () => (rng.next() < 0.3 ? [0, 1, 0.8, 0.85][trial % 4]! : rng.next());
      for (const liar of [a, b]) {
        u.withOnly[liar] = lie();
        u.without[liar] = lie();
      }
      const d = detectReports(u);
      for (let h = 0; h < n; h++) {
        if (h === a || h === b) continue;
        const honest = [...Array(n).keys()].filter((k) => k !== h && k !== a && k !== b);
        expect(d.zWithOnly[h]!).toBeLessThanOrEqual(zAgainst(u, 'ioi', h, honest) + 1e-9);
        expect(d.zWithout[h]!).toBeLessThanOrEqual(zAgainst(u, 'loo', h, honest) + 1e-9);
      }
    }
  });

  it('is one-sided: a marginal at or below the others’ median is never flagged', () => {
    const rng = createRng(5);
    for (let trial = 0; trial < 200; trial++) {
      const n = 3 + (trial % 10);
      const u = honestRound(rng, n, 0, 0.01);
      const j = trial % n;
      // far below the others: a Maverick's singleton model, a silo with bad data
      u.withOnly[j] = u.empty - 0.01 - rng.next() * 0.8;
      u.without[j] = u.full + 0.01 + rng.next() * 0.1;
      const d = detectReports(u);
      expect(d.zWithOnly[j]!).toBeLessThanOrEqual(0);
      expect(d.zWithout[j]!).toBeLessThanOrEqual(0);
      expect(d.flagged[j]).toBe(false);
    }
  });

  // Others' marginals in [c − δ, c + δ]: every reference set has its median there, MAD ≤ 2δ and
  // typical magnitude ≤ |c| + δ, so a marginal at c + D is flagged once
  // 0.6745 (D − δ) / max(2δ, floor, κ (|c| + δ)) > 3.5 — and once it lies beyond the evidence
  // reference, E + 3.5 max(floor, 0.1 E) / 0.6745 with E = v(M) − v(M0) − max(0, max LOO_k) for an
  // IOI and E = v(M) − v(M0) − Σ max(0, LOO_k) for a LOO, over the others but their two largest LOO.
  it('flags a marginal above the others by more than the bound', () => {
    const rng = createRng(11);
    for (let trial = 0; trial < 200; trial++) {
      const n = 3 + (trial % 20);
      const c = 0.02 * rng.next() - 0.01;
      const d = 0.001 + 0.005 * rng.next();
      const u = honestRound(rng, n, c, d);
      const o = trial % n;
      const scale = Math.max(2 * d, FLOOR, SCALE_FLOOR_TYPICAL * (Math.abs(c) + d));
      // the others' positive LOO, largest first, less the two largest (while two others stay)
      const others = u.without
        .flatMap((b, k) => (k === o ? [] : [Math.max(0, u.full - b)]))
        .sort((a, b) => b - a);
      const m = Math.max(0, Math.min(2, others.length - 2));
      const e = u.full - u.empty - (trial % 2 === 0 ? (others[m] ?? 0) : sum(others.slice(m)));
      const evidenceBound = e + (3.5 * Math.max(FLOOR, EVIDENCE_SCALE * e)) / 0.6745;
      const x = Math.max(c + d + (3.5 / 0.6745) * scale * 1.01, evidenceBound * 1.01);
      if (trial % 2 === 0) u.withOnly[o] = u.empty + x;
      else u.without[o] = u.full - x;
      const det = detectReports(u);
      expect(det.flagged[o]).toBe(true);
      expect(Math.max(det.zWithOnly[o]!, det.zWithout[o]!)).toBeGreaterThan(3.5);
    }
  });

  it('the evidence: the public improvement less the others’ LOO but their two largest; colluders can only lower it', () => {
    const rng = createRng(23);
    for (let trial = 0; trial < 300; trial++) {
      const n = 2 + (trial % 12);
      const loo = Array.from({ length: n }, () => rng.next() - 0.4);
      const gain = rng.next() - 0.2;
      const e = evidenceOf(loo, gain, 2);
      for (let j = 0; j < n; j++) {
        // the oracle: the others' positive parts, largest first, less the largest m (2 while 2 others stay)
        const others = loo
          .filter((_, k) => k !== j)
          .map((v) => Math.max(0, v))
          .sort((a, b) => b - a);
        const m = Math.max(0, Math.min(2, others.length - 2));
        expect(e.ioi[j]).toBe(gain - (others[m] ?? 0));
        expect(e.loo[j]).toBeCloseTo(gain - sum(others.slice(m)), 12);
        // a silo's own LOO does not move its evidence
        const own = [...loo];
        own[j] = 5 * rng.next() - 2;
        expect(evidenceOf(own, gain, 2).ioi[j]).toBe(e.ioi[j]);
        expect(evidenceOf(own, gain, 2).loo[j]).toBeCloseTo(e.loo[j]!, 12);
        if (n < 3) continue;
        // a colluder's report, whatever it is, gives j no more evidence than the honest reports
        // with that colluder's value at 0 would; and honest silo j keeps at least the evidence of
        // the others without the pair (a pair's two values are among those left out, or lower)
        const k = (j + 1 + (trial % (n - 1))) % n;
        const lie = [...loo];
        lie[k] = 4 * rng.next() - 2;
        const zeroed = [...loo];
        zeroed[k] = 0;
        expect(evidenceOf(lie, gain, 2).ioi[j]!).toBeLessThanOrEqual(
          evidenceOf(zeroed, gain, 2).ioi[j]! + 1e-12,
        );
        expect(evidenceOf(lie, gain, 2).loo[j]!).toBeLessThanOrEqual(
          evidenceOf(zeroed, gain, 2).loo[j]! + 1e-12,
        );
        if (n < 6) continue;
        const b = (k + 1) % n === j ? (k + 2) % n : (k + 1) % n;
        const pair = [...loo];
        pair[k] = 4 * rng.next();
        pair[b] = 4 * rng.next();
        const honest = loo.filter((_, t) => t !== k && t !== b).map((v) => Math.max(0, v));
        const ownHonest = Math.max(0, loo[j]!);
        const withoutPairIoi =
          gain - Math.max(0, ...honest.filter((_, t) => t !== honest.indexOf(ownHonest)));
        expect(evidenceOf(pair, gain, 2).ioi[j]!).toBeGreaterThanOrEqual(withoutPairIoi - 1e-12);
        expect(evidenceOf(pair, gain, 2).loo[j]!).toBeGreaterThanOrEqual(
          gain - (sum(honest) - ownHonest) - 1e-12,
        );
      }
    }
  });

  it('first rounds of trained runs: the dominant honest silo is not flagged, for its evidence', () => {
    // issue 37: the detector of the last session quarantined these honest silos (z 8.2 and 9.3;
    // 5.0; 6.3): one silo moves the model several times more than every other
    const T = 2000;
    const rounds = [
      // paper000-selection-50-fedemd seed 4 round 1: silo 2 has IOI 0.095, LOO 0.099; the others ≤ 0.012
      {
        dominant: 2,
        u: {
          full: 0.199,
          empty: 0.0885,
          withOnly: [0.1, 0.1, 0.1835, 0.1, 0.1],
          without: [0.199, 0.199, 0.1, 0.199, 0.1905],
        },
      },
      // paper000-adversaries-58-fedavg seed 4 round 1 (silo 5 a random-update attacker): silo 2's
      // singleton beats the aggregate, IOI 0.292 = 1.30 × its evidence
      {
        dominant: 2,
        u: {
          full: 0.313,
          empty: 0.0885,
          withOnly: [0.2225, 0.1, 0.3805, 0.1, 0.101, 0.0895],
          without: [0.314, 0.3115, 0.2605, 0.306, 0.376, 0.3135],
        },
      },
      // paper000-selection-50-fedemd seed 4 round 2: silo 4, IOI 0.0845 = 1.36 × its evidence
      {
        dominant: 4,
        u: {
          full: 0.261,
          empty: 0.199,
          withOnly: [0.1985, 0.198, 0.1995, 0.2095, 0.2835],
          without: [0.258, 0.264, 0.26, 0.2865, 0.237],
        },
      },
    ];
    for (const { dominant, u } of rounds) {
      const n = u.withOnly.length;
      expect(detectReports(u, 3.5, { resolution: 1 / T }).flagged).toEqual(Array(n).fill(false));
      // what excuses it is the evidence: the same marginals in a round without the public
      // improvement (v(M0) raised to v(M), every IOI kept) are flagged, as the detector of the
      // last session flagged them
      const flat = { ...u, empty: u.full, withOnly: u.withOnly.map((a) => a + u.full - u.empty) };
      expect(detectReports(flat, 3.5, { resolution: 1 / T }).flagged[dominant]).toBe(true);
    }
  });

  it('honest rounds of trained runs: a Maverick and the best contributor are not flagged', () => {
    // paper000-mavericks-5 seed 3 round 2 (T = 2000): the exclusive Maverick's singleton model
    // loses 0.51 of accuracy; the detector before issue 37 flagged it (|z| far above 3.5)
    const maverick = {
      full: 0.676,
      empty: 0.61,
      withOnly: [0.651, 0.648, 0.646, 0.646, 0.1],
      without: [0.6735, 0.6715, 0.6765, 0.6735, 0.678],
    };
    expect(Math.abs(robustZ(maverick.withOnly.map((a) => a - maverick.empty))[4]!)).toBeGreaterThan(3.5);
    expect(detectReports(maverick, 3.5, { resolution: 1 / 2000 }).flagged).toEqual(Array(5).fill(false));
    // heldout-free-rider-label-flip seed 4 round 2 (T = 1000): silo 3, the largest contributor,
    // has LOO 0.186 against ≤ 0.028 for the others
    const best = {
      full: 0.7,
      empty: 0.6,
      withOnly: [-68, -31, 0, 90, -323, -18].map((k) => 0.6 + k / 1000),
      without: [28, -5, -5, 186, 5, 11].map((k) => 0.7 - k / 1000),
    };
    expect(detectReports(best, 3.5, { resolution: 1 / 1000 }).flagged).toEqual(Array(6).fill(false));
  });

  it('with a resolution, utilities that differ by less than a quarter step give the same z', () => {
    // processor independence: two machines' accuracies on T examples differ by float noise
    const rng = createRng(17);
    for (let trial = 0; trial < 100; trial++) {
      const T = [384, 1000, 2000][trial % 3]!;
      const n = 5 + (trial % 6);
      const grid = () => Math.round(T * (0.6 + 0.2 * rng.next())) / T;
      const u = {
        full: grid(),
        empty: grid(),
        withOnly: Array.from({ length: n }, grid),
        without: Array.from({ length: n }, grid),
      };
      const jitter = (x: number) => x + ((rng.next() - 0.5) * 0.49) / T;
      const v = {
        full: jitter(u.full),
        empty: jitter(u.empty),
        withOnly: u.withOnly.map(jitter),
        without: u.without.map(jitter),
      };
      const a = detectReports(u, 3.5, { resolution: 1 / T });
      const b = detectReports(v, 3.5, { resolution: 1 / T });
      expect(b).toEqual(a);
    }
  });

  it('robust z: the Iglewicz–Hoaglin formula and the MeanAD fallback', () => {
    // median 3, deviations 2,1,0,1,7 → MAD 1
    expect(Array.from(robustZ([1, 2, 3, 4, 10]))).toEqual([-2, -1, 0, 1, 7].map((x) => 0.6745 * x));
    // MAD 0: deviations 0,0,0,0,5 → MeanAD 1
    expect(robustZ([3, 3, 3, 3, 8])[4]).toBeCloseTo(5 / 1.253314, 12);
    expect(Array.from(robustZ([2, 2, 2]))).toEqual([0, 0, 0]);
  });

  it('the undetected box: up to the largest unflagged marginal, down to the end of the range', () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.805, 0.812, 0.808, 0.803, 0.809],
      without: [0.84, 0.845, 0.842, 0.838, 0.846, 0.841],
    };
    const box = undetectedBox(u, 2, unitRange);
    expect(box.withOnlyLo).toBe(0);
    expect(box.withoutHi).toBe(1);
    expect(box.withOnlyHi).toBeGreaterThan(0.812);
    expect(box.withoutLo).toBeLessThan(0.842);
    const det = (a: number, b: number) => detectReports(withReports(u, 2, a, b));
    expect(det(box.withOnlyHi, 0.842).zWithOnly[2]!).toBeCloseTo(3.5, 9);
    expect(det(box.withOnlyHi + 1e-6, 0.842).flagged[2]).toBe(true);
    expect(det(box.withOnlyLo, box.withoutHi).flagged[2]).toBe(false);
    expect(det(0.812, box.withoutLo).zWithout[2]!).toBeCloseTo(3.5, 9);
    expect(det(0.812, box.withoutLo - 1e-6).flagged[2]).toBe(true);
    // with a resolution the ends are the last accepted steps
    const stepped = undetectedBox(u, 2, unitRange, 3.5, { resolution: 1 / 1000 });
    const z = (a: number) => detectReports(withReports(u, 2, a, 0.842), 3.5, { resolution: 1 / 1000 });
    expect(z(stepped.withOnlyHi).flagged[2]).toBe(false);
    expect(z(stepped.withOnlyHi + 1 / 1000).flagged[2]).toBe(true);
    // the undetected gain cannot exceed the unconstrained supremum (where the search is exact: a
    // search that met the normalizer's margin (issue 32) returns a lower bound, and the range holds)
    let compared = 0;
    for (const s of SCHEMES)
      for (const [i, b] of singleSiloBounds(s, u).entries()) {
        if (b.selfGain.exact) {
          compared++;
          expect(b.selfGainUndetected.value).toBeLessThanOrEqual(b.selfGain.value);
        } else
          expect(schemeScores(s, u)[i]! + b.selfGainUndetected.value).toBeLessThanOrEqual(
            ratioScoreBound(u.full),
          );
      }
    expect(compared).toBeGreaterThan(0);
  });
});

describe('input checks', () => {
  const u = { full: 1, empty: 0, withOnly: [0.5, 0.5], without: [0.5, 0.5] };
  it('name the parameter', () => {
    expect(() => detectReports(u, 0)).toThrow(/^threshold:/);
    expect(() => detectReports(u, 3.5, { resolution: 0 })).toThrow(/^options\.resolution:/);
    expect(() => undetectedBox(u, 0, unitRange, 3.5, { resolution: Number.NaN })).toThrow(
      /^options\.resolution:/,
    );
  });
});
