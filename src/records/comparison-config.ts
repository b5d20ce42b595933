/**
 * The comparison part of an experiment configuration read against the estimator registry
 * (`comparison.estimators`, `reference(s)`, `trueShapley`): which estimators run, which references
 * are compared, and what keeps one from being computed.
 */

import {
  defaultEstimators,
  defaultReferenceEstimator,
  type EstimatorConfig,
  estimatorsToRun,
  ROUND_SV,
  ROUND_TABLES_ESTIMATOR,
  TRUE_SHAPLEY_DEFAULT_MAX_SILOS,
  TRUE_SV,
} from '../estimators/registry.js';
import type { ExperimentConfig } from './config.js';

/** `comparison.estimators`, or the defaults when the configuration names none. */
export function configuredEstimators(cfg: ExperimentConfig): EstimatorConfig {
  return cfg.comparison?.estimators ?? defaultEstimators();
}

/**
 * The references of a configuration, the primary first: `comparison.reference`, then
 * `comparison.references` (repeats dropped). Default: trueSv when the true Shapley value is
 * computed, else the first reference estimator.
 */
export function configuredReferences(cfg: ExperimentConfig): string[] {
  const c = cfg.comparison;
  const named = [...(c?.reference !== undefined ? [c.reference] : []), ...(c?.references ?? [])];
  if (named.length > 0) return [...new Set<string>(named)];
  return [wantsTrueShapley(cfg) ? TRUE_SV : defaultReferenceEstimator()];
}

/**
 * What keeps a configured reference from being computed, or undefined: roundSv needs
 * `comparison.at` to be a round and MR-SV's tables; trueSv needs `comparison.trueShapley`; an
 * estimator needs to be configured.
 */
export function referenceProblem(cfg: ExperimentConfig, reference: string): string | undefined {
  if (reference === ROUND_SV) {
    if (typeof cfg.comparison?.at !== 'number')
      return `${ROUND_SV} is the Shapley value of one round's game: set comparison.at to a round (it is 'cumulative')`;
    if (!estimatorsToRun(configuredEstimators(cfg)).some((u) => u.definition === ROUND_TABLES_ESTIMATOR))
      return `${ROUND_SV} reads the round's exact coalition table: add comparison.estimators.${ROUND_TABLES_ESTIMATOR.name}`;
    return undefined;
  }
  if (reference === TRUE_SV)
    return wantsTrueShapley(cfg) ? undefined : `${TRUE_SV} is not computed: set comparison.trueShapley`;
  if (!(reference in (configuredEstimators(cfg) as Record<string, unknown>)))
    return `'${reference}' does not run: add comparison.estimators.${reference}`;
  return undefined;
}

/** Whether the true Shapley value of the retraining game is computed (`comparison.trueShapley`, default n ≤ 6). */
export function wantsTrueShapley(cfg: ExperimentConfig): boolean {
  return cfg.comparison?.trueShapley ?? cfg.silos <= TRUE_SHAPLEY_DEFAULT_MAX_SILOS;
}

/** The configured estimators for a log line: `mrsv, gtg(budget 128), cos`. */
export function describeEstimators(cfg: ExperimentConfig): string {
  return Object.entries(configuredEstimators(cfg))
    .map(([name, options]) => {
      const budget = (options as { budget?: number } | undefined)?.budget;
      return budget ? `${name}(budget ${budget})` : name;
    })
    .join(', ');
}
