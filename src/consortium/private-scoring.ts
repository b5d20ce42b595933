/**
 * Private scoring of one round (docs/architecture.md, "One round, private mode", steps 5–6).
 *
 * Silo side: silo i knows M0, the published aggregate (Σ w_jΔ_j and Σ w_j) and its own (Δ_i, w_i),
 * so it can build its singleton model M0 + U_i and the aggregate without it, M − U_i, evaluate both
 * on the common test set and send a signed report. Server side: verify the reports and compute
 * LOO, IOI, FP, EE and EE-median (scoring/private.ts) without ever seeing an update.
 */
import type { SigningKeyPair } from '../../crypto/signature.js';
import { signScoreReport, verifyScoreReport } from '../../protocol/score-report.js';
import { type EmptyCoalition, utilitiesUnder } from '../../scoring/empty-coalition.js';
import {
  keptUtilities,
  type QuarantinedReport,
  quarantineReports,
} from '../../scoring/manipulation/quarantine.js';
import {
  everybodyElse,
  fairPrivate,
  includeOneIn,
  leaveOneOut,
  RATIO_SCHEMES,
  SCHEMES,
  type Scheme,
  schemeWeights,
} from '../../scoring/private.js';
import { type Convention, coalitionScale, FEDAVG_CONVENTION } from './convention.js';

/**
 * The utility a consortium declares, and so the range every reported and evaluated utility lies
 * in: accuracy in [0, 1]; negLoss, the negative mean cross-entropy, in [−maxLoss, 0]. A loss has
 * no natural upper end, so a negLoss consortium states one (`fedscore consortium` uses
 * {@link NEG_LOSS_BOUND_PER_LN_CLASS}·ln C for C classes): the server refuses reports outside the
 * range, the silo runtime clips its own values into it before it reports them, and the service
 * clips its evaluator's v(M), v(M0) alike — so a networked negLoss run equals the simulation while
 * every loss stays below maxLoss.
 */
export type UtilityDeclaration =
  | { readonly name: 'accuracy' }
  | { readonly name: 'negLoss'; readonly maxLoss: number };

/** `fedscore consortium`'s bound on the mean cross-entropy, per nat of a uniform guess (ln C). */
export const NEG_LOSS_BOUND_PER_LN_CLASS = 10;

/** The declared utility's range [lo, hi]. */
export function utilityRange(u: UtilityDeclaration): { lo: number; hi: number } {
  return u.name === 'accuracy' ? { lo: 0, hi: 1 } : { lo: -u.maxLoss, hi: 0 };
}

/** `x` clipped into the declared utility's range (NaN stays NaN). */
export function clipUtility(u: UtilityDeclaration, x: number): number {
  const { lo, hi } = utilityRange(u);
  return x < lo ? lo : x > hi ? hi : x;
}

/** The names of the private schemes, in report order (scoring/private.ts owns the list). */
export const PRIVATE_METHODS: readonly Scheme[] = SCHEMES;
export type PrivateMethod = Scheme;

/** A ratio scheme's un-rescaled variant: its weights w_i (α(i), (β(i) + γ(i))/2, the median form). */
export const rawMethodOf = (scheme: Scheme) => `${scheme}Raw`;

/** The un-rescaled variants recorded with `scoring.raw` (fpRaw, eeRaw, eeMedianRaw). */
export const RAW_METHODS: readonly string[] = RATIO_SCHEMES.map(rawMethodOf);

/** How the server turns reports into scores. */
export interface ScoringOptions {
  /** What v(∅) is (scoring/empty-coalition.ts); default 'initialModel', v(∅) = v(M0). */
  emptyCoalition?: EmptyCoalition;
  /** Also return the ratio schemes' weights before rescaling (`RAW_METHODS`). */
  raw?: boolean;
  /**
   * The quarantine of flagged reports (scoring/manipulation/quarantine.ts): the detector's
   * threshold, the utilities' resolution (1/T for an accuracy on T test examples: the marginals
   * are compared in its steps; default: the detector's, no rounding) and the silos (global ids)
   * whose reports the operator released. Default: on, at the detector's default threshold (3.5),
   * nothing released. `false` scores every report.
   */
  quarantine?: false | { threshold?: number; resolution?: number; released?: readonly number[] };
}

/** A report the detector flagged (scoring/manipulation/quarantine.ts), by global silo id. */
export type QuarantinedSilo = Omit<QuarantinedReport, 'index'> & { silo: number };

/** What {@link scoreReports} returns. */
export interface ScoredReports {
  /** Every silo whose report was verified, in report order. */
  silos: number[];
  /** Their reported v(M0 + U_i) and v(M − U_i), aligned with `silos` (quarantined ones included). */
  withOnly: number[];
  without: number[];
  /**
   * The silos whose reports were scored: `silos` less the quarantined reports not released; empty
   * when fewer than two remain (the round then has no scores, as with fewer than two reports).
   */
  scored: number[];
  /** Per scheme, the scores of the `scored` silos (aligned with `scored`). */
  scores: Record<PrivateMethod, Float64Array>;
  /** With `options.raw`: the ratio schemes' weights, keyed by `RAW_METHODS`, aligned with `scored`. */
  raw?: Record<string, Float64Array>;
  /** The reports the detector flagged (released ones with `released: true`), in report order. */
  quarantined: QuarantinedSilo[];
}

/**
 * Silo i's two coalition models (FedAvg convention by default):
 *   M0 + U_i = M0 + Δ_i,   M − U_i = M0 + (Σ w_jΔ_j − w_iΔ_i) / (Σ w_j − w_i).
 * Additive convention (papers' literal form): U_i = w_iΔ_i / Σ w_j, so M0 + w_iΔ_i/Σw and
 * M0 + (Σ w_jΔ_j − w_iΔ_i)/Σw (equal weights: M0 + Δ_i/N and M0 + (ΣΔ_j − Δ_i)/N).
 * When i is the only survivor, M − U_i = M0.
 */
export function siloCoalitionModels(
  base: Float32Array,
  weightedSum: Float64Array,
  totalWeight: number,
  own: { update: Float32Array; weight: number },
  convention: Convention,
): { singleton: Float32Array; complement: Float32Array } {
  const d = base.length;
  if (own.update.length !== d || weightedSum.length !== d)
    throw new RangeError(`update: expected ${d} parameters, got ${own.update.length}`);
  const singleton = new Float32Array(d);
  const complement = new Float32Array(d);
  if (convention === FEDAVG_CONVENTION) {
    // M0 + U_i = M0 + s({i})·wᵢΔᵢ = M0 + Δᵢ, written without the round trip through wᵢ.
    const scale = coalitionScale(convention, totalWeight - own.weight, totalWeight);
    for (let k = 0; k < d; k++) {
      singleton[k] = base[k]! + own.update[k]!;
      complement[k] = base[k]! + (weightedSum[k]! - own.weight * own.update[k]!) * scale;
    }
  } else {
    // Additive: U_j = w_jΔ_j / Σw, so M0 + U_i and M − U_i = M0 + (Σ w_jΔ_j − w_iΔ_i) / Σw.
    const scale = coalitionScale(convention, own.weight, totalWeight);
    for (let k = 0; k < d; k++) {
      singleton[k] = base[k]! + own.weight * own.update[k]! * scale;
      complement[k] = base[k]! + (weightedSum[k]! - own.weight * own.update[k]!) * scale;
    }
  }
  return { singleton, complement };
}

/** A silo's signed report of its two utilities for a round. */
export function signedReport(
  session: string,
  round: number,
  silo: number,
  singleton: number,
  complement: number,
  key: SigningKeyPair,
): Uint8Array {
  return signScoreReport({ session, round, silo, singleton, complement }, key.secretKey);
}

/**
 * Server side: verifies each report (session, round, roster key), sets aside the reports the
 * detector flags (issue 27, A4: a flagged report does not move published scores; the silo counts
 * as not having reported unless the operator released it) and computes every private score from
 * the others. The empty-coalition convention is applied here, once, to the measured utilities
 * (`empty` stays what was measured in what the caller records; the schemes see v(∅) as configured).
 * @param reports signed reports of the survivors, in survivor order.
 * @param roster public keys by global silo id.
 * @param empty the measured v(M0).
 * @throws SecAggError from verification (WRONG_ROUND, BAD_SIGNATURE, …); RangeError for an
 *   unknown `options.emptyCoalition` or a bad `options.quarantine`.
 */
export function scoreReports(
  session: string,
  round: number,
  reports: readonly Uint8Array[],
  roster: readonly Uint8Array[],
  full: number,
  empty: number,
  options: ScoringOptions = {},
): ScoredReports {
  const verified = reports.map((r) => verifyScoreReport(r, { session, round, roster }));
  const silos = verified.map((r) => r.silo);
  const measured = {
    full,
    empty,
    withOnly: verified.map((r) => r.singleton),
    without: verified.map((r) => r.complement),
  };
  const q = options.quarantine;
  const decision =
    q === false || silos.length < 2
      ? { kept: silos.map((_, k) => k), quarantined: [] }
      : quarantineReports(measured, {
          ...(q?.threshold !== undefined ? { threshold: q.threshold } : {}),
          ...(q?.resolution !== undefined ? { resolution: q.resolution } : {}),
          released: silos.flatMap((s, k) => (q?.released?.includes(s) ? [k] : [])),
        });
  const kept = decision.kept.length >= 2 ? decision.kept : [];
  const quarantined = decision.quarantined.map(({ index, ...rest }) => ({ silo: silos[index]!, ...rest }));
  const base = { silos, withOnly: measured.withOnly, without: measured.without, quarantined };
  if (kept.length === 0) {
    const none = () => new Float64Array(0);
    return {
      ...base,
      scored: [],
      scores: { loo: none(), ioi: none(), fp: none(), ee: none(), eeMedian: none() },
      ...(options.raw ? { raw: Object.fromEntries(RAW_METHODS.map((m) => [m, none()])) } : {}),
    };
  }
  const u = utilitiesUnder(keptUtilities(measured, kept), options.emptyCoalition);
  return {
    ...base,
    scored: kept.map((k) => silos[k]!),
    scores: {
      loo: leaveOneOut(u),
      ioi: includeOneIn(u),
      fp: fairPrivate(u),
      ee: everybodyElse(u),
      eeMedian: everybodyElse(u, { reduce: 'median' }),
    },
    ...(options.raw
      ? { raw: Object.fromEntries(RATIO_SCHEMES.map((s) => [rawMethodOf(s), schemeWeights(s, u)])) }
      : {}),
  };
}
