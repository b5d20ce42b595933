/**
 * Compact binary encoding of protocol messages.
 *
 * Layout: "FSA" ‖ version u8 ‖ type u8 ‖ session (u8 length + UTF-8) ‖ round u32 ‖ [sender u8] ‖
 * body ‖ [signature 64 bytes]. Version 2 (protocol/messages.ts PROTOCOL_VERSION) adds to ShareKeys
 * the digests (u16 count, then holder u8 ‖ key digest 32 ‖ seed digest 32 each) and the 32-byte
 * self-seed commitment, and to each relayed box its two 32-byte digests. Version 3 adds the round
 * context (model digest 32 ‖ weight-vector digest 32) after AdvertiseKeys' keys and
 * ConsistencyCheck's survivors, and relays it after the id of each key-list entry and each
 * relayed consistency signature. Integers are big-endian except vectors, which travel as raw
 * little-endian uint32 words (a 10^6-element masked vector is 4 MB plus a 4-byte count, not a
 * JSON array). Byte strings carry a u32 length; id lists a u16 count and one byte per id.
 * Decoding is strict: trailing bytes, unknown types or truncation throw SecAggError MALFORMED.
 *
 * Signatures cover the domain tag "fedscore/secagg/v1/client-message" followed by the SHA-256 of
 * the encoding up to the signature (Bonawitz et al. 2017, §4: SIG.sign over the round's content,
 * here also bound to session, round, stage and sender). The pre-hash keeps signing a 4 MB masked
 * vector cheap (crypto/digest.ts).
 */
import { checkBytes } from '../crypto/check.js';
import { sha256 } from '../crypto/digest.js';
import { ED25519_SIGNATURE_LENGTH } from '../crypto/signature.js';
import { SECAGG_ERRORS, SecAggError, type SecAggErrorCode } from './errors.js';
import type {
  AdvertiseKeys,
  ClientMessage,
  ConsistencyCheck,
  MaskedInput,
  RoundContext,
  ServerMessage,
  ShareKeys,
  UnmaskResponse,
  UnsignedClientMessage,
} from './messages.js';
import { CONTEXT_DIGEST_LENGTH, PROTOCOL_VERSION } from './messages.js';

const MAGIC = [0x46, 0x53, 0x41]; // "FSA"
const TYPE_CODES = {
  advertise: 1,
  share: 2,
  mask: 3,
  consistency: 4,
  unmask: 5,
  keys: 0x81,
  shares: 0x82,
  survivors: 0x83,
  'unmask-request': 0x84,
  abort: 0x85,
} as const;
type TypeName = keyof typeof TYPE_CODES;
const TYPE_NAMES = new Map<number, TypeName>(
  Object.entries(TYPE_CODES).map(([k, v]) => [v, k as TypeName] as const),
);
const ERROR_CODES = Object.keys(SECAGG_ERRORS) as SecAggErrorCode[];
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });

/** Domain-separation tag prepended to every signed client payload. */
export const CLIENT_SIGNATURE_TAG = enc.encode('fedscore/secagg/v1/client-message');

class Writer {
  private parts: Uint8Array[] = [];
  bytes(b: Uint8Array): this {
    this.parts.push(b);
    return this;
  }
  u8(v: number): this {
    return this.bytes(Uint8Array.of(v));
  }
  u16(v: number): this {
    return this.bytes(Uint8Array.of(v >>> 8, v & 255));
  }
  u32(v: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, v, false);
    return this.bytes(b);
  }
  varBytes(b: Uint8Array): this {
    return this.u32(b.length).bytes(b);
  }
  str(s: string): this {
    const b = enc.encode(s);
    if (b.length < 1 || b.length > 255) throw new RangeError('session: UTF-8 length must be in [1, 255]');
    return this.u8(b.length).bytes(b);
  }
  ids(ids: readonly number[]): this {
    this.u16(ids.length);
    return this.bytes(Uint8Array.from(ids));
  }
  words(w: Uint32Array): this {
    this.u32(w.length);
    if (LITTLE_ENDIAN) return this.bytes(new Uint8Array(w.buffer, w.byteOffset, w.byteLength));
    const b = new Uint8Array(4 * w.length);
    const dv = new DataView(b.buffer);
    for (let i = 0; i < w.length; i++) dv.setUint32(4 * i, w[i]!, true);
    return this.bytes(b);
  }
  /** SHA-256 of what finish() would return, without concatenating the parts (a masked vector is 4 MB). */
  digest(): Uint8Array {
    return sha256(...this.parts);
  }
  finish(): Uint8Array {
    let n = 0;
    for (const p of this.parts) n += p.length;
    const out = new Uint8Array(n);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

class Reader {
  private o = 0;
  constructor(private readonly b: Uint8Array) {}
  private need(n: number): void {
    if (this.o + n > this.b.length) throw new SecAggError('MALFORMED', 'truncated message');
  }
  bytes(n: number): Uint8Array {
    this.need(n);
    // A plain Uint8Array copy: on a Node Buffer, slice() is a view into the shared pool, so
    // `out.buffer` would not start at the copied bytes (words() below relies on it).
    const out = new Uint8Array(n);
    out.set(this.b.subarray(this.o, this.o + n));
    this.o += n;
    return out;
  }
  u8(): number {
    this.need(1);
    return this.b[this.o++]!;
  }
  u16(): number {
    return (this.u8() << 8) | this.u8();
  }
  u32(): number {
    this.need(4);
    const v = new DataView(this.b.buffer, this.b.byteOffset + this.o, 4).getUint32(0, false);
    this.o += 4;
    return v;
  }
  varBytes(): Uint8Array {
    return this.bytes(this.u32());
  }
  str(): string {
    const n = this.u8();
    if (n === 0) throw new SecAggError('MALFORMED', 'empty session');
    try {
      return dec.decode(this.bytes(n));
    } catch {
      throw new SecAggError('MALFORMED', 'session is not UTF-8');
    }
  }
  ids(): number[] {
    return Array.from(this.bytes(this.u16()));
  }
  words(): Uint32Array {
    const n = this.u32();
    const raw = this.bytes(4 * n); // fresh, aligned copy
    if (LITTLE_ENDIAN) return new Uint32Array(raw.buffer, 0, n);
    const w = new Uint32Array(n);
    const dv = new DataView(raw.buffer);
    for (let i = 0; i < n; i++) w[i] = dv.getUint32(4 * i, true);
    return w;
  }
  get offset(): number {
    return this.o;
  }
  end(): void {
    if (this.o !== this.b.length) throw new SecAggError('MALFORMED', 'trailing bytes');
  }
}

function header(w: Writer, type: TypeName, m: { version: number; session: string; round: number }): Writer {
  return w.bytes(Uint8Array.from(MAGIC)).u8(m.version).u8(TYPE_CODES[type]).str(m.session).u32(m.round);
}

/** A round context: the model digest, then the weight-vector digest (32 bytes each). */
function context(w: Writer, c: RoundContext): Writer {
  if (typeof c !== 'object' || c === null) throw new TypeError('context: expected an object');
  return w
    .bytes(checkBytes('context.model', c.model, CONTEXT_DIGEST_LENGTH))
    .bytes(checkBytes('context.weights', c.weights, CONTEXT_DIGEST_LENGTH));
}

function readContext(r: Reader): RoundContext {
  return { model: r.bytes(CONTEXT_DIGEST_LENGTH), weights: r.bytes(CONTEXT_DIGEST_LENGTH) };
}

function clientBody(m: UnsignedClientMessage): Writer {
  const w = header(new Writer(), m.type, m).u8(m.sender);
  switch (m.type) {
    case 'advertise':
      return context(w.bytes(checkBytes('cPK', m.cPK, 32)).bytes(checkBytes('sPK', m.sPK, 32)), m.context);
    case 'share':
      w.u16(m.boxes.length);
      for (const b of m.boxes) w.u8(b.receiver).varBytes(b.box);
      w.u16(m.digests.length);
      for (const d of m.digests)
        w.u8(d.holder)
          .bytes(checkBytes('key digest', d.key, 32))
          .bytes(checkBytes('seed digest', d.seed, 32));
      return w.bytes(checkBytes('seedCommitment', m.seedCommitment, 32));
    case 'mask':
      return w.words(m.masked);
    case 'consistency':
      return context(w.ids(m.survivors), m.context);
    case 'unmask':
      w.u16(m.keyShares.length);
      for (const s of m.keyShares) w.u8(s.owner).varBytes(s.share);
      w.u16(m.seedShares.length);
      for (const s of m.seedShares) w.u8(s.owner).varBytes(s.share);
      // A presence byte (0 or 1), then the correction vector when present.
      if (m.correction === undefined) return w.u8(0);
      if (!(m.correction instanceof Uint32Array)) throw new TypeError('correction: expected Uint32Array');
      return w.u8(1).words(m.correction);
  }
}

/**
 * The bytes a client signs: {@link CLIENT_SIGNATURE_TAG} ‖ SHA-256(encoding without the signature).
 *
 * @throws RangeError on a field that cannot be encoded.
 */
export function signedPayload(message: UnsignedClientMessage): Uint8Array {
  return new Writer().bytes(CLIENT_SIGNATURE_TAG).bytes(clientBody(message).digest()).finish();
}

/**
 * Encodes a signed client message.
 *
 * @throws RangeError on a field that cannot be encoded (e.g. a 65-byte signature).
 */
export function encodeClientMessage(message: ClientMessage): Uint8Array {
  return clientBody(message)
    .bytes(checkBytes('signature', message.signature, ED25519_SIGNATURE_LENGTH))
    .finish();
}

function readHeader(r: Reader): { version: number; type: TypeName; session: string; round: number } {
  const magic = r.bytes(3);
  if (magic[0] !== MAGIC[0] || magic[1] !== MAGIC[1] || magic[2] !== MAGIC[2])
    throw new SecAggError('MALFORMED', 'bad magic');
  const version = r.u8();
  if (version !== PROTOCOL_VERSION) throw new SecAggError('UNSUPPORTED_VERSION', `version ${version}`);
  const code = r.u8();
  const type = TYPE_NAMES.get(code);
  if (type === undefined) throw new SecAggError('MALFORMED', `unknown message type ${code}`);
  return { version, type, session: r.str(), round: r.u32() };
}

/**
 * Decodes a client message (does not verify its signature: the server does, against the roster).
 *
 * @throws SecAggError MALFORMED / UNSUPPORTED_VERSION; TypeError if `bytes` is not a Uint8Array.
 */
export function decodeClientMessage(bytes: Uint8Array): ClientMessage {
  checkBytes('bytes', bytes);
  const r = new Reader(bytes);
  const h = readHeader(r);
  const base = { version: h.version, session: h.session, round: h.round, sender: r.u8() };
  let m: ClientMessage;
  switch (h.type) {
    case 'advertise': {
      const cPK = r.bytes(32);
      const sPK = r.bytes(32);
      const ctx = readContext(r);
      m = {
        ...base,
        type: 'advertise',
        cPK,
        sPK,
        context: ctx,
        signature: r.bytes(ED25519_SIGNATURE_LENGTH),
      } satisfies AdvertiseKeys;
      break;
    }
    case 'share': {
      const n = r.u16();
      const boxes = Array.from({ length: n }, () => ({ receiver: r.u8(), box: r.varBytes() }));
      const k = r.u16();
      const digests = Array.from({ length: k }, () => ({
        holder: r.u8(),
        key: r.bytes(32),
        seed: r.bytes(32),
      }));
      const seedCommitment = r.bytes(32);
      m = {
        ...base,
        type: 'share',
        boxes,
        digests,
        seedCommitment,
        signature: r.bytes(ED25519_SIGNATURE_LENGTH),
      } satisfies ShareKeys;
      break;
    }
    case 'mask': {
      const masked = r.words();
      m = {
        ...base,
        type: 'mask',
        masked,
        signature: r.bytes(ED25519_SIGNATURE_LENGTH),
      } satisfies MaskedInput;
      break;
    }
    case 'consistency': {
      const survivors = r.ids();
      const ctx = readContext(r);
      m = {
        ...base,
        type: 'consistency',
        survivors,
        context: ctx,
        signature: r.bytes(ED25519_SIGNATURE_LENGTH),
      } satisfies ConsistencyCheck;
      break;
    }
    case 'unmask': {
      const kn = r.u16();
      const keyShares = Array.from({ length: kn }, () => ({ owner: r.u8(), share: r.varBytes() }));
      const sn = r.u16();
      const seedShares = Array.from({ length: sn }, () => ({ owner: r.u8(), share: r.varBytes() }));
      const present = r.u8();
      if (present > 1) throw new SecAggError('MALFORMED', `correction flag ${present} is not 0 or 1`);
      const correction = present === 1 ? { correction: r.words() } : {};
      m = {
        ...base,
        type: 'unmask',
        keyShares,
        seedShares,
        ...correction,
        signature: r.bytes(ED25519_SIGNATURE_LENGTH),
      } satisfies UnmaskResponse;
      break;
    }
    default:
      throw new SecAggError('MALFORMED', `${h.type} is not a client message`);
  }
  r.end();
  return m;
}

/** Encodes a server message. @throws RangeError on a field that cannot be encoded. */
export function encodeServerMessage(m: ServerMessage): Uint8Array {
  const w = header(new Writer(), m.type, m);
  switch (m.type) {
    case 'keys':
      w.u16(m.entries.length);
      for (const e of m.entries) context(w.u8(e.id).bytes(e.cPK).bytes(e.sPK), e.context).bytes(e.signature);
      break;
    case 'shares':
      w.u16(m.boxes.length);
      for (const b of m.boxes)
        w.u8(b.sender)
          .varBytes(b.box)
          .bytes(checkBytes('keyDigest', b.keyDigest, 32))
          .bytes(checkBytes('seedDigest', b.seedDigest, 32));
      break;
    case 'survivors':
      w.ids(m.survivors);
      break;
    case 'unmask-request':
      w.ids(m.survivors).ids(m.dropped).u16(m.signatures.length);
      for (const s of m.signatures) context(w.u8(s.id), s.context).bytes(s.signature);
      break;
    case 'abort':
      w.u8(ERROR_CODES.indexOf(m.code));
      break;
  }
  return w.finish();
}

/** Decodes a server message. @throws SecAggError MALFORMED / UNSUPPORTED_VERSION. */
export function decodeServerMessage(bytes: Uint8Array): ServerMessage {
  checkBytes('bytes', bytes);
  const r = new Reader(bytes);
  const { type, ...h } = readHeader(r);
  let m: ServerMessage;
  switch (type) {
    case 'keys': {
      const n = r.u16();
      const entries = Array.from({ length: n }, () => ({
        id: r.u8(),
        cPK: r.bytes(32),
        sPK: r.bytes(32),
        context: readContext(r),
        signature: r.bytes(ED25519_SIGNATURE_LENGTH),
      }));
      m = { ...h, type, entries };
      break;
    }
    case 'shares': {
      const n = r.u16();
      const boxes = Array.from({ length: n }, () => ({
        sender: r.u8(),
        box: r.varBytes(),
        keyDigest: r.bytes(32),
        seedDigest: r.bytes(32),
      }));
      m = { ...h, type, boxes };
      break;
    }
    case 'survivors':
      m = { ...h, type, survivors: r.ids() };
      break;
    case 'unmask-request': {
      const survivors = r.ids();
      const dropped = r.ids();
      const n = r.u16();
      const signatures = Array.from({ length: n }, () => ({
        id: r.u8(),
        context: readContext(r),
        signature: r.bytes(ED25519_SIGNATURE_LENGTH),
      }));
      m = { ...h, type, survivors, dropped, signatures };
      break;
    }
    case 'abort': {
      const code = ERROR_CODES[r.u8()];
      if (code === undefined) throw new SecAggError('MALFORMED', 'unknown abort code');
      m = { ...h, type, code };
      break;
    }
    default:
      throw new SecAggError('MALFORMED', `${type} is not a server message`);
  }
  r.end();
  return m;
}
