/**
 * What the process keeps of a round's results (src/server/service/round-rows.ts `afterCommit`,
 * models.ts): the published Σ w_iΔ_i and the round's new model are put in the process's caches
 * when the transaction that wrote them commits — never when it rolls back — so the silos'
 * downloads are served without reading 8·d and 4·d bytes back from the store; and the initial
 * model, which the operator may replace until the first round opens, is never served stale.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { STAGE_MESSAGE_TYPES } from '../../../protocol/server.js';
import { simulatedIdentities } from '../../../protocol/simulate.js';
import type { ServiceContext } from '../../../src/server/service/context.js';
import { RoundRows } from '../../../src/server/service/round-rows.js';
import { ScoringService } from '../../../src/server/service/scoring-service.js';
import { openStore, type StoreHandle } from '../../../src/server/store/database.js';
import { Clock, D, f32bytes, INITIAL } from '../_harness.js';
import { consortiumInput, DirectSilo, type Fixture } from './_service.js';

const dir = mkdtempSync(join(tmpdir(), 'fedscore-published-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A service on a store file, with c1 (n = 4, t = 3) and its initial model. */
async function fixtureOn(file: string): Promise<Fixture> {
  const store = await openStore({ sqlite: file });
  const clock = new Clock();
  const service = new ScoringService({ store, now: clock.now });
  const keys = simulatedIdentities(4, 11);
  await service.createConsortium(consortiumInput(keys));
  await service.setInitialModel('c1', f32bytes(INITIAL));
  return { service, store, clock, keys, close: () => store.close() };
}

/** Runs round 1 of c1 through every stage to `reporting`. */
async function aggregateRound(f: Fixture): Promise<void> {
  await f.service.openRound('c1');
  const silos = [0, 1, 2, 3].map((i) => new DirectSilo(f, i));
  for (const s of silos) await s.post(s.advertise());
  for (const kind of STAGE_MESSAGE_TYPES) {
    const replies = [];
    for (const s of silos) replies.push(await s.answer(kind));
    for (const [i, s] of silos.entries()) await s.post(replies[i]!);
  }
  expect((await f.service.round('c1', 1)).stage).toBe('reporting');
}

/** A second connection to the store file, standing for what another replica could do. */
async function other(file: string): Promise<StoreHandle> {
  return openStore({ sqlite: file });
}

describe('service: results kept in the process once committed', () => {
  test('the aggregate and model 1 are served as stored, and without reading them back', async () => {
    const file = join(dir, 'served.db');
    const f = await fixtureOn(file);
    const raw = await other(file);
    try {
      await aggregateRound(f);
      const stored = await raw.db
        .selectFrom('rounds')
        .select('weighted_sum')
        .where('round', '=', 1)
        .executeTakeFirstOrThrow();
      const model = await raw.db
        .selectFrom('models')
        .select('params')
        .where('version', '=', 1)
        .executeTakeFirstOrThrow();
      expect(stored.weighted_sum?.byteLength).toBe(8 * D);
      // Blank both rows behind the service's back: what it serves now came from its process.
      await raw.db
        .updateTable('rounds')
        .set({ weighted_sum: Buffer.alloc(8) })
        .where('round', '=', 1)
        .execute();
      await raw.db
        .updateTable('models')
        .set({ params: Buffer.alloc(4) })
        .where('version', '=', 1)
        .execute();
      expect(Buffer.from((await f.service.aggregate('c1', 1)).weightedSum).equals(stored.weighted_sum!)).toBe(
        true,
      );
      expect((await f.service.model('c1', 1)).bytes.equals(model.params)).toBe(true);
      expect((await f.service.model('c1')).version).toBe(1);
      // A process that did not write them reads them from the store.
      const fresh = new ScoringService({ store: raw, now: f.clock.now });
      expect((await fresh.aggregate('c1', 1)).weightedSum.byteLength).toBe(8);
      expect((await fresh.model('c1', 1)).bytes.byteLength).toBe(4);
    } finally {
      await raw.close();
      await f.close();
    }
  });

  test('an after-commit action runs once its transaction commits, never when it rolls back', async () => {
    const f = await fixtureOn(join(dir, 'rollback.db'));
    try {
      await f.service.openRound('c1');
      const ctx: ServiceContext = {
        db: f.store.db,
        dialect: f.store.dialect,
        now: f.clock.now,
        evaluate: undefined,
        warn: () => {},
        event: () => {},
      };
      const rows = new RoundRows(ctx);
      const ran: string[] = [];
      await expect(
        rows.locked('c1', 1, async (trx) => {
          rows.afterCommit(trx, () => ran.push('rolled back'));
          throw new Error('step failed');
        }),
      ).rejects.toThrow('step failed');
      await rows.locked('c1', 1, async (trx) => {
        rows.afterCommit(trx, () => ran.push('committed'));
        expect(ran).toEqual([]); // not before the commit
      });
      expect(ran).toEqual(['committed']);
      await f.store.db.transaction().execute(async (trx) => {
        expect(() => rows.afterCommit(trx, () => {})).toThrow(/not a transaction of RoundRows.locked/);
      });
    } finally {
      await f.close();
    }
  });

  test('an initial model replaced through another instance before round 1 is never served stale', async () => {
    const file = join(dir, 'initial.db');
    const a = await fixtureOn(file);
    const raw = await other(file);
    const b = new ScoringService({ store: raw, now: a.clock.now });
    try {
      expect((await a.service.model('c1', 0)).bytes.equals(Buffer.from(f32bytes(INITIAL)))).toBe(true);
      const replaced = Float32Array.from(INITIAL, (x) => x + 1);
      await b.setInitialModel('c1', f32bytes(replaced));
      expect((await a.service.model('c1', 0)).bytes.equals(Buffer.from(f32bytes(replaced)))).toBe(true);
      expect((await a.service.model('c1')).bytes.equals(Buffer.from(f32bytes(replaced)))).toBe(true);
    } finally {
      await raw.close();
      await a.close();
    }
  });
});
