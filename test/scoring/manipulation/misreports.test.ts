/** scoring/manipulation/misreports.ts: simulated misreports. */
import { describe, expect, it } from 'vitest';
import { simulateAttacks } from '../../../scoring/manipulation/misreports.js';
import { sum } from './_rounds.js';

describe('simulated attacks', () => {
  const u = {
    full: 0.85,
    empty: 0.8,
    withOnly: [0.81, 0.805, 0.812, 0.808, 0.803, 0.809],
    without: [0.84, 0.845, 0.842, 0.838, 0.846, 0.841],
  };

  it('same seed → same reports, other seed → other reports; shares of efficient schemes sum to 0', () => {
    const a = simulateAttacks(u, { seed: 1, randomTrials: 3 });
    const b = simulateAttacks(u, { seed: 1, randomTrials: 3 });
    const c = simulateAttacks(u, { seed: 2, randomTrials: 3 });
    expect(a.map((x) => x.reports)).toEqual(b.map((x) => x.reports));
    expect(a.filter((x) => x.kind === 'random').map((x) => x.reports)).not.toEqual(
      c.filter((x) => x.kind === 'random').map((x) => x.reports),
    );
    expect(a).toHaveLength(6 * (2 + 3));
    for (const o of a)
      for (const s of ['fp', 'ee', 'eeMedian'] as const)
        expect(sum(o.effects[s]!.shareChange)).toBeCloseTo(0, 10);
  });

  it('deflate-others zeroes t_i and is caught on tight honest reports; it raises the attacker under EE', () => {
    // 9 silos whose LOO (0.004–0.006) account for most of v(M) − v(M0) = 0.05. (In the 6-silo round
    // above, the claim of the whole improvement passes for 3 of the 6 silos since issue 37's
    // evidence reference: the others' LOO but their two largest leave 0.028–0.033 of the 0.05
    // unexplained, and a marginal up to about 1.52 × that passes; docs/audit.md, "False flags".)
    const u9 = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.806, 0.805, 0.809, 0.807, 0.808, 0.806, 0.81, 0.805, 0.807],
      without: [0.845, 0.846, 0.844, 0.845, 0.8455, 0.844, 0.846, 0.8445, 0.845],
    };
    const out = simulateAttacks(u9, { randomTrials: 0 });
    for (const o of out.filter((x) => x.kind === 'deflateOthers')) {
      expect(o.reports).toEqual({ withOnly: 0.85, without: 0.8 });
      expect(o.detected).toBe(true);
      expect(o.effects.ee!.shareChange[o.attacker]).toBeGreaterThan(0);
    }
  });
});

describe('input checks', () => {
  const u = { full: 1, empty: 0, withOnly: [0.5, 0.5], without: [0.5, 0.5] };
  it('name the parameter', () => {
    expect(() => simulateAttacks(u, { inflateFactor: 0.5 })).toThrow(/^options\.inflateFactor:/);
  });
});
