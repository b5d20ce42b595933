/** src/server/service/consortia.ts: creation checks, and reading a consortium back (cached). */
import { afterEach, describe, expect, test } from 'vitest';
import { DEFAULT_DEADLINES } from '../../../src/server/service/consortia.js';
import { ScoringService } from '../../../src/server/service/scoring-service.js';
import { T0 } from '../_harness.js';
import { consortiumInput, type Fixture, fixture } from './_service.js';

describe('service: consortia', () => {
  let f: Fixture;
  afterEach(async () => f.close());

  test('created with defaults, read back by any service over the store', async () => {
    f = await fixture({ consortium: false });
    const created = await f.service.createConsortium(consortiumInput(f.keys));
    expect(created).toMatchObject({
      id: 'c1',
      convention: 'fedavg',
      deadlines: DEFAULT_DEADLINES,
      createdAt: T0,
    });
    const other = new ScoringService({ store: f.store });
    expect(await other.consortium('c1')).toEqual(created);
    expect((await other.roster('c1')).map((k) => Buffer.from(k).toString('hex'))).toEqual(
      created.participants.map((p) => p.publicKey),
    );
    expect(await f.service.roster('c1')).toBe(await f.service.roster('c1'));
  });

  test('refuses repeated keys, an unsafe threshold and a taken id', async () => {
    f = await fixture({ consortium: false });
    const body = consortiumInput(f.keys);
    await expect(
      f.service.createConsortium({ ...body, participants: [...body.participants, body.participants[1]!] }),
    ).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_INVALID_CONSORTIUM',
      detail: 'participants[4]: repeated public key',
    });
    await expect(f.service.createConsortium({ ...body, threshold: 2 })).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_INVALID_CONSORTIUM',
      detail: expect.stringMatching(/^config\.threshold: /),
    });
    await f.service.createConsortium(body);
    await expect(f.service.createConsortium(body)).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_CONSORTIUM_EXISTS',
      detail: 'c1',
    });
    await expect(f.service.consortium('c2')).rejects.toMatchObject({
      code: 'FEDSCORE_ERR_CONSORTIUM_NOT_FOUND',
    });
  });
});
