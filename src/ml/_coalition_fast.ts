/**
 * The combined coalition evaluator's native path (internal; coalition.ts documents the method,
 * native/coalitions.c the kernel). It takes models whose first parametrized layer is a dense
 * layer with ReLU and whose only other layer is the dense output layer (the MLP 784-200-10),
 * with at most 16 classes and 30 silos, on the wasm backend with the OpenBLAS addon active.
 *
 * P₀ = X·W₀ + b₀ and Qᵢ = aᵢ(X·ΔWᵢ + Δbᵢ) are computed once by the addon's product (the one
 * tfjs's matMul runs while the kernels are active, so the same bits) and float32 additions and
 * products (those of tfjs's add and mul), outside the wasm heap, into one Float32Array in panels
 * of 16 rows (unit-major inside a panel, so that 16 rows are one vector). Every coalition after
 * that is evaluated inside one native call per batch (or per table): no tensor, no JavaScript
 * object per coalition.
 */
import { type Addon, nativeAddonOnWasm } from './_blas_kernels.js';
import type { Examples, ModelSpec } from './models.js';

type Kernel = (
  n: number,
  rows: number,
  hidden: number,
  classes: number,
  panels: Float32Array,
  head0: Float32Array,
  heads: Float32Array,
  a: Float64Array,
  sAdditive: number,
  labels: Int32Array,
  count: number,
  offsets: Int32Array,
  members: Int32Array,
  withLoss: number,
  isa: number,
  counts: Int32Array,
  loss: Float64Array,
  grayAnchor?: number,
) => void;

/** The addon's sgemm (native/products.c). */
type Gemm = Addon['gemm'];

/** Rows per panel of the native layout. */
const PANEL = 16;

type Panels = (
  rows: number,
  hidden: number,
  z: Float32Array,
  bias: Float32Array,
  scale: number,
  panels: Float32Array,
  offset: number,
) => void;

/** The addon's functions this path uses. */
interface Native {
  kernel: Kernel;
  gemm: Gemm;
  panels: Panels;
}

/** The addon's coalition kernel and helpers when the native kernels are active on wasm. */
export function coalitionKernel(): Native | undefined {
  const addon = nativeAddonOnWasm() as
    | { evalCoalitions?: Kernel; gemm?: Gemm; coalitionPanels?: Panels }
    | undefined;
  return typeof addon?.evalCoalitions === 'function' &&
    typeof addon.gemm === 'function' &&
    typeof addon.coalitionPanels === 'function'
    ? { kernel: addon.evalCoalitions, gemm: addon.gemm, panels: addon.coalitionPanels }
    : undefined;
}

/** Whether the native path can evaluate coalition models of `spec` with n silos (see above). */
export function nativeShape(spec: ModelSpec, first: number, n: number): boolean {
  const rest = spec.layers.slice(first + 1);
  const head = spec.layers[first];
  return (
    head?.kind === 'dense' &&
    head.relu &&
    rest.length === 1 &&
    rest[0]!.kind === 'dense' &&
    !rest[0]!.relu &&
    spec.numClasses <= 16 &&
    n >= 1 &&
    n <= 30
  );
}

/** Correct counts per class (coalitions × C) and summed cross-entropies of coalition models. */
export interface CoalitionCounts {
  readonly counts: Int32Array;
  readonly loss: Float64Array;
}

/** The native evaluator of one setup. */
export interface NativeCoalitions {
  /** The listed coalitions (members increasing), in list order; losses included. */
  evaluate(lists: readonly (readonly number[])[]): CoalitionCounts;
  /**
   * All 2^n coalitions, indexed by mask; losses only when `withLoss` (else all 0). `grayAnchor`
   * P ≥ 1 walks them in Gray-code order instead, U_S = U_prev ± Qᵢ, summed afresh every P
   * coalitions (native/coalitions.c, run_chunk_gray): a measurement (issue 36, bench/gray-code.ts),
   * not the evaluator's order, since its values drift from the exact sums between anchors.
   */
  all(withLoss: boolean, grayAnchor?: number): CoalitionCounts;
}

/**
 * Builds the panels and second-layer parameters of a setup: the first dense layer's weights
 * [features × hidden] start at 0 in the flat vector (after flatten layers only), its bias
 * follows, the output layer's weights and bias start at `restStart`. `isa` (tests): 0 auto,
 * 1 portable C, 2 AVX2, 3 AVX-512.
 */
export function nativeCoalitions(
  { kernel, gemm, panels: layOut }: Native,
  setup: { spec: ModelSpec; data: Examples; m0: Float32Array; updates: readonly Float32Array[] },
  a: Float64Array,
  sAdditive: number,
  restStart: number,
  isa = 0,
): NativeCoalitions {
  const { spec, data, m0, updates } = setup;
  const n = updates.length;
  const rows = data.n;
  const hidden = (spec.layers.find((l) => l.kind === 'dense') as { units: number }).units;
  const features = rows === 0 ? 0 : data.x.length / rows;
  const classes = spec.numClasses;
  const rowsPad = Math.ceil(rows / PANEL) * PANEL;
  const block = rowsPad * hidden;
  const panels = new Float32Array((n + 1) * block);
  const z = new Float32Array(rows * hidden);
  /** scale·(X·W + b) of the parameters p (scale 1: no product, as the tfjs path), into panels. */
  const put = (p: Float32Array, scale: number, at: number) => {
    const wSize = features * hidden;
    if (rows === 0) return;
    gemm(1, 0, 0, rows, hidden, features, data.x, 0, p.subarray(0, wSize), 0, z, 0);
    layOut(rows, hidden, z, p.subarray(wSize, wSize + hidden), scale, panels, at);
  };
  const headSize = m0.length - restStart;
  const head0 = m0.slice(restStart);
  const heads = new Float32Array(n * headSize);
  put(m0, 1, 0);
  for (const [i, u] of updates.entries()) {
    put(u, a[i]!, (i + 1) * block);
    heads.set(u.subarray(restStart), i * headSize);
  }
  const labels = Int32Array.from(data.y as ArrayLike<number>);
  const none = new Int32Array(1);
  const run = (count: number, offsets: Int32Array, members: Int32Array, withLoss: boolean, gray = 0) => {
    const out = count === 0 ? 2 ** n : count;
    const counts = new Int32Array(out * classes);
    const loss = new Float64Array(withLoss ? out : 1);
    kernel(
      n,
      rows,
      hidden,
      classes,
      panels,
      head0,
      heads,
      a,
      sAdditive,
      labels,
      count,
      offsets,
      members,
      withLoss ? 1 : 0,
      isa,
      counts,
      loss,
      gray,
    );
    return { counts, loss: withLoss ? loss : new Float64Array(out) };
  };
  return {
    evaluate(lists) {
      if (lists.length === 0) return { counts: new Int32Array(0), loss: new Float64Array(0) };
      const offsets = new Int32Array(lists.length + 1);
      lists.forEach((ms, b) => {
        offsets[b + 1] = offsets[b]! + ms.length;
      });
      const members = new Int32Array(Math.max(1, offsets[lists.length]!));
      lists.forEach((ms, b) => {
        members.set(ms, offsets[b]!);
      });
      return run(lists.length, offsets, members, true);
    },
    all(withLoss, grayAnchor = 0) {
      if (!Number.isInteger(grayAnchor) || grayAnchor < 0)
        throw new RangeError(`grayAnchor: expected a non-negative integer, got ${grayAnchor}`);
      return run(0, none, none, withLoss, grayAnchor);
    },
  };
}
