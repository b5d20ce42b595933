/**
 * Batched coalition evaluation on the GPU for models that do not start with a dense layer (the
 * CNNs: cnn003, LeNet-5, user conv models; webgpu backend; internal to coalition.ts). Many
 * coalition models per dispatch, as _coalition_gpu.ts does for dense-first models, but without the
 * linear first-layer shortcut: each coalition model M_S = M0 + Σᵢ C[k,i]·Δᵢ (C the K×n coefficient
 * matrix of a chunk, C[k,i] = s(S_k)·aᵢ·[i ∈ S_k]) is formed on the device as one [K,n]×[n,P]
 * product, and the K models run side by side with the coalitions along the batch axis:
 *  - a layer on the shared test images (the first conv): the K kernels stacked along the output
 *    channel axis, [kh, kw, c, K·c'], one tf.conv2d for the chunk, then the K outputs moved to
 *    the batch axis ([K·Nb, h, w, c']);
 *  - a conv layer on per-coalition activations: im2col (the kh·kw shifted slices of the padded
 *    input, concatenated along channels in the HWIO order of the weights) and one batched
 *    [K, Nb·h'·w', kh·kw·c]×[K, kh·kw·c, c'] product with each coalition's kernel;
 *  - a dense layer: one batched [K, Nb, in]×[K, in, out] product; pooling and flatten as they are;
 *  - the logits reduced on the device as in _coalition_gpu.ts: correct counts per class and the
 *    summed cross-entropy per coalition, K·(C + 1) numbers read back per chunk.
 * The test set is taken Nb rows at a time (counts and losses are sums over rows), and K and Nb
 * are chosen so that the chunk's models and its largest activation fit `maxChunkBytes`.
 *
 * Against the naive path (one `evaluateAsync` per coalition model, M_S combined in float64 on the
 * CPU) the differences are float rounding: M_S in float32 on the device, products summed in
 * another order. Accuracies agree up to near-ties; test/ml/webgpu-conv.test.ts bounds both.
 */

import {
  type ChunkDispatcher,
  chunkedCoalitions,
  DEFAULT_CHUNK_BYTES,
  type GpuCoalitionSetup,
  type GpuCoalitions,
} from './_coalition_gpu.js';
import type { ModelSpec } from './models.js';
import { paramLayout, poolLayer } from './models.js';
import * as tf from './tf.js';

/** What coalition.ts hands over (the two-layer setup without its first dense layer's index). */
export interface GpuConvSetup extends Omit<GpuCoalitionSetup, 'first' | 'maxChunkBytes'> {
  /** Bound on a chunk's models plus its largest activation, bytes (default 128 MiB). */
  readonly maxChunkBytes?: number;
}

/** Float32 numbers one coalition and one test row hold at the widest point of the forward pass. */
export function widestPerRow(spec: ModelSpec): number {
  let [h, w, c] = spec.inputShape as readonly number[] as [number, number, number];
  let flat = 0;
  let widest = h * w * c;
  for (const l of spec.layers) {
    if (l.kind === 'conv') {
      const [ho, wo] = [h + 2 * l.pad - l.kernel + 1, w + 2 * l.pad - l.kernel + 1];
      const padded = (h + 2 * l.pad) * (w + 2 * l.pad) * c;
      widest = Math.max(widest, padded, ho * wo * l.kernel * l.kernel * c, ho * wo * l.outChannels);
      [h, w, c] = [ho, wo, l.outChannels];
    } else if (l.kind === 'pool') {
      [h, w] = [Math.floor(h / l.size), Math.floor(w / l.size)];
    } else if (l.kind === 'flatten') {
      flat = h * w * c;
    } else {
      flat = l.units;
      widest = Math.max(widest, l.inputs, l.units);
    }
  }
  return Math.max(widest, flat);
}

/** The batched evaluator of one setup (see the module comment). */
export function gpuConvCoalitions(setup: GpuConvSetup): GpuCoalitions & { readonly rowsPerBlock: number } {
  const { spec, m0, updates, data, a, scale } = setup;
  const n = updates.length;
  const N = data.n;
  const C = spec.numClasses;
  const P = spec.paramCount;
  const layout = paramLayout(spec);
  const deltas = new Float32Array(n * P);
  for (const [i, u] of updates.entries()) deltas.set(u, i * P);
  const dstack = tf.tensor2d(deltas, [n, P]);
  const base = tf.tensor2d(m0, [1, P]);
  const x = tf.tensor4d(data.x, [N, ...spec.inputShape] as [number, number, number, number]);
  const labels = tf.tensor1d(Int32Array.from(data.y), 'int32');

  const budget = setup.maxChunkBytes ?? DEFAULT_CHUNK_BYTES;
  const row = widestPerRow(spec);
  // Whole test set per chunk when a coalition fits; else one coalition, Nb rows at a time.
  const chunk = Math.max(1, Math.min(4096, Math.floor(budget / (4 * (P + Math.max(1, N) * row)))));
  const rowsPerBlock = Math.max(1, Math.min(N, Math.floor((budget / 4 - chunk * P) / (chunk * row))));

  /** Logits [K, Nb, C] of the K models `theta` ([K, P]) on rows [start, start + Nb). */
  function logits(theta: tf.Tensor2D, K: number, start: number, Nb: number): tf.Tensor3D {
    const xb = tf.slice(x, [start, 0, 0, 0], [Nb, -1, -1, -1]);
    /** Current activations: shared by the K models (the input, pooled) or per model ([K·Nb, …]). */
    let h: tf.Tensor = xb;
    let shared = true;
    let e = 0;
    const param = (k: number) => {
      const entry = layout[k]!;
      return tf.slice(theta, [0, entry.offset], [K, entry.size]).reshape([K, ...entry.shape]);
    };
    for (const l of spec.layers) {
      if (l.kind === 'conv') {
        const [w, b] = [param(e), param(e + 1)];
        e += 2;
        const co = l.outChannels;
        let z: tf.Tensor;
        if (shared) {
          // [K, kh, kw, c, co] → [kh, kw, c, K·co]: one convolution for the chunk.
          const stacked = tf
            .transpose(w, [1, 2, 3, 0, 4])
            .reshape([l.kernel, l.kernel, l.inChannels, K * co]) as tf.Tensor4D;
          const out = tf.conv2d(h as tf.Tensor4D, stacked, 1, l.pad > 0 ? l.pad : 'valid');
          const [, ho, wo] = out.shape;
          z = tf.transpose(out.reshape([Nb, ho, wo, K, co]), [3, 0, 1, 2, 4]);
          z = tf.add(z, b.reshape([K, 1, 1, 1, co])).reshape([K * Nb, ho, wo, co]);
        } else {
          const padded =
            l.pad > 0
              ? tf.pad(h, [
                  [0, 0],
                  [l.pad, l.pad],
                  [l.pad, l.pad],
                  [0, 0],
                ])
              : h;
          const [, hp, wp, c] = padded.shape as [number, number, number, number];
          const [ho, wo] = [hp - l.kernel + 1, wp - l.kernel + 1];
          const patches: tf.Tensor[] = [];
          for (let dy = 0; dy < l.kernel; dy++)
            for (let dx = 0; dx < l.kernel; dx++)
              patches.push(tf.slice(padded, [0, dy, dx, 0], [K * Nb, ho, wo, c]));
          const cols = tf.concat(patches, 3).reshape([K, Nb * ho * wo, l.kernel * l.kernel * c]);
          const prod = tf.matMul(
            cols as tf.Tensor3D,
            w.reshape([K, l.kernel * l.kernel * c, co]) as tf.Tensor3D,
          );
          z = tf.add(prod, b.reshape([K, 1, co])).reshape([K * Nb, ho, wo, co]);
        }
        h = l.relu ? tf.relu(z) : z;
        shared = false;
      } else if (l.kind === 'dense') {
        const [w, b] = [param(e), param(e + 1)];
        e += 2;
        let z: tf.Tensor;
        if (shared) {
          // [Nb, in] × [in, K·out]: the K weight matrices side by side.
          const side = tf.transpose(w, [1, 0, 2]).reshape([l.inputs, K * l.units]) as tf.Tensor2D;
          z = tf.transpose(tf.matMul(h.reshape([Nb, l.inputs]), side).reshape([Nb, K, l.units]), [1, 0, 2]);
        } else {
          z = tf.matMul(h.reshape([K, Nb, l.inputs]) as tf.Tensor3D, w as tf.Tensor3D);
        }
        z = tf.add(z, b.reshape([K, 1, l.units])).reshape([K * Nb, l.units]);
        h = l.relu ? tf.relu(z) : z;
        shared = false;
      } else if (l.kind === 'pool') {
        h = poolLayer(h as tf.Tensor4D, l);
      } else {
        h = h.reshape([h.shape[0]!, -1]);
      }
    }
    // A model with no parametrized layer gives every coalition the same logits.
    if (shared) h = tf.tile(h.reshape([1, Nb, C]), [K, 1, 1]);
    return h.reshape([K, Nb, C]);
  }

  const dispatcher: ChunkDispatcher = {
    n,
    classes: C,
    chunk,
    a,
    scale,
    dispatch(coef, K) {
      const theta = tf.tidy(() => tf.add(tf.matMul(tf.tensor2d(coef, [K, n]), dstack), base) as tf.Tensor2D);
      let counts: tf.Tensor = tf.zeros([K, C]);
      let loss: tf.Tensor = tf.zeros([K]);
      try {
        // One tidy per block of rows, so that a block's activations are freed before the next.
        for (let start = 0; start < N; start += rowsPerBlock) {
          const Nb = Math.min(rowsPerBlock, N - start);
          const [c, l] = tf.tidy(() => {
            const z = logits(theta, K, start, Nb);
            const y = tf.slice(labels, [start], [Nb]);
            const onehot = tf.oneHot(y, C).toFloat() as tf.Tensor2D;
            const correct = tf.equal(tf.argMax(z, 2), y).toFloat() as tf.Tensor2D;
            const rowLoss = tf.sub(tf.logSumExp(z, 2), tf.sum(tf.mul(z, onehot), 2));
            return [tf.add(counts, tf.matMul(correct, onehot)), tf.add(loss, tf.sum(rowLoss, 1))];
          });
          tf.dispose([counts, loss]);
          [counts, loss] = [c!, l!];
        }
        return [counts, loss];
      } catch (e) {
        tf.dispose([counts, loss]);
        throw e;
      } finally {
        theta.dispose();
      }
    },
  };
  return { ...chunkedCoalitions(dispatcher, () => tf.dispose([dstack, base, x, labels])), rowsPerBlock };
}
