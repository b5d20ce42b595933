/**
 * The interface of fedscore's Node-API addon (native/: products.c, loops.c, coalitions.c, isa.c,
 * narrow.c, train.c document each function) and the instruction-set caps it takes. Private to
 * src/ml: _blas_kernels.ts loads the addon and the kernels that use it.
 */

/** The addon's functions (native/products.c and native/loops.c document each). */
export interface Addon {
  gemm(
    batch: number,
    transA: number,
    transB: number,
    m: number,
    n: number,
    k: number,
    a: Float32Array,
    strideA: number,
    b: Float32Array,
    strideB: number,
    c: Float32Array,
    strideC: number,
  ): void;
  conv2dForward(...args: [...number[], Float32Array, Float32Array, Float32Array]): void;
  conv2dFilterGrad(...args: [...number[], Float32Array, Float32Array, Float32Array]): void;
  conv2dInputGrad(...args: [...number[], Float32Array, Float32Array, Float32Array]): void;
  adamStep(
    theta: Float32Array,
    grad: Float32Array,
    m: Float32Array,
    v: Float32Array,
    count: number,
    weightDecay: number,
    beta1: number,
    beta2: number,
    stepSize: number,
    sqrtBc2: number,
    epsilon: number,
  ): void;
  affineRelu(
    count: number,
    p0: Float32Array,
    u: Float32Array,
    s: number,
    relu: number,
    out: Float32Array,
  ): void;
  reduceLogits(
    rows: number,
    classes: number,
    logits: Float32Array,
    labels: Int32Array,
    labelOffset: number,
    confusion: Int32Array,
  ): number;
  poolGrad(
    max: number,
    n: number,
    h: number,
    w: number,
    c: number,
    filterSize: number,
    stride: number,
    outH: number,
    outW: number,
    dy: Float32Array,
    x: Float32Array,
    dx: Float32Array,
  ): void;
  softmaxXent(
    rows: number,
    cols: number,
    logits: Float32Array,
    labels: Float32Array,
    grad: Float32Array,
  ): number;
  biasAct(
    rows: number,
    cols: number,
    z: Float32Array,
    bias: Float32Array,
    relu: number,
    y: Float32Array,
  ): void;
  biasActGrad(
    rows: number,
    cols: number,
    dy: Float32Array,
    y: Float32Array,
    relu: number,
    dz: Float32Array,
    dbias: Float32Array,
  ): void;
  setThreads(threads: number): void;
  setLocalThreads(threads: number): void;
  /** The fixed blocks an m×n×k product is cut into (1: whole; native/products.c). */
  productBlocks(m: number, n: number, k: number): number;
  /** Caps the instruction set of native/isa.c (0 auto, 1 portable C, 2 AVX2, 3 AVX-512); returns the one in use. */
  setIsa(isa: number): number;
  info(): { library: string; config: string; threads: number; isa: number };
}

/** FEDSCORE_NATIVE_ISA's values: the instruction-set cap of native/isa.c. */
export const NATIVE_ISAS: Readonly<Record<string, number>> = { auto: 0, scalar: 1, avx2: 2, avx512: 3 };
