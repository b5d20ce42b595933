/**
 * src/records/utility-scores.ts: the scores of a utilities file are scoring/private.ts's, round by
 * round on the reporting silos (a property over random files, with and without coalition tables);
 * rounds with fewer than 2 reports are skipped; tables give MR-SV and the agreement table.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareMethods } from '../../src/records/compare.js';
import { parseUtilitiesFile } from '../../src/records/utilities-file.js';
import { SCORES_SCHEMA_VERSION, scoreUtilities } from '../../src/records/utility-scores.js';
import { expectScoresOfFile, utilitiesFileArb } from './_utilities-files.js';

const score = (json: unknown) =>
  scoreUtilities(parseUtilitiesFile(json), { source: 'u.json', fedscoreVersion: '0.0.0-test' });

describe('scoreUtilities', () => {
  it('equals scoring/private.ts called directly on random files (nulls, skipped rounds, tables)', async () => {
    for (const tables of [false, true])
      await fc.assert(
        fc.asyncProperty(utilitiesFileArb(tables), async (file) => {
          const scores = await score(structuredClone(file));
          expectScoresOfFile(file, scores);
          // and through JSON, as scores.json is read back
          expectScoresOfFile(file, JSON.parse(JSON.stringify(scores)));
        }),
        { numRuns: 60 },
      );
  });

  it('papers/003 Example 2: EE = (3/4, 1, 5/4), FP = Shapley = (0, 1, 2), and the agreement table', async () => {
    const s = await score({
      silos: ['A', 'B', 'C'],
      range: [0, 3],
      rounds: [
        {
          round: 1,
          full: 3,
          empty: 0,
          withOnly: [0, 1, 2],
          without: [3, 2, 1],
          table: [0, 0, 1, 1, 2, 2, 3, 3],
        },
      ],
    });
    expect(s.scoresSchemaVersion).toBe(SCORES_SCHEMA_VERSION);
    expect(s.silos).toEqual({ count: 3, names: ['A', 'B', 'C'] });
    expect(s.rounds[0]!.scores.ee).toEqual([0.75, 1, 1.25]);
    expect(s.rounds[0]!.scores.fp).toEqual([0, 1, 2]);
    expect(s.rounds[0]!.scores.mrsv).toEqual([0, 1, 2]);
    expect(s.rounds[0]!.fpNormalizer).toBe(3); // Σα, α = (LOO + IOI)/2 = (0, 1, 2)
    expect(s.comparison?.reference).toBe('mrsv');
    expect(s.comparison?.methods).toEqual(compareMethods([s.cumulative], 'mrsv'));
    expect(Object.keys(s.comparison!.methods)).toEqual(['loo', 'ioi', 'fp', 'ee', 'eeMedian']);
  });

  it('skips a round with fewer than 2 reports (every score null) and sums the rest', async () => {
    const s = await score({
      rounds: [
        { round: 1, full: 0.8, empty: 0.5, withOnly: [0.6, 0.7], without: [0.7, 0.6] },
        { round: 2, full: 0.9, empty: 0.8, withOnly: [null, 0.85], without: [null, 0.82] },
      ],
    });
    expect(s.rounds[1]).toEqual({
      round: 2,
      scores: {
        loo: [null, null],
        ioi: [null, null],
        fp: [null, null],
        ee: [null, null],
        eeMedian: [null, null],
      },
      fpNormalizer: null,
      skipped: 'fewer than 2 silos reported (1)',
    });
    expect(s.cumulative.loo).toEqual(s.rounds[0]!.scores.loo);
    expect(s.comparison).toBeUndefined();
  });
});
