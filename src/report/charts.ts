/**
 * fedscore's charts as Vega-Lite specifications — the one chart implementation behind both
 * renderers: the experiment report (report.ts renders them headlessly to SVG with vega) and the
 * service's dashboard (src/server/_dashboard-charts.ts sends them to the browser, where
 * vega-embed draws them). Pure functions: plain rows in, a specification with its data inlined
 * out; nothing here imports vega or renders.
 *
 * Text from outside (silo and scheme names) only ever goes into data values and literal title
 * text, never into a field name or an expression, the parts of a specification Vega parses.
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
  /** The silos' names, shown in the legend (default `silo-<index>`). */
  readonly names?: readonly string[];
}

/** Per-round scores, or their running sum over the scored rounds. */
export type HistoryKind = 'round' | 'cumulative';

/**
 * A row of facets sharing a y axis title: the panels of methods whose scores are in the same units
 * (`sharedY`: one y scale for all of them) or not (each panel its own y scale). Panels are drawn in
 * the order given; a panel without a finite point is left out, and a group left without panels is
 * not drawn (no empty axes).
 */
export interface PanelGroup {
  /** The y axis title of the group's panels (its units). */
  readonly title: string;
  /** The panel labels, in drawing order (the `panel` values of the rows). */
  readonly panels: readonly string[];
  /** One y scale for the group's panels (same units), or one per panel. */
  readonly sharedY: boolean;
}

/** One point of {@link scatterSpec}: a silo's score under one method against the reference's, in one seed's run. */
export interface ScatterRow {
  /** The panel (a method, with its agreement in the label). */
  panel: string;
  seed: string;
  silo: string;
  /** The reference's score of the silo (x). */
  reference: number;
  /** The method's score of the silo (y). */
  score: number;
}

/** One point of {@link trajectoriesSpec}: a silo's score under one method in one round (null: no score). */
export interface TrajectoryRow {
  panel: string;
  silo: string;
  round: number;
  score: number | null;
}

function checkRows(name: string, rows: unknown): void {
  if (!Array.isArray(rows)) throw new TypeError(`${name}: expected an array of rows`);
}

/**
 * Per-silo scores by method: one small bar chart per method (four a row, each with its own axes and
 * y scale), negative scores in red; methods in the order of their first row. Panels are
 * concatenated rather than faceted, so a last row that is not full has no empty frames. The
 * report's "scores" chart of a scores.json.
 * @throws TypeError when `rows` is not an array.
 */
export function siloScoresSpec(rows: readonly SiloScoreRow[]): TopLevelSpec {
  checkRows('rows', rows);
  const methods = [...new Set(rows.map((r) => r.method))];
  return {
    data: { values: rows as SiloScoreRow[] },
    concat: methods.map((method) => ({
      title: { text: method, fontSize: 11, fontWeight: 'normal' },
      transform: [{ filter: { field: 'method', equal: method } }],
      width: 180,
      height: 120,
      mark: 'bar',
      encoding: {
        x: { field: 'silo', type: 'nominal', sort: null, title: null, axis: { labelAngle: -45 } },
        y: { field: 'score', type: 'quantitative' },
        color: { condition: { test: 'datum.score < 0', value: '#c0392b' }, value: '#2c7fb8' },
      },
    })),
    columns: Math.min(4, Math.max(1, methods.length)),
    resolve: { scale: { x: 'independent', y: 'independent' } },
  } as TopLevelSpec;
}

/** One bar of {@link headlineBarsSpec}: a silo's final headline score and its flags. */
export interface HeadlineBarRow {
  silo: string;
  rank: number;
  headline: number;
  /** The kinds of its flags, comma-separated; empty when it has none. */
  flags: string;
}

/**
 * The final headline score of every silo as horizontal bars in rank order (rank 1 on top); a
 * flagged silo's bar is red and its flags are written beside it. The report's "leaderboard" chart.
 * @throws TypeError when `rows` is not an array.
 */
export function headlineBarsSpec(rows: readonly HeadlineBarRow[], title: string): TopLevelSpec {
  checkRows('rows', rows);
  const values = rows.map((r) => ({ ...r, flagged: r.flags === '' ? 'no flag' : 'flagged' }));
  const y = {
    field: 'silo',
    type: 'nominal',
    sort: [...rows].sort((a, b) => a.rank - b.rank).map((r) => r.silo),
    title: null,
  } as const;
  return {
    data: { values },
    width: 420,
    height: { step: 18 },
    encoding: { y },
    layer: [
      {
        mark: { type: 'bar', tooltip: true },
        encoding: {
          x: { field: 'headline', type: 'quantitative', title },
          color: {
            field: 'flagged',
            type: 'nominal',
            title: null,
            scale: { domain: ['no flag', 'flagged'], range: ['#2c7fb8', '#c0392b'] },
          },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 4, fontSize: 10, color: '#c0392b' },
        encoding: {
          x: { field: 'headline', type: 'quantitative' },
          text: { field: 'flags', type: 'nominal' },
        },
      },
    ],
  } as TopLevelSpec;
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
 * dashboard's charts. Its data is the dataset `scores` of rows `{ round, silo, name, score }` (silo
 * is the index, name what the legend shows), so a view can be read back with `view.data('scores')`.
 * @throws TypeError when `history.rounds` or `history.scores` is not an array, or `kind` is unknown.
 * @throws RangeError when a silo's scores do not have one entry per round, or `history.names` is
 *   not one name per silo.
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
  if (
    history.names !== undefined &&
    (!Array.isArray(history.names) || history.names.length !== scores.length)
  )
    throw new RangeError(`history.names: expected ${scores.length} names, one per silo`);
  const names = scores.map((_, i) => history.names?.[i] ?? `silo-${i}`);
  const values = scores.flatMap((own: readonly (number | null)[], silo: number) => {
    let sum = 0;
    return own.map((score, k) => {
      sum += score ?? 0;
      return { round: rounds[k]!, silo, name: names[silo]!, score: kind === 'round' ? score : sum };
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
        field: 'name',
        type: 'nominal',
        title: 'silo',
        sort: names,
        scale: { domain: names, scheme: scores.length > 10 ? 'tableau20' : 'tableau10' },
      },
    },
  };
}

const finite = (x: number | null | undefined): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * A panel whose values span less than this fraction of the widest span in its group gets its own y
 * scale: on the group's common scale it would be a flat line (e.g. eeRaw beside IOI).
 */
export const SHARED_SPAN_RATIO = 0.25;

/** The span max − min of a panel's finite values (0 for one value or none). */
function spanOf<R>(rows: readonly R[], value: (row: R) => number | null): number {
  const xs = rows.map(value).filter(finite);
  return xs.length === 0 ? 0 : Math.max(...xs) - Math.min(...xs);
}

/**
 * The groups that have drawable panels, each keeping only its panels with a finite `value` in
 * some row; the rows of the panels kept. A group that shares y keeps one common scale only for its
 * panels whose span is at least {@link SHARED_SPAN_RATIO} of the widest: the others follow as a
 * group of the same units with one y scale per panel.
 */
function drawable<R extends { panel: string }>(
  rows: readonly R[],
  groups: readonly PanelGroup[],
  value: (row: R) => number | null,
): { group: PanelGroup; rows: R[] }[] {
  const has = new Set(rows.filter((r) => finite(value(r))).map((r) => r.panel));
  const part = (g: PanelGroup, panels: string[]) => {
    const kept = new Set(panels);
    return { group: { ...g, panels }, rows: rows.filter((r) => kept.has(r.panel)) };
  };
  return groups.flatMap((g) => {
    const panels = g.panels.filter((p) => has.has(p));
    if (panels.length === 0) return [];
    if (!g.sharedY || panels.length === 1) return [part(g, panels)];
    const span = new Map(
      panels.map((p) => [
        p,
        spanOf(
          rows.filter((r) => r.panel === p),
          value,
        ),
      ]),
    );
    const widest = Math.max(...span.values());
    const common = panels.filter((p) => span.get(p)! >= SHARED_SPAN_RATIO * widest);
    const own = panels.filter((p) => !common.includes(p));
    return [
      part(g, common),
      ...(own.length > 0 ? [part({ ...g, title: `${g.title} (own scale)`, sharedY: false }, own)] : []),
    ];
  });
}

/**
 * The panels of each group as a grid of at most four columns (one y scale for the group's panels
 * when it shares y), the groups stacked; `unit` draws one panel from its rows. Panels are
 * concatenated rather than faceted, so a grid's last row has no empty cells with axes.
 */
function stackedPanels<R extends { panel: string }>(
  parts: { group: PanelGroup; rows: R[] }[],
  unit: (group: PanelGroup, yTitle: string | null) => Record<string, unknown>,
): TopLevelSpec {
  const grids = parts.map(({ group, rows }) => {
    const columns = Math.min(4, group.panels.length);
    // Every title of a grid gets as many lines as its longest, so the plots line up.
    const lines = Math.max(...group.panels.map((p) => p.split(' — ').length));
    const title = (panel: string) => {
      const text = panel.split(' — ');
      return [...text, ...new Array<string>(lines - text.length).fill('\u00a0')];
    };
    return {
      concat: group.panels.map((panel, k) => ({
        title: { text: title(panel), fontSize: 11, fontWeight: 'normal' },
        data: { values: rows.filter((r) => r.panel === panel) },
        ...unit(group, k % columns === 0 ? group.title : null),
      })),
      columns,
      resolve: { scale: { x: 'shared', y: group.sharedY ? 'shared' : 'independent' } },
    };
  });
  // The units are built from plain objects; vega-lite checks them when it compiles.
  if (grids.length === 0) return { data: { values: [] }, mark: 'point' };
  if (grids.length === 1) return grids[0] as unknown as TopLevelSpec;
  return { vconcat: grids, spacing: 24, resolve: { scale: { x: 'shared' } } } as unknown as TopLevelSpec;
}

/**
 * Each method's per-silo scores against the reference's, one panel per method (its label carries
 * the agreement, e.g. the Spearman correlation), one point per silo and seed — a seed's silos are
 * its own partition of the data, so points of different seeds are never averaged; with several
 * seeds the color tells them apart. The reference is on x, shared by every panel; panels of a
 * group share y when the group says so. The report's "agreement" charts.
 * @throws TypeError when `rows` or `groups` is not an array.
 */
export function scatterSpec(
  rows: readonly ScatterRow[],
  groups: readonly PanelGroup[],
  referenceTitle: string,
): TopLevelSpec {
  checkRows('rows', rows);
  checkRows('groups', groups);
  const seeds = new Set(rows.map((r) => r.seed)).size;
  const parts = drawable(
    withPointLabels(rows.filter((r) => finite(r.reference))),
    groups,
    (r) => r.score,
  ).map((p) => ({ ...p, rows: p.rows.filter((r) => finite(r.score)) }));
  const perPanel = Math.max(
    0,
    ...parts.flatMap((p) => p.group.panels.map((q) => p.rows.filter((r) => r.panel === q).length)),
  );
  const x = { field: 'reference', type: 'quantitative', title: referenceTitle, scale: { zero: false } };
  return stackedPanels(parts, (_group, yTitle) => {
    const y = { field: 'score', type: 'quantitative', title: yTitle, scale: { zero: false } };
    const points = {
      mark: { type: 'point', filled: true, size: 40, tooltip: true },
      encoding: {
        x,
        y,
        ...(seeds > 1
          ? { color: { field: 'seed', type: 'nominal', title: 'seed' } }
          : { color: { value: '#2c7fb8' } }),
        detail: { field: 'silo', type: 'nominal' },
      },
    };
    // Each point labelled with its silo's name, unless the panel is too crowded to read them.
    const labels = {
      mark: { type: 'text', align: 'left', baseline: 'middle', dx: 5, fontSize: 8, color: '#444' },
      encoding: { x, y, text: { field: 'label', type: 'nominal' } },
    };
    return {
      width: 170,
      height: 140,
      ...(perPanel <= MAX_LABELLED_POINTS ? { layer: [points, labels] } : points),
    };
  });
}

/** A scatter panel with more points than this has no labels (the tooltip still names the silo). */
export const MAX_LABELLED_POINTS = 30;

/**
 * How near, as fractions of a panel's x and y spans, a point may lie to a labelled one and still
 * get its own label: a label is about a quarter of a panel wide and a tenth high (8 px text on
 * 170 × 140), so two labels nearer than that print over each other ("silo-8silo-4", issue 37).
 */
const LABEL_ROOM = { x: 0.25, y: 0.1 } as const;

/**
 * The rows with `label`: the silo's name, or '' for a point that lies within {@link LABEL_ROOM} of
 * a point of the same panel labelled before it (the tooltip still names it). Greedy in row order.
 */
function withPointLabels(rows: readonly ScatterRow[]): (ScatterRow & { label: string })[] {
  const byPanel = new Map<string, ScatterRow[]>();
  for (const r of rows) if (finite(r.score)) byPanel.set(r.panel, [...(byPanel.get(r.panel) ?? []), r]);
  const span = (xs: number[]) => Math.max(...xs) - Math.min(...xs) || 1;
  const labelled = new Map<string, ScatterRow[]>();
  return rows.map((r) => {
    const panel = byPanel.get(r.panel);
    if (!panel || !finite(r.score)) return { ...r, label: '' };
    const dx = span(panel.map((q) => q.reference));
    const dy = span(panel.map((q) => q.score));
    const taken = labelled.get(r.panel) ?? [];
    const crowded = taken.some(
      (q) =>
        Math.abs(q.reference - r.reference) < LABEL_ROOM.x * dx &&
        Math.abs(q.score - r.score) < LABEL_ROOM.y * dy,
    );
    if (crowded) return { ...r, label: '' };
    labelled.set(r.panel, [...taken, r]);
    return { ...r, label: r.silo };
  });
}

/**
 * Every silo's score round by round, one panel per method in the order of the groups (the
 * reference's panel first), one line per silo (a missing score leaves a gap). Panels of a group
 * share y when the group says so. The report's "trajectories" chart.
 * @throws TypeError when `rows` or `groups` is not an array.
 */
export function trajectoriesSpec(
  rows: readonly TrajectoryRow[],
  groups: readonly PanelGroup[],
): TopLevelSpec {
  checkRows('rows', rows);
  checkRows('groups', groups);
  const silos = new Set(rows.map((r) => r.silo)).size;
  const parts = drawable(rows, groups, (r) => r.score);
  return stackedPanels(parts, (_group, yTitle) => ({
    width: 170,
    height: 140,
    mark: { type: 'line', point: { size: 12 }, strokeWidth: 1.2, tooltip: true },
    encoding: {
      x: { field: 'round', type: 'quantitative', axis: { tickMinStep: 1, format: 'd' } },
      y: { field: 'score', type: 'quantitative', title: yTitle },
      color: {
        field: 'silo',
        type: 'nominal',
        sort: null,
        scale: { scheme: silos > 10 ? 'tableau20' : 'tableau10' },
        ...(silos > 20 ? { legend: null } : {}),
      },
    },
  }));
}
