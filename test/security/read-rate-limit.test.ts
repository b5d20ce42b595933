/**
 * Issue 27, A6 — authenticated reads were not rate-limited.
 *
 * The attack: one silo sends signed reads as fast as it can. Writes were limited per silo (429
 * after 600 a minute, @fastify/rate-limit after the signature check), reads not at all; every
 * read stored a nonce row; 300 reads of a 16 MiB model drew 4.7 GiB in 30 s. Against dc1119c
 * this file printed
 *   "700 signed reads of one silo: 700 × 200, 0 × 429; nonce rows 700"
 *   "100 model reads of one silo: 100 × 200, 0 × 429"
 *   "9 signed writes over a limit of 5: the 9th answered 429; nonce rows 9"
 * (a write refused with 429 had stored its nonce row all the same).
 *
 * Now (src/server/rate-limits.ts) a silo's reads share one counter of `rateLimit.max` per window
 * (like each write route), reads of a vector (models, aggregate sums) a second one of
 * `rateLimit.maxVectorReads`, and a request over a limit is refused — 429
 * FEDSCORE_ERR_RATE_LIMITED with `retry-after` — before its nonce is stored. Nonce rows expire
 * with the timestamp window (a request older than it is refused by its timestamp) and are pruned.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { PRUNE_INTERVAL_MS } from '../../src/server/service/nonces.js';
import { adminInject, createConsortium, type Harness, harness, siloInject } from '../server/_harness.js';

const C = '/v1/consortia/c1';

async function nonceRows(h: Harness): Promise<number> {
  const r = await h.store.db
    .selectFrom('nonces')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** `count` signed GETs of `url` by silo 0: how many got each status. */
async function burst(h: Harness, url: string, count: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const r = await siloInject(h, 0, 'GET', url);
    statuses.set(r.statusCode, (statuses.get(r.statusCode) ?? 0) + 1);
  }
  return statuses;
}

const line = (what: string, s: Map<number, number>) =>
  `${what}: ${s.get(200) ?? 0} × 200, ${s.get(429) ?? 0} × 429`;

describe('A6: reads are rate-limited per silo', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
    await createConsortium(h);
  });
  afterEach(async () => h.close());

  test('700 signed reads: the 601st is refused with retry-after, and stores no nonce', async () => {
    const statuses = await burst(h, C, 700);
    const rows = await nonceRows(h);
    console.log(`${line('700 signed reads of one silo', statuses)}; nonce rows ${rows}`);
    expect(statuses.get(200)).toBe(600);
    expect(statuses.get(429)).toBe(100);
    expect(rows).toBe(600);
    const refused = await siloInject(h, 0, 'GET', `${C}/rounds`);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('FEDSCORE_ERR_RATE_LIMITED');
    expect(refused.json().message).toMatch(/^too many requests from this silo: retry in \d+ s$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // another silo is not affected; the window ends and silo 0 reads again
    expect((await siloInject(h, 1, 'GET', C)).statusCode).toBe(200);
    h.clock.advance(60_000);
    expect((await siloInject(h, 0, 'GET', C)).statusCode).toBe(200);
  });

  test('model reads have their own, lower limit', async () => {
    const statuses = await burst(h, `${C}/model`, 100);
    console.log(line('100 model reads of one silo', statuses));
    expect(statuses.get(200)).toBe(60);
    expect(statuses.get(429)).toBe(40);
    // other reads still pass (61 of the 600 reads are used)
    expect((await siloInject(h, 0, 'GET', C)).statusCode).toBe(200);
    expect((await siloInject(h, 0, 'GET', `${C}/models/0`)).statusCode).toBe(429);
  });

  test('a refused write stores no nonce', async () => {
    h = await (async () => {
      await h.close();
      const small = await harness({ app: { rateLimit: { max: 5, windowMs: 60_000 } } });
      await createConsortium(small);
      expect((await adminInject(small, 'POST', `${C}/rounds`)).statusCode).toBe(201);
      return small;
    })();
    const url = `${C}/rounds/1/reports`;
    for (let i = 0; i < 8; i++) await siloInject(h, 0, 'POST', url, new Uint8Array([1, 2, 3]));
    const refused = await siloInject(h, 0, 'POST', url, new Uint8Array([1, 2, 3]));
    const rows = await nonceRows(h);
    console.log(
      `9 signed writes over a limit of 5: the 9th answered ${refused.statusCode}; nonce rows ${rows}`,
    );
    expect(refused.statusCode).toBe(429);
    expect(rows).toBe(5);
  });

  test('nonce rows are pruned once past the timestamp window', async () => {
    await burst(h, C, 50);
    expect(await nonceRows(h)).toBe(50);
    // a nonce outlives its request's timestamp window; after that the row goes (at most once per
    // PRUNE_INTERVAL_MS) — a replay of it would be refused by its timestamp anyway
    h.clock.advance(300_000 + PRUNE_INTERVAL_MS + 1);
    expect((await siloInject(h, 0, 'GET', C)).statusCode).toBe(200);
    expect(await nonceRows(h)).toBe(1);
  });
});
