/**
 * Simulated misreports on a recorded round, one attacker at a time (papers/003 §3.2 and §5.3:
 * "a client could artificially deflate its reported value to diminish other clients' scores"):
 * what each kind of misreport does to every scheme's scores and whether the detector sees it.
 */
import { checkFiniteNumber } from '../_checks.js';
import { spearman } from '../metrics.js';
import {
  checkScheme,
  checkUtilities,
  includeOneIn,
  leaveOneOut,
  type PrivateUtilities,
  SCHEMES,
  type Scheme,
  scoreCheckedScheme,
} from '../private.js';
import { createRng } from '../seeded-rng.js';
import { checkOptions, checkRange, checkThreshold, replaceReports } from './_checks.js';
import { DEFAULT_THRESHOLD, detectReports } from './detection.js';
import type { SiloReports, UtilityRange } from './reports.js';

/** The simulated misreports. */
export type AttackKind = 'inflateSelf' | 'deflateOthers' | 'random';

/** All attack kinds, in report order. */
export const ATTACK_KINDS: readonly AttackKind[] = ['inflateSelf', 'deflateOthers', 'random'];

/** Options of `simulateAttacks`. */
export interface AttackOptions {
  /** Range of a reported utility; default [0, 1]. */
  range?: UtilityRange;
  /** inflate-self multiplies the magnitude of each own marginal by this factor; default 2. */
  inflateFactor?: number;
  /** Random reports drawn per attacker; default 20. */
  randomTrials?: number;
  /** Seed of the random reports; default 0. */
  seed?: number;
  /** Detector threshold; default 3.5. */
  threshold?: number;
  /** Schemes to score; default all. */
  schemes?: readonly Scheme[];
}

/** The effect of one simulated misreport on one scheme. */
export interface AttackEffect {
  /** Spearman correlation of the attacked scores with the honest ones (NaN if either is constant). */
  spearman: number;
  /** Change of each silo's budget share score/v(M) (NaN when v(M) = 0). */
  shareChange: Float64Array;
}

/** One simulated misreport: one attacker, the others honest. */
export interface AttackOutcome {
  kind: AttackKind;
  /** The misreporting silo. */
  attacker: number;
  /** 0 for the deterministic kinds; the draw index for `random`. */
  trial: number;
  /** What the attacker reported. */
  reports: SiloReports;
  /** Whether the detector flags the attacker. */
  detected: boolean;
  /** How many honest silos the detector flags alongside. */
  honestSilosFlagged: number;
  /** Per scheme scored. */
  effects: Partial<Record<Scheme, AttackEffect>>;
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/**
 * Simulates misreports on a recorded round, one attacker at a time (the others honest):
 * - inflateSelf: each own marginal m ∈ {IOI_i, LOO_i} is reported as m + (f − 1)|m| (f =
 *   `inflateFactor`), i.e. withOnly' = v(M0) + IOI', without' = v(M) − LOO', clipped to [lo, hi];
 * - deflateOthers: withOnly' = v(M), without' = v(M0) — "the others' updates added nothing":
 *   t_i = 0, the least silo i can give everybody else's EE weight without going negative (it is
 *   also α(i) = Δ: under every scheme the only lever is the same pair of numbers);
 * - random: both reports uniform in [lo, hi] (seeded), `randomTrials` draws.
 * For each scheme: Spearman of attacked vs honest scores and the change of every budget share
 * score/v(M) (FP, EE, EE-median are efficient, papers/003 Property 1; LOO and IOI shares do not sum to 1).
 * @param utilities the round's honest utilities.
 * @param options range, inflate factor, random trials, seed, detector threshold and schemes.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function simulateAttacks(utilities: PrivateUtilities, options: AttackOptions = {}): AttackOutcome[] {
  const u = checkUtilities(utilities, 'utilities');
  checkOptions(options);
  const { lo, hi } = checkRange(options.range ?? { lo: 0, hi: 1 });
  const inflateFactor = options.inflateFactor ?? 2;
  if (!Number.isFinite(inflateFactor) || inflateFactor < 1)
    throw new RangeError(`options.inflateFactor: expected a finite number ≥ 1, got ${inflateFactor}`);
  const trials = options.randomTrials ?? 20;
  if (!Number.isInteger(trials) || trials < 0)
    throw new RangeError(`options.randomTrials: expected a non-negative integer, got ${trials}`);
  const threshold = checkThreshold(options.threshold ?? DEFAULT_THRESHOLD);
  const schemes = (options.schemes ?? SCHEMES).map((s) => {
    checkScheme(s);
    return s;
  });
  const rng = createRng(checkFiniteNumber('options.seed', options.seed ?? 0));
  const honest = new Map(schemes.map((scheme) => [scheme, scoreCheckedScheme(scheme, u).scores]));
  const out: AttackOutcome[] = [];
  const run = (kind: AttackKind, attacker: number, trial: number, reports: SiloReports) => {
    const attacked = replaceReports(u, attacker, reports.withOnly, reports.without);
    const detection = detectReports(attacked, threshold);
    const effects: Partial<Record<Scheme, AttackEffect>> = {};
    for (const scheme of schemes) {
      const before = honest.get(scheme)!;
      const after = scoreCheckedScheme(scheme, attacked).scores;
      const shareChange = after.map((x, j) => (u.full === 0 ? Number.NaN : (x - before[j]!) / u.full));
      effects[scheme] = { spearman: spearman(before, after), shareChange };
    }
    out.push({
      kind,
      attacker,
      trial,
      reports,
      detected: detection.flagged[attacker]!,
      honestSilosFlagged: detection.flagged.filter((x, j) => x && j !== attacker).length,
      effects,
    });
  };
  const ioi = includeOneIn(u);
  const loo = leaveOneOut(u);
  for (let i = 0; i < u.n; i++) {
    run('inflateSelf', i, 0, {
      withOnly: clamp(u.empty + ioi[i]! + (inflateFactor - 1) * Math.abs(ioi[i]!), lo, hi),
      without: clamp(u.full - (loo[i]! + (inflateFactor - 1) * Math.abs(loo[i]!)), lo, hi),
    });
    run('deflateOthers', i, 0, { withOnly: clamp(u.full, lo, hi), without: clamp(u.empty, lo, hi) });
  }
  for (let i = 0; i < u.n; i++)
    for (let t = 0; t < trials; t++)
      run('random', i, t, { withOnly: lo + (hi - lo) * rng.next(), without: lo + (hi - lo) * rng.next() });
  return out;
}
