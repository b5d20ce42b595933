/**
 * Random utilities files (fast-check) and the oracle every scores.json is checked against:
 * scoring/private.ts called directly on each round's reporting silos, and exactShapley on its table.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import {
  everybodyElse,
  fairPrivate,
  includeOneIn,
  leaveOneOut,
  SCHEMES,
  type Scheme,
  utilitiesOfTable,
} from '../../scoring/private.js';
import { exactShapley } from '../../scoring/shapley.js';

/** A utilities file as JSON (what `fedscore score --utilities` reads). */
export interface UtilitiesJson {
  silos?: string[];
  rounds: {
    round: number;
    full: number;
    empty: number;
    withOnly: (number | null)[];
    without: (number | null)[];
    table?: number[];
  }[];
}

const utility = fc.double({ min: 0, max: 1, noNaN: true, noDefaultInfinity: true });

/**
 * Files of 2..7 silos and 1..5 rounds; each silo misses a round with probability ~1/5 (then null
 * in both); with `tables`, each round is read off a random coalition table (so the table agrees
 * with the utilities), else the four kinds of utilities are drawn independently.
 */
export function utilitiesFileArb(tables: boolean): fc.Arbitrary<UtilitiesJson> {
  return fc.integer({ min: 2, max: 7 }).chain((n) =>
    fc
      .array(
        fc.record({
          gap: fc.integer({ min: 1, max: 3 }),
          table: fc.array(utility, { minLength: 2 ** n, maxLength: 2 ** n }),
          withOnly: fc.array(utility, { minLength: n, maxLength: n }),
          without: fc.array(utility, { minLength: n, maxLength: n }),
          full: utility,
          empty: utility,
          missing: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: n, maxLength: n }),
        }),
        { minLength: 1, maxLength: 5 },
      )
      .map((drawn) => {
        let round = 0;
        return {
          rounds: drawn.map((d) => {
            round += d.gap;
            const u = tables
              ? utilitiesOfTable(n, d.table)
              : { full: d.full, empty: d.empty, withOnly: d.withOnly, without: d.without };
            const report = (x: ArrayLike<number>) =>
              Array.from({ length: n }, (_, i) => (d.missing[i] === 0 ? null : x[i]!));
            return {
              round,
              full: u.full,
              empty: u.empty,
              withOnly: report(u.withOnly),
              without: report(u.without),
              ...(tables ? { table: d.table } : {}),
            };
          }),
        };
      }),
  );
}

/** The scores of a round by scoring/private.ts, called directly on its reporting silos. */
function oracleRound(r: UtilitiesJson['rounds'][number]): Record<Scheme, (number | null)[]> {
  const n = r.withOnly.length;
  const silos = r.withOnly.flatMap((x, i) => (x === null ? [] : [i]));
  const out = Object.fromEntries(SCHEMES.map((s) => [s, new Array(n).fill(null)])) as Record<
    Scheme,
    (number | null)[]
  >;
  if (silos.length < 2) return out;
  const u = {
    full: r.full,
    empty: r.empty,
    withOnly: silos.map((i) => r.withOnly[i]!),
    without: silos.map((i) => r.without[i]!),
  };
  const direct: Record<Scheme, Float64Array> = {
    loo: leaveOneOut(u),
    ioi: includeOneIn(u),
    fp: fairPrivate(u),
    ee: everybodyElse(u),
    eeMedian: everybodyElse(u, { reduce: 'median' }),
  };
  for (const s of SCHEMES)
    silos.forEach((g, q) => {
      out[s][g] = direct[s][q]!;
    });
  return out;
}

/** The parts of scores.json the oracle checks (its contract). */
export interface ScoresJsonLike {
  rounds: { round: number; scores: Record<string, (number | null)[]> }[];
  cumulative: Record<string, number[]>;
}

/** −0 as 0: JSON writes both as 0, so a scores.json read back cannot tell them apart. */
const zero = <T>(x: T): T =>
  Array.isArray(x)
    ? (x.map(zero) as T)
    : typeof x === 'object' && x !== null
      ? (Object.fromEntries(Object.entries(x).map(([k, v]) => [k, zero(v)])) as T)
      : Object.is(x, -0)
        ? (0 as T)
        : x;

/**
 * Expects `scores` (a scores.json, parsed) to hold exactly what scoring/private.ts gives on the
 * file (bit for bit, −0 read as 0): per round the five schemes (null for the silos without a
 * report), cumulative = the sum of the non-null scores, and with tables `mrsv` = exactShapley per
 * round and its sum.
 */
export function expectScoresOfFile(file: UtilitiesJson, json: ScoresJsonLike): void {
  const scores = zero(json);
  const n = file.rounds[0]!.withOnly.length;
  expect(scores.rounds.map((r) => r.round)).toEqual(file.rounds.map((r) => r.round));
  const sums: Record<string, number[]> = Object.fromEntries(SCHEMES.map((s) => [s, new Array(n).fill(0)]));
  file.rounds.forEach((r, t) => {
    const expected = oracleRound(r);
    for (const s of SCHEMES) {
      expect(scores.rounds[t]!.scores[s]).toEqual(zero(expected[s]));
      expected[s].forEach((v, i) => {
        sums[s]![i]! += v ?? 0;
      });
    }
    if (r.table) {
      const phi = Array.from(exactShapley(n, Float64Array.from(r.table)));
      expect(scores.rounds[t]!.scores.mrsv).toEqual(zero(phi));
      sums.mrsv ??= new Array(n).fill(0);
      phi.forEach((v, i) => {
        sums.mrsv![i]! += v;
      });
    } else expect(scores.rounds[t]!.scores.mrsv).toBeUndefined();
  });
  expect(scores.cumulative).toEqual(zero(sums));
}
