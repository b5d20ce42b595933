/** The selection step of the round pipeline (../round-loop.ts): the strategy picks the round's silos. */
import { createRng } from '../../../scoring/seeded-rng.js';
import { deriveSeed, SEED_STREAMS } from '../../data/seed.js';
import type { Run, RunState } from './setup.js';

/**
 * The silos of round `round`, from public information only (the strategy's state and the history),
 * with a fresh generator seeded `deriveSeed(seed, round, 0x5e1)`.
 */
export function selectStep(run: Run, state: RunState, round: number): number[] {
  return run.strategy.select(state.strategy, {
    round,
    setup: run.setup,
    history: state.history,
    rng: createRng(deriveSeed(run.seed, round, SEED_STREAMS.round.selection)),
  });
}
