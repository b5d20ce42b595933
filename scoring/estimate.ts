/** Plain results shared by every estimator in scoring/ (values in player order). */

/** What an estimator returns. */
export interface Estimate {
  /** One value per player, in player order. */
  values: Float64Array;
  /** Coalitions the underlying game evaluated for this estimate (memo hits not counted). */
  evaluations: number;
  /** Standard error of each value, where the estimator samples. */
  stderr?: Float64Array;
}
