/**
 * The operator's log of a round, one line per change: the round opened, each stage closed (who
 * went on and who was late), the round scored (who reported late), closed or aborted. A pure
 * function of the event and the consortium, so the lines are tested without a service.
 */
import type { Consortium } from '../consortium/schemas.js';
import type { RoundEvent } from './service/context.js';

/** A round's log line: its level, its message and the fields the JSON form carries beside it. */
export interface RoundLogLine {
  readonly level: 'info' | 'warn';
  readonly message: string;
  readonly fields: {
    readonly consortium: string;
    readonly round: number;
    readonly event: RoundEvent['event'];
    readonly late?: readonly number[];
  };
}

/**
 * The line of `e` ("round r of R" when the consortium has a schedule): info for a round opened,
 * a stage closed and a round scored, warn for a round closed or aborted early.
 *
 * `consortium: c: round 2 of 3: mask closed, 2 of 3 silos went on; late: silo 1`
 */
export function roundLogLine(e: RoundEvent, c: Pick<Consortium, 'participants' | 'rounds'>): RoundLogLine {
  const of = c.rounds !== undefined ? ` of ${c.rounds}` : '';
  const head = `consortium ${e.consortium}: round ${e.round}${of}`;
  const fields = { consortium: e.consortium, round: e.round, event: e.event };
  const p = e.progress;
  if (p === undefined) {
    const level = e.event === 'closed' || e.event === 'aborted' ? 'warn' : 'info';
    const what = e.event === 'opened' || level === 'warn' ? e.event : `moved to ${e.event}`;
    return { level, message: `${head} ${what}${e.detail ? ` (${e.detail})` : ''}`, fields };
  }
  const waited = p.waited ?? c.participants.map((_, i) => i);
  const went = new Set(p.went);
  const late = waited.filter((s) => !went.has(s));
  const scored = e.event === 'scored';
  const verb = scored ? 'reported' : 'went on';
  const lateText =
    late.length === 0 ? 'none late' : `late: ${late.length === 1 ? 'silo' : 'silos'} ${late.join(', ')}`;
  const message = scored
    ? `${head} scored: ${waited.length - late.length} of ${waited.length} silos ${verb}; ${lateText}`
    : `${head}: ${p.closed} closed, ${waited.length - late.length} of ${waited.length} silos ${verb}; ${lateText}`;
  return { level: 'info', message, fields: { ...fields, late } };
}
