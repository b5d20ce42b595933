/** src/server/service/nonces.ts: a nonce is used once within its lifetime, then pruned. */
import { afterEach, describe, expect, test } from 'vitest';
import { PRUNE_INTERVAL_MS } from '../../../src/server/service/nonces.js';
import { ScoringService } from '../../../src/server/service/scoring-service.js';
import { openStore, type StoreLocation } from '../../../src/server/store/database.js';
import { Clock } from '../_harness.js';
import { type Fixture, fixture } from './_service.js';

describe('service: request nonces', () => {
  let f: Fixture;
  afterEach(async () => f.close());

  test('once per consortium and silo until it expires', async () => {
    f = await fixture();
    const expires = f.clock.now() + 1000;
    expect(await f.service.useNonce('c1', 0, 'nonce-aaaaaaaaaaaa', expires)).toBe(true);
    expect(await f.service.useNonce('c1', 0, 'nonce-aaaaaaaaaaaa', expires)).toBe(false);
    expect(await f.service.useNonce('c1', 1, 'nonce-aaaaaaaaaaaa', expires)).toBe(true);
    f.clock.advance(1001);
    // expired nonces are pruned on the way, so the same nonce is new again
    expect(await f.service.useNonce('c1', 0, 'nonce-aaaaaaaaaaaa', f.clock.now() + 1000)).toBe(true);
    const left = await f.store.db.selectFrom('nonces').select(['silo', 'expires_at']).execute();
    expect(left).toEqual([{ silo: 0, expires_at: f.clock.now() + 1000 }]);
  });
});

/** The stores the upsert must behave the same on: SQLite, and PostgreSQL when DATABASE_URL is set. */
const stores: [string, StoreLocation | undefined][] = [
  ['SQLite', { sqlite: ':memory:' }],
  ['PostgreSQL', process.env.DATABASE_URL ? { postgres: process.env.DATABASE_URL } : undefined],
];

describe.each(stores)('service: request nonces between prunes (%s)', (_name, location) => {
  test.skipIf(!location)(
    'an expired earlier use is taken again before any prune; an unexpired one is a replay, also when raced',
    async () => {
      const store = await openStore(location!);
      const clock = new Clock();
      const service = new ScoringService({ store, now: clock.now });
      // a consortium id of its own: the PostgreSQL database is shared with other tests
      const cid = `nonces-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
      try {
        expect(await service.useNonce(cid, 0, 'nonce-bbbbbbbbbbbb', clock.now() + 100)).toBe(true);
        clock.advance(50);
        expect(await service.useNonce(cid, 0, 'nonce-bbbbbbbbbbbb', clock.now() + 100)).toBe(false);
        clock.advance(100); // expired, and no prune yet (PRUNE_INTERVAL_MS has not passed)
        expect(150).toBeLessThan(PRUNE_INTERVAL_MS);
        expect(await service.useNonce(cid, 0, 'nonce-bbbbbbbbbbbb', clock.now() + 100)).toBe(true);
        expect(await service.useNonce(cid, 0, 'nonce-bbbbbbbbbbbb', clock.now() + 100)).toBe(false);
        // five racing uses of a new nonce: exactly one wins
        const raced = await Promise.all(
          Array.from({ length: 5 }, () => service.useNonce(cid, 1, 'nonce-cccccccccccc', clock.now() + 100)),
        );
        expect(raced.filter(Boolean)).toHaveLength(1);
      } finally {
        await store.db.deleteFrom('nonces').where('consortium', '=', cid).execute();
        await store.close();
      }
    },
  );
});
