/**
 * The process's cache of accepted messages (src/server/service/aggregation.ts, blob-cache.ts):
 * a round whose messages went through two service instances sharing one store — each closing
 * stages with some messages from its cache and the others read from the store — ends with the
 * same aggregate, bit for bit, as the round through one instance.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { STAGE_MESSAGE_TYPES } from '../../../protocol/server.js';
import { simulatedIdentities } from '../../../protocol/simulate.js';
import { ScoringService } from '../../../src/server/service/scoring-service.js';
import { openStore } from '../../../src/server/store/database.js';
import { Clock, f32bytes, INITIAL } from '../_harness.js';
import { consortiumInput, DirectSilo, type Fixture } from './_service.js';

const dir = mkdtempSync(join(tmpdir(), 'fedscore-message-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Round 1 of c1 with silo i posting through `instances[i % instances]`; the published Σ w_iΔ_i. */
async function round(file: string, instances: number): Promise<Buffer> {
  const stores = [];
  // one after the other: the first applies the migrations
  for (let k = 0; k < instances; k++) stores.push(await openStore({ sqlite: file }));
  const clock = new Clock();
  const services = stores.map((store) => new ScoringService({ store, now: clock.now }));
  const keys = simulatedIdentities(4, 11);
  try {
    await services[0]!.createConsortium(consortiumInput(keys));
    await services[0]!.setInitialModel('c1', f32bytes(INITIAL));
    await services[instances - 1]!.openRound('c1');
    const fixtures: Fixture[] = stores.map((store, k) => ({
      service: services[k]!,
      store,
      clock,
      keys,
      close: () => store.close(),
    }));
    const silos = [0, 1, 2, 3].map((i) => new DirectSilo(fixtures[i % instances]!, i));
    for (const s of silos) await s.post(s.advertise());
    for (const kind of STAGE_MESSAGE_TYPES) {
      const replies = [];
      for (const s of silos) replies.push(await s.answer(kind));
      for (const [i, s] of silos.entries()) {
        await s.post(replies[i]!);
      }
    }
    const view = await services[0]!.round('c1', 1);
    expect(view).toMatchObject({ stage: 'reporting', survivors: [0, 1, 2, 3] });
    return Buffer.from((await services[instances - 1]!.aggregate('c1', 1)).weightedSum);
  } finally {
    for (const s of stores) await s.close();
  }
}

describe('service: accepted messages kept in the process', () => {
  test('two instances on one store, each closing with cached and stored messages: the same aggregate as one', async () => {
    const one = await round(join(dir, 'one.db'), 1);
    const two = await round(join(dir, 'two.db'), 2);
    expect(one.byteLength).toBeGreaterThan(0);
    expect(two.equals(one)).toBe(true);
  });
});
