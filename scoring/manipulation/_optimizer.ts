/**
 * Internal: maximizes linear objectives of score changes over the attackers' report boxes (the
 * engine behind `singleSiloBounds` and `collusionBounds`). Never re-exported. Scores come from
 * scoring/private.ts at every point evaluated.
 */
import { type CheckedUtilities, type RegisteredScheme as Scheme, scoreCheckedScheme } from '../private.js';
import type { Extremum, ExtremumMethod } from './bounds.js';
import type { ReportBox } from './reports.js';

/** An objective: maximize Σ_t coefficients[t] · (score_t(reports) − score_t(honest)). */
export interface Objective {
  coefficients: Float64Array;
}

/** The objective that is one silo's score change times `sign` (+1: its gain, −1: its loss). */
export function scoreChange(n: number, silo: number, sign: 1 | -1): Objective {
  const coefficients = new Float64Array(n);
  coefficients[silo] = sign;
  return { coefficients };
}

/** Scores at mutable reports, with the honest scores. */
class Evaluator {
  /** The current reports (the attackers' entries change; the others stay honest). */
  readonly reports: CheckedUtilities;
  readonly honest: Float64Array;
  evaluations = 0;
  /** Whether some evaluated reports put D within the margin of zero (a fallback was used). */
  fellBack = false;
  minNormalizer = Number.POSITIVE_INFINITY;
  maxNormalizer = Number.NEGATIVE_INFINITY;

  constructor(
    readonly scheme: Scheme,
    honest: CheckedUtilities,
  ) {
    this.reports = { ...honest, withOnly: honest.withOnly.slice(), without: honest.without.slice() };
    this.honest = scoreCheckedScheme(scheme, honest).scores;
  }

  /** Scores at the current reports. */
  scores(): Float64Array {
    this.evaluations++;
    const { fallback, normalizer, scores } = scoreCheckedScheme(this.scheme, this.reports);
    if (fallback !== 'none') this.fellBack = true;
    if (normalizer < this.minNormalizer) this.minNormalizer = normalizer;
    if (normalizer > this.maxNormalizer) this.maxNormalizer = normalizer;
    return scores;
  }

  /**
   * Whether the evaluated reports met the normalizer's margin: a fallback was used, or D took both
   * signs (D is affine in each report, so between them it passes the margin). There the score
   * jumps, and the candidate points need not hold the supremum.
   */
  metMargin(): boolean {
    return this.fellBack || (this.minNormalizer < 0 && this.maxNormalizer > 0);
  }

  value(o: Objective, scores: Float64Array): number {
    let v = 0;
    for (let t = 0; t < scores.length; t++)
      if (o.coefficients[t] !== 0) v += o.coefficients[t]! * (scores[t]! - this.honest[t]!);
    return v;
  }
}

const uniqueSorted = (xs: number[]) => [...new Set(xs)].sort((x, y) => x - y);

/**
 * Candidate values of each coordinate (withOnly, without per attacker): the box ends, plus
 * (EE-median) the other silos' values of the same report inside the box, where the median's order
 * changes. For one attacker the product of the candidates contains every vertex of the pieces on
 * which the score is a ratio of affine functions; for k > 1 with a common box too (a vertex of
 * the arrangement {x_m = h_j}, {x_m = x_m'} assigns every coordinate a candidate value).
 */
function candidateValues(
  scheme: Scheme,
  u: CheckedUtilities,
  attackers: number[],
  boxes: ReportBox[],
): number[][] {
  const out: number[][] = [];
  const others = (v: Float64Array) => Array.from(v).filter((_, j) => !attackers.includes(j));
  for (let m = 0; m < attackers.length; m++) {
    const box = boxes[m]!;
    const withOnly = [box.withOnlyLo, box.withOnlyHi];
    const without = [box.withoutLo, box.withoutHi];
    if (scheme === 'eeMedian') {
      for (const x of others(u.withOnly)) if (x > box.withOnlyLo && x < box.withOnlyHi) withOnly.push(x);
      for (const x of others(u.without)) if (x > box.withoutLo && x < box.withoutHi) without.push(x);
      for (const other of boxes) {
        for (const x of [other.withOnlyLo, other.withOnlyHi])
          if (x > box.withOnlyLo && x < box.withOnlyHi) withOnly.push(x);
        for (const x of [other.withoutLo, other.withoutHi])
          if (x > box.withoutLo && x < box.withoutHi) without.push(x);
      }
    }
    out.push(uniqueSorted(withOnly), uniqueSorted(without));
  }
  return out;
}

/**
 * A constraint on the attackers' joint reports that is not a box (the detector's "no attacker
 * flagged" for a coalition: one attacker's report moves the others' robust z). `feasible` is
 * asked about the full reports; `starts` are extra starting points of the search (infeasible ones
 * are dropped).
 */
export interface Constraint {
  feasible: (reports: CheckedUtilities) => boolean;
  starts?: readonly number[][];
}

/** Grid steps and bisection steps of the walk to a feasibility edge along one coordinate. */
const EDGE_STEPS = 100;
const EDGE_BISECTIONS = 50;

/**
 * Maximizes every objective over the product of the attackers' boxes (the other silos report
 * honestly). A point x holds (withOnly, without) of attacker m at x[2m], x[2m+1]. Exact
 * enumeration of the candidate grid when it has at most `exactBudget` points, otherwise a
 * coordinate search (see `Extremum.exact`). All results share the evaluations and the D range.
 * With a `constraint`, only feasible points count and the search is the coordinate search (not
 * exact: a lower bound of the supremum): along each coordinate the candidates are the
 * breakpoints inside the connected feasible piece around the current point and that piece's
 * ends (found by a grid walk and bisection, as `undetectedBox` finds a single silo's).
 */
export function maximize(
  scheme: Scheme,
  u: CheckedUtilities,
  attackers: number[],
  boxes: ReportBox[],
  objectives: Objective[],
  exactBudget: number,
  constraint?: Constraint,
): Extremum[] {
  const evaluator = new Evaluator(scheme, u);
  const candidates = candidateValues(scheme, u, attackers, boxes);
  const dims = candidates.length;
  const points = candidates.reduce((p, c) => p * c.length, 1);
  const best = objectives.map(() => ({ value: 0, x: null as number[] | null }));
  const set = (x: number[]) => {
    for (let m = 0; m < attackers.length; m++) {
      evaluator.reports.withOnly[attackers[m]!] = x[2 * m]!;
      evaluator.reports.without[attackers[m]!] = x[2 * m + 1]!;
    }
  };
  const honestX = attackers.flatMap((i) => [u.withOnly[i]!, u.without[i]!]);
  const offer = (x: number[]) => {
    set(x);
    const scores = evaluator.scores();
    objectives.forEach((o, k) => {
      const v = evaluator.value(o, scores);
      if (v > best[k]!.value) best[k] = { value: v, x: x.slice() };
    });
  };
  offer(honestX); // honest reports: value 0
  const feasibleAt = (x: number[]) => {
    if (!constraint) return true;
    set(x);
    return constraint.feasible(evaluator.reports);
  };
  const exact = points <= exactBudget && constraint === undefined;
  if (exact) {
    const index = new Array<number>(dims).fill(0);
    const x = candidates.map((c) => c[0]!);
    for (let p = 0; p < points; p++) {
      offer(x);
      for (let d = 0; d < dims; d++) {
        index[d] = index[d]! + 1;
        if (index[d]! < candidates[d]!.length) {
          x[d] = candidates[d]![index[d]!]!;
          break;
        }
        index[d] = 0;
        x[d] = candidates[d]![0]!;
      }
    }
  } else {
    // Coordinate search per objective from the honest point and the best box corner. Along one
    // coordinate the score is a ratio of piecewise-affine functions whose pieces end at the box
    // ends and the other silos' current values, so each line step is exact on its line.
    const corners: number[][] = [];
    if (dims <= 12) {
      for (let mask = 0; mask < 1 << dims; mask++) {
        const c = candidates.map((c, d) => ((mask >> d) & 1 ? c[c.length - 1]! : c[0]!));
        if (feasibleAt(c)) corners.push(c);
      }
    }
    const extraStarts = (constraint?.starts ?? []).filter((x) => feasibleAt(x.slice()));
    /** The ends of the connected feasible piece of coordinate d around x[d], within [lo, hi]. */
    const feasibleEdges = (x: number[], d: number, lo: number, hi: number): number[] => {
      if (!constraint) return [];
      const at = (v: number) => {
        const y = x.slice();
        y[d] = v;
        return feasibleAt(y);
      };
      const from = x[d]!;
      const edge = (to: number) => {
        let good = from;
        for (let step = 1; step <= EDGE_STEPS; step++) {
          const v = from + ((to - from) * step) / EDGE_STEPS;
          if (!at(v)) {
            let bad = v;
            for (let it = 0; it < EDGE_BISECTIONS; it++) {
              const mid = (good + bad) / 2;
              if (at(mid)) good = mid;
              else bad = mid;
            }
            return good;
          }
          good = v;
        }
        return to;
      };
      return [edge(lo), edge(hi)];
    };
    objectives.forEach((o, k) => {
      const starts = [honestX, ...extraStarts];
      let bestCorner: number[] | null = null;
      let bestCornerValue = Number.NEGATIVE_INFINITY;
      for (const c of corners) {
        set(c);
        const v = evaluator.value(o, evaluator.scores());
        if (v > bestCornerValue) {
          bestCornerValue = v;
          bestCorner = c;
        }
      }
      if (bestCorner) starts.push(bestCorner);
      for (const start of starts) {
        const x = start.slice();
        set(x);
        let current = evaluator.value(o, evaluator.scores());
        for (let sweep = 0; sweep < 100; sweep++) {
          let improved = false;
          for (let d = 0; d < dims; d++) {
            const m = d >> 1;
            const box = boxes[m]!;
            const [lo, hi] = d % 2 === 0 ? [box.withOnlyLo, box.withOnlyHi] : [box.withoutLo, box.withoutHi];
            const edges = feasibleEdges(x, d, lo, hi);
            const [a, b] = constraint ? [edges[0]!, edges[1]!] : [lo, hi];
            set(x);
            const line = [a, b];
            const values = d % 2 === 0 ? evaluator.reports.withOnly : evaluator.reports.without;
            for (let j = 0; j < u.n; j++)
              if (j !== attackers[m] && values[j]! > a && values[j]! < b) line.push(values[j]!);
            for (const v of line) {
              const keep = x[d]!;
              x[d] = v;
              if (constraint && !feasibleAt(x)) {
                x[d] = keep;
                continue;
              }
              set(x);
              const value = evaluator.value(o, evaluator.scores());
              if (value > current + 1e-15 * Math.max(1, Math.abs(current))) {
                current = value;
                improved = true;
              } else x[d] = keep;
            }
            set(x);
          }
          if (!improved) break;
        }
        if (current > best[k]!.value) best[k] = { value: current, x: x.slice() };
      }
    });
  }
  // Issue 32 (S1): a ratio scheme falls back when |D| ≤ κ·Σ|w| (scoring/private.ts,
  // NORMALIZER_MARGIN), so no report drives a score past |v(M)|/κ: every extremum is finite. Where
  // D can change sign the score jumps at the margin, which the candidates need not contain: the
  // values found there are lower bounds, and |v(M)|/κ the bound.
  const unbounded = false;
  const reportsOf = (x: number[]) =>
    attackers.map((_, m) => ({ withOnly: x[2 * m]!, without: x[2 * m + 1]! }));
  const method: ExtremumMethod = !exact
    ? 'coordinate-search'
    : scheme === 'eeMedian'
      ? 'breakpoints'
      : 'vertices';
  return best.map((b) => ({
    value: unbounded ? Number.POSITIVE_INFINITY : b.value,
    unbounded,
    // A fallback inside the box makes the score jump at the margin: the vertices no longer hold the supremum.
    exact: exact && !evaluator.metMargin(),
    method,
    reports: unbounded ? null : reportsOf(b.x ?? honestX),
    evaluations: evaluator.evaluations,
  }));
}
