/**
 * Issue 32 — multi-round differencing across bases (So et al., AAAI 2023). A strategy whose
 * selected set changes from round to round (here FedAvg over a random 3 of 9, equal weights, the
 * networked plan of src/strategies/networked-plan.ts) publishes sums over different sets; the server
 * knows the sets and weights, so with slowly changing updates its least-squares estimate of one
 * silo's update over T = 20 rounds (bench/_multi-round.ts) beats the round mean, the mean of the
 * published sums of the rounds that selected the silo.
 *
 * Against main at f7a4317 (no defence): cosine 0.993 against the baseline's 0.827 (relative error
 * 0.117 against 0.565) — the first test passes there as it does here (the attack works); main has
 * no `selectionGroups` (createStrategy refuses it as an unknown parameter of 'fedavg'), so the
 * second failed there.
 * With selection in fixed groups of 3 (`strategy.selectionGroups: 3`,
 * src/strategies/selection-groups.ts) every published sum is a sum of whole groups: the estimate
 * is no closer than the baseline (equal, to 1e-6).
 */
import { describe, expect, it } from 'vitest';
import { measureDifferencing } from '../../bench/_multi-round.js';
import type { StrategyConfig } from '../../src/strategies/registry.js';

const SETUP = { silos: 9, rounds: 20, dimension: 64, drift: 0.1, seed: 3 } as const;
const K_OF_N = { name: 'fedavg', clientsPerRound: 3, weights: 'equal' } as StrategyConfig;

describe('multi-round differencing: the server least-squares-fits one silo from 20 published sums', () => {
  it('without the defence (3 of 9 at random) the estimate beats the round mean', async () => {
    const r = await measureDifferencing({ ...SETUP, strategy: K_OF_N });
    console.log(`no defence: ${JSON.stringify(r)}`);
    expect(r.rank).toBe(9);
    expect(r.estimate.cosine).toBeGreaterThan(r.baseline.cosine + 0.05);
    expect(r.estimate.relError).toBeLessThan(r.baseline.relError / 2);
  });

  it('selecting in fixed groups of 3, it does not', async () => {
    const strategy = { ...K_OF_N, selectionGroups: 3 } as StrategyConfig;
    const r = await measureDifferencing({ ...SETUP, strategy });
    console.log(`groups of 3: ${JSON.stringify(r)}`);
    expect(r.rank).toBe(3);
    expect(r.estimate.cosine).toBeLessThanOrEqual(r.baseline.cosine + 1e-6);
    expect(r.estimate.relError).toBeGreaterThanOrEqual(r.baseline.relError - 1e-6);
  });
});
