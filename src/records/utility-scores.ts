/**
 * `scores.json`, the record `fedscore score --utilities` writes (docs/utilities.md; keep the two
 * in step): every round's private scores computed by scoring/private.ts from a utilities file
 * (./utilities-file.ts), their sums over rounds, and — when the file has coalition tables — each
 * round's exact Shapley value, MR-SV and the agreement of every private score with it.
 *
 * A silo that did not report in a round (null utilities) is left out of that round: the round is
 * scored over the silos that reported, exactly as scoring/private.ts scores them, and the others
 * get null. A round with fewer than 2 reports is not scored (every score null). The cumulative
 * score of a silo is the sum of its non-null scores (0 when it never reported).
 */
import {
  type PrivateUtilities,
  SCHEMES,
  type Scheme,
  schemeNormalizer,
  schemeScores,
} from '../../scoring/private.js';
import { exactShapley } from '../../scoring/shapley.js';
import { mrsv } from '../estimators/mrsv.js';
import { compareMethods } from './compare.js';
import {
  HEADLINE,
  type HeadlineAgreement,
  headlineAgreementOf,
  type LeaderboardEntry,
  leaderboardOf,
} from './leaderboard.js';
import type { MethodComparison } from './results.js';
import { reportedUtilities } from './silo-reports.js';
import type { UtilitiesFile, UtilitiesRound } from './utilities-file.js';

/** Version of the scores.json schema; bump on any incompatible change. */
export const SCORES_SCHEMA_VERSION = 1;

/** The reference when the file has coalition tables: MR-SV, under its results.json name. */
export const REFERENCE = mrsv.name;

/** One round of scores.json. */
export interface ScoredRound {
  /** The round number of the utilities file. */
  round: number;
  /**
   * Per-silo scores, in silo order, keyed `loo`, `ioi`, `fp`, `ee`, `eeMedian` (null for a silo
   * that did not report), plus `mrsv` — the round's exact Shapley value — when the file has tables.
   */
  scores: Record<string, (number | null)[]>;
  /** Σ_i α(i), the Fair-Private normalizer (papers/003 Eq. 2) over the reporting silos; null when not scored. */
  fpNormalizer: number | null;
  /** Why the round was not scored (fewer than 2 silos reported); absent when it was. */
  skipped?: string;
}

/** The whole of scores.json. */
export interface UtilityScores {
  scoresSchemaVersion: typeof SCORES_SCHEMA_VERSION;
  /** The utilities file the scores were computed from. */
  source: string;
  versions: { fedscore: string };
  silos: { count: number; names: string[] };
  rounds: ScoredRound[];
  /** Per method, each silo's scores summed over rounds (nulls skipped). */
  cumulative: Record<string, number[]>;
  /** With coalition tables: every private score's cumulative vector against MR-SV's. */
  comparison?: { reference: string; at: 'cumulative'; methods: Record<string, MethodComparison> };
  /**
   * The private schemes the outputs show, as `fedscore score --schemes` asked (absent: the default,
   * every scheme but FP; src/records/shown-schemes.ts). Every scheme is recorded either way.
   */
  schemes?: string[];
  /** The headline score's scheme (`payout` since issue 37, `eeMedian` before; src/records/leaderboard.ts). */
  headline?: string;
  /** Every silo in rank order, cumulative over the scored rounds, with flags (docs/utilities.md#leaderboard). */
  leaderboard?: LeaderboardEntry[];
  /** Agreement of the cumulative headline and `share` with the cumulative reference (with tables; issue 37). */
  headlineAgreement?: HeadlineAgreement[];
}

/** The reporting silos of a round and their utilities (./silo-reports.ts owns the rule). */
function reported(r: UtilitiesRound): { silos: number[]; u: PrivateUtilities } {
  return reportedUtilities(r);
}

/** One round's private scores, scattered back to silo order. */
function scoreRound(r: UtilitiesRound, n: number): ScoredRound {
  const { silos, u } = reported(r);
  const scores: Record<string, (number | null)[]> = {};
  for (const s of SCHEMES) scores[s] = new Array<number | null>(n).fill(null);
  if (silos.length < 2)
    return {
      round: r.round,
      scores,
      fpNormalizer: null,
      skipped: `fewer than 2 silos reported (${silos.length})`,
    };
  for (const s of SCHEMES) {
    const values = schemeScores(s as Scheme, u);
    silos.forEach((g, q) => {
      scores[s]![g] = values[q]!;
    });
  }
  return { round: r.round, scores, fpNormalizer: schemeNormalizer('fp', u) };
}

/**
 * Scores a validated utilities file: per round LOO, IOI, FP, EE and EE-median of the reporting
 * silos (scoring/private.ts), their sums over rounds, and with coalition tables the exact Shapley
 * value per round, MR-SV (`multiRoundShapley`) and the agreement table (papers/003 §5).
 * @param file a file returned by `parseUtilitiesFile`.
 * @param o the file name to record, fedscore's version, and the schemes the outputs show when
 *   asked for (`--schemes`; recorded as `schemes`).
 */
export async function scoreUtilities(
  file: UtilitiesFile,
  o: { source: string; fedscoreVersion: string; schemes?: readonly string[] },
): Promise<UtilityScores> {
  const n = file.silos.length;
  const rounds = file.rounds.map((r) => scoreRound(r, n));
  const hasTables = file.rounds.every((r) => r.table !== undefined);
  const cumulative: Record<string, number[]> = {};
  for (const m of SCHEMES) {
    const sum = new Array<number>(n).fill(0);
    for (const rd of rounds)
      rd.scores[m]!.forEach((v, i) => {
        sum[i]! += v ?? 0;
      });
    cumulative[m] = sum;
  }
  if (hasTables) {
    // As an experiment records MR-SV: each round's exact Shapley value, and the registry's fold of
    // the rounds' tables (papers/003 Eq. 1 per round, summed) as the cumulative vector.
    const players = Array.from({ length: n }, (_, i) => i);
    const tables = file.rounds.map((r) => ({ players, table: Float64Array.from(r.table!) }));
    tables.forEach((t, k) => {
      rounds[k]!.scores[REFERENCE] = Array.from(exactShapley(n, t.table));
    });
    cumulative[REFERENCE] = Array.from(await mrsv.fold!({ config: {}, n, tables }));
  }
  const leaderboard = leaderboardOf({
    names: file.silos,
    emptyCoalition: 'initialModel',
    runs: [
      {
        cumulative,
        rounds: file.rounds.map((r, k) => ({ round: r.round, utilities: r, scores: rounds[k]!.scores })),
      },
    ],
    ...(hasTables ? { reference: REFERENCE } : {}),
  });
  return {
    scoresSchemaVersion: SCORES_SCHEMA_VERSION,
    source: o.source,
    versions: { fedscore: o.fedscoreVersion },
    silos: { count: n, names: [...file.silos] },
    rounds,
    cumulative,
    ...(hasTables
      ? {
          comparison: {
            reference: REFERENCE,
            at: 'cumulative' as const,
            methods: compareMethods([cumulative], REFERENCE),
          },
        }
      : {}),
    ...(o.schemes ? { schemes: [...o.schemes] } : {}),
    headline: HEADLINE,
    leaderboard,
    ...(hasTables ? { headlineAgreement: headlineAgreementOf(leaderboard) } : {}),
  };
}
