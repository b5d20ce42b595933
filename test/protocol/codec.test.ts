import { describe, expect, it } from 'vitest';
import {
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  encodeServerMessage,
} from '../../protocol/codec.js';
import { SecAggError } from '../../protocol/errors.js';
import { type ClientMessage, PROTOCOL_VERSION, type ServerMessage } from '../../protocol/messages.js';

const h = { version: PROTOCOL_VERSION, session: 'sé', round: 70000 };
const b = (n: number, v: number) => new Uint8Array(n).fill(v);
const sig = b(64, 9);
const context = { model: b(32, 20), weights: b(32, 21) };

const clientMessages: ClientMessage[] = [
  { ...h, sender: 3, type: 'advertise', cPK: b(32, 1), sPK: b(32, 2), context, signature: sig },
  {
    ...h,
    sender: 3,
    type: 'share',
    boxes: [
      { receiver: 0, box: b(90, 3) },
      { receiver: 4, box: b(90, 4) },
    ],
    digests: [
      { holder: 0, key: b(32, 10), seed: b(32, 11) },
      { holder: 3, key: b(32, 12), seed: b(32, 13) },
      { holder: 4, key: b(32, 14), seed: b(32, 15) },
    ],
    seedCommitment: b(32, 16),
    signature: sig,
  },
  { ...h, sender: 3, type: 'mask', masked: Uint32Array.from([0, 1, 0xffffffff, 12345678]), signature: sig },
  { ...h, sender: 3, type: 'consistency', survivors: [0, 3, 4], context, signature: sig },
  {
    ...h,
    sender: 3,
    type: 'unmask',
    keyShares: [{ owner: 1, share: b(33, 5) }],
    seedShares: [
      { owner: 0, share: b(33, 6) },
      { owner: 3, share: b(33, 7) },
    ],
    signature: sig,
  },
  {
    ...h,
    sender: 3,
    type: 'unmask',
    keyShares: [{ owner: 1, share: b(33, 5) }],
    seedShares: [{ owner: 3, share: b(33, 7) }],
    correction: Uint32Array.from([7, 0xffffffff, 0]),
    signature: sig,
  },
];
const serverMessages: ServerMessage[] = [
  { ...h, type: 'keys', entries: [{ id: 2, cPK: b(32, 1), sPK: b(32, 2), context, signature: sig }] },
  {
    ...h,
    type: 'shares',
    boxes: [{ sender: 1, box: b(90, 8), keyDigest: b(32, 17), seedDigest: b(32, 18) }],
  },
  { ...h, type: 'survivors', survivors: [1, 2, 200] },
  {
    ...h,
    type: 'unmask-request',
    survivors: [1, 2],
    dropped: [5],
    signatures: [{ id: 1, context, signature: sig }],
  },
  { ...h, type: 'abort', code: 'BELOW_THRESHOLD' },
];

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return e instanceof SecAggError ? e.code : `other: ${(e as Error).message}`;
  }
  return 'no error';
}

describe('protocol/codec', () => {
  it.each(clientMessages.map((m) => [m.type, m] as const))('round-trips the client message %s', (_t, m) => {
    expect(decodeClientMessage(encodeClientMessage(m))).toEqual(m);
  });
  it.each(serverMessages.map((m) => [m.type, m] as const))('round-trips the server message %s', (_t, m) => {
    expect(decodeServerMessage(encodeServerMessage(m))).toEqual(m);
  });

  it('encodes a 10^6-element masked vector in 4·10^6 bytes plus a small header', () => {
    const masked = new Uint32Array(1_000_000).fill(0xdeadbeef);
    const bytes = encodeClientMessage({ ...h, sender: 1, type: 'mask', masked, signature: sig });
    expect(bytes.length).toBeGreaterThan(4_000_000);
    expect(bytes.length).toBeLessThan(4_000_100);
    const back = decodeClientMessage(bytes);
    expect(back.type === 'mask' && back.masked[999_999]).toBe(0xdeadbeef);
  });

  it('decodes from a Node Buffer inside the shared pool (HTTP bodies arrive that way)', () => {
    const m = clientMessages[2]!; // the masked vector: words() must read the right bytes
    const bytes = encodeClientMessage(m);
    const pooled = Buffer.from(bytes); // small Buffers are views into Node's shared pool
    expect(pooled.byteOffset).toBeGreaterThan(0);
    expect(decodeClientMessage(pooled)).toEqual(m);
  });

  it('rejects truncated, extended, unknown, mis-typed and wrong-version encodings with codes', () => {
    const good = encodeClientMessage(clientMessages[2]!);
    expect(codeOf(() => decodeClientMessage(good.subarray(0, good.length - 1)))).toBe('MALFORMED');
    expect(codeOf(() => decodeClientMessage(Uint8Array.from([...good, 0])))).toBe('MALFORMED');
    const badType = good.slice();
    badType[4] = 0x42;
    expect(codeOf(() => decodeClientMessage(badType))).toBe('MALFORMED');
    const badVersion = good.slice();
    badVersion[3] = PROTOCOL_VERSION + 1;
    expect(codeOf(() => decodeClientMessage(badVersion))).toBe('UNSUPPORTED_VERSION');
    // version 1 (before share digests and the seed commitment) is no longer spoken
    const v1 = good.slice();
    v1[3] = 1;
    expect(codeOf(() => decodeClientMessage(v1))).toBe('UNSUPPORTED_VERSION');
    // nor version 2 (before the signed round context, issue 27)
    const v2 = good.slice();
    v2[3] = 2;
    expect(codeOf(() => decodeClientMessage(v2))).toBe('UNSUPPORTED_VERSION');
    const badMagic = good.slice();
    badMagic[0] = 0;
    expect(codeOf(() => decodeClientMessage(badMagic))).toBe('MALFORMED');
    expect(codeOf(() => decodeClientMessage(encodeServerMessage(serverMessages[2]!)))).toBe('MALFORMED');
    expect(codeOf(() => decodeServerMessage(good))).toBe('MALFORMED');
    expect(codeOf(() => decodeClientMessage(new Uint8Array(0)))).toBe('MALFORMED');
  });

  it('rejects an unmasking response whose correction flag is neither 0 nor 1', () => {
    const good = encodeClientMessage(clientMessages[5]!);
    // flag byte sits before the correction's u32 count, 3 words and the 64-byte signature
    const flagAt = good.length - 64 - 4 * 3 - 4 - 1;
    expect(good[flagAt]).toBe(1);
    const bad = good.slice();
    bad[flagAt] = 2;
    expect(codeOf(() => decodeClientMessage(bad))).toBe('MALFORMED');
  });

  it('refuses to encode malformed fields', () => {
    const m = clientMessages[0]!;
    expect(() => encodeClientMessage({ ...m, signature: b(63, 0) })).toThrow(/^signature/);
    expect(() => encodeClientMessage({ ...m, type: 'advertise', cPK: b(31, 0) } as ClientMessage)).toThrow(
      /^cPK/,
    );
    const share = clientMessages[1]!;
    expect(() => encodeClientMessage({ ...share, seedCommitment: b(31, 0) } as ClientMessage)).toThrow(
      /^seedCommitment/,
    );
    expect(() =>
      encodeServerMessage({
        ...h,
        type: 'shares',
        boxes: [{ sender: 1, box: b(90, 8), keyDigest: b(31, 0), seedDigest: b(32, 0) }],
      }),
    ).toThrow(/^keyDigest/);
  });
});
