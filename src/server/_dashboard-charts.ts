/**
 * The dashboard's charts (internal to routes/dashboard.ts): for every scheme of a consortium, the
 * per-round and the cumulative score of each silo over the scored rounds, as the Vega-Lite
 * specifications of src/fl/charts.ts — the module the experiment report draws its charts with —
 * which the page draws with vega-embed.
 */
import type { TopLevelSpec } from 'vega-lite';
import { type HistoryKind, type ScoreHistory, scoreHistorySpec } from '../fl/charts.js';
import type { CumulativeScores } from './schemas.js';

/** One chart of the dashboard. */
export interface DashboardChart {
  scheme: string;
  kind: HistoryKind;
  spec: TopLevelSpec;
  /** Cumulative charts: every silo's sum over the scored rounds, as published. */
  final?: number[];
}

/** What the page draws: the scored rounds and, per scheme, a per-round and a cumulative chart. */
export interface DashboardCharts {
  rounds: number[];
  charts: DashboardChart[];
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
  return { rounds, charts };
}
