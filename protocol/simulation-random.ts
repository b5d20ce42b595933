/**
 * Seed-derived randomness for simulations — and for nothing else.
 *
 * The in-process engine (src/sim/secure-round.ts) and the simulation driver (./simulate.ts) draw
 * every silo's key seeds, self-mask seed b_u, Shamir coefficients and nonces from a stream derived
 * from the experiment seed, so that a run replays exactly. The experiment seed is public (it is in
 * the configuration and in results.json): anyone who knows it can recompute b_u and s_u^SK and
 * unmask x_u. That is acceptable for a simulation, where one process holds every update anyway,
 * and fatal on a network. The networked processes (src/client, src/server) therefore must never
 * reach this module: test/arch/layers.ts (`findSimulationRandomnessLeaks`) fails when anything
 * they import, directly or not, imports it, ./simulate.ts, src/sim/secure-round.ts, or constructs
 * a seeded source at all; the silo draws from crypto.getRandomValues (crypto/random-bytes.ts
 * `systemRandom`), which test/security/simulation-randomness.test.ts checks.
 */
import { type RandomSource, seededRandomFromInts } from '../crypto/random-bytes.js';

/** The stream of silo `silo` in round `round` of a simulation seeded with `seed` (./simulate.ts `seed`). */
export function simulationRandom(seed: number, round: number, silo: number): RandomSource {
  return seededRandomFromInts(seed, round, silo);
}

/** The stream of global silo `silo` in round `round` of an engine run with experiment seed `seed`. */
export function experimentRandom(seed: number, round: number, silo: number): RandomSource {
  return seededRandomFromInts(0x5ec, seed, round, silo);
}
