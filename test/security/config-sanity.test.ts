/**
 * Finding 9 of the trust issue — consortium configurations that cannot work were accepted.
 *
 * The attack as found: a clip or weight range of 1e-320 (the quantizer's scale K/c becomes ∞, so
 * every value encodes to 0 and the round's sum is garbage), a parameter count whose uploads can
 * never fit under the body limit, and an all-zero or small-order Ed25519 public key (whoever
 * registers one can sign for nobody, or — for weak verifiers — for everybody) were all accepted.
 * Against f5e8247 each body below is created (201).
 *
 * Now the consortium is refused at creation with `FEDSCORE_ERR_INVALID_CONSORTIUM` (400) and a
 * message naming the field.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminInject, consortiumBody, type Harness, harness } from '../server/_harness.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
/** The order-8 point of libsodium's small-order blocklist. */
const ORDER_8 = '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05';

describe('consortium configurations that cannot work are refused at creation', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ app: { maxVectorBytes: 64 * 1024 * 1024 } });
  });
  afterAll(async () => h.close());

  let k = 0;
  /** POSTs the harness body with `patch` under a fresh id; expects a 400 naming `field`. */
  async function refused(patch: (body: ReturnType<typeof consortiumBody>) => object, field: string) {
    const body = consortiumBody(h.keys, `bad-${++k}`);
    const r = await adminInject(h, 'POST', '/v1/consortia', { ...body, ...patch(body) });
    expect({ status: r.statusCode, code: r.json().code }, field).toEqual({
      status: 400,
      code: 'FEDSCORE_ERR_INVALID_CONSORTIUM',
    });
    expect(r.json().message).toMatch(
      new RegExp(`^the consortium configuration is invalid: ${field.replace(/[[\].]/g, '\\$&')}: `),
    );
    return r.json().message as string;
  }

  test('a clip or weight range so small that the quantizer’s scale is not finite', async () => {
    for (const tiny of [1e-320, 5e-324, 1e-300]) {
      await refused((b) => ({ encoding: { ...b.encoding, clip: tiny } }), 'encoding.clip');
      await refused((b) => ({ encoding: { ...b.encoding, weightRange: tiny } }), 'encoding.weightRange');
    }
  });

  test('a parameter count whose uploads exceed the body limit', async () => {
    const message = await refused(
      () => ({ model: { name: 'huge', parameters: 0x7ffffffe } }),
      'model.parameters',
    );
    expect(message).toMatch(/64 MiB|67108864/);
    // 16 Mi parameters: a 64 MiB model, and a masked vector of d + 1 words plus framing: too large.
    await refused(() => ({ model: { name: 'big', parameters: 16 * 1024 * 1024 } }), 'model.parameters');
    // Just below the limit is fine.
    const ok = await adminInject(h, 'POST', '/v1/consortia', {
      ...consortiumBody(h.keys, 'fits'),
      model: { name: 'fits', parameters: 16 * 1024 * 1024 - 4096 },
    });
    expect(ok.statusCode).toBe(201);
  });

  test('all-zero, small-order, mixed-order and non-canonical Ed25519 public keys', async () => {
    const bad = {
      'all zero': '00'.repeat(32),
      identity: `01${'00'.repeat(31)}`,
      'order 2': `ec${'ff'.repeat(30)}7f`,
      'order 8': ORDER_8,
      // A real key plus a torsion point: not in the prime-order subgroup no honest key leaves.
      'mixed order': hex(
        ed25519.Point.fromHex(hex(h.keys[1]!.publicKey)).add(ed25519.Point.fromHex(ORDER_8)).toBytes(),
      ),
      'y = p (non-canonical)': `ed${'ff'.repeat(30)}7f`,
      'not a point': `02${'00'.repeat(31)}`,
    };
    for (const [what, key] of Object.entries(bad)) {
      const message = await refused(
        (b) => ({ participants: b.participants.map((p, i) => (i === 2 ? { publicKey: key } : p)) }),
        'participants[2].publicKey',
      );
      expect(message, what).toMatch(/small order|prime-order subgroup|not a valid|not canonical|point/);
    }
  });

  test('a repeated key is still refused, naming the repeat', async () => {
    await refused(
      (b) => ({ participants: [b.participants[0], ...b.participants.slice(0, 3)] }),
      'participants[1]',
    );
  });
});
