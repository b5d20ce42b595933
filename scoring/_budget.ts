/**
 * Internal: an evaluation budget over a memoized game (docs/architecture.md, "Conventions": the
 * evaluation budget is explicit). Never re-exported.
 *
 * The budget counts distinct coalitions sent to the underlying game. Before a batch is sent,
 * its cost (distinct coalitions not requested before through this tracker) is computed; a batch
 * whose cost exceeds what is left is refused, so `evaluations ≤ limit` always holds. When the
 * caller passes a game that is already memoized and already holds values, the predicted cost
 * over-counts (those coalitions are free), which errs on the safe side.
 */
import { type Coalition, coalitionKey } from './coalition.js';
import { type Game, type MemoGame, memoize } from './game.js';

/** Budget tracker: a memoized game plus the set of coalitions already paid for. */
export class Budget {
  readonly game: MemoGame;
  readonly limit: number;
  private readonly paid = new Set<string>();
  private readonly start: number;

  constructor(game: Game, limit: number) {
    this.game = memoize(game);
    this.limit = limit;
    this.start = this.game.evaluations;
  }

  /** Coalitions paid for so far (≥ evaluations actually made by the underlying game). */
  get spent(): number {
    return this.paid.size;
  }

  /** What is left of the budget. */
  get remaining(): number {
    return this.limit - this.paid.size;
  }

  /** Distinct evaluations the underlying game made since this tracker was created. */
  get evaluations(): number {
    return this.game.evaluations - this.start;
  }

  /** Distinct coalitions of the batch not paid for yet. */
  cost(coalitions: readonly Coalition[]): number {
    const fresh = new Set<string>();
    for (const c of coalitions) {
      const k = coalitionKey(c);
      if (!this.paid.has(k)) fresh.add(k);
    }
    return fresh.size;
  }

  /** Number of leading coalitions of the batch that fit in what is left of the budget. */
  affordablePrefix(coalitions: readonly Coalition[]): number {
    const fresh = new Set<string>();
    const left = this.remaining;
    for (let b = 0; b < coalitions.length; b++) {
      const k = coalitionKey(coalitions[b]!);
      if (!this.paid.has(k) && !fresh.has(k)) {
        if (fresh.size === left) return b;
        fresh.add(k);
      }
    }
    return coalitions.length;
  }

  /** Values of the batch, or null (and nothing evaluated) when it does not fit in the budget. */
  async values(coalitions: readonly Coalition[]): Promise<Float64Array | null> {
    if (this.cost(coalitions) > this.remaining) return null;
    for (const c of coalitions) this.paid.add(coalitionKey(c));
    return this.game.values(coalitions);
  }
}
