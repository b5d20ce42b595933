/**
 * The private-scoring step of the round pipeline (../round-loop.ts; docs/architecture.md, "One round,
 * private mode", steps 4–6): the server evaluates v(M) and v(M0); each survivor evaluates its
 * singleton and leave-one-out models from the published aggregate and its own update and sends a
 * signed report; the server verifies the reports and computes LOO, IOI, FP, EE and EE-median (and,
 * with `scoring.raw`, FP's, EE's and EE-median's weights before rescaling) with v(∅) as
 * `scoring.emptyCoalition` says (scoring/empty-coalition.ts, applied in `scoreReports`). Reports
 * the detector flags are quarantined there (scoring/manipulation/quarantine.ts): the round is
 * scored without them, as the service scores it, and they are listed in `quarantined`.
 */

import {
  PRIVATE_METHODS,
  type QuarantinedSilo,
  scoreReports,
  signedReport,
  siloCoalitionModels,
} from '../../consortium/private-scoring.js';
import { type Utilities, utilityValue } from '../../fl/learner/learner.js';
import type { AggregateSum } from '../aggregator.js';
import type { Run } from './setup.js';

/** What the private-scoring step reads of the round. */
export interface ScoringInput {
  round: number;
  /** M0 and M of the round. */
  base: Float32Array;
  next: Float32Array;
  selected: readonly number[];
  updates: readonly Float32Array[];
  weights: readonly number[];
  sum: AggregateSum;
}

/** The round's private utilities and scores. */
export interface PrivateScores {
  /** Utilities of M on the test set. */
  fullUtilities: Utilities;
  /** v(M) and the measured v(M0) (the schemes see v(∅) as `scoring.emptyCoalition` says). */
  full: number;
  empty: number;
  /** v({i}) and v(N∖{i}) by global silo id (null for silos not scored). */
  withOnly: (number | null)[];
  without: (number | null)[];
  /**
   * Per private scheme, one score per silo (null for silos not scored, quarantined ones included);
   * empty with fewer than 2 scored reports.
   */
  scores: Record<string, (number | null)[]>;
  /** The reports the detector flagged and set aside (see `scoreReports`). */
  quarantined: QuarantinedSilo[];
  ms: number;
}

/** Spreads per-silo values onto all n silos, null elsewhere. */
export function bySilo(n: number, silos: readonly number[], values: ArrayLike<number>): (number | null)[] {
  const out: (number | null)[] = Array.from({ length: n }, () => null);
  silos.forEach((s, b) => {
    out[s] = values[b]!;
  });
  return out;
}

/** Runs private scoring for one round (scores need at least two survivors). */
export async function privateScoringStep(run: Run, input: ScoringInput): Promise<PrivateScores> {
  const { round, base, next, selected, updates, weights, sum } = input;
  const { learner, test, utility } = run;
  const n = run.cfg.silos;
  run.progress(round, 'private-scoring', `${sum.survivors.length} reports`);
  const t0 = performance.now();
  const fullUtilities = await learner.evaluate(next, test);
  const emptyUtilities = await learner.evaluate(base, test);
  const full = utilityValue(fullUtilities, utility);
  const empty = utilityValue(emptyUtilities, utility);
  const reports: Uint8Array[] = [];
  for (const s of sum.survivors) {
    const b = selected.indexOf(s);
    const models = siloCoalitionModels(
      base,
      sum.weightedSum,
      sum.totalWeight,
      { update: updates[b]!, weight: weights[b]! },
      run.convention,
    );
    const single = utilityValue(await learner.evaluate(models.singleton, test), utility);
    const complement = utilityValue(await learner.evaluate(models.complement, test), utility);
    reports.push(signedReport(run.session, round, s, single, complement, run.identities[s]!));
  }
  const scored =
    sum.survivors.length >= 2
      ? scoreReports(run.session, round, reports, run.roster, full, empty, {
          emptyCoalition: run.emptyCoalition,
          raw: run.rawScores,
          // an accuracy on T test examples resolves 1/T: the detector compares in those steps
          quarantine: run.quarantine
            ? utility === 'accuracy'
              ? { resolution: 1 / test.n }
              : {}
            : (false as const),
        })
      : undefined;
  const ms = performance.now() - t0;
  const scores: Record<string, (number | null)[]> = {};
  if (scored && scored.scored.length >= 2) {
    for (const m of PRIVATE_METHODS) scores[m] = bySilo(n, scored.scored, scored.scores[m]);
    for (const [m, v] of Object.entries(scored.raw ?? {})) scores[m] = bySilo(n, scored.scored, v);
  }
  return {
    fullUtilities,
    full,
    empty,
    withOnly: scored ? bySilo(n, scored.silos, scored.withOnly) : Array(n).fill(null),
    without: scored ? bySilo(n, scored.silos, scored.without) : Array(n).fill(null),
    scores,
    quarantined: scored?.quarantined ?? [],
    ms,
  };
}
