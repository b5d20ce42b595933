/**
 * Detecting misreports (papers/003 §5.3: "augmenting the averaging step in EE's definition with
 * anomaly detection techniques"): robust z-scores of the marginals every silo reports, IOI_j and
 * LOO_j (computed by scoring/private.ts), each against the other silos' reports and robust to two
 * colluders (issues 32 and 37; ./reference-z.ts) and against what the round's public improvement
 * leaves for the silo (its evidence, ./_evidence.ts), and the reports a silo can send without being
 * flagged.
 */
import { checkFiniteVector } from '../_checks.js';
import { median } from '../_median.js';
import {
  type CheckedUtilities,
  checkUtilities,
  type PrivateUtilities,
  scoreCheckedScheme,
} from '../private.js';
import { checkRange, checkSilo, checkThreshold } from './_checks.js';
import { evidenceOf, evidenceScale } from './_evidence.js';
import { IGLEWICZ_HOAGLIN, largestUnflagged, referenceZ, referenceZAll } from './reference-z.js';
import type { ReportBox, UtilityRange } from './reports.js';

/** √(π/2): MeanAD of a normal is σ·√(2/π); used when MAD = 0 (the IBM convention). */
const MEAN_AD_TO_SIGMA = 1.253314;

/** Default threshold on z (Iglewicz & Hoaglin 1993 recommend 3.5 for |z|). */
export const DEFAULT_THRESHOLD = 3.5;

/**
 * Modified z-scores of a sample against itself (Iglewicz & Hoaglin 1993; the detector before
 * issue 37 used them on the round's marginals): z_j = 0.6745 (x_j − median) / MAD. When MAD = 0,
 * z_j = (x_j − median) / (1.253314 · MeanAD); when that is 0 too (all values equal), z = 0.
 * @param x the values.
 * @throws RangeError/TypeError naming `x` on an empty or non-finite input.
 */
export function robustZ(x: ArrayLike<number>): Float64Array {
  const v = checkFiniteVector('x', x, undefined);
  if (v.length === 0) throw new RangeError('x: expected at least one value');
  const med = median(v);
  const deviation = v.map((y) => Math.abs(y - med));
  const mad = median(deviation);
  if (mad > 0) return v.map((y) => (IGLEWICZ_HOAGLIN * (y - med)) / mad);
  const meanAd = deviation.reduce((s, y) => s + y, 0) / deviation.length;
  if (meanAd > 0) return v.map((y) => (y - med) / (MEAN_AD_TO_SIGMA * meanAd));
  return new Float64Array(v.length);
}

/** Robust z-scores of the reported marginals and the silos flagged. */
export interface Detection {
  /** z of IOI_j = withOnly_j − v(M0) against the other silos' (see {@link detectReports}). */
  zWithOnly: Float64Array;
  /** z of LOO_j = v(M) − without_j against the other silos'. */
  zWithout: Float64Array;
  /** Per silo: z > threshold on either marginal. */
  flagged: boolean[];
}

/** Options of {@link detectReports}. */
export interface DetectionOptions {
  /**
   * The finest difference the utilities resolve: 1/T for an accuracy on a test set of T examples.
   * Given, the marginals are rounded to it before they are compared (so a flag does not turn on
   * float noise), and it sets the floor of the scale. Default: {@link DEFAULT_RESOLUTION}, no rounding.
   */
  resolution?: number;
}

/**
 * How many colluders the detector tolerates: a silo's z is the smallest over every reference set
 * that leaves out this many of the other reports (issue 32, S1).
 */
export const COLLUDERS_TOLERATED = 2;

/**
 * The floor of the scale, in resolution steps: the median absolute deviation of a reference set
 * counts as at least this many steps. Calibrated on honest runs of every example configuration
 * (docs/audit.md, "False flags"; `scripts/false-flags.ts`).
 */
export const SCALE_FLOOR_STEPS = 2;

/**
 * The relative floor of the scale: a reference set's scale is at least this times the median of
 * its silos' magnitudes max(|IOI_k|, |LOO_k|) (see ./reference-z.ts). Calibrated with
 * {@link SCALE_FLOOR_STEPS} on honest runs (docs/audit.md, "False flags").
 */
export const SCALE_FLOOR_TYPICAL = 0.6;

/** The resolution assumed when none is given: an accuracy on 1 000 test examples. */
export const DEFAULT_RESOLUTION = 1e-3;

/** IOI_j = v(M0 + U_j) − v(M0) per silo, from scoring/private.ts (papers/003 Eq. 3). */
const includeOneIn = (u: CheckedUtilities) => scoreCheckedScheme('ioi', u).weights;
/** LOO_j = v(M) − v(M − U_j) per silo, from scoring/private.ts (papers/003 Def. 2). */
const leaveOneOut = (u: CheckedUtilities) => scoreCheckedScheme('loo', u).weights;

/**
 * Both marginals in the detector's units (resolution steps when a resolution is given), each silo's
 * magnitude, the evidence of its IOI and LOO (./_evidence.ts) and the floor.
 */
function marginals(u: CheckedUtilities, resolution: number | undefined) {
  const units = (m: Float64Array) =>
    resolution === undefined ? m : m.map((v) => Math.round(v / resolution));
  const ioi = units(includeOneIn(u));
  const loo = units(leaveOneOut(u));
  const mag = ioi.map((a, k) => Math.max(Math.abs(a), Math.abs(loo[k]!)));
  const gain = resolution === undefined ? u.full - u.empty : Math.round((u.full - u.empty) / resolution);
  const floor = {
    floor: resolution === undefined ? SCALE_FLOOR_STEPS * DEFAULT_RESOLUTION : SCALE_FLOOR_STEPS,
    kappa: SCALE_FLOOR_TYPICAL,
  };
  return {
    ioi,
    loo,
    mag,
    evidence: evidenceOf(loo, gain, COLLUDERS_TOLERATED),
    floor,
    unit: resolution ?? 1,
  };
}

/** z of x against the evidence reference (centre e, scale max(floor, 0.1·e)); +∞ without one. */
function evidenceZ(x: number, e: number, floor: number): number {
  const scale = evidenceScale(e, floor);
  return scale === null ? Number.POSITIVE_INFINITY : (IGLEWICZ_HOAGLIN * (x - e)) / scale;
}

/** The largest x the evidence reference accepts at the threshold; −∞ without one. */
function evidenceBound(e: number, floor: number, threshold: number): number {
  const scale = evidenceScale(e, floor);
  return scale === null ? Number.NEGATIVE_INFINITY : e + (threshold * scale) / IGLEWICZ_HOAGLIN;
}

function checkResolution(r: unknown): number | undefined {
  if (r === undefined) return undefined;
  if (typeof r !== 'number' || !Number.isFinite(r) || r <= 0)
    throw new RangeError(`options.resolution: expected a finite number > 0, got ${String(r)}`);
  return r;
}

/** The detector on checked reports. */
function detect(u: CheckedUtilities, threshold: number, resolution: number | undefined): Detection {
  const { ioi, loo, mag, evidence, floor } = marginals(u, resolution);
  const withEvidence = (x: Float64Array, e: Float64Array) =>
    referenceZAll(x, mag, COLLUDERS_TOLERATED, floor).map((z, j) =>
      Math.min(z, evidenceZ(x[j]!, e[j]!, floor.floor)),
    );
  const zWithOnly = withEvidence(ioi, evidence.ioi);
  const zWithout = withEvidence(loo, evidence.loo);
  const flagged = Array.from(zWithOnly, (z, j) => z > threshold || zWithout[j]! > threshold);
  return { zWithOnly, zWithout, flagged };
}

/**
 * Flags reports that claim more than the other silos' reports can support (issue 37). For each
 * silo j and each of its marginals — IOI_j = v(M0 + U_j) − v(M0) and LOO_j = v(M) − v(M − U_j) —
 * z is 0.6745 (x_j − median)/scale against the *other* silos' marginals (never its own), the
 * smallest over every way of leaving out up to {@link COLLUDERS_TOLERATED} of them (at least 2
 * stay), with scale = max(MAD, {@link SCALE_FLOOR_STEPS} resolution steps, {@link SCALE_FLOOR_TYPICAL}
 * × their typical magnitude), and over one more reference: the silo's evidence, what the round's
 * public improvement v(M) − v(M0) less the other silos' LOO leaves for it (./_evidence.ts: a
 * dominant honest silo's marginals are what the round's own numbers account for); a silo is
 * flagged when either z > threshold. One-sided: every report that raises a silo's own score or a colluder's —
 * its LOO or IOI (LOO, IOI, FP's α), or the others' lower β, γ terms under EE and EE-median (which
 * lower D) — raises the reporter's marginals, while a marginal far *below* the others is what an
 * honest Maverick or a silo with bad data reports (papers/000: an exclusive Maverick's singleton
 * model is far worse on the common test set), and it is not flagged.
 * @param utilities the round's reported utilities.
 * @param threshold the bound on z; default 3.5.
 * @param options the utilities' resolution.
 * @throws RangeError/TypeError naming the parameter on bad utilities, threshold ≤ 0 or resolution.
 */
export function detectReports(
  utilities: PrivateUtilities,
  threshold = DEFAULT_THRESHOLD,
  options: DetectionOptions = {},
): Detection {
  const u = checkUtilities(utilities, 'utilities');
  checkThreshold(threshold);
  return detect(u, threshold, checkResolution(options.resolution));
}

/**
 * The reports of one silo the detector lets through while everyone else reports honestly: for each
 * of withOnly and without, the interval of values in [lo, hi] whose z stays within the threshold.
 * A silo's z is measured against the others' reports only, so the accepted marginals are those up
 * to the largest over reference sets of median + threshold · scale / 0.6745 (`largestUnflagged`,
 * and the evidence reference's E + threshold · max(floor, 0.1 E) / 0.6745);
 * the detector is one-sided, so the interval reaches the end of the range on the other side. If
 * the honest value is itself flagged, the interval is that value alone. With a resolution, the
 * end is the last resolution step accepted.
 * @param utilities the round's honest utilities.
 * @param silo the silo that misreports.
 * @param range the range of a report.
 * @param threshold the detector's bound on z; default 3.5.
 * @param options the utilities' resolution.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function undetectedBox(
  utilities: PrivateUtilities,
  silo: number,
  range: UtilityRange,
  threshold = DEFAULT_THRESHOLD,
  options: DetectionOptions = {},
): ReportBox {
  const u = checkUtilities(utilities, 'utilities');
  checkSilo('silo', silo, u.n);
  const { lo, hi } = checkRange(range);
  checkThreshold(threshold);
  const resolution = checkResolution(options.resolution);
  const { ioi, loo, mag, evidence, floor, unit } = marginals(u, resolution);
  // the silo's own z only (the others' do not decide whether its reports are flagged)
  const own = (x: Float64Array, e: Float64Array) =>
    Math.min(
      referenceZ(x, mag, silo, COLLUDERS_TOLERATED, floor),
      evidenceZ(x[silo]!, e[silo]!, floor.floor),
    );
  const zWithOnly = own(ioi, evidence.ioi);
  const zWithout = own(loo, evidence.loo);
  /**
   * The largest unflagged marginal of `silo`, in utility units (its own magnitude is not in its
   * reference, its own reports not in its evidence).
   */
  const bound = (x: Float64Array, e: Float64Array): number => {
    const b = Math.max(
      largestUnflagged(x, mag, silo, COLLUDERS_TOLERATED, floor, threshold),
      evidenceBound(e[silo]!, floor.floor, threshold),
    );
    return resolution === undefined ? b : Math.floor(b) * unit;
  };
  let withOnlyLo = u.withOnly[silo]!;
  let withOnlyHi = withOnlyLo;
  if (zWithOnly <= threshold) {
    withOnlyLo = Math.min(withOnlyLo, lo);
    withOnlyHi = Math.max(withOnlyHi, Math.min(hi, u.empty + bound(ioi, evidence.ioi)));
  }
  let withoutLo = u.without[silo]!;
  let withoutHi = withoutLo;
  if (zWithout <= threshold) {
    withoutLo = Math.min(withoutLo, Math.max(lo, u.full - bound(loo, evidence.loo)));
    withoutHi = Math.max(withoutHi, hi);
  }
  return { withOnlyLo, withOnlyHi, withoutLo, withoutHi };
}
