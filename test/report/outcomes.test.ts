import { describe, expect, it } from 'vitest';
import type { RoundRecord, RunRecord } from '../../src/records/results.js';
import { aggregationShares, outcomesOf } from '../../src/report/outcomes.js';

function round(
  r: number,
  selected: number[],
  weights: (number | null)[],
  dropped: number[] = [],
): RoundRecord {
  return {
    round: r,
    selected,
    dropped,
    aggregationWeights: weights,
    testAccuracy: 0,
    testLoss: 0,
    utilities: { full: 0, empty: 0, withOnly: [], without: [] },
    scores: {},
    evaluations: {},
    timingsMs: {},
  };
}

function run(seed: number, rounds: RoundRecord[], n: number, finalAccuracy: number): RunRecord {
  const participation = new Array<number>(n).fill(0);
  for (const rd of rounds) for (const s of rd.selected) participation[s]!++;
  return {
    seed,
    rounds,
    cumulative: {},
    compared: {},
    finalAccuracy,
    finalLoss: 0,
    evaluations: {},
    timingsMs: {},
    participation,
  };
}

describe('outcomes: final accuracy, participation and aggregation share per role', () => {
  it('aggregation share is weight / mean weight of the round; zero-weight rounds and dropped silos skipped', () => {
    const rounds = [
      round(1, [0, 1], [3, 1, null, null]), // shares 1.5, 0.5
      round(2, [0, 2], [0, null, 0, null]), // nothing aggregated: skipped
      round(3, [1, 2, 3], [null, 2, 2, 8], [3]), // silo 3 dropped: shares 1, 1
    ];
    const s = aggregationShares(run(1, rounds, 4, 0), 4);
    expect(s[0]).toBeCloseTo(1.5);
    expect(s[1]).toBeCloseTo(0.75);
    expect(s[2]).toBeCloseTo(1);
    expect(s[3]).toBeNaN();
  });

  it('per-role participation rates and shares, mean ± std over seeds', () => {
    const roles = ['honest', 'honest', 'maverick', 'free-rider'];
    // seed 1: silo 2 (Maverick) in both rounds, silo 3 never; seed 2: Maverick in one of two rounds.
    const r1 = run(1, [round(1, [0, 2], [1, null, 1, null]), round(2, [1, 2], [null, 1, 3, null])], 4, 0.8);
    const r2 = run(2, [round(1, [2, 3], [null, null, 1, 1]), round(2, [0, 1], [1, 1, null, null])], 4, 0.6);
    const o = outcomesOf([r1, r2], roles);
    expect(o.finalAccuracy.mean).toBeCloseTo(0.7);
    expect(o.finalAccuracy.std).toBeCloseTo(Math.SQRT2 * 0.1);
    expect(o.byRole.maverick!.silos).toEqual([2]);
    expect(o.byRole.maverick!.participation.mean).toBeCloseTo(0.75); // (1 + 0.5) / 2
    expect(o.byRole.honest!.participation.mean).toBeCloseTo(0.5); // each honest silo 1 of 2 rounds
    expect(o.byRole['free-rider']!.participation.mean).toBeCloseTo(0.25); // (0 + 0.5) / 2
    // Maverick share: seed 1 rounds 1 (1/1) and 2 (3/2) → 1.25; seed 2 → 1.
    expect(o.byRole.maverick!.aggregationShare.mean).toBeCloseTo(1.125);
    // Free rider: never aggregated in seed 1 (left out of the mean), share 1 in seed 2.
    expect(o.byRole['free-rider']!.aggregationShare.mean).toBeCloseTo(1);
    expect(o.byRole['free-rider']!.aggregationShare.std).toBe(0);
  });

  it('rejects empty roles and runs of another size', () => {
    expect(() => outcomesOf([], [])).toThrow(/roles/);
    expect(() => outcomesOf([run(1, [], 3, 0)], ['a', 'b'])).toThrow(/runs: seed 1 has 3 silos/);
  });
});
