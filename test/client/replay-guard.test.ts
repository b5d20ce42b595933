/**
 * src/client/replay-guard.ts, the rule of issue 32 (R1): a silo sends at most one Unmasking
 * response per base model, whatever the round, attempt, restart or consortium; it may train and
 * mask again on a base whose earlier attempt never reached its Unmasking response.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { SiloJournal } from '../../src/client/journal.js';
import { ReplayGuard, ReplayRefusedError } from '../../src/client/replay-guard.js';

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
const journalAt = () => {
  const d = mkdtempSync(join(tmpdir(), 'fedscore-guard-test-'));
  dirs.push(d);
  return join(d, 'silo.key.journal');
};
const B = 'b0'.repeat(32);
const B2 = 'b2'.repeat(32);

describe('one Unmasking response per base model', () => {
  it('an attempt that never reached Unmasking may be retried on the same base; after an Unmasking response no round on it is', () => {
    const path = journalAt();
    const guard = new ReplayGuard(SiloJournal.open(path), 'c1');
    const one = guard.begin(1, B);
    one.trained(7);
    one.beforeSend('advertise');
    one.beforeSend('mask');
    // Round 1 aborted before Unmasking: round 2 on the same base is attempt 2, and may unmask.
    const two = guard.begin(2, B);
    expect(two.attempt).toBe(2);
    two.beforeSend('mask');
    two.beforeSend('unmask');
    expect(two.unmasked).toBe(true);
    // Round 3 on the same base is refused before training, naming the round and the base.
    const e = (() => {
      try {
        guard.begin(3, B);
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(ReplayRefusedError);
    expect(e).toMatchObject({ code: 'FEDSCORE_ERR_BASE_ALREADY_UNMASKED', round: 3, base: B });
    expect((e as Error).message).toMatch(
      new RegExp(
        `^FEDSCORE_ERR_BASE_ALREADY_UNMASKED: round 3: base model ${B} is the base of round 2 \\(attempt 2\\)`,
      ),
    );
    // Another base is fine.
    expect(guard.begin(3, B2).attempt).toBe(1);
  });

  it('holds across a restart (a new process reads the journal) and across consortia sharing the key', () => {
    const path = journalAt();
    const first = new ReplayGuard(SiloJournal.open(path), 'c1').begin(1, B);
    first.beforeSend('mask');
    first.beforeSend('unmask');
    expect(() => new ReplayGuard(SiloJournal.open(path), 'c1').begin(1, B)).toThrow(ReplayRefusedError);
    expect(() => new ReplayGuard(SiloJournal.open(path), 'another-consortium').begin(1, B)).toThrow(
      ReplayRefusedError,
    );
  });

  it('refuses the Unmasking response itself when another process with the same key unmasked on the base meanwhile', () => {
    const path = journalAt();
    const a = new ReplayGuard(SiloJournal.open(path), 'c1').begin(5, B);
    const b = new ReplayGuard(SiloJournal.open(path), 'c1').begin(6, B);
    a.beforeSend('unmask');
    expect(() => b.beforeSend('unmask')).toThrow(ReplayRefusedError);
    expect(b.unmasked).toBe(false);
  });

  it('records a server fault and the accepted results of its consortium', () => {
    const path = journalAt();
    const j = SiloJournal.open(path);
    const guard = new ReplayGuard(j, 'c1');
    const r = guard.begin(4, B);
    r.beforeSend('unmask');
    expect(r.serverFault('aborted (FEDSCORE_ERR_SECAGG_ABORTED)')).toMatch(
      /^FEDSCORE_ERR_ABORT_AFTER_UNMASKING: round 4: the server reported the round aborted \(FEDSCORE_ERR_SECAGG_ABORTED\) after this silo's Unmasking response/,
    );
    r.accepted('d1'.repeat(32));
    new ReplayGuard(j, 'other').begin(9, B2).accepted('d9'.repeat(32));
    expect(j.all().map((e) => e.kind)).toEqual(['unmasked', 'server-fault', 'accepted', 'accepted']);
    expect([...guard.accepted()]).toEqual([[4, 'd1'.repeat(32)]]);
  });

  it('property: over any sequence of rounds on a few bases, at most one Unmasking response per base is sent', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ base: fc.integer({ min: 0, max: 2 }), reach: fc.constantFrom('mask', 'unmask') }),
          {
            maxLength: 12,
          },
        ),
        (rounds) => {
          const guard = new ReplayGuard(SiloJournal.open(journalAt()), 'c1');
          const sent = new Map<number, number>();
          rounds.forEach((x, k) => {
            const base = String(x.base).padStart(2, '0').repeat(32);
            try {
              const g = guard.begin(k + 1, base);
              g.beforeSend('mask');
              if (x.reach === 'unmask') {
                g.beforeSend('unmask');
                sent.set(x.base, (sent.get(x.base) ?? 0) + 1);
              }
            } catch (e) {
              if (!(e instanceof ReplayRefusedError)) throw e;
              expect(sent.get(x.base)).toBe(1);
            }
          });
          for (const n of sent.values()) expect(n).toBe(1);
        },
      ),
      { numRuns: 30 },
    );
  });
});
