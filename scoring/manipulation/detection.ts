/**
 * Detecting misreports (papers/003 §5.3: "augmenting the averaging step in EE's definition with
 * anomaly detection techniques"): robust z-scores of the marginals every silo reports, IOI_j and
 * LOO_j (computed by scoring/private.ts), and the reports a silo can send without being flagged.
 */
import { checkFiniteVector } from '../_checks.js';
import { median } from '../_median.js';
import {
  type CheckedUtilities,
  checkUtilities,
  type PrivateUtilities,
  scoreCheckedScheme,
} from '../private.js';
import { checkRange, checkSilo, checkThreshold, replaceReports } from './_checks.js';
import type { ReportBox, UtilityRange } from './reports.js';

/** Iglewicz–Hoaglin constant: Φ⁻¹(0.75), so 0.6745·(x − med)/MAD ≈ (x − μ)/σ for normal data. */
const IGLEWICZ_HOAGLIN = 0.6745;
/** √(π/2): MeanAD of a normal is σ·√(2/π); used when MAD = 0 (the IBM convention). */
const MEAN_AD_TO_SIGMA = 1.253314;

/** Default threshold on |z| (Iglewicz & Hoaglin 1993 recommend 3.5). */
export const DEFAULT_THRESHOLD = 3.5;

/**
 * Modified z-scores (Iglewicz & Hoaglin 1993): z_j = 0.6745 (x_j − median) / MAD. When MAD = 0,
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
  /** z of IOI_j = withOnly_j − v(M0). */
  zWithOnly: Float64Array;
  /** z of LOO_j = v(M) − without_j. */
  zWithout: Float64Array;
  /** Per silo: |z| > threshold on either marginal. */
  flagged: boolean[];
}

/** IOI_j = v(M0 + U_j) − v(M0) per silo, from scoring/private.ts (papers/003 Eq. 3). */
const includeOneIn = (u: CheckedUtilities) => scoreCheckedScheme('ioi', u).weights;
/** LOO_j = v(M) − v(M − U_j) per silo, from scoring/private.ts (papers/003 Def. 2). */
const leaveOneOut = (u: CheckedUtilities) => scoreCheckedScheme('loo', u).weights;

/** The detector on checked reports. */
function detect(u: CheckedUtilities, threshold: number): Detection {
  const zWithOnly = robustZ(includeOneIn(u));
  const zWithout = robustZ(leaveOneOut(u));
  const flagged = Array.from(
    zWithOnly,
    (z, j) => Math.abs(z) > threshold || Math.abs(zWithout[j]!) > threshold,
  );
  return { zWithOnly, zWithout, flagged };
}

/**
 * Flags reports inconsistent with the rest: robust z-scores (`robustZ`) of the reported marginals
 * v(M0 + U_j) − v(M0) and v(M) − v(M − U_j); a silo is flagged when either |z| > threshold.
 * @param utilities the round's reported utilities.
 * @param threshold the bound on |z|; default 3.5.
 * @throws RangeError/TypeError naming the parameter on bad utilities or threshold ≤ 0.
 */
export function detectReports(utilities: PrivateUtilities, threshold = DEFAULT_THRESHOLD): Detection {
  const u = checkUtilities(utilities, 'utilities');
  checkThreshold(threshold);
  return detect(u, threshold);
}

/**
 * The reports of one silo the detector lets through while everyone else reports honestly: for each
 * of withOnly and without, the interval of values in [lo, hi] around the honest value whose robust
 * z stays within the threshold (grid of 2001 points, ends refined by bisection). If the honest value
 * is itself flagged, the interval is that value alone. The interval is the connected piece around
 * the honest value, so an optimum over it is a lower bound if the accepted set had other pieces.
 * @param utilities the round's honest utilities.
 * @param silo the silo that misreports.
 * @param range the range of a report.
 * @param threshold the detector's bound on |z|; default 3.5.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function undetectedBox(
  utilities: PrivateUtilities,
  silo: number,
  range: UtilityRange,
  threshold = DEFAULT_THRESHOLD,
): ReportBox {
  const u = checkUtilities(utilities, 'utilities');
  checkSilo('silo', silo, u.n);
  const { lo, hi } = checkRange(range);
  checkThreshold(threshold);
  const interval = (report: 'withOnly' | 'without'): [number, number] => {
    const honest = u[report][silo]!;
    const accepted = (x: number) => {
      const z =
        report === 'withOnly'
          ? robustZ(includeOneIn(replaceReports(u, silo, x, u.without[silo]!)))
          : robustZ(leaveOneOut(replaceReports(u, silo, u.withOnly[silo]!, x)));
      return Math.abs(z[silo]!) <= threshold;
    };
    if (!accepted(honest)) return [honest, honest];
    const edge = (from: number, to: number): number => {
      // walk a grid from the honest value towards `to`; bisection between last accepted and first rejected
      const steps = 2000;
      let good = from;
      for (let k = 1; k <= steps; k++) {
        const x = from + ((to - from) * k) / steps;
        if (!accepted(x)) {
          let bad = x;
          for (let it = 0; it < 60; it++) {
            const mid = (good + bad) / 2;
            if (accepted(mid)) good = mid;
            else bad = mid;
          }
          return good;
        }
        good = x;
      }
      return to;
    };
    const start = Math.min(hi, Math.max(lo, honest));
    return [Math.min(honest, edge(start, lo)), Math.max(honest, edge(start, hi))];
  };
  const [withOnlyLo, withOnlyHi] = interval('withOnly');
  const [withoutLo, withoutHi] = interval('without');
  return { withOnlyLo, withOnlyHi, withoutLo, withoutHi };
}
