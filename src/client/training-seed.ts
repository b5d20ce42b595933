/**
 * A networked silo's training randomness (issue 32, R1 c): the seed of its minibatch order and of
 * any noise in its local training.
 *
 * By default it is fresh — drawn from the operating system's CSPRNG for every round and recorded in
 * the silo's journal (./journal.ts) — so a server that replays a round to a restarted silo cannot
 * make it train the same update again. The in-process engine derives it from the public seed,
 * `deriveSeed(seed, round, silo)`; a networked silo does the same only when asked to
 * (`fedscore client --deterministic-training`), for tests and reproductions that compare a
 * networked run with the engine's scores.
 */
import { randomInt } from 'node:crypto';
import { deriveSeed } from '../data/seed.js';

/** Exclusive upper bound of a training seed (the learner takes 31-bit seeds, src/data/seed.ts). */
export const TRAINING_SEED_BOUND = 2 ** 31;

/**
 * The training seed of silo `silo` in round `round`: fresh CSPRNG randomness, or with
 * `deterministic` the engine's `deriveSeed(seed, round, silo)`.
 */
export function trainingSeed(o: {
  readonly deterministic: boolean;
  readonly seed: number;
  readonly round: number;
  readonly silo: number;
}): number {
  return o.deterministic ? deriveSeed(o.seed, o.round, o.silo) : randomInt(0, TRAINING_SEED_BOUND);
}
