import { describe, expect, test } from 'vitest';
import { undetectedCollusionBounds } from '../../../scoring/manipulation/collusion.js';
import { COLLUDERS_TOLERATED, detectReports } from '../../../scoring/manipulation/detection.js';
import {
  keptUtilities,
  MIN_REPORTS_FOR_QUARANTINE,
  quarantineReports,
} from '../../../scoring/manipulation/quarantine.js';
import { singleSiloBounds } from '../../../scoring/manipulation/single-silo.js';

const ROUND = {
  full: 0.86,
  empty: 0.85,
  withOnly: [0.02, 0.854, 0.855, 0.853, 0.855],
  without: [0.06, 0.857, 0.858, 0.856, 0.857],
};

describe('quarantineReports', () => {
  test('quarantines nothing below 5 reports: the silo, two colluders and two references', () => {
    expect(MIN_REPORTS_FOR_QUARANTINE).toBe(1 + COLLUDERS_TOLERATED + 2);
    expect(MIN_REPORTS_FOR_QUARANTINE).toBe(5);
    // Three reporters: IOI 0.001, 0.002, 0.05 and LOO 0.001 of v(M) − v(M0) = 0.005 — the detector
    // flags the third (no other silo's report nor the round's improvement accounts for its IOI).
    const three = { full: 0.705, empty: 0.7, withOnly: [0.701, 0.702, 0.75], without: [0.704, 0.704, 0.704] };
    expect(detectReports(three).flagged).toContain(true);
    expect(quarantineReports(three)).toEqual({ kept: [0, 1, 2], quarantined: [] });
    const four = { ...ROUND, withOnly: ROUND.withOnly.slice(0, 4), without: ROUND.without.slice(0, 4) };
    expect(detectReports(four).flagged[0]).toBe(true);
    expect(quarantineReports(four).quarantined).toEqual([]);
  });

  test('sets aside the flagged report with its z values; a released one is kept and listed', () => {
    const d = quarantineReports(ROUND);
    expect(d.kept).toEqual([1, 2, 3, 4]);
    // silo 0's IOI (−0.83) is far below the others': not a flag; its LOO (0.80) far above: the flag
    expect(d.quarantined.map((q) => [q.index, q.flagged, q.released])).toEqual([[0, ['without'], false]]);
    const z = detectReports(ROUND);
    expect(d.quarantined[0]!.zWithOnly).toBe(z.zWithOnly[0]);
    expect(d.quarantined[0]!.zWithout).toBe(z.zWithout[0]);
    const released = quarantineReports(ROUND, { released: [0] });
    expect(released.kept).toEqual([0, 1, 2, 3, 4]);
    expect(released.quarantined[0]!.released).toBe(true);
    expect(keptUtilities(ROUND, d.kept)).toEqual({
      full: 0.86,
      empty: 0.85,
      withOnly: ROUND.withOnly.slice(1),
      without: ROUND.without.slice(1),
    });
  });

  test('the threshold applies; bad options name the field', () => {
    expect(quarantineReports(ROUND, { threshold: 1000 }).quarantined).toEqual([]);
    expect(quarantineReports(ROUND, { threshold: 1000 }).kept).toEqual([0, 1, 2, 3, 4]);
    expect(() => quarantineReports(ROUND, { threshold: 0 })).toThrow(/^threshold:/);
    expect(() => quarantineReports(ROUND, { released: [5] })).toThrow(/^options\.released:/);
    expect(() => quarantineReports(ROUND, { resolution: -1 })).toThrow(/^options\.resolution:/);
    expect(() => quarantineReports({ ...ROUND, without: [0.1] })).toThrow(/^utilities\.without:/);
  });
});

describe('undetectedCollusionBounds', () => {
  const honest = {
    full: 0.86,
    empty: 0.85,
    withOnly: [0.854, 0.856, 0.855, 0.853, 0.852],
    without: [0.857, 0.855, 0.858, 0.856, 0.854],
  };
  test('the pair’s best reports flag neither member and gain at least what either gains alone', () => {
    for (const scheme of ['fp', 'ee', 'ioi'] as const) {
      const r = undetectedCollusionBounds(scheme, honest, [0, 2]);
      expect(r.members).toEqual([0, 2]);
      expect(r.totalGain.exact).toBe(false);
      const single = singleSiloBounds(scheme, honest);
      expect(r.memberGain[0]!.value).toBeGreaterThanOrEqual(single[0]!.selfGainUndetected.value - 1e-12);
      if (r.totalGain.reports) {
        const [a, b] = r.totalGain.reports;
        const u = {
          ...honest,
          withOnly: honest.withOnly.map((x, i) => (i === 0 ? a!.withOnly : i === 2 ? b!.withOnly : x)),
          without: honest.without.map((x, i) => (i === 0 ? a!.without : i === 2 ? b!.without : x)),
        };
        const f = detectReports(u).flagged;
        expect([f[0], f[2]], scheme).toEqual([false, false]);
      }
    }
    expect(() => undetectedCollusionBounds('fp', honest, [0, 0])).toThrow(/^members:/);
    expect(() => undetectedCollusionBounds('fp', honest, [7])).toThrow(/^members\[0\]:/);
  });
});
