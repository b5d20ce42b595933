/**
 * fedscore's charts as Vega-Lite specifications — the one chart implementation behind both
 * renderers: the experiment report (report.ts renders them headlessly to SVG with vega) and the
 * service's dashboard (src/server/_dashboard-charts.ts sends them to the browser, where
 * vega-embed draws them). Pure functions: plain rows in, a specification with its data inlined
 * out; nothing here imports vega or renders.
 *
 * Text from outside (silo and scheme names) only ever goes into data values, never into a field
 * name or an expression, the parts of a specification Vega parses.
 */
import type { TopLevelSpec } from 'vega-lite';

/** One bar of {@link siloScoresSpec}: a silo's score under one method. */
export interface SiloScoreRow {
  method: string;
  silo: string;
  score: number;
}

/** One point of {@link accuracySpec}: the global model's test accuracy after a round of a seed's run. */
export interface AccuracyRow {
  seed: string;
  round: number;
  accuracy: number;
}

/** One bar of {@link participationSpec}: the fraction of rounds a silo was selected in. */
export interface ParticipationRow {
  silo: string;
  rate: number;
}

/** What {@link scoreHistorySpec} draws: every silo's score in each scored round. */
export interface ScoreHistory {
  /** The scored rounds in order (the x axis, one evenly spaced step each). */
  readonly rounds: readonly number[];
  /** `scores[i][k]`: silo i's score in `rounds[k]`, null where it has none (no report). */
  readonly scores: readonly (readonly (number | null)[])[];
}

/** Per-round scores, or their running sum over the scored rounds. */
export type HistoryKind = 'round' | 'cumulative';

function checkRows(name: string, rows: unknown): void {
  if (!Array.isArray(rows)) throw new TypeError(`${name}: expected an array of rows`);
}

/**
 * Per-silo scores by method: one small bar chart per method (four a row, independent y scales),
 * negative scores in red. The report's "scores" chart.
 * @throws TypeError when `rows` is not an array.
 */
export function siloScoresSpec(rows: readonly SiloScoreRow[]): TopLevelSpec {
  checkRows('rows', rows);
  return {
    data: { values: rows as SiloScoreRow[] },
    facet: { field: 'method', type: 'nominal', title: null },
    columns: 4,
    spec: {
      width: 180,
      height: 120,
      mark: 'bar',
      encoding: {
        x: { field: 'silo', type: 'nominal', sort: null, axis: { labelAngle: -45 } },
        y: { field: 'score', type: 'quantitative' },
        color: { condition: { test: 'datum.score < 0', value: '#c0392b' }, value: '#2c7fb8' },
      },
    },
    resolve: { scale: { y: 'independent' } },
  };
}

/**
 * Test accuracy of the global model by round, one line per seed. The report's "accuracy" chart.
 * @throws TypeError when `rows` is not an array.
 */
export function accuracySpec(rows: readonly AccuracyRow[]): TopLevelSpec {
  checkRows('rows', rows);
  return {
    data: { values: rows as AccuracyRow[] },
    width: 480,
    height: 240,
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'round', type: 'quantitative', axis: { tickMinStep: 1 } },
      y: { field: 'accuracy', type: 'quantitative', scale: { zero: false } },
      color: { field: 'seed', type: 'nominal' },
    },
  };
}

/**
 * Selection rate per silo on a [0, 1] axis. The report's "participation" chart.
 * @throws TypeError when `rows` is not an array.
 */
export function participationSpec(rows: readonly ParticipationRow[]): TopLevelSpec {
  checkRows('rows', rows);
  return {
    data: { values: rows as ParticipationRow[] },
    width: 480,
    height: 200,
    mark: 'bar',
    encoding: {
      x: { field: 'silo', type: 'nominal', sort: null, axis: { labelAngle: -45 } },
      y: { field: 'rate', type: 'quantitative', scale: { domain: [0, 1] } },
    },
  };
}

/**
 * Every silo's score over the scored rounds, one line (with a point per score) per silo: the
 * per-round scores (`kind` 'round'; a missing score leaves a gap), or their running sums
 * (`kind` 'cumulative'; a missing score adds 0, as the service's cumulative scores do). The
 * dashboard's charts. Its data is the dataset `scores` of rows `{ round, silo, score }` (silo is
 * the index), so a view can be read back with `view.data('scores')`.
 * @throws TypeError when `history.rounds` or `history.scores` is not an array, or `kind` is unknown.
 * @throws RangeError when a silo's scores do not have one entry per round.
 */
export function scoreHistorySpec(history: ScoreHistory, kind: HistoryKind): TopLevelSpec {
  const { rounds, scores } = history;
  if (!Array.isArray(rounds)) throw new TypeError('history.rounds: expected an array of round numbers');
  if (!Array.isArray(scores)) throw new TypeError('history.scores: expected an array per silo');
  if (kind !== 'round' && kind !== 'cumulative')
    throw new TypeError(`kind: expected 'round' or 'cumulative', got ${String(kind)}`);
  scores.forEach((values, i) => {
    if (!Array.isArray(values) || values.length !== rounds.length)
      throw new RangeError(`history.scores[${i}]: expected ${rounds.length} scores, one per round`);
  });
  const values = scores.flatMap((own: readonly (number | null)[], silo: number) => {
    let sum = 0;
    return own.map((score, k) => {
      sum += score ?? 0;
      return { round: rounds[k]!, silo, score: kind === 'round' ? score : sum };
    });
  });
  return {
    data: { name: 'scores', values },
    width: 460,
    height: 200,
    mark: { type: 'line', point: true, tooltip: true },
    encoding: {
      x: { field: 'round', type: 'ordinal', axis: { labelAngle: 0 } },
      y: { field: 'score', type: 'quantitative' },
      color: {
        field: 'silo',
        type: 'nominal',
        scale: { scheme: scores.length > 10 ? 'tableau20' : 'tableau10' },
      },
    },
  };
}
