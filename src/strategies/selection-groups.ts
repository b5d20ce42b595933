/**
 * Selection in fixed groups: the batch-partitioning defence of So et al., "Securing Secure
 * Aggregation: Mitigating Multi-Round Privacy Leakage in Federated Learning" (AAAI 2023, §5,
 * Multi-RoundSecAgg's batch partitioning). A strategy that changes its selected set from round to
 * round (k-of-n FedAvg, score-selection, FedMS) publishes sums over different sets; a server that
 * knows the sets differences them, and with slowly changing updates its least-squares estimate of
 * one silo's update beats the round mean (issue 32; bench/multi-round.ts measures it). With the
 * silos partitioned into fixed groups and every round selecting whole groups, every published sum
 * is a sum of whole groups: any linear combination of them is, so the server learns at most a
 * group's sum, never a silo's alone (So et al., Theorem 1 with batches of size G).
 *
 * The groups are public and fixed: silo i is in group ⌊i / G⌋ (the last group may be smaller; a
 * round selects it whole too). The strategy selects as it would; the round then takes the groups
 * holding the most of its selected silos (ties in an order drawn from the round's selection
 * stream, after the strategy's own draws) until they hold at least as many silos as it selected.
 * It is one decorator of `select` (./registry.ts applies it for the reserved parameter
 * `selectionGroups`), so the engine, the server's plan and every silo's plan run the same code
 * from the same seed streams (src/strategies/networked-plan.ts).
 *
 * Weights: the group sum hides a silo only when the silos of a group keep their relative weights
 * from round to round (equal weights, FedAvg by example counts). Score weights that change every
 * round let the server separate a group's members again: the defence bounds the selection, not the
 * weights.
 */
import type { Rng } from '../../scoring/seeded-rng.js';
import type { Strategy } from './strategy.js';

/** The smallest group: a sum of 2 shows each the other's update (src/consortium/weight-floor.ts). */
export const MIN_GROUP_SIZE = 3;

/**
 * The union of whole groups of size `size` that covers a selection: the groups holding the most of
 * `chosen` first (ties in an order drawn from `rng`), until they hold ≥ |chosen| silos. Increasing.
 * @throws RangeError when `size` is not an integer ≥ 1 or a chosen silo is outside [0, numSilos).
 */
export function groupSelection(
  chosen: readonly number[],
  numSilos: number,
  size: number,
  rng: Rng,
): number[] {
  if (!(Number.isInteger(size) && size >= 1))
    throw new RangeError(`selectionGroups: expected an integer ≥ 1, got ${size}`);
  const groups = Math.ceil(numSilos / size);
  const count = new Array<number>(groups).fill(0);
  for (const s of chosen) {
    if (!(Number.isInteger(s) && s >= 0 && s < numSilos))
      throw new RangeError(`chosen: expected silo ids in [0, ${numSilos}), got ${s}`);
    count[Math.floor(s / size)]! += 1;
  }
  const tie = Array.from({ length: groups }, () => rng.next());
  const order = Array.from({ length: groups }, (_, g) => g).sort(
    (a, b) => count[b]! - count[a]! || tie[a]! - tie[b]! || a - b,
  );
  const out: number[] = [];
  for (const g of order) {
    if (out.length >= chosen.length) break;
    for (let i = g * size; i < Math.min(numSilos, (g + 1) * size); i++) out.push(i);
  }
  return out.sort((a, b) => a - b);
}

/**
 * `strategy` whose rounds select whole fixed groups of `size` silos ({@link groupSelection}); its
 * weights, state and observation are the strategy's own.
 * @throws RangeError naming `strategy.selectionGroups` when `size` is not an integer ≥ 3.
 */
export function withSelectionGroups<S>(strategy: Strategy<S>, size: number): Strategy<S> {
  if (!(Number.isInteger(size) && size >= MIN_GROUP_SIZE))
    throw new RangeError(
      `strategy.selectionGroups: expected an integer ≥ ${MIN_GROUP_SIZE} (the silos per fixed selection group), got ${size}`,
    );
  return {
    name: strategy.name,
    requiresFullVisibility: strategy.requiresFullVisibility,
    ...(strategy.needsReferenceUpdate !== undefined
      ? { needsReferenceUpdate: strategy.needsReferenceUpdate }
      : {}),
    init: (setup) => strategy.init(setup),
    select: (state, ctx) => groupSelection(strategy.select(state, ctx), ctx.setup.numSilos, size, ctx.rng),
    aggregationWeights: (state, ctx) => strategy.aggregationWeights(state, ctx),
    observe: (state, outcome) => strategy.observe(state, outcome),
  };
}
