/**
 * What every part of the scoring service shares: the store (its Kysely handle and dialect), the
 * clock, the optional evaluator of v(·) and where its failures are reported. The parts get it
 * from the facade (./scoring-service.ts); nothing here is a module-level singleton.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Consortium } from '../../consortium/schemas.js';
import type { StoreHandle } from '../store/database.js';
import type { Database } from '../store/schema.js';

/** The server's utility v(·) of a parameter vector on the consortium's test set. */
export type Evaluator = (consortium: Consortium, params: Float32Array) => Promise<number>;

/**
 * A round's progress, for the operator's log (one event per round opened, stage closed, and round
 * scored, closed or aborted). Emitted once per change, after its transaction committed.
 */
export interface RoundEvent {
  readonly consortium: string;
  readonly round: number;
  /** 'opened', a stage the round moved to ('share' … 'reporting'), or its end. */
  readonly event:
    | 'opened'
    | 'share'
    | 'mask'
    | 'consistency'
    | 'unmask'
    | 'reporting'
    | 'scored'
    | 'closed'
    | 'aborted';
  readonly detail: string;
  /**
   * For a stage closed (the round moved to another protocol stage, or was scored): the stage that
   * closed, the silos it waited for (null: every silo of the consortium) and those that went on
   * (sent their message, or their report); the others were late.
   */
  readonly progress?: StageClosed;
}

/** A closed stage's participation, for the operator's log ({@link RoundEvent.progress}). */
export interface StageClosed {
  readonly closed: string;
  readonly waited: readonly number[] | null;
  readonly went: readonly number[];
}

/** The store, clock and evaluator the service's parts share. */
export interface ServiceContext {
  readonly db: Kysely<Database>;
  readonly dialect: StoreHandle['dialect'];
  /** Clock in ms since the epoch. */
  readonly now: () => number;
  /** Computes v(M) and v(M0) once a round's sum is known; absent: the operator posts them. */
  readonly evaluate: Evaluator | undefined;
  /** Where evaluator failures are reported. */
  readonly warn: (message: string, error: unknown) => void;
  /** Where round events go (the operator's log). */
  readonly event: (e: RoundEvent) => void;
}

/** The database or a transaction on it: queries that may run inside or outside a transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;

/** Whether `e` is a unique-constraint violation from better-sqlite3 or pg. */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Whether the store answers a query (readiness). */
export async function storeAnswers(db: Kysely<Database>): Promise<boolean> {
  try {
    await db.selectFrom('consortia').select('id').limit(1).execute();
    return true;
  } catch {
    return false;
  }
}
