import { describe, expect, it } from 'vitest';
import { normalizeScores, scoreWeighted } from '../../src/strategies/score-weighted.js';
import { emptyHistory, recordRound } from '../../src/strategies/strategy.js';
import { aggregateContext, makeSetup } from './_fixtures.js';

const weightsOf = async (
  s: ReturnType<typeof scoreWeighted>,
  ctx: Parameters<typeof s.aggregationWeights>[1],
) => Array.from((await s.aggregationWeights(null, ctx)).weights);

describe('score-weighted aggregation (papers/003 §5.4)', () => {
  const setup = makeSetup(4, { examples: [10, 20, 30, 40] });
  let history = emptyHistory(4);
  history = recordRound(history, {
    round: 1,
    selected: [0, 1, 2, 3],
    scores: { fp: [0.5, 1, 2, 0.5], ee: [1, 1, 1, 1] },
  });
  history = recordRound(history, {
    round: 2,
    selected: [0, 1, 2, 3],
    scores: { fp: [2, 1, 0, 1], ee: [1, 1, 1, 1] },
  });

  it('normalizes by subtracting the minimum and dividing by the mean (papers/003 §5)', () => {
    // [1, 2, 4, 1] − 1 = [0, 1, 3, 0], mean 1.
    expect(Array.from(normalizeScores([1, 2, 4, 1]))).toEqual([0, 1, 3, 0]);
    expect(Array.from(normalizeScores([-3, -1]))).toEqual([0, 2]);
    expect(Array.from(normalizeScores([5, 5, 5]))).toEqual([1, 1, 1]);
    expect(() => normalizeScores([])).toThrow(RangeError);
    expect(() => normalizeScores([1, Number.NaN])).toThrow(/entry 1/);
  });

  it('weights each update by its normalized cumulative score: top above 1, bottom below 1', async () => {
    // cumulative fp = [2.5, 2, 2, 1.5]; − 1.5 = [1, 0.5, 0.5, 0]; mean 0.5 → [2, 1, 1, 0].
    const w = await weightsOf(
      scoreWeighted({ score: 'fp' }),
      aggregateContext(setup, 3, [0, 1, 2, 3], 0, { history }),
    );
    expect(w).toEqual([2, 1, 1, 0]);
    expect(w.reduce((a, b) => a + b) / 4).toBe(1);
  });

  it("uses the latest score with accumulate 'latest' and another scheme with score", async () => {
    // latest fp = [2, 1, 0, 1]; − 0 = itself; mean 1.
    const ctx = aggregateContext(setup, 3, [0, 1, 2, 3], 0, { history });
    expect(await weightsOf(scoreWeighted({ score: 'fp', accumulate: 'latest' }), ctx)).toEqual([2, 1, 0, 1]);
    expect(await weightsOf(scoreWeighted({ score: 'ee' }), ctx)).toEqual([1, 1, 1, 1]);
    // The default scheme is EE-median (issue 27 A4: the smallest unflagged self-gain); this history
    // has none, so every silo counts as unscored (weight 1) — not fp's [2, 1, 0, 1].
    expect(await weightsOf(scoreWeighted({ accumulate: 'latest' }), ctx)).toEqual([1, 1, 1, 1]);
  });

  it('normalizes over the selected silos; unscored silos and round 1 get weight 1', async () => {
    // selected 0, 2: cumulative [2.5, 2] − 2 = [0.5, 0], mean 0.25 → [2, 0].
    expect(
      await weightsOf(scoreWeighted({ score: 'fp' }), aggregateContext(setup, 3, [0, 2], 0, { history })),
    ).toEqual([2, 0]);
    expect(
      await weightsOf(scoreWeighted({ score: 'fp' }), aggregateContext(setup, 1, [0, 1, 2, 3], 0)),
    ).toEqual([1, 1, 1, 1]);
    const partial = recordRound(emptyHistory(4), {
      round: 1,
      selected: [0, 1],
      scores: { fp: [1, 3, null, null] },
    });
    // silos 0, 1 scored: [1, 3] − 1 = [0, 2], mean 1 → [0, 2]; silo 3 unscored → 1.
    expect(
      await weightsOf(
        scoreWeighted({ score: 'fp' }),
        aggregateContext(setup, 2, [0, 1, 3], 0, { history: partial }),
      ),
    ).toEqual([0, 2, 1]);
  });

  it("multiplies by example counts with weights 'examples'; needs no full visibility", async () => {
    const s = scoreWeighted({ score: 'fp', weights: 'examples' });
    expect(s.requiresFullVisibility).toBe(false);
    expect(await weightsOf(s, aggregateContext(setup, 3, [0, 1, 2, 3], 0, { history }))).toEqual([
      20, 20, 30, 0,
    ]);
  });
});
