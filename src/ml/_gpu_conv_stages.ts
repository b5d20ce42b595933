/**
 * The stages of a convolutional network as the fused conv step sees them (webgpu; internal to
 * _gpu_conv.ts and _gpu_conv_kernels.ts): each parametrized layer of the spec with the pooling
 * layer that follows it folded in, its shapes and the offsets of its weight and bias in θ.
 *
 * A spec qualifies (`fusedConvStages`) when it is convolutions, each optionally followed by one
 * pooling layer, then a flatten and dense layers, the last one without ReLU and with at most
 * `FUSED_CONV_MAX_CLASSES` classes: cnn003 (with or without pooling) and LeNet-5, and any spec of
 * that shape. Semantics as models.ts `forward`: convolutions stride 1 with `pad` zeros on every
 * side (NHWC input, HWIO kernel), bias then ReLU; pooling square, stride = size, valid (floor);
 * flatten in h → w → c order.
 */
import { type ModelSpec, paramLayout } from './models.js';

/** Most classes the loss kernel holds (its logits are unrolled scalars). */
export const FUSED_CONV_MAX_CLASSES = 64;

/** A convolution, with the pooling layer after it when there is one. */
export interface ConvStage {
  readonly kind: 'conv';
  readonly inH: number;
  readonly inW: number;
  readonly inC: number;
  readonly k: number;
  readonly pad: number;
  /** The convolution's output (before pooling). */
  readonly outH: number;
  readonly outW: number;
  readonly outC: number;
  readonly relu: boolean;
  readonly pool: { readonly op: 'max' | 'avg'; readonly size: number } | undefined;
  /** The stage's output after pooling (= out* without pooling). */
  readonly oH: number;
  readonly oW: number;
  /** Offsets of W and b in θ. */
  readonly w: number;
  readonly b: number;
}

/** A dense layer. */
export interface DenseStage {
  readonly kind: 'dense';
  readonly inputs: number;
  readonly units: number;
  readonly relu: boolean;
  readonly w: number;
  readonly b: number;
}

export type Stage = ConvStage | DenseStage;

/** Floats per example of the stage's output (pooled, flattened in h → w → c order). */
export const outWidth = (s: Stage): number => (s.kind === 'dense' ? s.units : s.oH * s.oW * s.outC);

/** Floats per example of the stage's pre-activation (the convolution's full output map). */
export const preWidth = (s: Stage): number => (s.kind === 'dense' ? s.units : s.outH * s.outW * s.outC);

/**
 * Floats per example the stage's forward buffer holds for B rows: the output [B × outWidth], then
 * for a pooled convolution the post-ReLU map before pooling [B × preWidth] (the backward pass
 * reads it for the ReLU mask and the max's position).
 */
export const forwardSize = (s: Stage, B: number): number =>
  B * outWidth(s) + (s.kind === 'conv' && s.pool ? B * preWidth(s) : 0);

/** The stages of `spec` when the fused conv step applies to it, else undefined. */
export function fusedConvStages(spec: ModelSpec): Stage[] | undefined {
  const layers = spec.layers;
  if (layers[0]?.kind !== 'conv' || spec.numClasses > FUSED_CONV_MAX_CLASSES) return undefined;
  const layout = paramLayout(spec);
  const stages: Stage[] = [];
  let [h, w, c] = spec.inputShape;
  let e = 0;
  let flat = false;
  for (let i = 0; i < layers.length; i++) {
    const l = layers[i]!;
    if (l.kind === 'conv') {
      if (flat) return undefined;
      const [outH, outW] = [h + 2 * l.pad - l.kernel + 1, w + 2 * l.pad - l.kernel + 1];
      const next = layers[i + 1];
      const pool = next?.kind === 'pool' ? { op: next.op, size: next.size } : undefined;
      if (pool) i++;
      const [oH, oW] = pool ? [Math.floor(outH / pool.size), Math.floor(outW / pool.size)] : [outH, outW];
      stages.push({
        kind: 'conv',
        inH: h,
        inW: w,
        inC: c,
        k: l.kernel,
        pad: l.pad,
        outH,
        outW,
        outC: l.outChannels,
        relu: l.relu,
        pool,
        oH,
        oW,
        w: layout[e]!.offset,
        b: layout[e + 1]!.offset,
      });
      e += 2;
      [h, w, c] = [oH, oW, l.outChannels];
    } else if (l.kind === 'flatten') {
      if (flat) return undefined;
      flat = true;
    } else if (l.kind === 'dense') {
      if (!flat) return undefined;
      stages.push({
        kind: 'dense',
        inputs: l.inputs,
        units: l.units,
        relu: l.relu,
        w: layout[e]!.offset,
        b: layout[e + 1]!.offset,
      });
      e += 2;
    } else return undefined; // a pooling layer not right after a convolution
  }
  const last = stages.at(-1)!;
  return last.kind === 'dense' && !last.relu ? stages : undefined;
}
