/**
 * src/audit/manipulation-audit.ts for a live consortium (the service's audit): one round at a time
 * (`auditRecordedRound`) and assembled (`assembleRecordedAudit`, `assembleRecordedSummary` with
 * the rounds' summary parts) is the document `auditRecordedRounds` computes at once; the bounded
 * mode (`maxOptimizedSilos`) names what it leaves out and leaves those fields empty.
 */
import { describe, expect, it } from 'vitest';
import {
  assembleRecordedAudit,
  assembleRecordedSummary,
  auditRecordedRound,
  auditRecordedRounds,
  auditSummaryPart,
  BOUNDED_RANDOM_TRIALS,
  type RecordedRound,
  type RoundAudit,
} from '../../src/audit/manipulation-audit.js';

function rounds(n: number, count: number): RecordedRound[] {
  let x = 12345;
  const next = () => {
    x = (x * 16807) % 2147483647;
    return x / 2147483647;
  };
  return Array.from({ length: count }, (_, r) => ({
    round: r + 1,
    utilities: { full: 0.85 + 0.01 * r, empty: 0.1 },
    withOnly: Array.from({ length: n }, (_, i) => (i === n - 1 && r === 0 ? null : 0.3 + 0.3 * next())),
    without: Array.from({ length: n }, () => 0.7 + 0.1 * next()),
    schemes: {},
  }));
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `silo-${i}`);

describe('the recorded rounds audited one at a time', () => {
  it('assemble to the document auditRecordedRounds computes', () => {
    const rs = rounds(5, 3);
    const options = { range: { lo: 0, hi: 1 }, outOfRange: 'skip' as const };
    const whole = auditRecordedRounds(rs, names(5), 'src', options, 'zero');
    const entries = rs.map((r) => auditRecordedRound(r, options, 'zero'));
    expect(assembleRecordedAudit(entries, names(5), 'src', options)).toEqual(whole);
    const summary = assembleRecordedSummary(entries.map(auditSummaryPart), names(5), 'src', options);
    expect({ ...summary, runs: whole.runs }).toEqual(whole);
  });

  it('the bounded mode names what it leaves out and leaves it empty', () => {
    const [r] = rounds(6, 1)
      .slice(0, 1)
      .map((x) => ({ ...x, withOnly: x.withOnly.map((v) => v ?? 0.4) }));
    const full = auditRecordedRound(r!, { maxOptimizedSilos: 6 }) as RoundAudit;
    expect(full.bounded).toBeUndefined();
    expect(full.undetectedBoxes).toHaveLength(6);
    const bounded = auditRecordedRound(r!, { maxOptimizedSilos: 5 }) as RoundAudit;
    expect(bounded.bounded).toEqual({
      maxOptimizedSilos: 5,
      silos: 6,
      randomTrials: BOUNDED_RANDOM_TRIALS,
      notComputed: [
        'undetectedBoxes',
        'schemes.*.selfGainUndetected',
        'schemes.*.influence',
        'schemes.*.sensitivity',
        'schemes.*.damage',
        'schemes.eeMedian.selfGain',
        'schemes.eeMedian.damageBound',
      ],
    });
    expect(bounded.undetectedBoxes).toEqual([]);
    for (const s of ['loo', 'ioi', 'fp', 'ee', 'eeMedian'] as const) {
      expect(bounded.schemes[s].selfGainUndetected).toEqual([]);
      expect(bounded.schemes[s].influence).toEqual([]);
      expect(bounded.schemes[s].damage).toEqual([]);
      expect(bounded.schemes[s].damageExact).toBe(false);
      // what is computed equals the full round's
      expect(bounded.schemes[s].scores).toEqual(full.schemes[s].scores);
      if (s !== 'eeMedian') expect(bounded.schemes[s].selfGain).toEqual(full.schemes[s].selfGain);
    }
    expect(bounded.schemes.eeMedian.selfGain).toEqual([]);
    expect(bounded.schemes.eeMedian.damageBound).toBeNull();
    expect(bounded.detection.zWithOnly).toEqual(full.detection.zWithOnly);
    expect(bounded.schemes.fp.attacks.random.count).toBe(6 * BOUNDED_RANDOM_TRIALS);
  });

  it('refuses a maxOptimizedSilos that is not a positive integer, naming it', () => {
    expect(() => auditRecordedRound(rounds(3, 1)[0]!, { maxOptimizedSilos: 0 })).toThrow(
      'options.maxOptimizedSilos: expected a positive integer, got 0',
    );
  });
});
