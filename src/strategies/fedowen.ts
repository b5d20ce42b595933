/**
 * FedOwen (papers/004 §3.4–3.5): Owen-sampled contributions drive an ε-greedy UCB selection
 * (§3.4, Eq. 13, Alg. 2) and a softmax aggregation (§3.5, Eq. 14–15). Overrides both methods of
 * FedAvg: they form the bandit's pair (valuation of round t feeds the selection of round t + 1).
 *
 * Selection (Alg. 2), t the current round index, σ_i the selections of silo i so far, φ_i its latest
 * contribution estimate:
 *   with probability ε: k silos uniformly without replacement (lines 1–2);
 *   otherwise g_i = φ_i if φ_i ≥ τ else 0 (line 6), u_i = c·√(ln(t+1)/(σ_i+1)) (line 7, Eq. 13),
 *   u_i ← 0.1·u_i if φ_i < τ (lines 8–9), s_i = g_i + u_i (line 11), s_i ← s_i − min_j s_j (line 13),
 *   p = s/Σs or uniform when Σs = 0 (line 14), k silos drawn without replacement by p (line 15).
 *
 * Aggregation: φ of the round's participants by Owen sampling with η-truncation (scoring/owen.ts,
 * papers/004 Alg. 1) on the coalition game, at the budget N×M of §4.1 (N = participants), then
 * α_i = exp(φ_i)/Σ_j exp(φ_j) over the participants (Eq. 14; Eq. 15 sums over the participating
 * clients, so the softmax is taken over them).
 *
 * Choices where the paper is open:
 * - c and τ have no values in the paper: c = 0.1 (contributions are accuracy differences, O(0.01–0.1);
 *   a UCB1-like c = √2 would drown them) and τ = 0 (negative contributions are penalized).
 * - t is the engine's 1-based round index; φ_i = 0 for a silo never valued; σ_i comes from the
 *   public history (selections, dropped silos included).
 * - `exploit: 'sample'` (default) is Alg. 2 line 15 as written; `exploit: 'top-k'` takes the k
 *   largest s_i (the "exploits top contributors" of the prose), ties to the lower silo id.
 * - Silos of zero probability after the shift of line 13 are drawn only when fewer than k have a
 *   positive one (uniformly among them; see `weightedSample`).
 * - Budget: max(N·M, 2 + Q·(N + 1)), the least Owen sampling with Q levels accepts.
 */

import Type from 'typebox';
import { owenShapley } from '../../scoring/owen.js';
import { roundSize, softmax, uniformSample, weightedSample } from './_sampling.js';
import { type ParamsOf, parameters, roundSizeParameters } from './_schema.js';
import { fedAvgVariant } from './fedavg.js';
import type { BuiltInStrategyEntry, Strategy } from './strategy.js';

/** The parameters; defaults: papers/004 §4.1 (10 % of the silos, ε = 0.1, M = 4, Q = 2) and our choices. */
export const FEDOWEN_PARAMETERS = parameters({
  ...roundSizeParameters(0.1),
  epsilon: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0.1,
    description:
      'ε, exploration probability: a round is uniformly random with probability ε (papers/004 Alg. 2 lines 1–2; §4.1: 0.1).',
  }),
  confidence: Type.Number({
    exclusiveMinimum: 0,
    default: 0.1,
    description:
      'c, confidence weight of the UCB bonus c·√(ln(t+1)/(σ_i+1)) (papers/004 Eq. 13; no value in the paper, ours suits accuracy differences of 0.01–0.1).',
  }),
  floor: Type.Number({
    default: 0,
    description:
      'τ, contribution floor: a silo with φ_i < τ gets no exploitation score and a scaled-down bonus (Alg. 2 lines 6, 8; no value in the paper).',
  }),
  lowGainScale: Type.Number({
    minimum: 0,
    default: 0.1,
    description: 'Factor of the bonus of a silo below the floor (Alg. 2 line 9: 0.1).',
  }),
  exploit: Type.Enum(['sample', 'top-k'] as const, {
    default: 'sample',
    description:
      'Exploitation: draw k silos by the scores (Alg. 2 line 15 as written) or take the k largest (ties to the lower id).',
  }),
  samples: Type.Integer({
    minimum: 1,
    default: 4,
    description:
      'M, Owen samples per participant: the budget is max(N·M, 2 + Q·(N + 1)) for N participants (§4.1: 4).',
  }),
  levels: Type.Integer({
    minimum: 1,
    default: 2,
    description: 'Q, inclusion levels of Owen sampling (papers/004 Alg. 1; §4.1: 2).',
  }),
  eta: Type.Number({
    minimum: 0,
    default: 0,
    description:
      'η, truncation tolerance of Owen sampling (papers/004 Alg. 1; no value in the paper; 0: no truncation).',
  }),
});

/** Parameters of `fedOwen` (FEDOWEN_PARAMETERS'). */
export type FedOwenParams = ParamsOf<typeof FEDOWEN_PARAMETERS>;

/** FedOwen's state: the latest contribution estimate φ_i of every silo. */
export interface FedOwenState {
  readonly phi: Float64Array;
}

/**
 * The exploitation scores of papers/004 Alg. 2 lines 4–13 (after the shift, so ≥ 0).
 * @param phi latest contributions φ_i; @param selections σ_i; @param round t.
 */
export function ucbScores(
  phi: ArrayLike<number>,
  selections: ArrayLike<number>,
  round: number,
  o: Pick<FedOwenParams, 'confidence' | 'floor' | 'lowGainScale'>,
): Float64Array {
  const n = phi.length;
  if (selections.length !== n)
    throw new RangeError(`selections: expected ${n} counts, got ${selections.length}`);
  const s = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const low = phi[i]! < o.floor;
    const g = low ? 0 : phi[i]!; // line 6
    let u = o.confidence * Math.sqrt(Math.log(round + 1) / (selections[i]! + 1)); // line 7, Eq. 13
    if (low) u *= o.lowGainScale; // lines 8–9
    s[i] = g + u; // line 11
  }
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i++) min = Math.min(min, s[i]!);
  for (let i = 0; i < n; i++) s[i]! -= min; // line 13
  return s;
}

const FEDOWEN = fedAvgVariant<typeof FEDOWEN_PARAMETERS, FedOwenState>({
  name: 'fedowen',
  description: 'FedOwen: ε-greedy Owen-value selection, softmax weights (papers/004 §3.4–3.5)',
  parameters: FEDOWEN_PARAMETERS,
  networked: {
    refused:
      'it values silos by Owen values of the coalition game over the selected silos, which needs each silo’s individual update',
  },
  requiresFullVisibility: true,
  init: (setup) => ({ phi: new Float64Array(setup.numSilos) }),
  select(state, ctx, o) {
    const n = ctx.setup.numSilos;
    const k = roundSize(n, o);
    if (ctx.rng.next() < o.epsilon) return uniformSample(ctx.rng, n, k); // lines 1–2
    const s = ucbScores(state.phi, ctx.history.participation, ctx.round, o);
    if (o.exploit === 'top-k')
      return [...s.keys()]
        .sort((a, b) => s[b]! - s[a]! || a - b)
        .slice(0, k)
        .sort((a, b) => a - b);
    let sum = 0;
    for (const x of s) sum += x;
    return weightedSample(ctx.rng, sum > 0 ? s : s.map(() => 1), k); // lines 14–15
  },
  async aggregate(state, ctx, o) {
    const k = ctx.selected.length;
    const budget = Math.max(k * o.samples, 2 + o.levels * (k + 1));
    const est = await owenShapley(ctx.full.game, { budget, rng: ctx.rng, levels: o.levels, eta: o.eta });
    const phi = state.phi.slice();
    ctx.selected.forEach((s, b) => {
      phi[s] = est.values[b]!;
    });
    return { weights: softmax(est.values), state: { phi }, values: est.values.slice() }; // Eq. 14
  },
});

/**
 * FedOwen: ε-greedy UCB selection and softmax aggregation of Owen-sampled contributions.
 * Needs full visibility (the coalition game).
 * @throws RangeError naming the parameter for a bad value.
 */
export const fedOwen: (params?: Partial<FedOwenParams>) => Strategy<FedOwenState> = FEDOWEN.create;

/** The registry entry (./registry.ts): `fedOwen` from a JSON config. */
export const fedOwenEntry: BuiltInStrategyEntry = FEDOWEN.entry;
