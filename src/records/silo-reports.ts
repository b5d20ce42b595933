/**
 * Which silos reported in a round — the one owner of that rule (issue 26, "one owner per formula"):
 * a silo reported when both of its utilities v(M0 + U_i) and v(M − U_i) are finite numbers (a silo
 * without a report has null). The audit, scores.json, the agreement notes and the leaderboard all
 * read the round's reporters through these two functions.
 */
import type { PrivateUtilities } from '../../scoring/private.js';

/** A round's recorded utilities, null for a silo without a report. */
export interface RecordedUtilities {
  full: number;
  empty: number;
  withOnly: readonly (number | null | undefined)[];
  without: readonly (number | null | undefined)[];
}

const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** The silos (0-based, ascending) whose two reported utilities are both finite numbers. */
export function reportingSilos(u: Pick<RecordedUtilities, 'withOnly' | 'without'>): number[] {
  const silos: number[] = [];
  for (let i = 0; i < u.withOnly.length; i++)
    if (finite(u.withOnly[i]) && finite(u.without[i])) silos.push(i);
  return silos;
}

/**
 * The reporting silos and their utilities as scoring/private.ts takes them (in the order of
 * `silos`); `silos` defaults to `reportingSilos(u)`.
 */
export function reportedUtilities(
  u: RecordedUtilities,
  silos: readonly number[] = reportingSilos(u),
): { silos: number[]; u: PrivateUtilities } {
  return {
    silos: [...silos],
    u: {
      full: u.full,
      empty: u.empty,
      withOnly: silos.map((i) => u.withOnly[i]!),
      without: silos.map((i) => u.without[i]!),
    },
  };
}
