/**
 * Who determines whose score (papers/003 §5.3, Table 9): the influence matrix of the weights and
 * the local sensitivity of the scores, normalizer included. The weights and scores themselves
 * come from scoring/private.ts; here only their structure (which reporter enters which w_i, and
 * the derivatives of Def. 2, Eq. 3 and Eq. 5 in the reports).
 */
import { medianOwners } from '../_median.js';
import {
  type CheckedUtilities,
  checkScheme,
  checkUtilities,
  everybodyElseTerms,
  isRatioScheme,
  type PrivateUtilities,
  type Scheme,
  scoreScheme,
} from '../private.js';

/**
 * Per scored silo i and reporter j: the contribution c_ij of j's reports to w_i, such that
 * w_i = Σ_j c_ij, plus for each i the reporters that structurally determine w_i.
 */
function contributions(scheme: Scheme, u: CheckedUtilities): { parts: Float64Array[]; owners: boolean[][] } {
  const { n } = u;
  const parts = Array.from({ length: n }, () => new Float64Array(n));
  const owners = Array.from({ length: n }, () => new Array<boolean>(n).fill(false));
  if (scheme === 'loo' || scheme === 'ioi' || scheme === 'fp') {
    const weights = scoreScheme(scheme, u).weights;
    for (let i = 0; i < n; i++) {
      parts[i]![i] = weights[i]!;
      owners[i]![i] = true;
    }
    return { parts, owners };
  }
  const { beta, gamma } = everybodyElseTerms(u);
  if (scheme === 'ee') {
    const d = 2 * (n - 1) ** 2; // Eq. 5: (β + γ)/2 with the (N−1)² of both
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++)
        if (j !== i) {
          parts[i]![j] = (beta[j]! + gamma[j]!) / d; // t_j / (2(N−1)²)
          owners[i]![j] = true;
        }
  } else {
    const scale = 2 * (n - 1); // §5.3: each median on the scale of Eq. 5, halved as in Eq. 4
    for (const t of [beta, gamma])
      medianOwners(t, (i, owner, share) => {
        parts[i]![owner] = parts[i]![owner]! + (share * t[owner]!) / scale;
        owners[i]![owner] = true;
      });
  }
  return { parts, owners };
}

/**
 * Influence matrix (papers/003 Table 9): row i (scored silo), column j (reporting silo) is the
 * share of silo i's weight w_i that silo j's reports determine, |c_ij| / Σ_k |c_ik|, where
 * w_i = Σ_j c_ij. Rows sum to 1. (Table 9 prints the transpose: its columns sum to 1.)
 *
 * The normalizer is not counted, for every scheme alike: w_i is the score before the common
 * rescaling · v(M)/Σ_j w_j, which every silo's reports enter (see `sensitivityMatrix` for the
 * local effect including it). Hence:
 * - LOO, IOI, FP: the identity (silo i alone determines w_i);
 * - EE: zero diagonal, c_ij = t_j / (2(N−1)²) for j ≠ i — the paper's "to the extent of
 *   (v(M) − v(M0+U_j)) + (v(M − U_j) − v(M0))" (§5.3);
 * - EE-median: the one or two reporters whose β-term or γ-term is the median of the others
 *   (ties broken by silo index) share w_i; everyone else has influence 0 at these reports.
 * A row whose contributions are all zero is split equally among the reporters that determine w_i.
 * @param scheme one of `SCHEMES` (scoring/private.ts).
 * @param utilities the round's utilities.
 * @throws RangeError/TypeError naming the parameter on an unknown scheme or bad utilities.
 */
export function influenceMatrix(scheme: Scheme, utilities: PrivateUtilities): Float64Array[] {
  checkScheme(scheme);
  const u = checkUtilities(utilities, 'utilities');
  const { parts, owners } = contributions(scheme, u);
  return parts.map((row, i) => {
    const total = row.reduce((s, x) => s + Math.abs(x), 0);
    if (total > 0) return row.map((x) => Math.abs(x) / total);
    const own = owners[i]!;
    const count = own.filter(Boolean).length;
    return Float64Array.from(own, (o) => (o ? 1 / count : 0));
  });
}

/**
 * Jacobian of the weights: row i holds ∂w_i/∂withOnly_j at 2j and ∂w_i/∂without_j at 2j+1
 * (right derivatives for EE-median, whose medians are piecewise linear).
 */
function weightJacobian(scheme: Scheme, u: CheckedUtilities): Float64Array[] {
  const { n } = u;
  const jacobian = Array.from({ length: n }, () => new Float64Array(2 * n));
  for (let i = 0; i < n; i++) {
    const row = jacobian[i]!;
    if (scheme === 'loo')
      row[2 * i + 1] = -1; // Def. 2: v(M) − without_i
    else if (scheme === 'ioi')
      row[2 * i] = 1; // Eq. 3: withOnly_i − v(M0)
    else if (scheme === 'fp') {
      row[2 * i] = 0.5; // Eq. 3: α(i) = (v(M) − without_i + withOnly_i − v(M0)) / 2
      row[2 * i + 1] = -0.5;
    } else if (scheme === 'ee') {
      const d = 2 * (n - 1) ** 2; // Eq. 5: w_i = Σ_{j≠i} (v(M) − withOnly_j + without_j − v(M0)) / (2(N−1)²)
      for (let j = 0; j < n; j++)
        if (j !== i) {
          row[2 * j] = -1 / d;
          row[2 * j + 1] = 1 / d;
        }
    }
  }
  if (scheme === 'eeMedian') {
    const { beta, gamma } = everybodyElseTerms(u);
    const scale = 2 * (n - 1);
    medianOwners(beta, (i, owner, share) => {
      jacobian[i]![2 * owner] = jacobian[i]![2 * owner]! - share / scale; // β-term = v(M) − withOnly
    });
    medianOwners(gamma, (i, owner, share) => {
      jacobian[i]![2 * owner + 1] = jacobian[i]![2 * owner + 1]! + share / scale; // γ-term = without − v(M0)
    });
  }
  return jacobian;
}

/**
 * Local sensitivity of the scores to the reports, normalizer included:
 * J[i][j] = |∂score_i/∂withOnly_j| + |∂score_i/∂without_j| with
 * ∂score_i/∂x = v(M) (∂w_i/∂x · D − w_i ∂D/∂x) / D² (ratio schemes, Eq. 2 and 4; D = Σ_k w_k),
 * ∂w_i/∂x for LOO and IOI. Rows are normalized to sum to 1 (a row of zeros stays zero). Unlike
 * `influenceMatrix`, EE's diagonal is not zero: silo i's reports move its score through D. Right
 * derivatives for EE-median; at D = 0 the row is NaN (the score is not differentiable there).
 * @param scheme one of `SCHEMES` (scoring/private.ts).
 * @param utilities the round's utilities.
 * @throws RangeError/TypeError naming the parameter on an unknown scheme or bad utilities.
 */
export function sensitivityMatrix(scheme: Scheme, utilities: PrivateUtilities): Float64Array[] {
  checkScheme(scheme);
  const u = checkUtilities(utilities, 'utilities');
  const { n, full } = u;
  const weightJ = weightJacobian(scheme, u);
  const scoreJ = weightJ.map((row) => row.slice());
  if (isRatioScheme(scheme)) {
    const { weights: w, normalizer: d } = scoreScheme(scheme, u);
    const dD = new Float64Array(2 * n);
    for (const row of weightJ) for (let x = 0; x < 2 * n; x++) dD[x] = dD[x]! + row[x]!;
    for (let i = 0; i < n; i++)
      for (let x = 0; x < 2 * n; x++)
        scoreJ[i]![x] = (full * (weightJ[i]![x]! * d - w[i]! * dD[x]!)) / (d * d);
  }
  return scoreJ.map((row) => {
    const out = new Float64Array(n);
    for (let j = 0; j < n; j++) out[j] = Math.abs(row[2 * j]!) + Math.abs(row[2 * j + 1]!);
    const total = out.reduce((s, x) => s + x, 0);
    if (total > 0) for (let j = 0; j < n; j++) out[j] = out[j]! / total;
    else if (Number.isNaN(total)) out.fill(Number.NaN);
    return out;
  });
}
