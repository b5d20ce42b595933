/**
 * RoundConfig.participants (a strategy's selection, docs/networked.md): the server refuses any
 * other sender, AdvertiseKeys waits for the participants only, and the weighted encoding need
 * only cover them; a participant list that could never reach t is refused.
 */
import { describe, expect, it } from 'vitest';
import { clientStart } from '../../protocol/client.js';
import { checkRoundConfig } from '../../protocol/config.js';
import { createServer, serverHandle, stageProgress } from '../../protocol/server.js';
import { makeHarness } from './_harness.js';

describe('RoundConfig.participants', () => {
  it('refuses a message of a silo that is not a participant, and waits for the participants only', () => {
    const h = makeHarness(5, 3, 4);
    let server = createServer({ ...h.config, participants: [0, 2, 4] });
    const outsider = clientStart(h.clients[1]!, h.deps[1]!);
    if (outsider.reply.type !== 'send') throw new Error('no advertisement');
    const refused = serverHandle(server, outsider.reply.message);
    expect(refused.reply).toMatchObject({
      type: 'rejected',
      code: 'UNKNOWN_SENDER',
      detail: 'sender 1 is not a participant of round 1',
    });
    for (const i of [0, 2, 4]) {
      const s = clientStart(h.clients[i]!, h.deps[i]!);
      if (s.reply.type !== 'send') throw new Error('no advertisement');
      const step = serverHandle(server, s.reply.message);
      expect(step.reply.type).toBe('accepted');
      server = step.state;
    }
    expect(stageProgress(server, 'advertise')).toEqual({ received: [0, 2, 4], missing: [], complete: true });
  });

  it('checks the list: ids of the roster, ascending, at least t of them; the encoding covers them', () => {
    const { config } = makeHarness(5, 3, 4);
    const encoding = { valueRange: 1, weightRange: 1, n: 3 };
    expect(() => checkRoundConfig({ ...config, length: 5, participants: [0, 2, 4], encoding })).not.toThrow();
    expect(() => checkRoundConfig({ ...config, length: 5, encoding })).toThrow(
      'config.encoding.n: 3 is below the roster size 5',
    );
    expect(() => checkRoundConfig({ ...config, length: 5, participants: [0, 1, 2, 3], encoding })).toThrow(
      'config.encoding.n: 3 is below the number of participants 4',
    );
    expect(() => checkRoundConfig({ ...config, participants: [0, 4] })).toThrow(
      'config.participants: 2 participants cannot reach the threshold t = 3',
    );
    expect(() => checkRoundConfig({ ...config, participants: [2, 0, 4] })).toThrow(
      'config.participants: expected distinct silo ids in ascending order',
    );
    expect(() => checkRoundConfig({ ...config, participants: [0, 2, 5] })).toThrow(
      /^config\.participants\[2\]/,
    );
  });
});
