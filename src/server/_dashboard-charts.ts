/**
 * The dashboard's data (internal to routes/dashboard.ts): the leaderboard of the published rounds
 * (src/records/leaderboard.ts `leaderboardOfPublished`, the same entries as an experiment's
 * results.json and `fedscore client`'s own line) and, for every scheme of a consortium, the
 * per-round and the cumulative score of each silo over the scored rounds, as the Vega-Lite
 * specifications of src/report/charts.ts — the module the experiment report draws its charts with —
 * which the page draws with vega-embed.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { EmptyCoalition } from '../../scoring/empty-coalition.js';
import type { CumulativeScores } from '../consortium/schemas.js';
import { HEADLINE, type LeaderboardEntry, leaderboardOfPublished } from '../records/leaderboard.js';
import { type HistoryKind, type ScoreHistory, scoreHistorySpec } from '../report/charts.js';

/** One chart of the dashboard. */
export interface DashboardChart {
  scheme: string;
  kind: HistoryKind;
  spec: TopLevelSpec;
  /** Cumulative charts: every silo's sum over the scored rounds, as published. */
  final?: number[];
}

/** A quarantined report as the dashboard lists it (the silo is flagged with the detector's reason). */
export interface DashboardQuarantine {
  round: number;
  silo: number;
  /** Which report(s) the detector flagged and their robust z values. */
  flagged: string[];
  zWithOnly: number;
  zWithout: number;
  released: boolean;
}

/** The leaderboard the page shows first: every silo in rank order, after the last scored round. */
export interface DashboardLeaderboard {
  /** The headline scheme (its unnormalised weight is the headline score). */
  headline: string;
  /** The last scored round (null before the first). */
  round: number | null;
  /** In rank order; empty before the first scored round. */
  entries: LeaderboardEntry[];
}

/**
 * What the page draws: the leaderboard, the scored rounds, per scheme a per-round and a
 * cumulative chart, and the reports the detector quarantined (issue 27, A4).
 */
export interface DashboardCharts {
  leaderboard: DashboardLeaderboard;
  rounds: number[];
  charts: DashboardChart[];
  quarantined: DashboardQuarantine[];
}

/** The name the dashboard gives silo i (a networked consortium's roster has keys, not names). */
export const siloLabel = (i: number) => `silo-${i}`;

/**
 * The leaderboard and charts of a consortium with `silos` participants and `schemes`, from its
 * published `scores` (GET /v1/consortia/:cid/scores) scored under v(∅) = `emptyCoalition`; silo
 * i's score in a round is null where it has none.
 */
export function dashboardCharts(
  schemes: readonly string[],
  silos: number,
  scores: CumulativeScores,
  emptyCoalition: EmptyCoalition = 'initialModel',
): DashboardCharts {
  const rounds = scores.rounds.map((r) => r.round);
  const names = Array.from({ length: silos }, (_, i) => siloLabel(i));
  const charts = schemes.flatMap((scheme): DashboardChart[] => {
    const history: ScoreHistory = {
      rounds,
      scores: Array.from({ length: silos }, (_, i) =>
        scores.rounds.map((r) => r.schemes[scheme]?.[i] ?? null),
      ),
      names,
    };
    return [
      { scheme, kind: 'round', spec: scoreHistorySpec(history, 'round') },
      {
        scheme,
        kind: 'cumulative',
        spec: scoreHistorySpec(history, 'cumulative'),
        final: scores.cumulative[scheme] ?? [],
      },
    ];
  });
  const quarantined = scores.rounds.flatMap((r) =>
    r.quarantined.map((q) => ({
      round: r.round,
      silo: q.silo,
      flagged: [...q.flagged],
      zWithOnly: q.zWithOnly,
      zWithout: q.zWithout,
      released: q.released,
    })),
  );
  const leaderboard: DashboardLeaderboard = {
    headline: HEADLINE,
    round: rounds.at(-1) ?? null,
    entries: rounds.length === 0 ? [] : leaderboardOfPublished(names, scores.rounds, emptyCoalition),
  };
  return { leaderboard, rounds, charts, quarantined };
}
