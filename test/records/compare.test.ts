import { describe, expect, it } from 'vitest';
import { compareMethods, meanStd } from '../../src/records/compare.js';

describe('compareMethods', () => {
  it('summarizes each method against the reference over seeds', () => {
    const ref = [1, 2, 3, 4];
    const perSeed = [
      { mrsv: ref, fp: [1, 2, 3, 4], ee: [4, 3, 2, 1] },
      { mrsv: ref, fp: [2, 4, 6, 8], ee: [1, 2, 4, 3] },
    ];
    const c = compareMethods(perSeed, 'mrsv');
    expect(Object.keys(c).sort()).toEqual(['ee', 'fp']);
    expect(c.fp!.spearman.mean).toBeCloseTo(1, 12);
    expect(c.fp!.spearman.std).toBeCloseTo(0, 12);
    expect(c.fp!.l2.mean).toBeCloseTo(0, 12);
    // ee: Spearman −1 on seed 1, 0.8 on seed 2 → mean −0.1, sample std √((0.9² + 0.9²)/1)
    expect(c.ee!.spearman.mean).toBeCloseTo(-0.1, 12);
    expect(c.ee!.spearman.std).toBeCloseTo(Math.sqrt(2 * 0.81), 12);
  });

  it('names the missing reference', () => {
    expect(() => compareMethods([{ fp: [1, 2] }], 'mrsv')).toThrow(
      /^reference: seed #0 has no scores for 'mrsv'/,
    );
  });

  it('leaves undefined correlations out of the mean', () => {
    expect(meanStd([Number.NaN, 1, 3])).toEqual({ mean: 2, std: Math.SQRT2 });
    expect(meanStd([Number.NaN]).mean).toBeNaN();
  });
});

describe('lowestScoreRates', () => {
  it('counts the seeds in which an attacker has the lowest score', async () => {
    const { lowestScoreRates } = await import('../../src/sim/experiment.js');
    const run = (fp: number[], ee: number[]) => ({ compared: { fp, ee } }) as never;
    const rates = lowestScoreRates([run([3, 2, 1], [1, 2, 3]), run([3, 1, 2], [2, 3, 1])], [2]);
    expect(rates).toEqual({ fp: 0.5, ee: 0.5 });
  });
});
