/**
 * src/server/service/secagg.ts without HTTP: a stage closes as soon as every silo the protocol
 * expects has posted (protocol/server.ts stageProgress) — the roster for AdvertiseKeys, the
 * previous stage's set afterwards — and not before; retries of accepted messages stay accepted.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { encodeClientMessage } from '../../../protocol/codec.js';
import { DirectSilo, type Fixture, fixture } from './_service.js';

describe('service: secure-aggregation stages', () => {
  let f: Fixture;
  beforeEach(async () => {
    f = await fixture();
    await f.service.openRound('c1');
  });
  afterEach(async () => f.close());

  test('AdvertiseKeys waits for the whole roster; the next stage for U_1 only', async () => {
    const silos = [0, 1, 2, 3].map((i) => new DirectSilo(f, i));
    const adverts = silos.map((s) => s.advertise());
    for (const i of [0, 1, 2]) expect(await silos[i]!.post(adverts[i]!)).toBe('advertise');
    // silo 3 never advertises: the operator closes the stage, U_1 = {0, 1, 2}
    const closed = await f.service.forceAdvance('c1', 1, 'advertise');
    expect(closed).toMatchObject({ stage: 'share', sets: [[0, 1, 2]] });
    await expect(f.service.inbox('c1', 1, 'keys', 3)).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_NOT_READY',
    });
    const shares = await Promise.all([0, 1, 2].map((i) => silos[i]!.answer('keys')));
    expect(await silos[0]!.post(shares[0]!)).toBe('share');
    expect(await silos[1]!.post(shares[1]!)).toBe('share');
    // the last of U_1 closes it without a deadline or the operator
    expect(await silos[2]!.post(shares[2]!)).toBe('mask');
    expect((await f.service.round('c1', 1)).sets).toEqual([
      [0, 1, 2],
      [0, 1, 2],
    ]);
  });

  test('every silo advertising closes the stage at once; a retry after it closed is still accepted', async () => {
    const silos = [0, 1, 2, 3].map((i) => new DirectSilo(f, i));
    const adverts = silos.map((s) => s.advertise());
    const stages: string[] = [];
    for (const [i, s] of silos.entries()) stages.push(await s.post(adverts[i]!));
    expect(stages).toEqual(['advertise', 'advertise', 'advertise', 'share']);
    expect(await silos[1]!.post(adverts[1]!)).toBe('share');
    // another AdvertiseKeys of silo 1 is no retry: the protocol, now at ShareKeys, refuses it
    const other = new DirectSilo(f, 1, 1, 6).advertise();
    expect(other).not.toEqual(adverts[1]);
    await expect(silos[1]!.post(other)).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_SECAGG_OUT_OF_ORDER',
    });
  });

  test("a post after its stage's deadline closes the stage for good first, and is judged against the stage after", async () => {
    const silos = [0, 1, 2, 3].map((i) => new DirectSilo(f, i));
    const adverts = silos.map((s) => s.advertise());
    for (const i of [0, 1, 2]) expect(await silos[i]!.post(adverts[i]!)).toBe('advertise');
    f.clock.advance(61_000);
    // silo 3's AdvertiseKeys comes late: the deadline closes the stage with U_1 = {0, 1, 2}, and
    // the protocol, now at ShareKeys, refuses the message
    await expect(silos[3]!.post(adverts[3]!)).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_SECAGG_OUT_OF_ORDER',
    });
    // the closing was committed although the post that caused it was refused (read from the
    // store: reading the round through the service would close a due stage itself)
    const stored = await f.store.db
      .selectFrom('rounds')
      .select(['stage', 'sets'])
      .where('round', '=', 1)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ stage: 'share', sets: JSON.stringify([[0, 1, 2]]) });
    // a retry of an advertisement accepted before the deadline is still accepted
    expect(await silos[0]!.post(adverts[0]!)).toBe('share');
  });

  test('a message posted to another stage, or as another silo, is refused before the protocol sees it', async () => {
    const advert = new DirectSilo(f, 0).advertise();
    const bytes = encodeClientMessage(advert);
    await expect(f.service.postMessage('c1', 1, 'share', 0, bytes)).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_WRONG_MESSAGE_TYPE',
    });
    await expect(f.service.postMessage('c1', 1, 'advertise', 2, bytes)).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_FORBIDDEN',
    });
    expect((await f.service.round('c1', 1)).stage).toBe('advertise');
  });
});
