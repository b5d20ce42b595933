/**
 * FedEMD (papers/001 Alg. 1, Huang et al. 2022): FedAvg whose selection is weighted random sampling
 * without replacement, with probabilities from the Wasserstein (EMD) distances between each silo's
 * label distribution and (a) the global distribution, (b) the accumulated distribution of the silos
 * selected so far. Overrides `select` of FedAvg; aggregation stays FedAvg (example counts).
 *
 *   D_g = Σ_i D^i                                                   (Alg. 1 line 4)
 *   ẽmd_g[i] = EMD(D_g, D^i) / m,  m = (1/N) Σ_i P^i(y = c1)         (lines 5–7, Norm)
 *   D_c^{t+1} = D_c^t + Σ_{s ∈ K_t} D^s                              (line 18)
 *   ẽmd_c[i] = EMD(D_c^{t+1}, D^i) / m                               (lines 19–21)
 *   Proba^{t+1} = softmax(α·ẽmd_g − t·β·ẽmd_c)                       (line 23)
 *   K_{t+1}: k silos by keys u_i^{1/Proba_i}, the k largest            (lines 9–17)
 *
 * EMD of label distributions: the paper's Eq. 11 reads it as Σ_c |P(y=c) − P^k(y=c)| over the
 * normalized class distributions (for a 0/1 ground distance between distinct classes the optimal
 * transport cost is half that; the factor is absorbed by α, β and we keep the paper's form).
 *
 * Choices where the paper is open (also at their lines):
 * - Proba^1 ("initialize probability", line 2) is softmax(α·ẽmd_g): D_c^1 is empty and the current
 *   term carries the factor t − 1 = 0 in round 1 anyway (rounds are 1-based here, so round r uses
 *   the factor r − 1 of line 23).
 * - Norm (line 7): P^i are normalized histograms (probabilities), not counts — with counts ẽmd
 *   would scale as 1/(examples per silo) and the recommended α, β (A.10) would give uniform draws.
 * - c1 ("one class randomly chosen by federator except for the Maverick class"): drawn once from the
 *   run's seed among the classes at least two silos hold (Maverick classes are held by one); when
 *   there is none, among all classes with data.
 * - D_c accumulates the selected silos (line 18 sums over K), dropped ones included.
 * - `setup.globalLabelHistogram` is not used: Alg. 1 line 4 defines D_g as the sum of the reports.
 */

import Type from 'typebox';
import { createRng } from '../../scoring/seeded-rng.js';
import { checkSetup, roundSize, softmax, weightedSample } from './_sampling.js';
import { type ParamsOf, parameters, roundSizeParameters } from './_schema.js';
import { fedAvgVariant } from './fedavg.js';
import type { BuiltInStrategyEntry, History, Strategy, StrategySetup } from './strategy.js';

/** The parameters; defaults: 10 % of the silos (papers/001 §5: 5 of 50), Fashion-MNIST's α and β. */
export const FEDEMD_PARAMETERS = parameters({
  ...roundSizeParameters(0.1),
  alpha: Type.Number({
    exclusiveMinimum: 0,
    default: 0.15,
    description:
      'α, weight of the distance to the global label distribution (papers/001 Alg. 1 line 23; A.10: 0.15 for MNIST and Fashion-MNIST, 0.11 for CIFAR-10).',
  }),
  beta: Type.Number({
    exclusiveMinimum: 0,
    default: 0.0015,
    description:
      'β, weight of the distance to the distribution selected so far (Alg. 1 line 23; A.10: 0.0015, 0.001 for STL-10).',
  }),
});

/** Parameters of `fedEmd` (FEDEMD_PARAMETERS'). */
export type FedEmdParams = ParamsOf<typeof FEDEMD_PARAMETERS>;

/** FedEMD's fixed quantities: ẽmd_g, the normalizer m and the class c1. */
export interface FedEmdState {
  readonly globalDistance: Float64Array;
  readonly normalizer: number;
  readonly referenceClass: number;
}

function total(h: ArrayLike<number>): number {
  let s = 0;
  for (let c = 0; c < h.length; c++) s += h[c]!;
  return s;
}

/**
 * EMD between two label histograms as papers/001 Eq. 11 writes it: Σ_c |p_c − q_c| over the
 * normalized distributions. An empty histogram is treated as the uniform distribution.
 * @throws RangeError when the lengths differ or a count is negative or not finite.
 */
export function labelEmd(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length < 1)
    throw new RangeError(`b: expected ${a.length} classes like a, got ${b.length}`);
  for (const [name, h] of [
    ['a', a],
    ['b', b],
  ] as const)
    for (let c = 0; c < h.length; c++)
      if (!(Number.isFinite(h[c]) && h[c]! >= 0))
        throw new RangeError(`${name}: class ${c} count is not a finite number ≥ 0 (${h[c]})`);
  const ta = total(a);
  const tb = total(b);
  const C = a.length;
  let d = 0;
  for (let c = 0; c < C; c++) d += Math.abs((ta > 0 ? a[c]! / ta : 1 / C) - (tb > 0 ? b[c]! / tb : 1 / C));
  return d;
}

/**
 * The fixed part of FedEMD for a federation (Alg. 1 lines 4–7), with c1 drawn from the seed.
 * @throws RangeError for a malformed setup.
 */
export function fedEmdInit(setup: StrategySetup): FedEmdState {
  checkSetup(setup);
  const C = setup.numClasses;
  const global = new Float64Array(C);
  const holders = new Int32Array(C);
  for (const s of setup.silos)
    for (let c = 0; c < C; c++) {
      global[c]! += s.labelHistogram[c]!;
      if (s.labelHistogram[c]! > 0) holders[c]! += 1;
    }
  let candidates = [...holders.keys()].filter((c) => holders[c]! >= 2);
  if (candidates.length === 0) candidates = [...holders.keys()].filter((c) => holders[c]! >= 1);
  if (candidates.length === 0) throw new RangeError('setup.silos: no silo reports any example');
  const referenceClass = candidates[Math.floor(createRng(setup.seed).next() * candidates.length)]!;
  let normalizer = 0;
  for (const s of setup.silos) {
    const t = total(s.labelHistogram);
    normalizer += (t > 0 ? s.labelHistogram[referenceClass]! / t : 0) / setup.numSilos;
  }
  const globalDistance = Float64Array.from(
    setup.silos,
    (s) => labelEmd(global, s.labelHistogram) / normalizer,
  );
  return { globalDistance, normalizer, referenceClass };
}

/**
 * Selection probabilities of round `round` (papers/001 Alg. 1 line 23 with t = round − 1), from the
 * silos selected in the earlier rounds of `history`.
 */
export function fedEmdProbabilities(
  state: FedEmdState,
  setup: StrategySetup,
  history: History,
  round: number,
  params: Pick<FedEmdParams, 'alpha' | 'beta'>,
): Float64Array {
  const C = setup.numClasses;
  const current = new Float64Array(C); // D_c, line 18
  for (const r of history.rounds)
    for (const s of r.selected) for (let c = 0; c < C; c++) current[c]! += setup.silos[s]!.labelHistogram[c]!;
  const t = round - 1;
  const logits = Float64Array.from(setup.silos, (s, i) => {
    const currentDistance = t > 0 ? labelEmd(current, s.labelHistogram) / state.normalizer : 0; // lines 19–21
    return params.alpha * state.globalDistance[i]! - t * params.beta * currentDistance;
  });
  return softmax(logits);
}

const FEDEMD = fedAvgVariant<typeof FEDEMD_PARAMETERS, FedEmdState>({
  name: 'fedemd',
  description: 'FedEMD: selection by label-distribution distance (papers/001 Alg. 1)',
  parameters: FEDEMD_PARAMETERS,
  networked: {
    refused:
      "it weighs silos by the distance of each silo's label histogram to the global one: the server would need every silo's histogram",
  },
  requiresFullVisibility: false,
  init: (setup) => fedEmdInit(setup),
  select(state, ctx, o) {
    const p = fedEmdProbabilities(state, ctx.setup, ctx.history, ctx.round, o);
    return weightedSample(ctx.rng, p, roundSize(ctx.setup.numSilos, o));
  },
});

/**
 * FedEMD selection (papers/001 Alg. 1) with FedAvg aggregation. Private-mode safe (it reads the
 * silos' reported label histograms, which papers/001 A.5 assumes they report).
 * @throws RangeError for a bad round size, α or β.
 */
export const fedEmd: (params?: Partial<FedEmdParams>) => Strategy<FedEmdState> = FEDEMD.create;

/** The registry entry (./registry.ts): `fedEmd` from a JSON config. */
export const fedEmdEntry: BuiltInStrategyEntry = FEDEMD.entry;
