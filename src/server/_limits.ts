/**
 * Body limits that follow a consortium's d (internal): the operator's model upload is 4·d bytes,
 * a masked input is d + 1 words plus its framing, an unmasking response at most the same vector
 * (its correction) plus one share per silo of each kind; every other upload stays under the
 * service's `maxBodyBytes` (the routes' own limit). The framing is measured with the codec itself (protocol/codec.ts), so
 * the limits follow the wire format. app.ts enforces them before and while a body is read; a
 * consortium whose uploads could never fit under `maxVectorBytes` is refused at creation
 * (service/consortia.ts).
 */
import { SHARE_LENGTH } from '../../crypto/shamir.js';
import { ED25519_SIGNATURE_LENGTH } from '../../crypto/signature.js';
import { encodeClientMessage } from '../../protocol/codec.js';
import { PROTOCOL_VERSION } from '../../protocol/messages.js';

/** Framing allowed when the codec cannot measure it (it always can today). */
const FALLBACK_FRAMING = 64 * 1024;

/** What a vector upload carries: the initial model, a masked input, or an unmasking response. */
export type UploadKind = 'model' | 'mask' | 'unmask';

function framing(measure: () => Uint8Array): number {
  try {
    return measure().length;
  } catch {
    return FALLBACK_FRAMING;
  }
}

const signature = new Uint8Array(ED25519_SIGNATURE_LENGTH);
const common = { version: PROTOCOL_VERSION, round: 0xffffffff, sender: 254, signature } as const;

/** Bytes of a masked input of `words` words in session `session` (the encoding's exact size). */
export function maskBytes(session: string, words: number): number {
  return (
    framing(() => encodeClientMessage({ ...common, session, type: 'mask', masked: new Uint32Array(0) })) +
    4 * words
  );
}

/** Largest unmasking response of `n` silos with a correction of `words` words. */
export function unmaskBytes(session: string, n: number, words: number): number {
  const shares = Array.from({ length: n }, (_, owner) => ({ owner, share: new Uint8Array(SHARE_LENGTH) }));
  return (
    framing(() =>
      encodeClientMessage({
        ...common,
        session,
        type: 'unmask',
        keyShares: shares,
        seedShares: shares,
        correction: new Uint32Array(0),
      }),
    ) +
    4 * words
  );
}

/** The consortium's facts the limits depend on. */
export interface LimitInputs {
  readonly id: string;
  /** d, the model's parameter count (the protocol's vector has d + 1 words). */
  readonly parameters: number;
  /** n, the number of silos. */
  readonly silos: number;
}

/** The body limit of an upload of `kind` to consortium `c`, never above the route's own cap. */
export function uploadLimit(
  kind: UploadKind,
  c: LimitInputs,
  caps: { maxBodyBytes: number; maxVectorBytes: number },
): number {
  const d = c.parameters;
  switch (kind) {
    case 'model':
      return Math.min(caps.maxVectorBytes, 4 * d);
    case 'mask':
      return Math.min(caps.maxVectorBytes, maskBytes(c.id, d + 1));
    case 'unmask':
      return Math.min(caps.maxVectorBytes, Math.max(caps.maxBodyBytes, unmaskBytes(c.id, c.silos, d + 1)));
  }
}

/** The largest upload a round of `c` needs (model, masked input, unmasking response with a correction). */
export function largestUpload(c: LimitInputs): number {
  return Math.max(
    4 * c.parameters,
    maskBytes(c.id, c.parameters + 1),
    unmaskBytes(c.id, c.silos, c.parameters + 1),
  );
}
