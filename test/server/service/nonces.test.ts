/** src/server/service/nonces.ts: a nonce is used once within its lifetime, then pruned. */
import { afterEach, describe, expect, test } from 'vitest';
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
