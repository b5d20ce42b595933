import { describe, expect, it } from 'vitest';
import { agree } from '../../crypto/key-agreement.js';
import { applyMask } from '../../crypto/prg.js';
import { sign } from '../../crypto/signature.js';
import { clientHandle, clientStart, createClient } from '../../protocol/client.js';
import { signedPayload } from '../../protocol/codec.js';
import {
  type KeyList,
  PROTOCOL_VERSION,
  type ServerMessage,
  type ShareList,
  type SurvivorList,
  type UnmaskRequest,
} from '../../protocol/messages.js';
import { advertise, all, close, type Harness, makeHarness, respond } from './_harness.js';

/** An honest round of 5 silos (t = 3) run up to the point where client 0 holds `stage`'s request. */
async function upTo(
  stage: 'keys' | 'shares' | 'survivors' | 'unmask-request',
  drop: number[] = [],
): Promise<Harness> {
  const h = makeHarness(5, 3, 16);
  advertise(h);
  await close(h);
  if (stage === 'keys') return h;
  await respond(h, all(h));
  await close(h);
  if (stage === 'shares') return h;
  await respond(
    h,
    all(h).filter((i) => !drop.includes(i)),
  );
  await close(h);
  if (stage === 'survivors') return h;
  await respond(
    h,
    all(h).filter((i) => !drop.includes(i)),
  );
  await close(h);
  return h;
}

async function feed(h: Harness, i: number, m: ServerMessage) {
  return clientHandle(h.clients[i]!, m, h.deps[i]!);
}

const codeOf = (r: { reply: { type: string; code?: string } }) =>
  r.reply.type === 'abort' ? r.reply.code : 'sent';

describe('protocol/client: an honest client rejects a misbehaving server with coded aborts', () => {
  it('accepts the honest key list', async () => {
    const h = await upTo('keys');
    const r = await feed(h, 0, h.inbox.get(0)!);
    expect(codeOf(r)).toBe('sent');
    expect(r.state.stage).toBe('shared');
  });

  it('rejects an advertisement not signed by the registered peer (server forgery)', async () => {
    const h = await upTo('keys');
    const kl = h.inbox.get(0) as KeyList;
    // The server substitutes silo 2's keys with its own and signs with a key that is not silo 2's.
    const fake = { ...kl.entries[2]!, cPK: kl.entries[3]!.sPK.map((x) => x ^ 1) };
    const payload = signedPayload({
      version: PROTOCOL_VERSION,
      session: kl.session,
      round: kl.round,
      sender: 2,
      type: 'advertise',
      cPK: fake.cPK,
      sPK: fake.sPK,
      context: fake.context,
    });
    const forged = { ...fake, signature: sign(h.ids[4]!.secretKey, payload) };
    const r = await feed(h, 0, { ...kl, entries: kl.entries.map((e, i) => (i === 2 ? forged : e)) });
    expect(codeOf(r)).toBe('BAD_SIGNATURE');
    expect(r.state.stage).toBe('aborted');
    expect(r.state.error?.code).toBe('BAD_SIGNATURE');
  });

  it('rejects an advertisement from the previous round replayed into this one', async () => {
    const old = makeHarness(5, 3, 16, 0);
    advertise(old);
    await close(old);
    const h = await upTo('keys');
    const kl = h.inbox.get(0) as KeyList;
    const stale = (old.inbox.get(0) as KeyList).entries[1]!;
    const r = await feed(h, 0, { ...kl, entries: kl.entries.map((e, i) => (i === 1 ? stale : e)) });
    expect(codeOf(r)).toBe('BAD_SIGNATURE');
  });

  it('rejects unknown ids, duplicated keys, lists without itself and lists below t', async () => {
    const h = await upTo('keys');
    const kl = h.inbox.get(0) as KeyList;
    expect(codeOf(await feed(h, 0, { ...kl, entries: [...kl.entries, { ...kl.entries[1]!, id: 9 }] }))).toBe(
      'UNKNOWN_SENDER',
    );
    const h2 = await upTo('keys');
    const dup = { ...kl, entries: [...kl.entries, kl.entries[1]!] };
    expect(codeOf(await feed(h2, 0, dup))).toBe('INCONSISTENT_SET');
    const h3 = await upTo('keys');
    expect(codeOf(await feed(h3, 0, { ...kl, entries: kl.entries.slice(1) }))).toBe('INCONSISTENT_SET');
    const h4 = await upTo('keys');
    expect(codeOf(await feed(h4, 0, { ...kl, entries: kl.entries.slice(0, 2) }))).toBe('BELOW_THRESHOLD');
  });

  it('rejects two silos advertising the same key (Bonawitz et al. 2017, round 1 assertion)', async () => {
    // Silo 1 (colluding) re-advertises silo 2's keys under its own valid signature.
    const h = await upTo('keys');
    const kl = h.inbox.get(0) as KeyList;
    const e2 = kl.entries[2]!;
    const payload = signedPayload({
      version: PROTOCOL_VERSION,
      session: kl.session,
      round: kl.round,
      sender: 1,
      type: 'advertise',
      cPK: e2.cPK,
      sPK: e2.sPK,
      context: e2.context,
    });
    const copied = {
      id: 1,
      cPK: e2.cPK,
      sPK: e2.sPK,
      context: e2.context,
      signature: sign(h.ids[1]!.secretKey, payload),
    };
    const r = await feed(h, 0, { ...kl, entries: kl.entries.map((e, i) => (i === 1 ? copied : e)) });
    expect(codeOf(r)).toBe('DUPLICATE_KEYS');
  });

  it('rejects tampered, misattributed or foreign share boxes', async () => {
    const h = await upTo('shares');
    const sl = h.inbox.get(0) as ShareList;
    const flip = sl.boxes[0]!.box.slice();
    flip[40]! ^= 1;
    expect(
      codeOf(await feed(h, 0, { ...sl, boxes: [{ ...sl.boxes[0]!, box: flip }, ...sl.boxes.slice(1)] })),
    ).toBe('BAD_CIPHERTEXT');
    const h2 = await upTo('shares');
    // the server swaps the senders of two boxes: the AEAD associated data (sender id) no longer matches
    const swapped = [
      { ...sl.boxes[0]!, sender: sl.boxes[1]!.sender },
      { ...sl.boxes[1]!, sender: sl.boxes[0]!.sender },
      ...sl.boxes.slice(2),
    ];
    expect(codeOf(await feed(h2, 0, { ...sl, boxes: swapped }))).toBe('BAD_CIPHERTEXT');
    const h3 = await upTo('shares');
    // a box addressed to client 1 redirected to client 0
    const for1 = (h3.inbox.get(1) as ShareList).boxes.find((b) => b.sender === 2)!;
    const redirected = sl.boxes.map((b) => (b.sender === 2 ? for1 : b));
    expect(codeOf(await feed(h3, 0, { ...sl, boxes: redirected }))).toBe('BAD_CIPHERTEXT');
  });

  it('rejects a survivor set that omits itself, is not ⊆ U_2, or is below t', async () => {
    const h = await upTo('survivors');
    const sv = h.inbox.get(0) as SurvivorList;
    expect(codeOf(await feed(h, 0, { ...sv, survivors: [1, 2, 3, 4] }))).toBe('INCONSISTENT_SET');
    const h2 = await upTo('survivors');
    expect(codeOf(await feed(h2, 0, { ...sv, survivors: [0, 1, 2, 3, 4, 7] }))).toBe('INCONSISTENT_SET');
    const h3 = await upTo('survivors');
    expect(codeOf(await feed(h3, 0, { ...sv, survivors: [0, 1] }))).toBe('BELOW_THRESHOLD');
    const h4 = await upTo('survivors');
    expect(codeOf(await feed(h4, 0, { ...sv, survivors: [2, 0, 1] }))).toBe('MALFORMED');
  });

  it('answers an honest unmasking request once: seed shares of survivors, key shares of the dropped', async () => {
    const h = await upTo('unmask-request', [4]);
    const req = h.inbox.get(0) as UnmaskRequest;
    expect(req.survivors).toEqual([0, 1, 2, 3]);
    expect(req.dropped).toEqual([4]);
    const r = await feed(h, 0, req);
    expect(r.reply.type).toBe('send');
    if (r.reply.type !== 'send' || r.reply.message.type !== 'unmask') throw new Error('expected unmask');
    expect(r.reply.message.keyShares.map((s) => s.owner)).toEqual([4]);
    expect(r.reply.message.seedShares.map((s) => s.owner)).toEqual([0, 1, 2, 3]);
    expect(r.state.stage).toBe('done');
    // a second request (replay, or a server trying its luck with another set) gets nothing
    const again = await feed({ ...h, clients: [r.state, ...h.clients.slice(1)] }, 0, {
      ...req,
      dropped: [],
      survivors: [0, 1, 2, 3],
    });
    expect(codeOf(again)).toBe('OUT_OF_ORDER');
  });

  it('refuses a request for both shares of one peer (BOTH_SHARES_REQUESTED) and reveals nothing', async () => {
    const h = await upTo('unmask-request', [4]);
    const req = h.inbox.get(0) as UnmaskRequest;
    const r = await feed(h, 0, { ...req, dropped: [1, 4] });
    expect(codeOf(r)).toBe('BOTH_SHARES_REQUESTED');
    expect(r.state.stage).toBe('aborted');
    expect(r.state.held).toBeUndefined();
  });

  it('refuses a survivor set that differs from the signed consistency set', async () => {
    const h = await upTo('unmask-request', [4]);
    const req = h.inbox.get(0) as UnmaskRequest;
    const r = await feed(h, 0, { ...req, survivors: [0, 1, 2], dropped: [3, 4] });
    // 3 is in the signed U_3 and requested as dropped: its seed share went to the server's view of
    // U_3 elsewhere, so this is a request for its key share too — refused before anything else
    expect(codeOf(r)).toBe('BOTH_SHARES_REQUESTED');
    const h2 = await upTo('unmask-request', [4]);
    expect(codeOf(await feed(h2, 0, { ...req, survivors: [0, 1, 2], dropped: [4] }))).toBe(
      'CONSISTENCY_MISMATCH',
    );
  });

  it('refuses fewer than t consistency signatures, a forged one, or a dropped id outside U_2 ∖ U_3', async () => {
    const h = await upTo('unmask-request', [4]);
    const req = h.inbox.get(0) as UnmaskRequest;
    expect(codeOf(await feed(h, 0, { ...req, signatures: req.signatures.slice(0, 2) }))).toBe(
      'BELOW_THRESHOLD',
    );
    const h2 = await upTo('unmask-request', [4]);
    const forged = req.signatures.map((s, i) =>
      i === 1 ? { ...s, signature: req.signatures[0]!.signature } : s,
    );
    expect(codeOf(await feed(h2, 0, { ...req, signatures: forged }))).toBe('BAD_SIGNATURE');
    const h3 = await upTo('unmask-request', [4]);
    expect(codeOf(await feed(h3, 0, { ...req, dropped: [4, 9] }))).toBe('INCONSISTENT_SET');
  });

  it('rejects out-of-order, wrong-round and wrong-session messages', async () => {
    const h = await upTo('keys');
    const kl = h.inbox.get(0) as KeyList;
    const sv: SurvivorList = {
      version: PROTOCOL_VERSION,
      session: kl.session,
      round: kl.round,
      type: 'survivors',
      survivors: [0, 1, 2],
    };
    expect(codeOf(await feed(h, 0, sv))).toBe('OUT_OF_ORDER');
    const h2 = await upTo('keys');
    expect(codeOf(await feed(h2, 0, { ...kl, round: kl.round + 1 }))).toBe('WRONG_ROUND');
    const h3 = await upTo('keys');
    expect(codeOf(await feed(h3, 0, { ...kl, session: 'other' }))).toBe('WRONG_SESSION');
    const h4 = await upTo('keys');
    expect(codeOf(await feed(h4, 0, { ...kl, version: PROTOCOL_VERSION + 1 }))).toBe('UNSUPPORTED_VERSION');
    const h5 = await upTo('keys');
    expect(
      codeOf(await feed(h5, 0, { ...kl, type: 'abort', code: 'BELOW_THRESHOLD' } as ServerMessage)),
    ).toBe('ABORTED');
  });

  it('wipes its secrets when it aborts', async () => {
    const h = await upTo('shares');
    const before = h.clients[0]!;
    const sk = before.sKeys!.secretKey;
    const seed = before.selfSeed!;
    expect(sk.some((b) => b !== 0)).toBe(true);
    const sl = h.inbox.get(0) as ShareList;
    await feed(h, 0, { ...sl, boxes: [] }); // below t
    expect(sk.every((b) => b === 0)).toBe(true);
    expect(seed.every((b) => b === 0)).toBe(true);
  });

  it('checks its arguments', () => {
    const h = makeHarness(3, 2, 4);
    expect(() => createClient(h.config, 3, h.ids[0]!.secretKey, h.inputs[0]!)).toThrow(/^id/);
    expect(() => createClient(h.config, 0, h.ids[0]!.secretKey, new Uint32Array(5))).toThrow(/^input/);
    expect(() => createClient(h.config, 0, new Uint8Array(3), h.inputs[0]!)).toThrow(/^signingKey/);
    const s = clientStart(h.clients[0]!, h.deps[0]!);
    expect(codeOf(clientStart(s.state, h.deps[0]!))).toBe('OUT_OF_ORDER');
  });
});

describe('protocol/client: the Unmasking correction (Σ of its pairwise masks with the dropped)', () => {
  it("sends exactly the masks with the dropped that its masked input carries (corrections 'recompute')", async () => {
    const h = await upTo('unmask-request', [3, 4]);
    h.clients[0] = { ...h.clients[0]!, config: { ...h.config, corrections: 'recompute' } };
    const req = h.inbox.get(0) as UnmaskRequest;
    expect(req.dropped).toEqual([3, 4]);
    // the client's secret key is wiped once it answers: take the expected masks first
    const sk = h.clients[0]!.sKeys!.secretKey.slice();
    const peers = h.clients[0]!.peers!;
    const expected = new Uint32Array(h.config.length);
    for (const u of [3, 4]) {
      const label = {
        kind: 'pair',
        session: h.config.session,
        round: h.config.round,
        a: 0,
        b: u,
        vector: 0,
      } as const;
      applyMask(expected, agree(sk, peers.get(u)!.sPK), label, 1); // 0 < u: added (Bonawitz et al. round 2)
    }
    const r = await feed(h, 0, req);
    if (r.reply.type !== 'send' || r.reply.message.type !== 'unmask') throw new Error('expected unmask');
    expect(r.reply.message.correction).toEqual(expected);
    expect(expected.some((x) => x !== 0)).toBe(true);
  });

  it("sends none when nobody dropped, or when the round configuration's corrections are 'off' (the default)", async () => {
    const h = await upTo('unmask-request');
    const r = await feed(h, 0, h.inbox.get(0)!);
    if (r.reply.type !== 'send' || r.reply.message.type !== 'unmask') throw new Error('expected unmask');
    expect(r.reply.message.correction).toBeUndefined();
    const off = await upTo('unmask-request', [4]);
    off.clients[0] = { ...off.clients[0]!, config: { ...off.config, corrections: 'off' } };
    const r2 = await feed(off, 0, off.inbox.get(0)!);
    if (r2.reply.type !== 'send' || r2.reply.message.type !== 'unmask') throw new Error('expected unmask');
    expect(r2.reply.message.keyShares.map((s) => s.owner)).toEqual([4]);
    expect(r2.reply.message.correction).toBeUndefined();
  });
});
