/**
 * The dashboard's charts (internal to routes/dashboard.ts): for every scheme of a consortium, the
 * per-round and the cumulative score of each silo over the scored rounds, as the Vega-Lite
 * specifications of src/reports/charts.ts — the module the experiment report draws its charts with —
 * which the page draws with vega-embed.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { CumulativeScores } from '../contract/schemas.js';
import { type HistoryKind, type ScoreHistory, scoreHistorySpec } from '../reports/charts.js';

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

/**
 * What the page draws: the scored rounds, per scheme a per-round and a cumulative chart, and the
 * reports the detector quarantined (issue 27, A4).
 */
export interface DashboardCharts {
  rounds: number[];
  charts: DashboardChart[];
  quarantined: DashboardQuarantine[];
}

/**
 * The charts of a consortium with `silos` participants and `schemes`, from its published
 * `scores` (GET /v1/consortia/:cid/scores); silo i's score in a round is null where it has none.
 */
export function dashboardCharts(
  schemes: readonly string[],
  silos: number,
  scores: CumulativeScores,
): DashboardCharts {
  const rounds = scores.rounds.map((r) => r.round);
  const charts = schemes.flatMap((scheme): DashboardChart[] => {
    const history: ScoreHistory = {
      rounds,
      scores: Array.from({ length: silos }, (_, i) =>
        scores.rounds.map((r) => r.schemes[scheme]?.[i] ?? null),
      ),
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
  return { rounds, charts, quarantined };
}
