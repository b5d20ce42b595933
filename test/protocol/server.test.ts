import { describe, expect, it } from 'vitest';
import { sign } from '../../crypto/signature.js';
import { signedPayload } from '../../protocol/codec.js';
import type { CorrectionMode } from '../../protocol/config.js';
import type {
  ClientMessage,
  ConsistencyCheck,
  MaskedInput,
  ShareKeys,
  UnmaskResponse,
  UnsignedClientMessage,
} from '../../protocol/messages.js';
import {
  COLLECTING_STAGES,
  type CollectingStage,
  createServer,
  isCollectingStage,
  messagesRead,
  restoreServer,
  type ServerState,
  STAGE_MESSAGE_TYPES,
  serverAdvance,
  serverHandle,
  stageProgress,
} from '../../protocol/server.js';
import { advertise, all, close, type Harness, makeHarness, respond } from './_harness.js';

function resign<M extends ClientMessage>(h: Harness, signer: number, m: Omit<M, 'signature'>): M {
  const body = m as unknown as UnsignedClientMessage;
  return { ...m, signature: sign(h.ids[signer]!.secretKey, signedPayload(body)) } as M;
}

const codeOf = (r: { reply: { type: string; code?: string } }) =>
  r.reply.type === 'rejected' ? r.reply.code : 'accepted';

/** Run 5 silos (t = 3) until the server collects masked inputs; client 4 has not sent its input yet. */
async function atMask(): Promise<{ h: Harness; pending: MaskedInput }> {
  const h = makeHarness(5, 3, 8);
  advertise(h);
  await close(h);
  await respond(h, all(h));
  await close(h);
  await respond(h, [0, 1, 2, 3]);
  const { clientHandle } = await import('../../protocol/client.js');
  const s = await clientHandle(h.clients[4]!, h.inbox.get(4)!, h.deps[4]!);
  if (s.reply.type !== 'send' || s.reply.message.type !== 'mask') throw new Error('expected a masked input');
  return { h, pending: s.reply.message };
}

describe('protocol/server: every client message is checked, rejects carry codes and leave the state unchanged', () => {
  it('accepts the honest message', async () => {
    const { h, pending } = await atMask();
    expect(codeOf(serverHandle(h.server, pending))).toBe('accepted');
  });

  it('rejects a tampered masked vector (BAD_SIGNATURE) without changing its state', async () => {
    const { h, pending } = await atMask();
    const masked = pending.masked.slice();
    masked[3]! ^= 1;
    const r = serverHandle(h.server, { ...pending, masked });
    expect(codeOf(r)).toBe('BAD_SIGNATURE');
    expect(r.state).toBe(h.server);
  });

  it('rejects a message signed with another silo’s key (impersonation)', async () => {
    const { h, pending } = await atMask();
    const { signature: _s, ...body } = pending;
    expect(codeOf(serverHandle(h.server, resign<MaskedInput>(h, 3, body)))).toBe('BAD_SIGNATURE');
  });

  it('rejects a replay within the stage (DUPLICATE), of an earlier stage (OUT_OF_ORDER) and from another round', async () => {
    const { h, pending } = await atMask();
    expect(codeOf(serverHandle(h.server, h.sent.get(0)!))).toBe('DUPLICATE');
    const advert = h.server.adverts.get(1)!;
    expect(codeOf(serverHandle(h.server, advert))).toBe('OUT_OF_ORDER');
    // the same silo's masked input from round 0, replayed into round 1
    const old = makeHarness(5, 3, 8, 0);
    advertise(old);
    await close(old);
    await respond(old, all(old));
    await close(old);
    await respond(old, [4]);
    expect(codeOf(serverHandle(h.server, old.sent.get(4)!))).toBe('WRONG_ROUND');
    expect(codeOf(serverHandle(h.server, { ...pending, session: 'x' }))).toBe('WRONG_SESSION');
    expect(codeOf(serverHandle(h.server, { ...pending, version: 9 }))).toBe('UNSUPPORTED_VERSION');
  });

  it('rejects unknown senders, wrong lengths and silos that skipped a stage', async () => {
    const { h, pending } = await atMask();
    expect(codeOf(serverHandle(h.server, { ...pending, sender: 7 }))).toBe('UNKNOWN_SENDER');
    const { signature: _s, ...body } = pending;
    expect(
      codeOf(serverHandle(h.server, resign<MaskedInput>(h, 4, { ...body, masked: new Uint32Array(9) }))),
    ).toBe('WRONG_LENGTH');
    // silo 2 skipped ShareKeys in this run: its masked input is refused
    const h2 = makeHarness(5, 3, 8);
    advertise(h2);
    await close(h2);
    await respond(h2, [0, 1, 3, 4]);
    await close(h2);
    const late = resign<MaskedInput>(h2, 2, { ...body, sender: 2, masked: new Uint32Array(8) });
    expect(codeOf(serverHandle(h2.server, late))).toBe('NOT_A_PARTICIPANT');
  });

  it('rejects a consistency signature on another set, and share boxes that do not address U_1', async () => {
    const h = makeHarness(5, 3, 8);
    advertise(h);
    await close(h);
    const { clientHandle } = await import('../../protocol/client.js');
    const s = await clientHandle(h.clients[0]!, h.inbox.get(0)!, h.deps[0]!);
    if (s.reply.type !== 'send' || s.reply.message.type !== 'share') throw new Error('expected share');
    const { signature: _x, ...share } = s.reply.message;
    const r = serverHandle(h.server, resign<ShareKeys>(h, 0, { ...share, boxes: share.boxes.slice(1) }));
    expect(codeOf(r)).toBe('INCONSISTENT_SET');
    await respond(h, all(h));
    await close(h);
    await respond(h, all(h));
    await close(h);
    const cs = await clientHandle(h.clients[0]!, h.inbox.get(0)!, h.deps[0]!);
    if (cs.reply.type !== 'send' || cs.reply.message.type !== 'consistency')
      throw new Error('expected consistency');
    const { signature: _y, ...cc } = cs.reply.message;
    expect(
      codeOf(serverHandle(h.server, resign<ConsistencyCheck>(h, 0, { ...cc, survivors: [0, 1, 2] }))),
    ).toBe('CONSISTENCY_MISMATCH');
    expect(codeOf(serverHandle(h.server, cs.reply.message))).toBe('accepted');
  });

  it('aborts with BELOW_THRESHOLD when a stage closes with fewer than t silos', async () => {
    const h = makeHarness(5, 3, 8);
    advertise(h, [0, 1]);
    const r = await serverAdvance(h.server);
    expect(r.output.type).toBe('abort');
    if (r.output.type === 'abort') expect(r.output.code).toBe('BELOW_THRESHOLD');
    expect(r.state.stage).toBe('aborted');
    expect(codeOf(serverHandle(r.state, h.sent.get(0)!))).toBe('OUT_OF_ORDER');
  });

  it('checks Unmasking corrections: length, a dropped set to correct for, and the configuration', async () => {
    const { clientHandle } = await import('../../protocol/client.js');
    /** 5 silos (t = 3) up to the unmasking request; `drop` never send their masked input. */
    const unmaskOf = async (drop: number[], corrections?: CorrectionMode) => {
      const h = makeHarness(5, 3, 8);
      if (corrections !== undefined) {
        h.config = { ...h.config, corrections };
        h.server = createServer(h.config);
        h.clients = h.clients.map((c) => ({ ...c, config: h.config }));
      }
      advertise(h);
      for (const who of [all(h), all(h).filter((i) => !drop.includes(i))]) {
        await close(h);
        await respond(h, who);
      }
      await close(h);
      await respond(
        h,
        all(h).filter((i) => !drop.includes(i)),
      );
      await close(h);
      const s = await clientHandle(h.clients[0]!, h.inbox.get(0)!, h.deps[0]!);
      if (s.reply.type !== 'send' || s.reply.message.type !== 'unmask') throw new Error('expected unmask');
      return { h, m: s.reply.message };
    };
    const { h, m } = await unmaskOf([4], 'recompute');
    expect(m.correction?.length).toBe(8);
    expect(codeOf(serverHandle(h.server, m))).toBe('accepted');
    const { correction: _c, signature: _s, ...rest } = m;
    const short = resign<UnmaskResponse>(h, 0, { ...rest, correction: new Uint32Array(7) });
    expect(codeOf(serverHandle(h.server, short))).toBe('WRONG_LENGTH');
    // without it the message is still acceptable: the server rebuilds the masks itself
    expect(codeOf(serverHandle(h.server, resign<UnmaskResponse>(h, 0, rest)))).toBe('accepted');

    const none = await unmaskOf([], 'recompute');
    expect(none.m.correction).toBeUndefined();
    const { signature: _n, ...noneRest } = none.m;
    const spurious = resign<UnmaskResponse>(none.h, 0, { ...noneRest, correction: new Uint32Array(8) });
    expect(codeOf(serverHandle(none.h.server, spurious))).toBe('MALFORMED');

    // the default, 'off': no correction is sent, and one sent anyway is refused
    const off = await unmaskOf([4]);
    expect(off.m.correction).toBeUndefined();
    const { signature: _o, ...offRest } = off.m;
    const unasked = resign<UnmaskResponse>(off.h, 0, { ...offRest, correction: new Uint32Array(8) });
    expect(codeOf(serverHandle(off.h.server, unasked))).toBe('MALFORMED');
    expect(codeOf(serverHandle(off.h.server, off.m))).toBe('accepted');
  });

  it('checks its configuration', () => {
    const h = makeHarness(4, 3, 8);
    expect(() => createServer({ ...h.config, corrections: 1 as unknown as CorrectionMode })).toThrow(
      /^config\.corrections/,
    );
    // 'fallback' trusts corrections and relies on the aggregate check: it needs the encoding
    expect(() => createServer({ ...h.config, corrections: 'fallback' })).toThrow(/^config\.corrections/);
    expect(() => createServer({ ...h.config, threshold: 2 })).toThrow(/^config\.threshold/);
    expect(() => createServer({ ...h.config, length: 0 })).toThrow(/^config\.length/);
    expect(() => createServer({ ...h.config, session: '' })).toThrow(/^config\.session/);
    expect(() => createServer({ ...h.config, roster: [h.config.roster[0]!] })).toThrow(/^config\.roster/);
  });
});

/** The client messages `h`'s server accepted in its current stage, appended to `log`. */
function record(h: Harness, log: ClientMessage[]): void {
  for (const m of h.sent.values()) if (m.type === h.server.stage && !log.includes(m)) log.push(m);
}

const snapshotOf = (s: ServerState) => ({
  config: s.config,
  stage: s.stage as CollectingStage,
  sets: s.sets,
});

/**
 * 5 silos, t = 3; silo 4 never sends its masked input (so Unmasking reconstructs its key), silo 1
 * skips AdvertiseKeys. `atStage` runs with every accepted message so far, before each close.
 */
async function roundWithDropouts(atStage: (h: Harness, log: readonly ClientMessage[]) => Promise<void>) {
  const h = makeHarness(5, 3, 8);
  const log: ClientMessage[] = [];
  advertise(h, [0, 2, 3, 4]);
  for (const who of [[0, 2, 3, 4], [0, 2, 3], [0, 2, 3], [0, 2, 3], null]) {
    record(h, log);
    await atStage(h, log);
    if (who === null) break;
    await close(h);
    await respond(h, who);
  }
}

describe('protocol/server: what a transport that stores the round needs', () => {
  it('lists the collecting stages in protocol order and the messages their closing sends', () => {
    expect(COLLECTING_STAGES).toEqual(['advertise', 'share', 'mask', 'consistency', 'unmask']);
    expect(STAGE_MESSAGE_TYPES).toEqual(['keys', 'shares', 'survivors', 'unmask-request']);
    expect(COLLECTING_STAGES.every(isCollectingStage)).toBe(true);
    for (const s of ['done', 'aborted', 'reporting', 'keys', '']) expect(isCollectingStage(s)).toBe(false);
  });

  it('stageProgress: the roster is expected to advertise, then the previous stage’s set', async () => {
    const h = makeHarness(5, 3, 8);
    expect(stageProgress(h.server, 'advertise')).toEqual({
      received: [],
      missing: [0, 1, 2, 3, 4],
      complete: false,
    });
    advertise(h, [4, 0, 2]);
    expect(stageProgress(h.server, 'advertise')).toEqual({
      received: [0, 2, 4],
      missing: [1, 3],
      complete: false,
    });
    advertise(h, [3]);
    await close(h);
    // closed: its dropouts; the next stage expects U_1 = {0, 2, 3, 4} only
    expect(stageProgress(h.server, 'advertise').missing).toEqual([1]);
    expect(stageProgress(h.server, 'share')).toEqual({
      received: [],
      missing: [0, 2, 3, 4],
      complete: false,
    });
    await respond(h, [0, 2, 3]);
    expect(stageProgress(h.server, 'share').complete).toBe(false);
    await respond(h, [4]);
    expect(stageProgress(h.server, 'share')).toEqual({ received: [0, 2, 3, 4], missing: [], complete: true });
  });

  it('stageProgress: complete exactly when every expected silo sent, stage after stage', async () => {
    const h = makeHarness(4, 3, 8);
    const order = [3, 1, 0, 2];
    for (const stage of COLLECTING_STAGES) {
      for (const [k, i] of order.entries()) {
        expect(stageProgress(h.server, stage).complete).toBe(false);
        if (stage === 'advertise') advertise(h, [i]);
        else await respond(h, [i]);
        expect(stageProgress(h.server, stage).received.length).toBe(k + 1);
      }
      expect(stageProgress(h.server, stage)).toEqual({ received: [0, 1, 2, 3], missing: [], complete: true });
      if (stage !== 'unmask') await close(h);
    }
  });

  it('stageProgress: refuses a stage that has not started or does not collect messages', () => {
    const h = makeHarness(4, 3, 8);
    expect(() => stageProgress(h.server, 'mask')).toThrow(
      new RangeError('stage: mask has not started (the server is at advertise)'),
    );
    expect(() => stageProgress(h.server, 'done' as CollectingStage)).toThrow(
      /^stage: expected one of advertise/,
    );
    expect(() => messagesRead('advance', 'aborted' as CollectingStage)).toThrow(/^stage: /);
    expect(() => messagesRead('close' as 'advance', 'mask')).toThrow(/^step: /);
  });

  it('restoreServer with every accepted message rebuilds the state', async () => {
    await roundWithDropouts(async (h, log) => {
      expect(restoreServer(snapshotOf(h.server), log)).toEqual(h.server);
      expect(restoreServer(snapshotOf(h.server), [...log].reverse())).toEqual(h.server);
    });
  });

  it('restoreServer with only messagesRead(advance) closes every stage as the full state does', async () => {
    const closes: string[] = [];
    await roundWithDropouts(async (h, log) => {
      const stage = h.server.stage as CollectingStage;
      const reads = messagesRead('advance', stage);
      const partial = restoreServer(
        snapshotOf(h.server),
        log.filter((m) => reads.includes(m.type)),
      );
      const [full, restored] = [await serverAdvance(h.server), await serverAdvance(partial)];
      expect(restored.output).toEqual(full.output);
      expect(restored.state.sets).toEqual(full.state.sets);
      expect(restored.state.stage).toBe(full.state.stage);
      closes.push(full.output.type);
    });
    expect(closes).toEqual(['send', 'send', 'send', 'send', 'result']);
  });

  it('restoreServer with only messagesRead(handle) accepts and rejects as the full state does', async () => {
    const h = makeHarness(5, 3, 8);
    const log: ClientMessage[] = [];
    advertise(h);
    record(h, log);
    await close(h);
    await respond(h, [0, 1, 2]);
    record(h, log);
    const { clientHandle } = await import('../../protocol/client.js');
    const next = await clientHandle(h.clients[3]!, h.inbox.get(3)!, h.deps[3]!);
    if (next.reply.type !== 'send') throw new Error('expected a share message');
    const reads = messagesRead('handle', 'share');
    expect(reads).toEqual(['share']);
    const partial = restoreServer(
      snapshotOf(h.server),
      log.filter((m) => reads.includes(m.type)),
    );
    for (const m of [next.reply.message, h.sent.get(0)!, h.server.adverts.get(3)!]) {
      const [full, restored] = [serverHandle(h.server, m), serverHandle(partial, m)];
      expect(restored.reply).toEqual(full.reply);
      expect(stageProgress(restored.state, 'share')).toEqual(stageProgress(full.state, 'share'));
    }
  });

  it('restoreServer checks its snapshot and messages', async () => {
    const h = makeHarness(5, 3, 8);
    advertise(h);
    const adverts = [...h.server.adverts.values()];
    const snap = snapshotOf(h.server);
    expect(() => restoreServer({ ...snap, stage: 'done' as CollectingStage }, adverts)).toThrow(
      /^snapshot\.stage: /,
    );
    expect(() => restoreServer({ ...snap, sets: [[0, 1, 2]] }, adverts)).toThrow(
      new RangeError('snapshot.sets: 1 closed stage(s) before advertise'),
    );
    expect(() => restoreServer({ ...snap, config: { ...snap.config, threshold: 2 } }, adverts)).toThrow(
      /^config\.threshold/,
    );
    expect(() => restoreServer(snap, [adverts[0]!, adverts[0]!])).toThrow(
      new RangeError('messages: two advertise messages from 0'),
    );
    expect(() => restoreServer(snap, [{ type: 'keys' } as unknown as ClientMessage])).toThrow(
      /^messages: expected client messages/,
    );
  });
});
