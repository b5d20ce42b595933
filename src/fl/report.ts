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
import {
  type AccuracyRow,
  accuracySpec,
  type ParticipationRow,
  participationSpec,
  type SiloScoreRow,
  scoreHistorySpec,
  siloScoresSpec,
} from './charts.js';
import type { ExperimentResults } from './results.js';
import type { UtilityScores } from './utility-scores.js';

/** What a report is rendered from: an experiment's results.json, or a scores.json. */
export type Reportable = ExperimentResults | UtilityScores;

/** Whether `r` is a scores.json (scores of a utilities file) rather than an experiment. */
export const isUtilityScores = (r: Reportable): r is UtilityScores => 'scoresSchemaVersion' in r;

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

const fmt = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const pm = (m: { mean: number; std: number }) => `${fmt(m.mean)} ± ${fmt(m.std)}`;

/**
 * Outcomes by silo role (papers/000 Table 2, papers/002 Fig. 2) as rows of cells (header first);
 * empty when the results carry no outcomes (written before they existed).
 */
export function outcomeRows(r: Reportable): string[][] {
  if (isUtilityScores(r) || !r.outcomes) return [];
  const rows = [['role', 'silos', 'participation rate', 'aggregation share (1 = equal)']];
  for (const [role, o] of Object.entries(r.outcomes.byRole))
    rows.push([role, String(o.silos.length), pm(o.participation), pm(o.aggregationShare)]);
  return rows;
}

/**
 * The comparison table as rows of cells (header first): mean ± std over seeds for an experiment,
 * the values themselves for a scores.json (one set of scores); the header alone without a reference.
 */
export function comparisonRows(r: Reportable): string[][] {
  const rows = [['method', 'Spearman', 'Kendall', 'Pearson', 'normalized L2']];
  const cell = isUtilityScores(r) ? (m: { mean: number }) => fmt(m.mean) : pm;
  for (const [name, c] of Object.entries(r.comparison?.methods ?? {}))
    rows.push([name, cell(c.spearman), cell(c.kendall), cell(c.pearson), cell(c.l2)]);
  return rows;
}

/** Renders chart specifications in order. */
async function render(specs: [string, string, TopLevelSpec][]): Promise<Chart[]> {
  const charts: Chart[] = [];
  for (const [id, title, spec] of specs) charts.push({ id, title, svg: await renderVegaLite(spec) });
  return charts;
}

/** A scores.json's charts: cumulative scores per method, and each silo's EE summed round by round. */
function scoresCharts(r: UtilityScores): Promise<Chart[]> {
  const names = r.silos.names;
  const scoreRows: SiloScoreRow[] = Object.entries(r.cumulative).flatMap(([method, values]) =>
    values.map((score, i) => ({ method, silo: names[i] ?? `silo-${i}`, score })),
  );
  const history = {
    rounds: r.rounds.map((rd) => rd.round),
    scores: names.map((_, i) => r.rounds.map((rd) => rd.scores.ee?.[i] ?? null)),
  };
  return render([
    ['scores', 'Per-silo scores by scheme (cumulative over rounds)', siloScoresSpec(scoreRows)],
    [
      'history',
      'Everybody-Else score per silo, summed over the rounds so far (color: silo index)',
      scoreHistorySpec(history, 'cumulative'),
    ],
  ]);
}

/**
 * Builds the report's charts: per-silo scores per scheme, accuracy curves and participation for an
 * experiment; per-silo scores and the EE history for a scores.json.
 */
export async function buildCharts(r: Reportable): Promise<Chart[]> {
  if (isUtilityScores(r)) return scoresCharts(r);
  const names = r.silos.names;
  const scoreRows: SiloScoreRow[] = [];
  for (const run of r.runs.slice(0, 1)) {
    for (const [method, values] of Object.entries(run.compared)) {
      values.forEach((score, i) => {
        scoreRows.push({ method, silo: names[i] ?? `silo-${i}`, score });
      });
    }
  }
  const accuracyRows: AccuracyRow[] = r.runs.flatMap((run) =>
    run.rounds.map((rd) => ({ seed: String(run.seed), round: rd.round, accuracy: rd.testAccuracy })),
  );
  const participationRows: ParticipationRow[] = names.map((silo, i) => ({
    silo,
    rate:
      r.runs.reduce((s, run) => s + (run.participation[i] ?? 0) / Math.max(1, run.rounds.length), 0) /
      Math.max(1, r.runs.length),
  }));
  return render([
    [
      'scores',
      `Per-silo scores by scheme (seed ${r.runs[0]?.seed ?? '-'}, ${r.comparison.at === 'cumulative' ? 'cumulative' : `round ${r.comparison.at}`})`,
      siloScoresSpec(scoreRows),
    ],
    ['accuracy', 'Test accuracy of the global model by round', accuracySpec(accuracyRows)],
    [
      'participation',
      'Selection rate per silo (fraction of rounds selected, mean over seeds)',
      participationSpec(participationRows),
    ],
  ]);
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
 * Rounds whose Fair-Private normalizer Σ_i α(i) was ≤ 0 (papers/003 Eq. 2): there FP(i) = α(i)/Σα·v(M)
 * reverses the order of the α's. Happens when singleton models are worse than M0 on average.
 * One entry per seed of an experiment (`seed 1: rounds 2, 3`); one entry for a scores.json (`rounds 2, 3`).
 */
export function fpSignWarnings(r: Reportable): string[] {
  if (isUtilityScores(r)) {
    const bad = r.rounds.filter((rd) => rd.fpNormalizer !== null && rd.fpNormalizer <= 0);
    return bad.length > 0 ? [`rounds ${bad.map((rd) => rd.round).join(', ')}`] : [];
  }
  const out: string[] = [];
  for (const run of r.runs) {
    const bad = run.rounds.filter((rd) => {
      const u = rd.utilities;
      let sum = 0;
      u.withOnly.forEach((w, i) => {
        const wo = u.without[i];
        if (w !== null && wo !== null && wo !== undefined) sum += (u.full - wo + (w - u.empty)) / 2;
      });
      return sum <= 0;
    });
    if (bad.length > 0) out.push(`seed ${run.seed}: rounds ${bad.map((rd) => rd.round).join(', ')}`);
  }
  return out;
}

/** The FP-inversion warning as a summary line, when there is one. */
function fpWarningLines(r: Reportable): string[] {
  const fpWarnings = fpSignWarnings(r);
  return fpWarnings.length > 0
    ? [
        `- warning: the Fair-Private normalizer Σα was ≤ 0 (${fpWarnings.join('; ')}); there FP reverses the ranking of α (singleton models worse than M0 on average, typical of FedAvg coalitions on non-IID data; the additive convention avoids it)`,
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

function summaryLines(r: Reportable): string[] {
  if (isUtilityScores(r)) return scoresSummaryLines(r);
  const acc = r.runs.map((run) => run.finalAccuracy);
  const mean = acc.reduce((s, x) => s + x, 0) / Math.max(1, acc.length);
  return [
    `- silos: ${r.silos.count}; rounds: ${r.runs[0]?.rounds.length ?? 0}; seeds: ${r.seeds.join(', ')}`,
    `- backend: ${r.backend}${r.kernels ? ` (${r.kernels})` : ''}; data: ${r.dataSource}`,
    `- final test accuracy (mean over seeds): ${fmt(mean, 4)}`,
    `- reference for the comparison: \`${r.comparison.reference}\` (${r.comparison.at === 'cumulative' ? 'cumulative over rounds' : `round ${r.comparison.at}`})`,
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

/** The heading of the agreement table, or null when there is no reference. */
function agreementHeading(r: Reportable): string | null {
  if (isUtilityScores(r))
    return r.comparison ? `Agreement with ${r.comparison.reference} (cumulative scores)` : null;
  return `Agreement with ${r.comparison.reference} (mean ± std over seeds)`;
}

/** report.md: summary, comparison table and links to the chart files (written by the caller as `<id>.svg`). */
export function renderMarkdown(r: Reportable, charts: Chart[], chartDir = 'charts'): string {
  const agreement = agreementHeading(r);
  const outcomes = isUtilityScores(r) ? undefined : r.outcomes;
  const detection = isUtilityScores(r) ? undefined : r.comparison.detection;
  return [
    `# fedscore report: ${titleOf(r)}`,
    '',
    ...summaryLines(r),
    '',
    ...(agreement ? [`## ${agreement}`, '', mdTable(comparisonRows(r)), ''] : []),
    ...(outcomes
      ? [
          '## Outcomes by silo role (mean ± std over seeds)',
          '',
          `Final test accuracy: ${pm(outcomes.finalAccuracy)}. Participation rate: fraction of rounds a silo of the role was selected in; aggregation share: its weight over the round's mean weight when aggregated.`,
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
export function renderHtml(r: Reportable, charts: Chart[]): string {
  const title = escapeHtml(titleOf(r));
  const agreement = agreementHeading(r);
  const outcomeSummary = isUtilityScores(r) ? undefined : r.outcomes;
  const htmlTable = (rows: string[][]) => {
    const [head, ...body] = rows;
    return `<table><thead><tr>${head!.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${body
      .map((row) => `<tr>${row.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`)
      .join('')}</tbody></table>`;
  };
  const table = agreement ? `<h2>${escapeHtml(agreement)}</h2>\n${htmlTable(comparisonRows(r))}` : '';
  const outcomes = outcomeSummary
    ? `<h2>Outcomes by silo role (mean ± std over seeds)</h2>
<p>Final test accuracy: ${escapeHtml(pm(outcomeSummary.finalAccuracy))}. Participation rate: fraction of rounds a silo of the role was selected in; aggregation share: its weight over the round's mean weight when aggregated.</p>
${htmlTable(outcomeRows(r))}`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fedscore report: ${title}</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}thead{background:#f3f3f3}figure{margin:1.5rem 0}figcaption{font-weight:600;margin-bottom:.5rem}
svg{max-width:100%;height:auto}
</style></head><body>
<h1>fedscore report: ${title}</h1>
<ul>${summaryLines(r)
    .map((l) => `<li>${escapeHtml(l.replace(/^- /, '').replaceAll('`', ''))}</li>`)
    .join('')}</ul>
${table}
${outcomes}
${charts.map((c) => `<figure id="${c.id}"><figcaption>${escapeHtml(c.title)}</figcaption>${c.svg}</figure>`).join('\n')}
</body></html>
`;
}
