/**
 * What a strategy knows before the first round (strategies/strategy.ts `StrategySetup`), from the
 * configuration, the seed and the consortium's data: the engine (round/run.ts) and every silo of a
 * networked run (networked.ts) derive the same one, so their strategies select and weigh alike.
 */
import { classCounts } from '../data/dataset.js';
import type { StrategySetup } from '../strategies/strategy.js';
import type { Consortium } from './consortium-data.js';
import type { RunConfig } from './run-config.js';

/** The setup: n silos, C classes, R rounds, the seed, each silo's example count and label histogram. */
export function strategySetupOf(cfg: RunConfig, seed: number, consortium: Consortium): StrategySetup {
  return {
    numSilos: cfg.silos,
    numClasses: consortium.numClasses,
    rounds: cfg.rounds,
    seed,
    silos: consortium.silos.map((s) => ({
      examples: s.n,
      labelHistogram: classCounts(s.y, consortium.numClasses),
    })),
  };
}
