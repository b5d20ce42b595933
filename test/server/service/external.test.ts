/**
 * Reports-only rounds in the service core (src/server/service/external.ts), no HTTP: for random
 * consortia (n silos, either utility, either empty-coalition convention), random utilities and a
 * random set of reporters, the published round scores equal scoring/private.ts on the same
 * utilities, and the round is scored exactly when every member reported (or, with at least two
 * reports, when the operator closes it).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signingKeyPairFromSeed } from '../../../crypto/signature.js';
import { utilitiesUnder } from '../../../scoring/empty-coalition.js';
import { keptUtilities, quarantineReports } from '../../../scoring/manipulation/quarantine.js';
import { SCHEMES, scoreScheme } from '../../../scoring/private.js';
import { signedReport } from '../../../src/consortium/private-scoring.js';
import type { ConsortiumInput } from '../../../src/consortium/schemas.js';
import { ScoringService } from '../../../src/server/service/scoring-service.js';
import { openStore } from '../../../src/server/store/database.js';
import { Clock } from '../_harness.js';

const KEYS = Array.from({ length: 6 }, (_, i) => signingKeyPairFromSeed(new Uint8Array(32).fill(i + 1)));

const caseArb = fc
  .record({
    n: fc.integer({ min: 2, max: 6 }),
    negLoss: fc.boolean(),
    emptyCoalition: fc.constantFrom('initialModel' as const, 'zero' as const),
  })
  .chain(({ n, negLoss, emptyCoalition }) => {
    const lo = negLoss ? -3 : 0;
    const hi = negLoss ? 0 : 1;
    const u = fc.double({ min: lo, max: hi, noNaN: true });
    return fc.record({
      n: fc.constant(n),
      negLoss: fc.constant(negLoss),
      emptyCoalition: fc.constant(emptyCoalition),
      full: u,
      empty: u,
      reports: fc.array(fc.tuple(u, u), { minLength: n, maxLength: n }),
      // who reports: a non-empty subset, in a random order
      order: fc.shuffledSubarray(
        Array.from({ length: n }, (_, i) => i),
        { minLength: 2 },
      ),
    });
  });

describe('reports-only rounds in the service', () => {
  it('score as scoring/private.ts on the same utilities (property)', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const store = await openStore({ sqlite: ':memory:' });
        try {
          const service = new ScoringService({ store, now: new Clock().now });
          const keys = KEYS.slice(0, c.n);
          await service.createConsortium({
            id: 'ext',
            participants: keys.map((k) => ({ publicKey: Buffer.from(k.publicKey).toString('hex') })),
            threshold: c.n,
            model: { name: 'elsewhere', parameters: 1 },
            testSetDigest: 'ab'.repeat(32),
            schemes: [...SCHEMES],
            encoding: { clip: 1, weightRange: 1 },
            utility: c.negLoss ? { name: 'negLoss', maxLoss: 3 } : { name: 'accuracy' },
            emptyCoalition: c.emptyCoalition,
            secureAggregation: 'external',
          } as ConsortiumInput);
          const opened = await service.postExternalUtilities('ext', 1, c.full, c.empty);
          expect(opened).toMatchObject({ created: true, round: { stage: 'reporting' } });
          for (const [k, s] of c.order.entries()) {
            const [singleton, complement] = c.reports[s]!;
            const r = await service.submitReport(
              'ext',
              1,
              s,
              signedReport('ext', 1, s, singleton, complement, keys[s]!),
            );
            const everyone = k === c.n - 1;
            expect(r.round.stage).toBe(everyone ? 'scored' : 'reporting');
          }
          if (c.order.length < c.n)
            expect((await service.forceAdvance('ext', 1, 'reporting')).stage).toBe('scored');
          const reporters = [...c.order].sort((a, b) => a - b);
          const reported = {
            full: c.full,
            empty: c.empty,
            withOnly: reporters.map((s) => c.reports[s]![0]),
            without: reporters.map((s) => c.reports[s]![1]),
          };
          // The detector's flagged reports are quarantined (issue 27, A4); fewer than two left: no scores.
          const { kept, quarantined } =
            reporters.length >= 2 ? quarantineReports(reported) : { kept: [], quarantined: [] };
          const silos = kept.length >= 2 ? kept.map((k) => reporters[k]!) : [];
          const scores = await service.roundScores('ext', 1);
          expect(scores.silos).toEqual(silos);
          expect(scores.quarantined.map((q) => q.silo)).toEqual(quarantined.map((q) => reporters[q.index]));
          expect(scores.utilities).toEqual({ full: c.full, empty: c.empty });
          if (silos.length === 0) {
            for (const m of SCHEMES) expect(scores.schemes[m]).toEqual(Array(c.n).fill(null));
            return;
          }
          const u = utilitiesUnder(keptUtilities(reported, kept), c.emptyCoalition);
          for (const m of SCHEMES) {
            const want: (number | null)[] = Array.from({ length: c.n }, () => null);
            const values = scoreScheme(m, u).scores;
            silos.forEach((s, k) => {
              // stored as JSON: −0 reads back as 0, non-finite as null
              want[s] = Number.isFinite(values[k]!) ? values[k]! + 0 : null;
            });
            expect(scores.schemes[m], m).toEqual(want);
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
