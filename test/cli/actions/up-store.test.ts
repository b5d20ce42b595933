/**
 * src/cli/actions/up-store.ts: what `fedscore up` does with the project's store before its service
 * starts. A round an interrupted run left before any masked input is withdrawn (the store as it
 * was kept beside it) and runs again under its number; a round past masking is left for `up` to
 * close; --fresh keeps the store and its WAL files under a dated name.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { keepStoreAside, prepareStore } from '../../../src/cli/actions/up-store.js';
import { openStore } from '../../../src/server/store/database.js';
import {
  adminInject,
  Clock,
  consortiumBody,
  f32bytes,
  harness,
  INITIAL,
  Silo,
  tempSqlite,
} from '../../server/_harness.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A store with consortium c1 (a schedule of 3 rounds) whose round 1 reached `stage`. */
async function storeAt(steps: number) {
  const { location, dir } = tempSqlite();
  dirs.push(dir);
  const h = await harness({ location, clock: new Clock() });
  await adminInject(h, 'POST', '/v1/consortia', { ...consortiumBody(h.keys), rounds: 3 });
  await adminInject(h, 'PUT', '/v1/consortia/c1/model', f32bytes(INITIAL));
  await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
  const silos = [0, 1, 2, 3].map((i) => new Silo(h, 'c1', 1, i, 3));
  for (const s of silos) await s.start();
  for (const kind of (['keys', 'shares'] as const).slice(0, steps)) for (const s of silos) await s.step(kind);
  await h.close();
  const file = (location as { sqlite: string }).sqlite;
  return { dir: dirname(file), db: basename(file) };
}

describe("up's store", () => {
  test('no store, or no consortium in it: nothing registered', async () => {
    const { dir } = tempSqlite();
    dirs.push(dir);
    expect(await prepareStore(dir, 'store.db', 'c1')).toEqual({ registered: false, over: 0, aborted: 0 });
  });

  test('a round left in ShareKeys is withdrawn, the store as it was kept beside it', async () => {
    const { dir, db } = await storeAt(0);
    const state = await prepareStore(dir, db, 'c1');
    expect(state).toMatchObject({ registered: true, over: 0, aborted: 0, total: 3, withdrawn: 1 });
    expect(existsSync(`${dir}/${state.keptAs}`)).toBe(true);
    const store = await openStore({ sqlite: `${dir}/${db}` });
    try {
      expect(await store.db.selectFrom('rounds').selectAll().execute()).toEqual([]);
      expect(await store.db.selectFrom('messages').selectAll().execute()).toEqual([]);
      expect(await store.db.selectFrom('consortia').select('id').execute()).toEqual([{ id: 'c1' }]);
    } finally {
      await store.close();
    }
    // The copy holds the round as it was.
    const kept = await openStore({ sqlite: `${dir}/${state.keptAs}` });
    try {
      expect((await kept.db.selectFrom('messages').select('stage').execute()).map((m) => m.stage)).toEqual([
        'advertise',
        'advertise',
        'advertise',
        'advertise',
      ]);
    } finally {
      await kept.close();
    }
  });

  test('a round past masking is not withdrawn: up closes it', async () => {
    const { dir, db } = await storeAt(2);
    const state = await prepareStore(dir, db, 'c1');
    expect(state).toMatchObject({ registered: true, over: 0, running: { round: 1, stage: 'consistency' } });
    expect(state.withdrawn).toBeUndefined();
  });

  test('--fresh keeps the store and its WAL files under one dated name', async () => {
    const { dir, db } = await storeAt(0);
    const aside = keepStoreAside(dir, db)!;
    expect(aside).toMatch(/^store\.db\.\d{4}-\d\d-\d\dT/);
    expect(
      readdirSync(dir)
        .filter((f) => f.startsWith('store.db'))
        .every((f) => f.startsWith(aside)),
    ).toBe(true);
    expect(keepStoreAside(dir, db)).toBeUndefined();
  });
});
