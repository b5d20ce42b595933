/**
 * Multi-round differencing (issue 32; So et al., "Securing Secure Aggregation: Mitigating
 * Multi-Round Privacy Leakage in Federated Learning", AAAI 2023, §3): a server that knows every
 * round's selected set and weights (they are public: src/strategies/networked-plan.ts) and sees each
 * round's decoded sum y_t = Σ_{i∈S_t} ŵ_{i,t} Δ_i(t) / Σ_{i∈S_t} ŵ_{i,t} estimates one silo's
 * update by least squares over T rounds, x̂ = argmin_x Σ_t ‖y_t − Σ_i A_{t,i} x_i‖² with
 * A_{t,i} = ŵ_{i,t} / Σ_j ŵ_{j,t} (i ∈ S_t), the minimum-norm solution when A is rank-deficient
 * (ridge 1e-9·tr(AᵀA)/n). The baseline is what a sum should reveal: the mean of the published sums
 * of the rounds that selected the silo.
 *
 * Updates change slowly: Δ_i(t) = c + s_i + ε·e_{i,t} (a common direction c, a silo's own s_i of
 * the same norm, fresh noise of relative size ε), and the plans come from the real planRound with
 * synthetic published scores (silo i's quality q_i plus noise): the selection the server and
 * every silo compute. Used by bench/multi-round.ts (the figures of docs/threat-model.md) and
 * test/security/multi-round-differencing.test.ts.
 */
import { createRng, type Rng } from '../scoring/seeded-rng.js';
import {
  networkedStrategy,
  type PublishedRound,
  planRound,
  publicSetup,
} from '../src/strategies/networked-plan.js';
import type { StrategyConfig } from '../src/strategies/registry.js';

/** One measurement's setting. */
export interface DifferencingSetup {
  readonly strategy: StrategyConfig;
  readonly silos: number;
  readonly rounds: number;
  /** Coordinates of each update. */
  readonly dimension: number;
  /** ε: the round-to-round change of an update, relative to its norm. */
  readonly drift: number;
  readonly seed: number;
  /** The silo whose update the server estimates (default: the one the rounds selected most often, lowest id first). */
  readonly target?: number;
}

/** Relative error and cosine of an estimate to the silo's update c + s_i. */
export interface Closeness {
  readonly relError: number;
  readonly cosine: number;
}

/** The attacker's least-squares estimate and the round-mean baseline, each against the truth. */
export interface DifferencingResult {
  readonly target: number;
  readonly estimate: Closeness;
  readonly baseline: Closeness;
  /** Rounds that selected the target, and distinct selected sets. */
  readonly targetRounds: number;
  readonly distinctSets: number;
  /** Rank of the rounds' coefficient matrix A (n columns). */
  readonly rank: number;
}

const gaussian = (rng: Rng) => {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
};

function vector(rng: Rng, d: number): Float64Array {
  return Float64Array.from({ length: d }, () => gaussian(rng) / Math.sqrt(d));
}

/** ‖a − b‖ / ‖b‖ and cos(a, b). */
export function closeness(a: ArrayLike<number>, b: ArrayLike<number>): Closeness {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  let diff = 0;
  for (let j = 0; j < b.length; j++) {
    dot += a[j]! * b[j]!;
    aa += a[j]! * a[j]!;
    bb += b[j]! * b[j]!;
    diff += (a[j]! - b[j]!) ** 2;
  }
  return { relError: Math.sqrt(diff / bb), cosine: dot / Math.sqrt(aa * bb) };
}

/** Solves M x = r (M symmetric positive definite, n × n) by Gaussian elimination with pivoting. */
function solve(m: Float64Array[], r: Float64Array[]): Float64Array[] {
  const n = m.length;
  const a = m.map((row) => Float64Array.from(row));
  const b = r.map((row) => Float64Array.from(row));
  for (let col = 0; col < n; col++) {
    let p = col;
    for (let i = col + 1; i < n; i++) if (Math.abs(a[i]![col]!) > Math.abs(a[p]![col]!)) p = i;
    [a[col], a[p]] = [a[p]!, a[col]!];
    [b[col], b[p]] = [b[p]!, b[col]!];
    for (let i = 0; i < n; i++) {
      if (i === col) continue;
      const f = a[i]![col]! / a[col]![col]!;
      if (f === 0) continue;
      for (let j = col; j < n; j++) a[i]![j]! -= f * a[col]![j]!;
      for (let j = 0; j < b[i]!.length; j++) b[i]![j]! -= f * b[col]![j]!;
    }
  }
  return b.map((row, i) => row.map((x) => x / a[i]![i]!));
}

/** Numerical rank of A (T × n) from the pivots of AᵀA (relative tolerance 1e-9). */
function rankOf(rows: readonly Float64Array[], n: number): number {
  const g = Array.from({ length: n }, (_, i) =>
    Float64Array.from({ length: n }, (_, j) => rows.reduce((s, r) => s + r[i]! * r[j]!, 0)),
  );
  const scale = Math.max(...g.map((row, i) => row[i]!));
  let rank = 0;
  for (let col = 0; col < n; col++) {
    let p = -1;
    for (let i = rank; i < n; i++) if (p < 0 || Math.abs(g[i]![col]!) > Math.abs(g[p]![col]!)) p = i;
    if (p < 0 || Math.abs(g[p]![col]!) <= 1e-9 * scale) continue;
    [g[rank], g[p]] = [g[p]!, g[rank]!];
    for (let i = rank + 1; i < n; i++) {
      const f = g[i]![col]! / g[rank]![col]!;
      for (let j = col; j < n; j++) g[i]![j]! -= f * g[rank]![j]!;
    }
    rank++;
  }
  return rank;
}

/** T rounds of the strategy's real plans, the sums the server decodes, its estimate and the baseline. */
export async function measureDifferencing(o: DifferencingSetup): Promise<DifferencingResult> {
  const { silos: n, rounds: T, dimension: d } = o;
  const rng = createRng(o.seed);
  const common = vector(rng, d);
  const own = Array.from({ length: n }, () => vector(rng, d));
  const truth = Array.from({ length: n }, (_, i) => common.map((c, j) => c + own[i]![j]!));
  const quality = Array.from({ length: n }, () => rng.next());
  const strategy = networkedStrategy(o.strategy);
  const setup = publicSetup(n, T, o.seed);
  const published: PublishedRound[] = [];
  const rows: Float64Array[] = [];
  const sums: Float64Array[] = [];
  for (let t = 1; t <= T; t++) {
    const plan = await planRound({ strategy, setup, seed: o.seed, round: t, published, weights: true });
    const w = plan.weights!;
    const total = w.reduce((a, x) => a + x, 0);
    const row = new Float64Array(n);
    const y = new Float64Array(d);
    plan.selected.forEach((s, k) => {
      row[s] = w[k]! / total;
      const noise = vector(rng, d);
      for (let j = 0; j < d; j++) y[j]! += row[s]! * (truth[s]![j]! + o.drift * Math.SQRT2 * noise[j]!);
    });
    rows.push(row);
    sums.push(y);
    // What the service publishes: the selection, every selected silo surviving, and scores.
    const score = Array.from({ length: n }, (_, i) =>
      plan.selected.includes(i) ? quality[i]! + 0.1 * (rng.next() - 0.5) : null,
    );
    const scores = { fp: score, ee: score, eeMedian: score, loo: score, ioi: score };
    published.push({ round: t, selected: plan.selected, survivors: plan.selected, scores });
  }
  // x̂ = (AᵀA + λI)⁻¹ AᵀY: least squares, minimum-norm as λ → 0.
  const ata = Array.from({ length: n }, (_, i) =>
    Float64Array.from({ length: n }, (_, j) => rows.reduce((s, r) => s + r[i]! * r[j]!, 0)),
  );
  const lambda = (1e-9 * ata.reduce((s, r, i) => s + r[i]!, 0)) / n;
  for (let i = 0; i < n; i++) ata[i]![i]! += lambda;
  const aty = Array.from({ length: n }, (_, i) => {
    const out = new Float64Array(d);
    rows.forEach((r, t) => {
      if (r[i]! !== 0) for (let j = 0; j < d; j++) out[j]! += r[i]! * sums[t]![j]!;
    });
    return out;
  });
  const x = solve(ata, aty);
  const times = Array.from({ length: n }, (_, i) => rows.filter((r) => r[i]! > 0).length);
  const target = o.target ?? times.indexOf(Math.max(...times));
  const with_ = rows.map((r, t) => (r[target]! > 0 ? t : -1)).filter((t) => t >= 0);
  const baseline = new Float64Array(d);
  for (const t of with_) for (let j = 0; j < d; j++) baseline[j]! += sums[t]![j]! / with_.length;
  return {
    target,
    estimate: closeness(x[target]!, truth[target]!),
    baseline: with_.length > 0 ? closeness(baseline, truth[target]!) : { relError: 1, cosine: 0 },
    targetRounds: with_.length,
    distinctSets: new Set(rows.map((r) => r.join(','))).size,
    rank: rankOf(rows, n),
  };
}
