/**
 * Durability: a round continues from the stored state in another app over the same database —
 * after the first app is dropped without closing, and after its process is killed with SIGKILL
 * mid-round (every acknowledged message must be there).
 */
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import {
  adminInject,
  Clock,
  createConsortium,
  harness,
  runChildUntilMidShare,
  Silo,
  STEPS,
  tempSqlite,
} from './_harness.js';

describe('durability over SQLite', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  test('a second app over the same file continues a round the first one left half done', async () => {
    const { location, dir } = tempSqlite();
    dirs.push(dir);
    const clock = new Clock();
    const a = await harness({ location, clock });
    await createConsortium(a);
    await adminInject(a, 'POST', '/v1/consortia/c1/rounds');
    const silos = [0, 1, 2, 3].map((i) => new Silo(a, 'c1', 1, i, 3));
    for (const s of silos) await s.start();
    for (const s of silos) await s.step('keys');
    for (const s of silos.slice(0, 2)) await s.step('shares');
    // The first app is abandoned (not closed); a second one opens the same file.
    const b = await harness({ location, clock });
    try {
      const moved = silos.map((s) => Object.assign(s, { h: b }));
      for (const s of moved.slice(2)) await s.step('shares');
      for (const k of STEPS.slice(2)) for (const s of moved) await s.step(k);
      const round = (await adminInject(b, 'GET', '/v1/consortia/c1/rounds/1')).json();
      expect(round).toMatchObject({ stage: 'reporting', survivors: [0, 1, 2, 3], dropped: [] });
    } finally {
      await b.close();
      await a.close();
    }
  });

  test('kill -9 mid-round: the restarted service has every acknowledged message and finishes the round', async () => {
    const { location, dir } = tempSqlite();
    dirs.push(dir);
    const clock = new Clock();
    const acked = await runChildUntilMidShare('sqlite', (location as { sqlite: string }).sqlite, clock);
    expect(acked.slice(0, 6)).toEqual([
      'acked advertise 0',
      'acked advertise 1',
      'acked advertise 2',
      'acked advertise 3',
      'acked share 0',
      'acked share 1',
    ]);
    const b = await harness({ location, clock });
    try {
      const stored = await b.store.db
        .selectFrom('messages')
        .select(['stage', 'silo'])
        .orderBy('stage')
        .orderBy('silo')
        .execute();
      const shares = stored.filter((m) => m.stage === 'share').map((m) => m.silo);
      // Everything acknowledged is stored; a message may also be stored whose ack the kill cut off.
      expect(stored.filter((m) => m.stage === 'advertise').map((m) => m.silo)).toEqual([0, 1, 2, 3]);
      expect(shares.slice(0, 2)).toEqual([0, 1]);
      // The silos' own state is in their memory, not the server's: rebuild it deterministically
      // (same random streams) and continue from what the server has.
      const silos = [0, 1, 2, 3].map((i) => new Silo(b, 'c1', 1, i, 3));
      for (const s of silos) s.replayStart();
      for (const s of silos) {
        if (shares.includes(s.id)) await s.replayStep('keys');
        else await s.step('keys');
      }
      for (const k of STEPS.slice(1)) for (const s of silos) await s.step(k);
      const round = (await adminInject(b, 'GET', '/v1/consortia/c1/rounds/1')).json();
      expect(round).toMatchObject({ stage: 'reporting', survivors: [0, 1, 2, 3] });
    } finally {
      await b.close();
    }
  });
});
