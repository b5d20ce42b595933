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
import { type EmptyCoalition, utilitiesUnder } from '../../scoring/empty-coalition.js';
import { schemeNormalizer } from '../../scoring/private.js';
import { ADDITIVE_CONVENTION, DEFAULT_CONVENTION } from '../ml/convention.js';
import {
  type AccuracyRow,
  accuracySpec,
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
import { ROUND_SV, TRUE_SV } from './compare.js';
import { banzhaf } from './estimators/banzhaf.js';
import { cos } from './estimators/cos.js';
import { gtg } from './estimators/gtg.js';
import { mc } from './estimators/mc.js';
import { mrsv } from './estimators/mrsv.js';
import { owen } from './estimators/owen.js';
import { tmr } from './estimators/tmr.js';
import { RAW_METHODS } from './private-scoring.js';
import type { ExperimentResults, MeanStd, MethodComparison } from './results.js';
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
/** A signed number with its sign always shown (`+0.004`, `−0.012`). */
const signed = (x: number, d = 3) => (x < 0 ? `−${fmt(-x, d)}` : `+${fmt(x, d)}`);

/** Seeds behind the report's numbers (1 for a scores.json). */
const seedCount = (r: Reportable) => (isUtilityScores(r) ? 1 : r.seeds.length);

/** `mean ± std` over seeds when there are several, the value alone for one seed. */
const meanCell = (r: Reportable) => (m: MeanStd) => (seedCount(r) > 1 ? pm(m) : fmt(m.mean));

/** How the numbers of a table or chart were summarized over seeds, in words. */
const seedWords = (r: Reportable) =>
  isUtilityScores(r)
    ? 'one set of scores'
    : r.seeds.length > 1
      ? `mean ± std over ${r.seeds.length} seeds`
      : `seed ${r.seeds[0] ?? '-'}`;

/** v(∅) as the report's scores used it. */
const emptyCoalitionOf = (r: Reportable): EmptyCoalition =>
  isUtilityScores(r) ? 'initialModel' : (r.scoring?.emptyCoalition ?? 'initialModel');

/** The compared round, or 'cumulative'. */
const atOf = (r: Reportable): 'cumulative' | number => (isUtilityScores(r) ? 'cumulative' : r.comparison.at);

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

/**
 * A round whose FP, EE or EE-median normalizer (papers/003 Eq. 2 and 4) was ≤ 0, with v(∅) as the
 * run scored. There the ratio score w_i/D·v(M) ranks the silos in the reverse order of w_i.
 */
export interface NormalizerProblem {
  /** The seed (null for a scores.json). */
  seed: number | null;
  round: number;
  /** Σα = (Σ LOO + Σ IOI)/2, FP's normalizer. */
  fp: number;
  /** EE's and EE-median's normalizers Σ_j w_j (NaN when the record does not allow computing them). */
  ee: number;
  eeMedian: number;
  /** Σ_i LOO(i) and Σ_i IOI(i) over the reporting silos (NaN when unknown). */
  looSum: number;
  ioiSum: number;
  /** Δ = v(M) − v(M0), the round's gain (NaN when unknown). */
  delta: number;
  /** Whether the round's scores enter the compared scores (round `comparison.at`, or every round when cumulative). */
  compared: boolean;
}

/**
 * The rounds whose FP, EE or EE-median normalizer was ≤ 0, per seed in round order, computed
 * from each round's reported utilities with v(∅) as `scoring.emptyCoalition` says (a scores.json
 * records FP's only).
 */
export function normalizerProblems(r: Reportable): NormalizerProblem[] {
  if (isUtilityScores(r))
    return r.rounds
      .filter((rd) => rd.fpNormalizer !== null && rd.fpNormalizer <= 0)
      .map((rd) => ({
        seed: null,
        round: rd.round,
        fp: rd.fpNormalizer!,
        ee: Number.NaN,
        eeMedian: Number.NaN,
        looSum: Number.NaN,
        ioiSum: Number.NaN,
        delta: Number.NaN,
        compared: true,
      }));
  const empty = emptyCoalitionOf(r);
  const at = atOf(r);
  const out: NormalizerProblem[] = [];
  for (const run of r.runs)
    for (const rd of run.rounds) {
      const m = rd.utilities;
      const silos = m.withOnly.flatMap((w, i) =>
        w !== null && m.without[i] !== null && m.without[i] !== undefined ? [i] : [],
      );
      if (silos.length < 2) continue;
      const u = utilitiesUnder(
        {
          full: m.full,
          empty: m.empty,
          withOnly: silos.map((i) => m.withOnly[i]!),
          without: silos.map((i) => m.without[i]!),
        },
        empty,
      );
      const looSum = u.without.reduce((s, w) => s + (u.full - w), 0);
      const ioiSum = u.withOnly.reduce((s, w) => s + (w - u.empty), 0);
      const fp = (looSum + ioiSum) / 2;
      const ee = schemeNormalizer('ee', u);
      const eeMedian = schemeNormalizer('eeMedian', u);
      if (fp > 0 && ee > 0 && eeMedian > 0) continue;
      out.push({
        seed: run.seed,
        round: rd.round,
        fp,
        ee,
        eeMedian,
        looSum,
        ioiSum,
        delta: m.full - m.empty,
        compared: at === 'cumulative' || rd.round === at,
      });
    }
  return out;
}

/** The ratio schemes whose normalizer can reverse their ranking, with the normalizer's name. */
const RATIO_NOTES = [
  { method: 'fp', key: 'fp', name: 'Σα' },
  { method: 'ee', key: 'ee', name: "EE's normalizer" },
  { method: 'eeMedian', key: 'eeMedian', name: "EE-median's normalizer" },
] as const;

/** The report's convention in words: coalitions and v(∅). */
function conventionWords(r: Reportable): string {
  const empty = emptyCoalitionOf(r) === 'zero' ? 'v(∅) = 0' : 'v(∅) = v(M0)';
  if (isUtilityScores(r)) return `the utilities' own coalition models, ${empty}`;
  const c = r.scoring?.coalitions ?? DEFAULT_CONVENTION;
  return `${c === ADDITIVE_CONVENTION ? 'additive coalitions (M_S = M0 + Σ_S w_iΔ_i/Σ_all w)' : 'FedAvg coalitions (M_S = M0 + Σ_S w_iΔ_i/Σ_S w_i)'}, ${empty}`;
}

/** Why Σα came out ≤ 0 under the report's convention. */
function whyNegative(r: Reportable): string {
  if (emptyCoalitionOf(r) === 'zero')
    return 'with v(∅) = 0, IOI(i) = v(M0 + U_i) is a whole accuracy, so Σα ≤ 0 needs the leave-one-out losses to outweigh the singleton models’ accuracies';
  if (!isUtilityScores(r) && r.scoring?.coalitions === ADDITIVE_CONVENTION)
    return 'with additive coalitions M0 + U_i moves M0 by a 1/N share of silo i’s update only, so LOO and IOI are small and their sum follows the round’s gain Δ, which was close to 0 or negative';
  return 'with FedAvg coalitions each singleton model M0 + U_i is M0 moved by silo i’s whole update, on non-IID data mostly worse than M0 (Σ IOI < 0), and v(∅) = v(M0) measures IOI against M0';
}

/** Where the problems were: `round 5 of seeds 1, 3 (2 of 5)` or `seed 1: rounds 2, 3`. */
function whereWords(r: Reportable, problems: readonly NormalizerProblem[]): string {
  const at = atOf(r);
  if (isUtilityScores(r)) return `rounds ${problems.map((p) => p.round).join(', ')}`;
  const seeds = [...new Set(problems.map((p) => p.seed))];
  if (at !== 'cumulative')
    return `the compared round ${at} of seed${seeds.length > 1 ? 's' : ''} ${seeds.join(', ')} (${seeds.length} of ${r.seeds.length})`;
  return `${seeds
    .map(
      (s) =>
        `seed ${s}: rounds ${problems
          .filter((p) => p.seed === s)
          .map((p) => p.round)
          .join(', ')}`,
    )
    .join('; ')} (the cumulative scores sum these rounds)`;
}

/**
 * The row label of a ratio score its normalizer reversed: the mark and the reason on the row itself,
 * so the negative number is never read without it (`fp † reversed: Σα ≤ 0`).
 */
export function markedLabel(method: string): string {
  const note = RATIO_NOTES.find((n) => n.method === method);
  return `${method} † reversed: ${note?.method === 'fp' ? note.name : 'normalizer'} ≤ 0`;
}

/**
 * The notes an agreement table needs next to a ratio score (FP, EE, EE-median): when its
 * normalizer was ≤ 0 in a compared round (its ranking reversed there: which convention, why,
 * what to use instead), or when its agreement is negative although the normalizer was positive.
 * `marked` lists the methods whose row gets the note's mark (†).
 */
export function agreementNotes(
  r: Reportable,
  methods: Readonly<Record<string, MethodComparison>>,
): { marked: string[]; notes: string[] } {
  const problems = normalizerProblems(r).filter((p) => p.compared);
  const marked: string[] = [];
  const notes: string[] = [];
  for (const { method, key, name } of RATIO_NOTES) {
    const c = methods[method];
    if (!c) continue;
    const bad = problems.filter((p) => p[key] <= 0);
    if (bad.length === 0) {
      if (c.spearman.mean < 0)
        notes.push(
          `${method}: negative agreement although ${name} was positive in every compared round — the weights themselves disagree with the reference here, not a reversal by the normalizer.`,
        );
      continue;
    }
    marked.push(method);
    const e = bad[0]!;
    const example = `${e.seed !== null ? `seed ${e.seed}, ` : ''}round ${e.round}: ${name} = ${signed(e[key])}${
      Number.isFinite(e.looSum)
        ? ` (Σ LOO = ${signed(e.looSum)}, Σ IOI = ${signed(e.ioiSum)}; Δ = v(M) − v(M0) = ${signed(e.delta)})`
        : ''
    }`;
    if (method === 'fp') {
      const eeFine = bad.every((p) => p.ee > 0);
      notes.push(
        `† fp: Σα ≤ 0 in ${whereWords(r, bad)}; e.g. ${example}. There FP(i) = α(i)/Σα·v(M) ranks the silos in the reverse order of α(i) = ½(LOO(i) + IOI(i)): a negative FP comes from the sign of Σα under ${conventionWords(r)}, not from the silos. Why Σα ≤ 0: ${whyNegative(r)}. Use instead: EE (same reports${eeFine ? '; its normalizer is positive in these rounds' : ''}), α itself (\`scoring.raw: true\` → fpRaw), or v(∅) = 0 (\`scoring.emptyCoalition: "zero"\`, the authors' code), which adds N·v(M0)/2 to Σα (docs/findings.md, "FP inverts when Σα < 0").`,
      );
    } else {
      notes.push(
        `† ${method}: ${name} (N·Δ − Σα)/(N − 1) ≤ 0 in ${whereWords(r, bad)}; e.g. ${example}. There the ${method === 'ee' ? 'EE' : 'EE-median'} scores rank the silos in the reverse order of their weights (β + γ)/2: the round ${e.delta <= 0 ? 'lowered the utility (Δ ≤ 0)' : 'gained less than the reports’ sum'} under ${conventionWords(r)}. Use instead: v(∅) = 0 (\`scoring.emptyCoalition: "zero"\`), under which the normalizer grows by N·v(M0)/(2(N − 1)), the raw weights (\`scoring.raw: true\`), or a round where the model still improves.`,
      );
    }
  }
  return { marked, notes };
}

/** A reference in words, at the compared round. */
export function referenceWords(reference: string, at: 'cumulative' | number): string {
  if (reference === mrsv.name)
    return `multi-round: each round’s exact Shapley value summed over ${at === 'cumulative' ? 'all rounds' : `rounds 1–${at}`} (MR-SV)`;
  if (reference === ROUND_SV) return `single-round: the exact Shapley value of round ${at}’s own game`;
  if (reference === TRUE_SV) return 'the true Shapley value of the retraining game';
  return reference;
}

/** What the compared scores are, in words. */
const comparedWords = (at: 'cumulative' | number) =>
  at === 'cumulative' ? 'scores summed over the rounds' : `single-round scores of round ${at}`;

/** One agreement table: its heading, rows of cells (header first) and the notes under it. */
export interface AgreementTable {
  reference: string;
  heading: string;
  rows: string[][];
  notes: string[];
}

/** Every reference's table of agreements (a version-1 results.json or a scores.json has at most one). */
function tablesByReference(r: Reportable): Record<string, Record<string, MethodComparison>> {
  if (isUtilityScores(r)) return r.comparison ? { [r.comparison.reference]: r.comparison.methods } : {};
  return r.comparison.byReference ?? { [r.comparison.reference]: r.comparison.methods };
}

/**
 * The agreement tables, one per reference (`comparison.byReference`, the primary first; a
 * scores.json has at most one): mean ± std over seeds with several seeds, the values alone with
 * one; a ratio score whose normalizer was ≤ 0 in a compared round is marked † and explained in
 * the notes. Empty without a reference.
 */
export function agreementTables(r: Reportable): AgreementTable[] {
  const byReference = tablesByReference(r);
  const at = atOf(r);
  const cell = meanCell(r);
  return Object.entries(byReference).map(([reference, methods]) => {
    const { marked, notes } = agreementNotes(r, methods);
    const rows = [['method', 'Spearman', 'Kendall', 'Pearson', 'normalized L2']];
    for (const [name, c] of Object.entries(methods))
      rows.push([
        marked.includes(name) ? markedLabel(name) : name,
        cell(c.spearman),
        cell(c.kendall),
        cell(c.pearson),
        cell(c.l2),
      ]);
    return {
      reference,
      heading: `Agreement with ${reference} (${referenceWords(reference, at)}); ${comparedWords(at)}, ${seedWords(r)}`,
      rows,
      notes,
    };
  });
}

/**
 * The primary reference's agreement table as rows of cells (header first), as `agreementTables`
 * gives it; the header alone without a reference.
 */
export function comparisonRows(r: Reportable): string[][] {
  return agreementTables(r)[0]?.rows ?? [['method', 'Spearman', 'Kendall', 'Pearson', 'normalized L2']];
}

/** Renders chart specifications in order. */
async function render(specs: [string, string, TopLevelSpec][]): Promise<Chart[]> {
  const charts: Chart[] = [];
  for (const [id, title, spec] of specs) charts.push({ id, title, svg: await renderVegaLite(spec) });
  return charts;
}

/** Methods whose values are Shapley values (or estimates) of the round's scalar game. */
const SHAPLEY_FAMILY = new Set<string>([
  ...[mrsv, tmr, gtg, mc, owen, banzhaf].map((e) => e.name),
  ROUND_SV,
  TRUE_SV,
]);
/** Private scores rescaled to sum to v(M) (papers/003 Eq. 2 and 4). */
const SHARE_FAMILY = new Set(['fp', 'ee', 'eeMedian']);
/** Marginals and the ratio schemes' raw weights: differences of utilities. */
const MARGINAL_FAMILY = new Set(['loo', 'ioi', ...RAW_METHODS]);

type Family = 'shapley' | 'share' | 'marginal' | 'cosine' | 'other';
const familyOf = (m: string): Family =>
  SHAPLEY_FAMILY.has(m)
    ? 'shapley'
    : SHARE_FAMILY.has(m)
      ? 'share'
      : MARGINAL_FAMILY.has(m)
        ? 'marginal'
        : m === cos.name
          ? 'cosine'
          : 'other';

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
        scatterSpec(rows, groups, at === 'cumulative' ? reference : `${reference} (round ${at})`),
      ] as [string, string, TopLevelSpec],
    ];
  });
}

/** The per-round score trajectories of the first seed's silos, the round's exact Shapley value first. */
function trajectoryChart(r: Reportable): [string, string, TopLevelSpec][] {
  const record = seedRecords(r)[0];
  if (!record) return [];
  const names = r.silos.names;
  const methods = [...new Set(record.rounds.flatMap((rd) => Object.keys(rd.scores)))];
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
  const rows: TrajectoryRow[] = methods.flatMap((m) =>
    names.flatMap((silo, i) =>
      record.rounds.map((rd) => ({
        panel: label(m),
        silo,
        round: rd.round,
        score: shown(m, rd.round, rd.scores[m]?.[i]),
      })),
    ),
  );
  const groups = groupsOf(r, methods, label, ['shapley', 'share', 'marginal', 'cosine', 'other'], {
    first: mrsv.name,
  });
  if (!rows.some((x) => x.score !== null && Number.isFinite(x.score))) return [];
  return [
    [
      'trajectories',
      `Per-round scores of each silo${record.seed !== null ? ` (seed ${record.seed})` : ''}, the round’s exact Shapley value first; panels in the same units share their y axis (color: silo)`,
      trajectoriesSpec(rows, groups),
    ],
  ];
}

/** A scores.json's charts: cumulative scores per method, each silo's EE summed round by round, the agreement and trajectories. */
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
export async function buildCharts(r: Reportable): Promise<Chart[]> {
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
  const specs: [string, string, TopLevelSpec][] = [...scatterCharts(r), ...trajectoryChart(r)];
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

/** The FP-inversion warning as a summary line, when there is one. */
function fpWarningLines(r: Reportable): string[] {
  const fpWarnings = fpSignWarnings(r);
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

function summaryLines(r: Reportable): string[] {
  if (isUtilityScores(r)) return scoresSummaryLines(r);
  const acc = r.runs.map((run) => run.finalAccuracy);
  const mean = acc.reduce((s, x) => s + x, 0) / Math.max(1, acc.length);
  const references = r.comparison.references ?? [r.comparison.reference];
  return [
    `- silos: ${r.silos.count}; rounds: ${r.runs[0]?.rounds.length ?? 0}; seeds: ${r.seeds.join(', ')}`,
    `- backend: ${r.backend}${r.kernels ? ` (${r.kernels})` : ''}; data: ${r.dataSource}`,
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

/** report.md: summary, comparison table and links to the chart files (written by the caller as `<id>.svg`). */
export function renderMarkdown(r: Reportable, charts: Chart[], chartDir = 'charts'): string {
  const outcomes = isUtilityScores(r) ? undefined : r.outcomes;
  const detection = isUtilityScores(r) ? undefined : r.comparison.detection;
  return [
    `# fedscore report: ${titleOf(r)}`,
    '',
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
export function renderHtml(r: Reportable, charts: Chart[]): string {
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
svg{max-width:100%;height:auto}.note{font-size:.9rem;background:#fff7e6;border-left:3px solid #e0a030;padding:.4rem .6rem}
</style></head><body>
<h1>fedscore report: ${title}</h1>
<ul>${summaryLines(r)
    .map((l) => `<li>${escapeHtml(l.replace(/^- /, '').replaceAll('`', ''))}</li>`)
    .join('')}</ul>
${tables}
${outcomes}
${charts.map((c) => `<figure id="${c.id}"><figcaption>${escapeHtml(c.title)}</figcaption>${c.svg}</figure>`).join('\n')}
</body></html>
`;
}
