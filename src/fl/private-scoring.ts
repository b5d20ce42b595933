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
import { everybodyElse, fairPrivate, includeOneIn, leaveOneOut } from '../../scoring/private.js';

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

/** The names of the private schemes, in report order. */
export const PRIVATE_METHODS = ['loo', 'ioi', 'fp', 'ee', 'eeMedian'] as const;
export type PrivateMethod = (typeof PRIVATE_METHODS)[number];

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
  convention: 'fedavg' | 'additive',
): { singleton: Float32Array; complement: Float32Array } {
  const d = base.length;
  if (own.update.length !== d || weightedSum.length !== d)
    throw new RangeError(`update: expected ${d} parameters, got ${own.update.length}`);
  const singleton = new Float32Array(d);
  const complement = new Float32Array(d);
  if (convention === 'fedavg') {
    const rest = totalWeight - own.weight;
    const scale = rest > 1e-12 * totalWeight ? 1 / rest : 0;
    for (let k = 0; k < d; k++) {
      singleton[k] = base[k]! + own.update[k]!;
      complement[k] = base[k]! + (weightedSum[k]! - own.weight * own.update[k]!) * scale;
    }
  } else {
    // Additive: U_j = w_jΔ_j / Σw, so M0 + U_i and M − U_i = M0 + (Σ w_jΔ_j − w_iΔ_i) / Σw.
    const scale = totalWeight > 0 ? 1 / totalWeight : 0;
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
 * Server side: verifies each report (session, round, roster key) and computes every private score.
 * @param reports signed reports of the survivors, in survivor order.
 * @param roster public keys by global silo id.
 * @throws SecAggError from verification (WRONG_ROUND, BAD_SIGNATURE, …).
 */
export function scoreReports(
  session: string,
  round: number,
  reports: readonly Uint8Array[],
  roster: readonly Uint8Array[],
  full: number,
  empty: number,
): { silos: number[]; withOnly: number[]; without: number[]; scores: Record<PrivateMethod, Float64Array> } {
  const verified = reports.map((r) => verifyScoreReport(r, { session, round, roster }));
  const u = {
    full,
    empty,
    withOnly: verified.map((r) => r.singleton),
    without: verified.map((r) => r.complement),
  };
  return {
    silos: verified.map((r) => r.silo),
    withOnly: u.withOnly,
    without: u.without,
    scores: {
      loo: leaveOneOut(u),
      ioi: includeOneIn(u),
      fp: fairPrivate(u),
      ee: everybodyElse(u),
      eeMedian: everybodyElse(u, { reduce: 'median' }),
    },
  };
}
