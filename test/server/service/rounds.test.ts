/**
 * src/server/service/rounds.ts without HTTP: opening rounds, and stages closed lazily when a
 * request finds their deadline passed or by the operator.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { DEFAULT_DEADLINES } from '../../../src/server/service/consortia.js';
import { T0 } from '../_harness.js';
import { consortiumInput, DirectSilo, type Fixture, fixture } from './_service.js';

describe('service: the round lifecycle', () => {
  let f: Fixture;
  afterEach(async () => f.close());

  test('a round opens from the latest model, one at a time', async () => {
    f = await fixture();
    const opened = await f.service.openRound('c1');
    expect(opened).toMatchObject({
      round: 1,
      stage: 'advertise',
      baseModel: 0,
      deadline: T0 + DEFAULT_DEADLINES.advertise,
      sets: [],
      openedAt: T0,
    });
    await expect(f.service.openRound('c1')).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_ROUND_OPEN',
      detail: 'round 1 is advertise',
    });
    expect(await f.service.rounds('c1')).toEqual([opened]);
  });

  test('no model, no round; unknown consortia and rounds are not found', async () => {
    f = await fixture({ consortium: false });
    await expect(f.service.openRound('c1')).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_CONSORTIUM_NOT_FOUND',
    });
    await f.service.createConsortium(consortiumInput(f.keys));
    await expect(f.service.openRound('c1')).rejects.toMatchObject({ code: 'FEDSCORE_ERR_MODEL_MISSING' });
    await expect(f.service.round('c1', 1)).rejects.toMatchObject({ code: 'FEDSCORE_ERR_ROUND_NOT_FOUND' });
  });

  test('a passed deadline closes the stage on the next read: below threshold the round aborts', async () => {
    f = await fixture();
    await f.service.openRound('c1');
    const silo = new DirectSilo(f, 0);
    await silo.post(silo.advertise());
    f.clock.advance(DEFAULT_DEADLINES.advertise - 1);
    expect((await f.service.round('c1', 1)).stage).toBe('advertise');
    f.clock.advance(1);
    const aborted = await f.service.round('c1', 1);
    expect(aborted).toMatchObject({ stage: 'aborted', error: { code: 'BELOW_THRESHOLD' } });
    await expect(f.service.forceAdvance('c1', 1, 'advertise')).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_ROUND_CLOSED',
    });
    await expect(f.service.inbox('c1', 1, 'keys', 0)).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_SECAGG_ABORTED',
      detail: 'BELOW_THRESHOLD',
    });
    // an aborted round does not block the next one, which starts from the same model
    expect(await f.service.openRound('c1')).toMatchObject({ round: 2, baseModel: 0 });
  });

  test('opening the next round first closes a previous round whose deadline passed', async () => {
    f = await fixture();
    await f.service.openRound('c1');
    f.clock.advance(DEFAULT_DEADLINES.advertise);
    expect(await f.service.openRound('c1')).toMatchObject({ round: 2, stage: 'advertise' });
    expect((await f.service.rounds('c1')).map((r) => r.stage)).toEqual(['aborted', 'advertise']);
  });
});
