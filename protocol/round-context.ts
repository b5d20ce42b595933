/**
 * The round context's two digests (protocol/messages.ts `RoundContext`; issue 27): what every
 * silo of a round signs in AdvertiseKeys and ConsistencyCheck, so that a server serving the
 * silos different models (model inconsistency, Pasquini et al., CCS 2022) or different scores
 * (and so different weights) is caught inside the round.
 *
 *  - model: SHA-256("fedscore/round-context/v1/model" ‖ d u32 BE ‖ the d parameters as Float32
 *    little-endian) — the exact bytes the silo trained from;
 *  - weights: SHA-256("fedscore/round-context/v1/weights" ‖ k u16 BE ‖ for each of the k
 *    selected silos, in the plan's order: id u8 ‖ weight Float64 little-endian) — the weight
 *    vector of the round's plan (src/strategies/networked-plan.ts `planRound`) as it came out of it.
 *
 * The tags keep the two digests (and every other hash of fedscore) apart.
 */
import { sha256 } from '../crypto/digest.js';
import type { RoundContext } from './messages.js';

const MODEL_TAG = new TextEncoder().encode('fedscore/round-context/v1/model');
const WEIGHTS_TAG = new TextEncoder().encode('fedscore/round-context/v1/weights');

/** The model digest of a round context. @throws TypeError if `params` is not a Float32Array. */
export function modelContextDigest(params: Float32Array): Uint8Array {
  if (!(params instanceof Float32Array)) throw new TypeError('params: expected Float32Array');
  const head = new Uint8Array(4);
  new DataView(head.buffer).setUint32(0, params.length, false);
  const body = new Uint8Array(4 * params.length);
  const dv = new DataView(body.buffer);
  for (let j = 0; j < params.length; j++) dv.setFloat32(4 * j, params[j]!, true);
  return sha256(MODEL_TAG, head, body);
}

/**
 * The weight-vector digest of a round context: `weights[k]` is silo `selected[k]`'s.
 * @throws RangeError when the lengths differ, an id is not a byte or a weight is not finite.
 */
export function weightsContextDigest(selected: readonly number[], weights: readonly number[]): Uint8Array {
  if (selected.length !== weights.length)
    throw new RangeError(`weights: ${weights.length} weights for ${selected.length} selected silos`);
  if (selected.length > 0xffff) throw new RangeError(`selected: ${selected.length} silos is too many`);
  const body = new Uint8Array(2 + 9 * selected.length);
  const dv = new DataView(body.buffer);
  dv.setUint16(0, selected.length, false);
  selected.forEach((id, k) => {
    if (!Number.isInteger(id) || id < 0 || id > 255)
      throw new RangeError(`selected[${k}]: expected a silo id in 0..255, got ${id}`);
    const w = weights[k]!;
    if (!Number.isFinite(w)) throw new RangeError(`weights[${k}]: expected a finite number, got ${w}`);
    dv.setUint8(2 + 9 * k, id);
    dv.setFloat64(3 + 9 * k, w, true);
  });
  return sha256(WEIGHTS_TAG, body);
}

/** The round context of a silo that trained on `model` with the plan's `selected` and `weights`. */
export function roundContext(
  model: Float32Array,
  selected: readonly number[],
  weights: readonly number[],
): RoundContext {
  return { model: modelContextDigest(model), weights: weightsContextDigest(selected, weights) };
}
