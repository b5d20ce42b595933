/** The result of a sampled estimator: an `Estimate` plus how many samples it averaged. */
import type { Estimate } from './estimate.js';

/** A sampled estimate: values, standard errors, distinct evaluations and the sample count. */
export interface SampledEstimate extends Estimate {
  /** Standard error of each value (NaN where fewer than two samples were drawn). */
  stderr: Float64Array;
  /**
   * Samples averaged: permutations (MC, TMC, GTG), Bernoulli masks (Owen, summed over
   * levels) or random subsets (MSR Banzhaf). Tests derive their tolerances from it.
   */
  samples: number;
}
