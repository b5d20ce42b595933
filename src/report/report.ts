/**
 * Experiment reports: `report.md` and a self-contained `report.html` (charts inlined as SVG, no
 * scripts, opens offline) from a `results.json` — or from a `scores.json` (`fedscore score`:
 * scores of utilities computed elsewhere, with no training to report), through the same renderer:
 * the summary, the agreement table when there is a reference, the FP-inversion warning and the
 * charts. Charts are the Vega-Lite specifications of charts.ts (which the service's dashboard
 * draws too), rendered headlessly to SVG by vega (no browser, no canvas).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { RATIO_SCHEMES, SCHEMES } from '../../scoring/private.js';
import { inertText, markdownText } from '../consortium/inert-text.js';
import { RAW_METHODS } from '../consortium/private-scoring.js';
import { mrsv } from '../estimators/mrsv.js';
import { estimatorOf } from '../estimators/registry.js';
import { ROUND_SV, TRUE_SV } from '../records/compare.js';
import { HEADLINE } from '../records/leaderboard.js';
import type { ExperimentResults } from '../records/results.js';
import type { UtilityScores } from '../records/utility-scores.js';
import {
  type AccuracyRow,
  accuracySpec,
  headlineBarsSpec,
  type PanelGroup,
  type ParticipationRow,
  participationSpec,
  type ScatterRow,
  type SiloScoreRow,
  scatterSpec,
  scoreHistorySpec,
  siloScoresSpec,
  type TrajectoryRow,
  trajectoriesSpec,
} from './charts.js';
import { leaderboardHtml, leaderboardMarkdown } from './leaderboard-table.js';
import {
  type AgreementTable,
  agreementNotes,
  agreementTables,
  comparedWords,
  comparisonRows,
  conventionWords,
  markedLabel,
  type NormalizerProblem,
  normalizerProblems,
  RATIO_NOTES,
  referenceAxisTitle,
  referenceWords,
  tablesByReference,
} from './report-agreement.js';
import {
  atOf,
  emptyCoalitionOf,
  fmt,
  hiddenOf,
  isUtilityScores,
  meanCell,
  type Reportable,
  seedCount,
  seedWords,
} from './report-common.js';

export type { AgreementTable, NormalizerProblem, Reportable };
export {
  agreementNotes,
  agreementTables,
  comparisonRows,
  isUtilityScores,
  markedLabel,
  normalizerProblems,
  referenceWords,
};

/** A rendered chart: a title, its file stem and its SVG text. */
export interface Chart {
  id: string;
  title: string;
  svg: string;
}

/** Renders one Vega-Lite specification to SVG. */
export async function renderVegaLite(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * Outcomes by silo role (papers/000 Table 2, papers/002 Fig. 2) as rows of cells (header first);
 * empty when the results carry no outcomes (written before they existed).
 */
export function outcomeRows(r: Reportable): string[][] {
  if (isUtilityScores(r) || !r.outcomes) return [];
  const cell = meanCell(r);
  const rows = [['role', 'silos', 'participation rate', 'aggregation share (1 = equal)']];
  for (const [role, o] of Object.entries(r.outcomes.byRole))
    rows.push([role, String(o.silos.length), cell(o.participation), cell(o.aggregationShare)]);
  return rows;
}

/** Renders chart specifications in order. */
async function render(specs: [string, string, TopLevelSpec][]): Promise<Chart[]> {
  const charts: Chart[] = [];
  for (const [id, title, spec] of specs) charts.push({ id, title, svg: await renderVegaLite(spec) });
  return charts;
}

/** The round's exact Shapley value and the true Shapley value: Shapley values without a registry entry. */
const SHAPLEY_REFERENCES = new Set<string>([ROUND_SV, TRUE_SV]);
/** Private scores rescaled to sum to v(M) (papers/003 Eq. 2 and 4; scoring/private.ts's RATIO_SCHEMES). */
const SHARE_FAMILY = new Set<string>(RATIO_SCHEMES);
/** Marginals (the other private schemes) and the ratio schemes' raw weights: differences of utilities. */
const MARGINAL_FAMILY = new Set<string>([...SCHEMES.filter((s) => !SHARE_FAMILY.has(s)), ...RAW_METHODS]);

type Family = 'shapley' | 'share' | 'marginal' | 'cosine' | 'other';
/** A method's panel family: the private scores' own, else its estimator registry entry's `family`. */
const familyOf = (m: string): Family =>
  SHAPLEY_REFERENCES.has(m)
    ? 'shapley'
    : SHARE_FAMILY.has(m)
      ? 'share'
      : MARGINAL_FAMILY.has(m)
        ? 'marginal'
        : (estimatorOf(m)?.family ?? 'other');

/**
 * Panels grouped by units, in `order` of families; within a family in the order of `methods`
 * (`first` leading). Shapley values share a y scale, as do the scores rescaled to v(M) and, under
 * v(∅) = v(M0), the marginals (under v(∅) = 0 IOI and the raw weights carry v(M0), LOO does not).
 */
function groupsOf(
  r: Reportable,
  methods: readonly string[],
  label: (m: string) => string,
  order: readonly Family[],
  o: { first?: string; summedCos?: boolean } = {},
): PanelGroup[] {
  const { first } = o;
  const unit = !isUtilityScores(r) && r.scoring?.utility === 'negLoss' ? 'utility' : 'accuracy';
  const zero = emptyCoalitionOf(r) === 'zero';
  const titles: Record<Family, [string, boolean]> = {
    shapley: ['Shapley value', true],
    share: ['share of v(M)', true],
    marginal: [zero ? `${unit}, v(∅) = 0` : `${unit} difference`, !zero],
    cosine: [o.summedCos ? 'Σ cosine' : 'cosine', true],
    other: ['score', false],
  };
  const sorted = [...methods].sort((a, b) => (a === first ? -1 : b === first ? 1 : 0));
  return order.flatMap((f) => {
    const panels = sorted.filter((m) => familyOf(m) === f).map(label);
    return panels.length > 0 ? [{ title: titles[f][0], panels, sharedY: titles[f][1] }] : [];
  });
}

/** The per-seed vectors behind a report: compared scores and rounds. */
function seedRecords(r: Reportable) {
  if (isUtilityScores(r)) return [{ seed: null as number | null, compared: r.cumulative, rounds: r.rounds }];
  return r.runs.map((run) => ({
    seed: run.seed as number | null,
    compared: run.compared,
    rounds: run.rounds,
  }));
}

/** Scatter charts of every compared method against each reference, one chart per reference. */
function scatterCharts(r: Reportable): [string, string, TopLevelSpec][] {
  const names = r.silos.names;
  const at = atOf(r);
  const inverted = new Set(
    agreementTables(r).flatMap((t) =>
      t.rows
        .slice(1)
        .filter((x) => x[0]!.endsWith(' †'))
        .map((x) => x[0]!.slice(0, -2)),
    ),
  );
  return agreementTables(r).flatMap(({ reference }) => {
    const methods = tablesByReference(r)[reference] ?? {};
    (isUtilityScores(r) ? r.comparison?.methods : r.comparison.byReference?.[reference]) ?? {};
    const cell = meanCell(r);
    const label = (m: string) =>
      `${m}${inverted.has(m) ? ` — reversed: ${m === 'fp' ? 'Σα' : 'normalizer'} ≤ 0 (see the note)` : ''} — Spearman ${methods[m] ? cell(methods[m]!.spearman) : 'n/a'}`;
    const rows: ScatterRow[] = seedRecords(r).flatMap(({ seed, compared }) => {
      const ref = compared[reference];
      if (!ref) return [];
      return Object.keys(methods).flatMap((m) =>
        (compared[m] ?? []).map((score, i) => ({
          panel: label(m),
          seed: String(seed ?? ''),
          silo: names[i] ?? `silo-${i}`,
          reference: ref[i]!,
          score,
        })),
      );
    });
    if (rows.length === 0) return [];
    const groups = groupsOf(
      r,
      Object.keys(methods),
      label,
      ['marginal', 'share', 'shapley', 'cosine', 'other'],
      {
        summedCos: true,
      },
    );
    const seeds = seedCount(r);
    return [
      [
        `agreement-${reference}`,
        `Each score against ${reference} (${referenceWords(reference, at)}): one point per silo${seeds > 1 ? ' and seed (color: seed; a seed’s silos are its own split, so seeds are not averaged)' : ''}; ${comparedWords(at)}`,
        scatterSpec(rows, groups, referenceAxisTitle(reference, at)),
      ] as [string, string, TopLevelSpec],
    ];
  });
}

/** The per-round score trajectories of the first seed's silos, the round's exact Shapley value first (when there is one). */
function trajectoryChart(r: Reportable): [string, string, TopLevelSpec][] {
  const record = seedRecords(r)[0];
  if (!record) return [];
  const names = r.silos.names;
  const hidden = hiddenOf(r);
  const methods = [...new Set(record.rounds.flatMap((rd) => Object.keys(rd.scores)))].filter(
    (m) => !hidden.has(m),
  );
  const reversed = new Map<string, number[]>();
  for (const p of normalizerProblems(r).filter((q) => q.seed === record.seed))
    for (const { method, key } of RATIO_NOTES)
      if (p[key] <= 0) reversed.set(method, [...(reversed.get(method) ?? []), p.round]);
  const label = (m: string) => {
    const base = m === mrsv.name ? `${mrsv.name}: the round’s exact Shapley value` : m;
    const rounds = reversed.get(m);
    return rounds
      ? `${base} — round${rounds.length > 1 ? 's' : ''} ${rounds.join(', ')} left out: ${m === 'fp' ? 'Σα' : 'normalizer'} ≤ 0 reverses the ranking`
      : base;
  };
  // A ratio score's reversed rounds are left out (a gap): their values rank the silos backwards and
  // grow without bound as the normalizer nears 0; the panel's label says which rounds.
  const shown = (m: string, round: number, score: number | null | undefined) =>
    reversed.get(m)?.includes(round) ? null : (score ?? null);
  // A trajectory needs two rounds: a method left with one round or none (its other rounds reversed)
  // gets no panel, and the caption says why.
  const scoredRounds = (m: string) =>
    record.rounds.filter((rd) =>
      (rd.scores[m] ?? []).some((x) => Number.isFinite(shown(m, rd.round, x) ?? Number.NaN)),
    ).length;
  const tooFew =
    record.rounds.length >= 2 ? methods.filter((m) => reversed.has(m) && scoredRounds(m) < 2) : [];
  const drawnMethods = methods.filter((m) => !tooFew.includes(m));
  const rows: TrajectoryRow[] = drawnMethods.flatMap((m) =>
    names.flatMap((silo, i) =>
      record.rounds.map((rd) => ({
        panel: label(m),
        silo,
        round: rd.round,
        score: shown(m, rd.round, rd.scores[m]?.[i]),
      })),
    ),
  );
  const groups = groupsOf(r, drawnMethods, label, ['shapley', 'share', 'marginal', 'cosine', 'other'], {
    first: mrsv.name,
  });
  if (!rows.some((x) => x.score !== null && Number.isFinite(x.score))) return [];
  const leftOut = tooFew.map(
    (m) =>
      `${m} left out: ${m === 'fp' ? 'Σα' : 'its normalizer'} ≤ 0 reverses its ranking in rounds ${reversed.get(m)!.join(', ')}`,
  );
  return [
    [
      'trajectories',
      `Per-round scores of each silo${record.seed !== null ? ` (seed ${record.seed})` : ''}${
        // Issue 37: the exact Shapley value is named only when the run (or file) has it.
        drawnMethods.includes(mrsv.name) ? ', the round’s exact Shapley value first' : ''
      }; panels in the same units share their y axis unless their ranges differ fourfold (color: silo)${leftOut.length > 0 ? `; ${leftOut.join('; ')}` : ''}`,
      trajectoriesSpec(rows, groups),
    ],
  ];
}

/** The leaderboard as a bar chart: each silo's final headline score in rank order, flags marked. */
function headlineChart(r: Reportable): [string, string, TopLevelSpec][] {
  const entries = r.leaderboard ?? [];
  if (entries.length === 0) return [];
  const rows = entries.map((e) => ({
    silo: e.name,
    rank: e.rank,
    headline: e.headline,
    flags: [...new Set(e.flags.map((f) => f.kind))].join(', '),
  }));
  return [
    [
      'leaderboard',
      `Final headline scores (${HEADLINE} weight summed over the scored rounds${seedCount(r) > 1 ? ', mean over seeds' : ''}), rank 1 on top; flagged silos in red with their flags (reasons in the leaderboard)`,
      headlineBarsSpec(rows, `headline (${HEADLINE}), Σ over rounds`),
    ],
  ];
}

/** A scores.json's charts: cumulative scores per method, each silo's EE summed round by round, the agreement and trajectories. */
function scoresCharts(r: UtilityScores): Promise<Chart[]> {
  const names = r.silos.names;
  const hidden = hiddenOf(r);
  const scoreRows: SiloScoreRow[] = Object.entries(r.cumulative)
    .filter(([method]) => !hidden.has(method))
    .flatMap(([method, values]) =>
      values.map((score, i) => ({ method, silo: names[i] ?? `silo-${i}`, score })),
    );
  const history = {
    rounds: r.rounds.map((rd) => rd.round),
    scores: names.map((_, i) => r.rounds.map((rd) => rd.scores.ee?.[i] ?? null)),
    names,
  };
  return render([
    ...headlineChart(r),
    ['scores', 'Per-silo scores by scheme (cumulative over rounds)', siloScoresSpec(scoreRows)],
    [
      'history',
      'Everybody-Else score per silo, summed over the rounds so far (color: silo)',
      scoreHistorySpec(history, 'cumulative'),
    ],
    ...scatterCharts(r),
    ...trajectoryChart(r),
  ]);
}

/**
 * Builds the report's charts. For an experiment: per reference, every compared score against the
 * reference (one point per silo and seed, the Spearman in each panel's label); the per-round
 * trajectories of the first seed's silos (the round's exact Shapley value first, shared y scales
 * within units); test accuracy by round; and the selection rate per silo when some silo sat out a
 * round. For a scores.json: cumulative scores per method, the EE history, and with coalition
 * tables the agreement and trajectory charts. A chart without data is not drawn.
 */
export async function buildCharts(outside: Reportable): Promise<Chart[]> {
  const r = withNames(outside, inertText);
  if (isUtilityScores(r)) return scoresCharts(r);
  const names = r.silos.names;
  const accuracyRows: AccuracyRow[] = r.runs.flatMap((run) =>
    run.rounds.map((rd) => ({ seed: String(run.seed), round: rd.round, accuracy: rd.testAccuracy })),
  );
  const participationRows: ParticipationRow[] = names.map((silo, i) => ({
    silo,
    rate:
      r.runs.reduce((s, run) => s + (run.participation[i] ?? 0) / Math.max(1, run.rounds.length), 0) /
      Math.max(1, r.runs.length),
  }));
  const specs: [string, string, TopLevelSpec][] = [
    ...headlineChart(r),
    ...scatterCharts(r),
    ...trajectoryChart(r),
  ];
  if (accuracyRows.length > 0)
    specs.push([
      'accuracy',
      `Test accuracy of the global model by round${r.runs.length > 1 ? ' (color: seed)' : ''}`,
      accuracySpec(accuracyRows),
    ]);
  if (!everyoneEveryRound(r))
    specs.push([
      'participation',
      `Selection rate per silo (fraction of rounds selected${r.runs.length > 1 ? ', mean over seeds' : ''})`,
      participationSpec(participationRows),
    ]);
  return render(specs);
}

/** Whether every silo was selected in every round of every seed (then the participation chart says nothing). */
function everyoneEveryRound(r: ExperimentResults): boolean {
  return r.runs.every((run) => run.participation.every((p) => p === run.rounds.length));
}

function mdTable(rows: string[][]): string {
  const [head, ...body] = rows;
  if (!head) return '';
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...body.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/**
 * Rounds whose Fair-Private normalizer Σ_i α(i) was ≤ 0 (papers/003 Eq. 2), with v(∅) as the run
 * scored: there FP(i) = α(i)/Σα·v(M) reverses the order of the α's. One entry per seed of an
 * experiment (`seed 1: rounds 2, 3`); one entry for a scores.json (`rounds 2, 3`).
 */
export function fpSignWarnings(r: Reportable): string[] {
  const bad = normalizerProblems(r).filter((p) => p.fp <= 0);
  if (isUtilityScores(r)) return bad.length > 0 ? [`rounds ${bad.map((p) => p.round).join(', ')}`] : [];
  return [...new Set(bad.map((p) => p.seed))].map(
    (s) =>
      `seed ${s}: rounds ${bad
        .filter((p) => p.seed === s)
        .map((p) => p.round)
        .join(', ')}`,
  );
}

/** The FP-inversion warning as a summary line, when there is one and FP is shown (asked for). */
function fpWarningLines(r: Reportable): string[] {
  const fpWarnings = hiddenOf(r).has('fp') ? [] : fpSignWarnings(r);
  return fpWarnings.length > 0
    ? [
        `- warning: the Fair-Private normalizer Σα was ≤ 0 (${fpWarnings.join('; ')}); there FP reverses the ranking of α — under ${conventionWords(r)} (see the note under the agreement table; v(∅) = 0 or EE avoid it)`,
      ]
    : [];
}

/** A scores.json's summary lines. */
function scoresSummaryLines(r: UtilityScores): string[] {
  const skipped = r.rounds.filter((rd) => rd.skipped !== undefined);
  return [
    `- silos: ${r.silos.count}; rounds: ${r.rounds.length}${skipped.length > 0 ? ` (not scored, fewer than 2 reports: ${skipped.map((rd) => rd.round).join(', ')})` : ''}`,
    `- utilities: \`${r.source}\`, computed outside fedscore; scores by scoring/private.ts (fedscore ${r.versions.fedscore})`,
    r.comparison
      ? `- reference for the comparison: \`${r.comparison.reference}\` (cumulative over rounds), from the file's coalition tables`
      : '- no reference: the file has no coalition tables (a `table` in every round gives MR-SV and the agreement table)',
    '- a silo without a report in a round is left out of that round (null score); cumulative scores sum the rounds it reported in',
    ...fpWarningLines(r),
  ];
}

/** The secure-aggregation parameters, with a warning when the run used the weak-threshold opt-in. */
function secureAggregationLines(r: ExperimentResults): string[] {
  const sa = r.secureAggregation;
  if (!sa) return [];
  const line = `- secure aggregation: t = ${sa.threshold} of ${r.silos.count} silos, tolerating n_C = ${sa.corruptSilos} corrupted silos (bound ⌊(n + n_C)/2⌋ + 1 = ${sa.minimumThreshold}); corrections ${sa.corrections}`;
  return sa.weakThreshold
    ? [
        line,
        `- warning: WEAK THRESHOLD (secureAggregation.weakThreshold): t = ${sa.threshold} < ${sa.minimumThreshold}, so the rounds are not private against a malicious server colluding with ${sa.corruptSilos} silo(s) (docs/threat-model.md)`,
      ]
    : [line];
}

/** How the utilities became scores: coalitions, v(∅), utility, raw scores. */
function scoringLine(r: ExperimentResults): string {
  const s = r.scoring;
  if (!s) return `- scoring: ${conventionWords(r)} (results written before scoring was recorded)`;
  return `- scoring: ${conventionWords(r)} (\`aggregation.convention: ${s.coalitions}\`, \`scoring.emptyCoalition: ${s.emptyCoalition}\`); utility ${s.utility}; raw scores (fpRaw, eeRaw, eeMedianRaw) ${s.raw ? 'recorded' : 'not recorded (`scoring.raw`)'}`;
}

/** The seeds that ran: `seed 7 (one run)`, `seeds 1, 2, 3 (3 runs)`. */
export const seedLine = (seeds: readonly number[]) =>
  seeds.length === 1 ? `seed ${seeds[0]} (one run)` : `seeds ${seeds.join(', ')} (${seeds.length} runs)`;

/** The data the run used, then its source: `5000 train (over the silos), 1000 test; from …`. */
export function dataLine(r: ExperimentResults): string {
  return r.dataUsed
    ? `${r.dataUsed.train} train (over the silos), ${r.dataUsed.test} test used; source: ${r.dataSource}`
    : r.dataSource;
}

function summaryLines(r: Reportable): string[] {
  if (isUtilityScores(r)) return scoresSummaryLines(r);
  const acc = r.runs.map((run) => run.finalAccuracy);
  const mean = acc.reduce((s, x) => s + x, 0) / Math.max(1, acc.length);
  const references = r.comparison.references ?? [r.comparison.reference];
  return [
    `- silos: ${r.silos.count}; rounds: ${r.runs[0]?.rounds.length ?? 0}; ${seedLine(r.seeds)}`,
    `- backend: ${r.backend}${r.kernels ? ` (${r.kernels})` : ''}; data: ${dataLine(r)}`,
    `- final test accuracy${r.runs.length > 1 ? ' (mean over seeds)' : ''}: ${fmt(mean, 4)}`,
    scoringLine(r),
    `- compared: ${comparedWords(r.comparison.at)}; reference${references.length > 1 ? 's' : ''}: ${references
      .map((ref) => `\`${ref}\` — ${referenceWords(ref, r.comparison.at)}`)
      .join(', ')}`,
    ...(everyoneEveryRound(r) ? ['- participation: every silo in every round'] : []),
    `- visibility: ${r.visibility.note}`,
    ...secureAggregationLines(r),
    `- wall time: ${(r.wallTimeMs / 1000).toFixed(1)} s`,
    ...fpWarningLines(r),
  ];
}

/** The report's title. */
const titleOf = (r: Reportable) =>
  isUtilityScores(r)
    ? `scores of ${r.source.split(/[\\/]/).pop()}`
    : ((r.config as { name?: string }).name ?? 'experiment');

/**
 * `r` with its silo names passed through `as` (issue 32, T1): a name comes from a utilities file or
 * a configuration; the charts and report.html show it inert ({@link inertText}: no control
 * character, one line), report.md as literal markdown ({@link markdownText}: no HTML, links or
 * table breaks).
 */
function withNames<R extends Reportable>(r: R, as: (name: string) => string): R {
  return {
    ...r,
    silos: { ...r.silos, names: r.silos.names.map(as) },
    ...(r.leaderboard ? { leaderboard: r.leaderboard.map((e) => ({ ...e, name: as(e.name) })) } : {}),
  };
}

/** report.md: summary, comparison table and links to the chart files (written by the caller as `<id>.svg`). */
export function renderMarkdown(outside: Reportable, charts: Chart[], chartDir = 'charts'): string {
  const r = withNames(outside, markdownText);
  const outcomes = isUtilityScores(r) ? undefined : r.outcomes;
  const detection = isUtilityScores(r) ? undefined : r.comparison.detection;
  return [
    `# fedscore report: ${markdownText(titleOf(outside))}`,
    '',
    ...leaderboardMarkdown(r.leaderboard, seedWords(r), hiddenOf(r)),
    ...summaryLines(r),
    '',
    ...agreementTables(r).flatMap((t) => [
      `## ${t.heading}`,
      '',
      mdTable(t.rows),
      '',
      ...t.notes.flatMap((n) => [n, '']),
    ]),
    ...(outcomes
      ? [
          `## Outcomes by silo role (${seedWords(r)})`,
          '',
          `Final test accuracy: ${meanCell(r)(outcomes.finalAccuracy)}. Participation rate: fraction of rounds a silo of the role was selected in; aggregation share: its weight over the round's mean weight when aggregated.`,
          '',
          mdTable(outcomeRows(r)),
          '',
        ]
      : []),
    ...(detection
      ? [
          `Misbehaviour detection — fraction of seeds whose lowest score is a misbehaving silo's: ${Object.entries(
            detection,
          )
            .map(([m, v]) => `${m} ${v.toFixed(2)}`)
            .join(', ')}`,
          '',
        ]
      : []),
    ...charts.flatMap((c) => [`## ${c.title}`, '', `![${c.title}](${chartDir}/${c.id}.svg)`, '']),
  ].join('\n');
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!,
  );

/** report.html: one self-contained file (inline CSS and SVG; no scripts, no external resources). */
export function renderHtml(outside: Reportable, charts: Chart[]): string {
  const r = withNames(outside, inertText);
  const title = escapeHtml(titleOf(r));
  const outcomeSummary = isUtilityScores(r) ? undefined : r.outcomes;
  const htmlTable = (rows: string[][]) => {
    const [head, ...body] = rows;
    return `<table><thead><tr>${head!.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${body
      .map((row) => `<tr>${row.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`)
      .join('')}</tbody></table>`;
  };
  const tables = agreementTables(r)
    .map(
      (t) =>
        `<h2>${escapeHtml(t.heading)}</h2>\n${htmlTable(t.rows)}${t.notes
          .map((n) => `<p class="note">${escapeHtml(n.replaceAll('`', ''))}</p>`)
          .join('')}`,
    )
    .join('\n');
  const outcomes = outcomeSummary
    ? `<h2>Outcomes by silo role (${escapeHtml(seedWords(r))})</h2>
<p>Final test accuracy: ${escapeHtml(meanCell(r)(outcomeSummary.finalAccuracy))}. Participation rate: fraction of rounds a silo of the role was selected in; aggregation share: its weight over the round's mean weight when aggregated.</p>
${htmlTable(outcomeRows(r))}`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fedscore report: ${title}</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}thead{background:#f3f3f3}figure{margin:1.5rem 0}figcaption{font-weight:600;margin-bottom:.5rem}
svg{max-width:100%;height:auto}.leaderboard td.flags{text-align:left;font-size:.9rem}.leaderboard th:nth-child(2),.leaderboard td:nth-child(2),.leaderboard th:last-child{text-align:left}.leaderboard td:nth-child(2){white-space:nowrap}.leaderboard th{vertical-align:bottom}.leaderboard tr.flagged td:nth-child(2){color:#b00020;font-weight:600}.note{font-size:.9rem;background:#fff7e6;border-left:3px solid #e0a030;padding:.4rem .6rem}
</style></head><body>
<h1>fedscore report: ${title}</h1>
${leaderboardHtml(r.leaderboard, seedWords(r), hiddenOf(r))}
<ul>${summaryLines(r)
    .map((l) => `<li>${escapeHtml(l.replace(/^- /, '').replaceAll('`', ''))}</li>`)
    .join('')}</ul>
${tables}
${outcomes}
${charts.map((c) => `<figure id="${c.id}"><figcaption>${escapeHtml(c.title)}</figcaption>${c.svg}</figure>`).join('\n')}
</body></html>
`;
}
