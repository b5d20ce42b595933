/**
 * The fused training step of a convolutional network (the built-in `cnn003`, with or without
 * pooling, and `lenet5`, or any spec of their shape: _gpu_conv_stages.ts; webgpu, internal to
 * _gpu_train.ts). For S stages (a convolution with its pooling layer, or a dense layer) a step is
 *   forward        one dispatch per stage but the last (conv + bias + ReLU + pooling in one)  S − 1
 *   loss           the last dense layer, softmax cross-entropy and its gradient              1
 *   backward       one dispatch per stage ℓ ≥ 1: G_{ℓ−1} from Gℓ through Wℓ and stage ℓ−1's
 *                  pooling and ReLU                                                          S − 1
 *   optimizer      every parameter's gradient summed over the batch inside its update
 *                  (_gpu_optimizer.ts's rule), in groups that bind ≤ 8 storage buffers       2 here
 * (the kernels: _gpu_conv_kernels.ts), so 2S + 1 dispatches and no readback: cnn003 (4 stages)
 * 9, LeNet-5 (5 stages) 11, against 48 and 62 with tfjs's forward and backward ops.
 *
 * Minibatches are gathered on the device as in _gpu_mlp.ts: the examples and labels are uploaded
 * once per call, the pass's permutation once per pass, and each step passes only (start, b) as
 * uniforms; the first convolution reads X[Perm[start + r]] directly. θ, m, v and the per-pass
 * loss sums are the flat state of _gpu_optimizer.ts; the loss is added by the optimizer dispatch
 * and read once per pass. Activations and gradients are [batchSize × width] buffers whatever the
 * batch (b ≤ batchSize is a uniform), so a short last batch reuses the pipelines.
 */
import { runBatches } from './_batches.js';
import {
  backwardProgram,
  convForwardProgram,
  denseForwardProgram,
  lossProgram,
  optimizerGroups,
  optimizerProgram,
} from './_gpu_conv_kernels.js';
import { forwardSize, outWidth, preWidth, type Stage } from './_gpu_conv_stages.js';
import { optimizerUniforms, readDelta, readPassLoss, stateLayout } from './_gpu_optimizer.js';
import type { GpuTrainPlan, GpuTrainResult } from './_gpu_plan.js';
import { runWgsl, type WgslProgram } from './_wgsl_program.js';
import type { Examples, ModelSpec } from './models.js';
import * as tf from './tf.js';

/** Invocations of stage ℓ's backward program for a batch of b (see backwardProgram). */
function backwardInvocations(p: Stage, b: number): number {
  if (p.kind === 'dense' || !p.pool) return b * outWidth(p);
  const z = p.pool.size;
  return b * Math.ceil(p.outH / z) * Math.ceil(p.outW / z) * p.outC;
}

/** Trains a convolutional network with the fused step (call only when `fusedConvStages(spec)`). */
export async function trainConvFused(
  spec: ModelSpec,
  stages: readonly Stage[],
  m0: Float32Array,
  data: Examples,
  plan: GpuTrainPlan,
): Promise<GpuTrainResult> {
  const L = stages.length;
  const [h, w, c] = spec.inputShape;
  const F = h * w * c;
  const B = plan.batchSize;
  const s = stateLayout(spec.paramCount, plan, plan.passes);
  const init = new Float32Array(s.size);
  init.set(m0);
  const state = tf.tensor1d(init);
  const x = tf.tensor1d(data.x);
  const labels = tf.tensor1d(Int32Array.from(data.y), 'int32');
  const forwards: WgslProgram[] = stages
    .slice(0, -1)
    .map((st, l) =>
      st.kind === 'conv' ? convForwardProgram(l, stages, F, B) : denseForwardProgram(l, stages),
    );
  const loss = lossProgram(L - 1, stages, B);
  const backwards = stages.map((_, l) => (l === 0 ? undefined : backwardProgram(l, stages, B)));
  const groups = optimizerGroups(L);
  const optimizers = groups.map((g) => optimizerProgram(g, stages, F, B, plan, s));
  let perm: tf.Tensor | undefined;
  let pass = 0;
  try {
    const run = await runBatches(data.n, plan, {
      step(order, start, b, taken) {
        if (start === 0) {
          perm?.dispose();
          perm = tf.tensor1d(Int32Array.from(order), 'int32');
        }
        const at = [
          { type: 'int32' as const, data: [start] },
          { type: 'int32' as const, data: [b] },
          { type: 'int32' as const, data: [0] }, // `zero`: see STEP_UNIFORMS in _gpu_conv_kernels.ts
        ];
        /** Stage ℓ's input bindings: the examples through the permutation, or A_ℓ. */
        const inputOf = (l: number): Record<string, tf.Tensor> =>
          l === 0 ? { X: x, Perm: perm! } : { [`A${l}`]: A[l]! };
        // A[ℓ]: stage ℓ−1's forward buffer (ℓ ≥ 1); G[ℓ]: stage ℓ's pre-activation gradient.
        const A: tf.Tensor[] = [];
        const G: tf.Tensor[] = [];
        try {
          for (let l = 0; l + 1 < L; l++) {
            const st = stages[l]!;
            const p = { ...forwards[l]!, invocations: b * outWidth(st) };
            A[l + 1] = runWgsl(p, { ...inputOf(l), S: state }, at, { size: forwardSize(st, B) });
          }
          const C = spec.numClasses;
          G[L - 1] = runWgsl(
            { ...loss, invocations: b },
            { ...inputOf(L - 1), Perm: perm!, S: state, Y: labels },
            at,
            { size: B * C + B },
          );
          for (let l = L - 1; l >= 1; l--) {
            const below = stages[l - 1]!;
            const p = { ...backwards[l]!, invocations: backwardInvocations(below, b) };
            G[l - 1] = runWgsl(p, { [`G${l}`]: G[l]!, S: state, [`A${l}`]: A[l]! }, at, {
              size: B * preWidth(below),
            });
          }
          const uniforms = [
            ...optimizerUniforms(plan, taken, b, pass),
            { type: 'int32' as const, data: [start] },
            { type: 'int32' as const, data: [0] },
          ];
          for (const [k, g] of groups.entries()) {
            const inputs: Record<string, tf.Tensor> = {};
            for (const l of g) Object.assign(inputs, inputOf(l), { [`G${l}`]: G[l]! });
            runWgsl(optimizers[k]!, inputs, uniforms, { into: state });
          }
        } finally {
          tf.dispose([...A.filter(Boolean), ...G.filter(Boolean)]);
        }
      },
      async passLoss() {
        try {
          return await readPassLoss(state, s, pass);
        } finally {
          pass++;
        }
      },
    });
    return { delta: await readDelta(state, m0), ...run };
  } finally {
    tf.dispose([state, x, labels, ...(perm ? [perm] : [])]);
  }
}
