/**
 * The silos that must sit out the next round of a resumed `fedscore up` (issue 34): an `up` killed
 * (SIGKILL, a crash) in a round's Unmasking stage, after some but fewer than t silos sent their
 * Unmasking response, leaves a round the resumed run cannot complete. `up` closes it (./up-store.ts,
 * a round past masking is never withdrawn) and it aborts with the service's coded reason. The
 * silos that sent their response then refuse every later round on the same base model
 * (FEDSCORE_ERR_BASE_ALREADY_UNMASKED, src/client/replay-guard.ts: a second decodable sum over one
 * base would give the server their update by subtraction; docs/threat-model.md, "Round replay"),
 * and the next round — an aborted round leaves the model unchanged — is on that base.
 *
 * Why the round is not kept open for the restarted silos to finish (the other way out the issue
 * weighs): the silos' round secrets — the Shamir shares of every peer's b_v and s_v^SK each holds,
 * its own s_u^SK — come from the OS CSPRNG and live only in the silo's process (protocol/client.ts
 * wipes them at the end of the round); the journal holds none of them, by design. The responses
 * already sent are in the store, so answering them again adds nothing; the silos that had not
 * answered lost what they would answer with when their process died. No restarted silo can bring
 * the round to t responses, so it must end without a sum; keeping it open would only wait for its
 * deadline.
 *
 * So the resumed `up` reads the silos' journals (beside their keys, src/client/journal.ts) and:
 *
 * - starts every silo but those that unmasked on the next round's base, which sit out the rounds
 *   on that base and are started once a round has a result (a new base they have not unmasked on);
 *   a stage that waits only for them is closed at once — never a wait for a silo that refuses;
 * - stops with exit code 1 and one line naming the round and the code when the others are fewer
 *   than the threshold t: the consortium cannot go on from that base (the threat model's
 *   "Liveness"); `fedscore up --fresh` starts over.
 *
 * The refusal itself is untouched: a silo still refuses any round on a base it unmasked on.
 */
import { resolve } from 'node:path';
import { journalPathOf, readJournal } from '../../client/journal.js';
import { BASE_ALREADY_UNMASKED } from '../../client/replay-guard.js';
import type { Round } from '../../consortium/schemas.js';

/** What this reads of a round (the service's `GET …/rounds`). */
export type RoundFacts = Pick<Round, 'round' | 'stage' | 'baseModel' | 'resultModel' | 'error'>;

/** What the next round of a resumed run can have. */
export type NextRound =
  /** Every silo takes part. */
  | { readonly kind: 'all' }
  /**
   * `silos` unmasked in `rounds` (over, without a result) on model version `base`, the next
   * round's base: they sit out until a round has a result.
   */
  | {
      readonly kind: 'sit-out';
      readonly silos: readonly number[];
      readonly base: number;
      readonly rounds: readonly number[];
    }
  /** The others are fewer than t: the consortium cannot go on from `base`. */
  | {
      readonly kind: 'stop';
      readonly silos: readonly number[];
      readonly base: number;
      readonly rounds: readonly number[];
    };

/** The model version the next round opens from: the latest round result (0: M0). */
export function nextBase(rounds: readonly RoundFacts[]): number {
  return rounds.reduce((v, r) => (r.resultModel === null ? v : Math.max(v, r.resultModel)), 0);
}

/**
 * The next round of a resumed run.
 * @param rounds the consortium's rounds (every one over: `up` closed an interrupted one first).
 * @param unmasked silo → the rounds its journal holds an Unmasking response for (this consortium).
 * @param n the number of silos; `threshold` the consortium's t.
 */
export function nextRound(
  rounds: readonly RoundFacts[],
  unmasked: ReadonlyMap<number, readonly number[]>,
  n: number,
  threshold: number,
): NextRound {
  const base = nextBase(rounds);
  // The attempts on that base: rounds over without a result whose base it is.
  const attempts = rounds.filter((r) => r.baseModel === base && r.resultModel === null).map((r) => r.round);
  const silos = [...unmasked.entries()]
    .filter(([, rs]) => rs.some((r) => attempts.includes(r)))
    .map(([i]) => i)
    .sort((a, b) => a - b);
  if (silos.length === 0) return { kind: 'all' };
  const rs = attempts.filter((r) => silos.some((i) => unmasked.get(i)!.includes(r)));
  return { kind: n - silos.length < threshold ? 'stop' : 'sit-out', silos, base, rounds: rs };
}

/**
 * Silo → the rounds of consortium `digest` its journal (beside `keys[i]`, relative to `dir`) holds
 * an Unmasking response for. @throws JournalError naming the file when a journal does not parse.
 */
export function unmaskedRounds(dir: string, keys: readonly string[], digest: string): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const [i, key] of keys.entries()) {
    const rounds = readJournal(journalPathOf(resolve(dir, key)))
      .filter((e) => e.kind === 'unmasked' && e.consortium === digest)
      .map((e) => e.round);
    if (rounds.length > 0) out.set(i, rounds);
  }
  return out;
}

/** The console's line for a `sit-out` or `stop` (`who` names silos; `ended` says how a round ended). */
export function nextRoundLine(
  next: Exclude<NextRound, { kind: 'all' }>,
  who: (ids: readonly number[]) => string,
  ended: (round: number) => string,
  o: { threshold: number; n: number; dir: string },
): string {
  const these = next.silos.length === 1 ? 'it refuses' : 'they refuse';
  const what = `${next.rounds.map(ended).join('; ')}; ${who(next.silos)} had sent ${next.silos.length === 1 ? 'its Unmasking response' : 'their Unmasking responses'} in it: ${BASE_ALREADY_UNMASKED}: ${these} every round on its base model (version ${next.base}), the next round's (docs/threat-model.md, "Round replay")`;
  if (next.kind === 'sit-out')
    return `${what}; ${next.silos.length === 1 ? 'it sits' : 'they sit'} out until a round has a result, the others go on`;
  const others = o.n - next.silos.length;
  return `cannot go on: ${what}, and the ${others} other silo${others === 1 ? '' : 's'} ${others === 1 ? 'is' : 'are'} fewer than t = ${o.threshold}; fedscore up ${o.dir} --fresh starts over`;
}
