/**
 * The agreement tables of a report (one per reference: each score against it, mean ± std only with
 * several seeds) and the notes a ratio score needs beside its row when its normalizer (papers/003
 * Eq. 2 and 4) was ≤ 0 and reversed its ranking: which convention, why, what to use instead.
 * Used by report.ts and the experiment command's printed tables.
 */
import { utilitiesUnder } from '../../scoring/empty-coalition.js';
import { schemeNormalizer } from '../../scoring/private.js';
import { ADDITIVE_CONVENTION, DEFAULT_CONVENTION } from '../consortium/convention.js';
import { mrsv } from '../estimators/mrsv.js';
import { ROUND_SV, TRUE_SV } from '../records/compare.js';
import type { MethodComparison } from '../records/results.js';
import { reportedUtilities } from '../records/silo-reports.js';
import {
  atOf,
  emptyCoalitionOf,
  hiddenOf,
  isUtilityScores,
  meanCell,
  type Reportable,
  seedWords,
  signed,
} from './report-common.js';

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
      const { silos, u: reported } = reportedUtilities(rd.utilities);
      if (silos.length < 2) continue;
      const m = rd.utilities;
      const u = utilitiesUnder(reported, empty);
      const looSum = Array.from(u.without).reduce((s, w) => s + (u.full - w), 0);
      const ioiSum = Array.from(u.withOnly).reduce((s, w) => s + (w - u.empty), 0);
      const fp = schemeNormalizer('fp', u);
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
export const RATIO_NOTES = [
  { method: 'fp', key: 'fp', name: 'Σα' },
  { method: 'ee', key: 'ee', name: "EE's normalizer" },
  { method: 'eeMedian', key: 'eeMedian', name: "EE-median's normalizer" },
] as const;

/** The report's convention in words: coalitions and v(∅). */
export function conventionWords(r: Reportable): string {
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
 * The row label of a ratio score whose normalizer was ≤ 0 in a compared round: the mark and the
 * reason on the row itself, so its number is never read without it — `fp † reversed: Σα ≤ 0` when
 * one round is compared (its ranking is reversed), `fp † Σα ≤ 0 in some rounds` for cumulative
 * scores (the reversed rounds are summed in).
 */
export function markedLabel(method: string, at: 'cumulative' | number = 'cumulative'): string {
  const note = RATIO_NOTES.find((n) => n.method === method);
  const name = note?.method === 'fp' ? note.name : 'normalizer';
  return at === 'cumulative' ? `${method} † ${name} ≤ 0 in some rounds` : `${method} † reversed: ${name} ≤ 0`;
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

/**
 * The reference's axis title in the agreement charts: its name, and at a round r what its values
 * are — MR-SV sums rounds 1–r (cumulative, not "round r"; issue 37), roundSv is round r's own.
 */
export function referenceAxisTitle(reference: string, at: 'cumulative' | number): string {
  if (at === 'cumulative') return reference;
  if (reference === mrsv.name) return `${reference} (Σ rounds 1–${at})`;
  if (reference === ROUND_SV) return `${reference} (round ${at})`;
  return reference;
}

/** What the compared scores are, in words. */
export const comparedWords = (at: 'cumulative' | number) =>
  at === 'cumulative' ? 'scores summed over the rounds' : `single-round scores of round ${at}`;

/** One agreement table: its heading, rows of cells (header first) and the notes under it. */
export interface AgreementTable {
  reference: string;
  heading: string;
  rows: string[][];
  notes: string[];
}

/**
 * Every reference's table of agreements (a version-1 results.json or a scores.json has at most
 * one), without the private schemes the report does not show (`hiddenOf`: FP unless asked for).
 */
export function tablesByReference(r: Reportable): Record<string, Record<string, MethodComparison>> {
  const all = isUtilityScores(r)
    ? r.comparison
      ? { [r.comparison.reference]: r.comparison.methods }
      : {}
    : (r.comparison.byReference ?? { [r.comparison.reference]: r.comparison.methods });
  const hidden = hiddenOf(r);
  return Object.fromEntries(
    Object.entries(all).map(([ref, methods]) => [
      ref,
      Object.fromEntries(Object.entries(methods).filter(([m]) => !hidden.has(m))),
    ]),
  );
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
        marked.includes(name) ? markedLabel(name, at) : name,
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
