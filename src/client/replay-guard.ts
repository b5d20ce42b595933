/**
 * At most one decodable sum per silo per base model (issue 32, R1; the rule and its proof:
 * docs/threat-model.md, "Round replay").
 *
 * Rule: a silo sends at most one Unmasking response per base model — over every round, attempt,
 * restart and consortium that share its key's journal (./journal.ts). It may train and mask again on
 * a base it has masked on (an attempt the server never took to Unmasking), but once it has sent an
 * Unmasking response for a round on base B it takes part in no other round on B: it refuses before
 * training, with {@link ReplayRefusedError} naming the round and the base. With
 * t ≥ ⌊(n + n_C)/2⌋ + 1, two attempts on one base cannot both gather the t shares a decode of an
 * honest silo's input needs (the honest responders of the two would be disjoint and each at least
 * t − n_C), so the server decodes at most one sum over B that contains an honest update.
 *
 * The journal entry of a masked input or an Unmasking response is on disk before the message is
 * sent. An abort the server reports after the silo's Unmasking response is recorded as a fault of
 * the server (`server-fault`, code FEDSCORE_ERR_ABORT_AFTER_UNMASKING): the server may hold the sum.
 */
import type { SiloCode } from '../consortium/error-codes.js';
import type { JournalEntry, SiloJournal } from './journal.js';

/** The code of a round the silo refuses because it already unmasked on the round's base model. */
export const BASE_ALREADY_UNMASKED = 'FEDSCORE_ERR_BASE_ALREADY_UNMASKED' satisfies SiloCode;
/** The code of the server fault recorded when a round is reported aborted after the silo unmasked. */
export const ABORT_AFTER_UNMASKING = 'FEDSCORE_ERR_ABORT_AFTER_UNMASKING' satisfies SiloCode;

/**
 * The silo refuses round `round`: it already sent an Unmasking response for a round on the same
 * base model (`base`, its digest); a second could give the server a second sum over that base.
 */
export class ReplayRefusedError extends Error {
  readonly code = BASE_ALREADY_UNMASKED;
  constructor(
    readonly round: number,
    readonly base: string,
    readonly earlier: JournalEntry,
  ) {
    super(
      `${BASE_ALREADY_UNMASKED}: round ${round}: base model ${base} is the base of round ${earlier.round} (attempt ${earlier.attempt}), for which this silo already sent its Unmasking response on ${earlier.at}; refusing to take part in another round on it (a second decodable sum over one base gives the server this silo's update by subtraction)`,
    );
    this.name = 'ReplayRefusedError';
  }
}

/** The guard of one silo: its journal and the consortium it takes part in. */
export class ReplayGuard {
  constructor(
    private readonly journal: SiloJournal,
    /** The consortium's digest as the journal records it. */
    readonly consortium: string,
  ) {}

  /** The round results this silo accepted in this consortium: round → digest of M_r. */
  accepted(): Map<number, string> {
    const out = new Map<number, string>();
    for (const e of this.journal.all())
      if (e.kind === 'accepted' && e.consortium === this.consortium && e.model) out.set(e.round, e.model);
    return out;
  }

  /**
   * Starts round `round` on the base model with digest `base`.
   * @throws ReplayRefusedError when the journal holds an Unmasking response for `base` (any round,
   *   any consortium).
   */
  begin(round: number, base: string): RoundGuard {
    this.journal.reload();
    this.refuseIfUnmasked(round, base);
    const earlierRounds = new Set(
      this.journal
        .all()
        .filter((e) => e.base === base && !(e.consortium === this.consortium && e.round === round))
        .map((e) => `${e.consortium}/${e.round}`),
    );
    return new RoundGuard(this, round, base, earlierRounds.size + 1);
  }

  /** @internal The journal (for {@link RoundGuard}). */
  record(e: Omit<JournalEntry, 'at'>): JournalEntry {
    return this.journal.append(e);
  }

  /** @internal Refuses when the journal (read again) holds an Unmasking response for `base`. */
  refuseIfUnmasked(round: number, base: string): void {
    const earlier = this.journal.all().find((e) => e.kind === 'unmasked' && e.base === base);
    if (earlier) throw new ReplayRefusedError(round, base, earlier);
  }

  /** @internal */
  reload(): void {
    this.journal.reload();
  }
}

/** One round of the silo under the guard. */
export class RoundGuard {
  /** Whether this silo's Unmasking response for the round has been (or is being) sent. */
  unmasked = false;

  constructor(
    private readonly guard: ReplayGuard,
    readonly round: number,
    /** The base model's digest. */
    readonly base: string,
    /** 1 + the rounds this silo trained, masked or unmasked for on the same base before. */
    readonly attempt: number,
  ) {}

  private entry(kind: JournalEntry['kind'], extra: Partial<JournalEntry> = {}): Omit<JournalEntry, 'at'> {
    return {
      kind,
      consortium: this.guard.consortium,
      round: this.round,
      attempt: this.attempt,
      base: this.base,
      ...extra,
    };
  }

  /** Records the training randomness drawn for the round (before training). @returns `seed`. */
  trained(seed: number): number {
    this.guard.record(this.entry('trained', { seed }));
    return seed;
  }

  /**
   * Called before each protocol message is sent: a masked input is journaled; an Unmasking
   * response is journaled after the journal, read again, is checked once more.
   * @throws ReplayRefusedError; JournalError when the entry cannot be written (nothing is sent).
   */
  beforeSend(type: string): void {
    if (type === 'mask') this.guard.record(this.entry('masked'));
    if (type === 'unmask') {
      this.guard.reload();
      this.guard.refuseIfUnmasked(this.round, this.base);
      this.guard.record(this.entry('unmasked'));
      this.unmasked = true;
    }
  }

  /** Records that the silo accepted the round's result M_r (digest `model`) before it reports on it. */
  accepted(model: string): void {
    this.guard.record(this.entry('accepted', { model }));
  }

  /**
   * The detail of a round that ended without a sum for this silo (`how` the server ended it,
   * `detail` the plain outcome): after its Unmasking response the server may hold the sum, so that
   * is recorded as a fault of the server ({@link RoundGuard.serverFault}).
   */
  endedWithoutSum(how: string, detail: string): { detail: string; fault?: 'server' } {
    return this.unmasked ? { detail: this.serverFault(how), fault: 'server' } : { detail };
  }

  /**
   * Records a server fault: the round was reported `how` after this silo's Unmasking response.
   * @returns the outcome's detail, with its code.
   */
  serverFault(how: string): string {
    const detail = `${ABORT_AFTER_UNMASKING}: round ${this.round}: the server reported the round ${how} after this silo's Unmasking response, so it may hold the sum over base model ${this.base}; recorded as a fault of the server, and this silo takes part in no other round on this base`;
    this.guard.record(this.entry('server-fault', { detail }));
    return detail;
  }
}
