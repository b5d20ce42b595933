/**
 * Where two float32 evaluations of one coalition model may disagree on an arg-max: the test
 * examples whose logits are so close that rounding alone can reorder them. Combined evaluation
 * (P₀ + s·U_S, coalition.ts) and naive evaluation (X·W_S with M_S formed) compute the same model
 * in different orders, so their accuracies are equal except on such near-ties; the tests and
 * `npm run bench -- ml` check that every disagreement they see is one (issue 26: on a processor
 * without AVX-512 one example of 2,000 went the other way, with its two logits 7.7e-8 apart).
 *
 * The bound, for an MLP (flatten and dense layers, ReLU on all but the output layer), with
 * u = 2⁻²⁴ and γ_k = k·u/(1 − k·u) (Higham, *Accuracy and Stability of Numerical Algorithms*,
 * §3.1, eq. 3.5: a float32 sum of k products is within γ_k·Σ|terms| of the exact one, whatever
 * the order and fused multiply-adds). |W| below is |W₀| + s·Σ_S aᵢ|ΔWᵢ| (biases likewise), which
 * bounds |W_S| and every term the combined evaluation adds:
 *   - first dense layer (F inputs): any of the evaluations is within τ₁ = γ_(F+n+8)·B of the
 *     exact pre-activation, B = |X|·|W| + |b|: F products and the bias (γ_(F+1)), the roundings
 *     of aᵢ, s and the scaled Qᵢ, the |S| ≤ n additions of U_S and the one of P₀ (combined), or the
 *     rounding of W_S to float32 (naive);
 *   - ReLU moves nothing further (1-Lipschitz);
 *   - each later dense layer (K inputs): τ' = τ·|W| + γ_(K+2)·(h·|W| + |b|), the error carried
 *     in plus the layer's K multiply-adds, its bias and the rounding of W_S to float32.
 * Each evaluation's z_l − z_c is then within τ_l + τ_c of the exact difference, so the two can
 * order classes l and c differently only when |z_l − z_c| ≤ 2(τ_l + τ_c) in either of them. The
 * bound is computed here in float32 too, and taken 1 % larger to cover that.
 */

import { type CoalitionSetup, coalitionCoefficients, coalitionParams } from './coalition.js';
import { paramLayout } from './models.js';
import * as tf from './tf.js';

const U = 2 ** -24;
const gamma = (k: number) => (k * U) / (1 - k * U);

/** Near-ties of one coalition model: per label class, and in all. */
export interface NearTies {
  /** Row-examples of each class whose correctness two float32 evaluations may see differently. */
  readonly perClass: Int32Array;
  readonly total: number;
}

/**
 * The test examples on which two float32 evaluations of M_S (members `memberList`) may disagree
 * about being classified correctly (see the module comment). Throws RangeError unless the model
 * is not an MLP of flatten and dense layers (ReLU on all but the output layer).
 */
export function nearTies(setup: CoalitionSetup, memberList: readonly number[]): NearTies {
  const { spec, data, m0, updates } = setup;
  const dense = spec.layers.filter((l) => l.kind === 'dense');
  const ok =
    spec.layers.every((l) => l.kind === 'dense' || l.kind === 'flatten') &&
    dense.length >= 2 &&
    dense.every((l, i) => l.relu === i < dense.length - 1);
  if (!ok)
    throw new RangeError(`spec: near-ties need an MLP (dense ReLU layers, a dense output), got ${spec.name}`);
  const { a, s } = coalitionCoefficients(setup, memberList);
  const p = coalitionParams(setup, memberList);
  // |M₀| + s·Σ_S aᵢ|Δᵢ|, every parameter.
  const acc = Float64Array.from(m0, Math.abs);
  for (const i of memberList) {
    const c = s * a[i]!;
    const u = updates[i]!;
    for (let k = 0; k < acc.length; k++) acc[k]! += c * Math.abs(u[k]!);
  }
  const mag = Float32Array.from(acc, (v) => v * (1 + 4 * U));
  const layout = paramLayout(spec);
  const rows = data.n;
  const C = spec.numClasses;
  const n = updates.length;
  const [z, tau] = tf.tidy(() => {
    const x = tf.tensor2d(data.x, [rows, data.x.length / rows]);
    let h: tf.Tensor2D = x;
    let t: tf.Tensor2D | undefined;
    for (let j = 0; j < layout.length; j += 2) {
      const [we, be] = [layout[j]!, layout[j + 1]!];
      const [K, units] = we.shape as [number, number];
      const w = tf.tensor2d(p.subarray(we.offset, we.offset + we.size), [K, units]);
      const b = tf.tensor1d(p.subarray(be.offset, be.offset + be.size));
      const absW = tf.tensor2d(mag.subarray(we.offset, we.offset + we.size), [K, units]);
      const absB = tf.tensor1d(mag.subarray(be.offset, be.offset + be.size));
      const carried = t ? tf.matMul(t, absW) : tf.zeros([rows, units]);
      const own = tf.add(tf.matMul(j === 0 ? tf.abs(h) : h, absW), absB);
      t = tf.add(carried, tf.mul(j === 0 ? gamma(K + n + 8) : gamma(K + 2), own)) as tf.Tensor2D;
      const pre = tf.add(tf.matMul(h, w), b) as tf.Tensor2D;
      h = j + 2 < layout.length ? tf.relu(pre) : pre;
    }
    return [h.dataSync() as Float32Array, tf.mul(1.01, t!).dataSync() as Float32Array];
  });
  const perClass = new Int32Array(C);
  let total = 0;
  for (let r = 0; r < rows; r++) {
    const l = Number(data.y[r]);
    for (let c = 0; c < C; c++) {
      if (c === l) continue;
      const gap = Math.abs(z[r * C + l]! - z[r * C + c]!);
      if (gap <= 2 * (tau[r * C + l]! + tau[r * C + c]!)) {
        perClass[l]!++;
        total++;
        break;
      }
    }
  }
  return { perClass, total };
}
