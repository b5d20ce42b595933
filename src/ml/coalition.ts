/**
 * Batched evaluation of coalition models, exposed as scoring/ games (docs/architecture.md,
 * "Full-visibility mode").
 *
 * Coalition model (FedAvg, the default): M_S = M0 + Σ_{i∈S} wᵢΔᵢ / Σ_{i∈S} wᵢ, M_∅ = M0.
 * Additive convention of the papers (option): M_S = M0 + Σ_{i∈S} Δᵢ / N.
 * Both are M_S = M0 + s(S)·Σ_{i∈S} aᵢΔᵢ with aᵢ = wᵢ, s = 1/Σwᵢ, or aᵢ = 1, s = 1/N.
 *
 * Combined evaluation (models whose first parametrized layer is dense, e.g. the MLP): that
 * layer's pre-activation on the test set X is linear in the parameters,
 *   X·W_S + b_S = P₀ + s(S)·Σ_{i∈S} aᵢPᵢ,  P₀ = X·W₀ + b₀,  Pᵢ = X·ΔWᵢ + Δbᵢ,
 * so Pᵢ is computed once per silo (one N×F×H product each) instead of one product per
 * coalition. The sums Σ aᵢPᵢ of a batch are built along the prefix tree of the coalitions'
 * sorted member lists (one N×H addition per tree node; 2ⁿ − 1 additions for all coalitions),
 * and the remaining layers run per coalition with their own parameters. Only 2-D products are
 * used: a 3-D batched matMul is ~70× slower than the same work as 2-D products on wasm.
 *
 * Naive evaluation forms M_S and runs `evaluate` (the oracle the tests compare against).
 */
import * as tf from '@tensorflow/tfjs';
import { type Coalition, coalitionKey, members } from '../../scoring/coalition.js';
import {
  type Game,
  type MemoGame,
  type MemoVectorGame,
  memoize,
  memoizeVector,
  type VectorGame,
} from '../../scoring/game.js';
import { nativeAffineRelu } from './_blas_kernels.js';
import { accumulate, summarize } from './_reduce.js';
import { ADDITIVE_CONVENTION, CONVENTIONS, type Convention, DEFAULT_CONVENTION } from './convention.js';
import { type Evaluation, evaluate } from './evaluate.js';
import { checkExamples, checkParams, type Examples, forward, type ModelSpec, paramLayout } from './models.js';

/** Inputs of a coalition evaluator. */
export interface CoalitionSetup {
  readonly spec: ModelSpec;
  /** Global model M0. */
  readonly m0: Float32Array;
  /** Updates Δᵢ = Mᵢ − M0, one per silo (player i). */
  readonly updates: readonly Float32Array[];
  /** FedAvg weights wᵢ > 0 (e.g. example counts; default all 1). Unused by `additive`. */
  readonly weights?: ArrayLike<number>;
  /** A name of ./convention.ts (default `DEFAULT_CONVENTION`, FedAvg's). */
  readonly convention?: Convention;
  /** The common test set. */
  readonly data: Examples;
}

/** Options of `createCoalitionEvaluator`. */
export interface EvaluatorOptions {
  /**
   * `combined` (needs a dense first layer), `naive`, or `auto` (default: combined when
   * possible).
   */
  mode?: 'auto' | 'combined' | 'naive';
  /** Test examples per forward pass in naive mode (default 2000). */
  batchSize?: number;
}

/** Utilities of a batch of coalition models, in batch order. */
export interface CoalitionValues {
  readonly accuracy: Float64Array;
  readonly negLoss: Float64Array;
  /** Row-major batch × numClasses. */
  readonly perClassAccuracy: Float64Array;
}

/** Evaluates coalition models on the test set; call `dispose` to free its tensors. */
export interface CoalitionEvaluator {
  /** Number of silos (players). */
  readonly n: number;
  readonly numClasses: number;
  /** The mode in use (`auto` resolved). */
  readonly mode: 'combined' | 'naive';
  /** Distinct coalition models evaluated so far (the evaluator remembers every result). */
  readonly evaluations: number;
  /** Utilities of M_S for each coalition S of the batch. */
  values(coalitions: readonly Coalition[]): Promise<CoalitionValues>;
  /** Frees the tensors the evaluator holds (combined mode). */
  dispose(): void;
}

interface Coefficients {
  /** aᵢ per silo. */
  readonly a: Float64Array;
  /** s(S) from the members. */
  scale(members: readonly number[]): number;
}

function checkSetup(setup: CoalitionSetup): Coefficients {
  if (!setup || typeof setup !== 'object') throw new TypeError('setup: expected an object');
  const { spec, m0, updates } = setup;
  checkParams(spec, m0, 'm0');
  checkExamples(spec, setup.data, 'data');
  if (!Array.isArray(updates) || updates.length < 1)
    throw new RangeError('updates: expected at least one update');
  for (const [i, u] of updates.entries()) checkParams(spec, u, `updates[${i}]`);
  const n = updates.length;
  const convention = setup.convention ?? DEFAULT_CONVENTION;
  if (!CONVENTIONS.includes(convention))
    throw new RangeError(`convention: expected ${CONVENTIONS.join(' or ')}, got ${String(convention)}`);
  const w = setup.weights ?? new Float64Array(n).fill(1);
  if (w.length !== n) throw new RangeError(`weights: expected ${n} weights, got ${w.length}`);
  if (convention === ADDITIVE_CONVENTION) {
    // Zero weights are fine here: a silo of weight 0 contributes U_i = 0 to every coalition.
    const a = Float64Array.from(w);
    let total = 0;
    a.forEach((x, i) => {
      if (!(Number.isFinite(x) && x >= 0))
        throw new RangeError(`weights[${i}]: expected a number ≥ 0, got ${x}`);
      total += x;
    });
    if (!(total > 0)) throw new RangeError('weights: at least one weight must be positive');
    return { a, scale: () => 1 / total };
  }
  const a = Float64Array.from(w);
  a.forEach((x, i) => {
    if (!(Number.isFinite(x) && x > 0))
      throw new RangeError(`weights[${i}]: expected a positive number, got ${x}`);
  });
  return {
    a,
    scale: (ms) => {
      let total = 0;
      for (const i of ms) total += a[i]!;
      return ms.length === 0 ? 0 : 1 / total;
    },
  };
}

function checkCoalitions(coalitions: readonly Coalition[], n: number): number[][] {
  if (!Array.isArray(coalitions)) throw new TypeError('coalitions: expected an array of coalitions');
  return coalitions.map((c, b) => {
    if (!(c instanceof Uint32Array)) throw new TypeError(`coalitions[${b}]: expected a Uint32Array bitset`);
    const ms = members(c);
    if (ms.length > 0 && ms[ms.length - 1]! >= n)
      throw new RangeError(`coalitions[${b}]: player ${ms[ms.length - 1]} is outside [0, ${n})`);
    return ms;
  });
}

/**
 * Parameters of the coalition model M_S (see the module comment), accumulated in float64 and
 * rounded once to float32. `members` are player indices. Throws RangeError on bad input.
 */
export function coalitionParams(setup: CoalitionSetup, memberList: readonly number[]): Float32Array {
  const coef = checkSetup(setup);
  const n = setup.updates.length;
  for (const i of memberList)
    if (!Number.isInteger(i) || i < 0 || i >= n)
      throw new RangeError(`members: ${i} is not a player in [0, ${n})`);
  return combine(
    setup.m0,
    setup.updates,
    coef,
    [...new Set(memberList)].sort((x, y) => x - y),
    0,
    setup.m0.length,
  );
}

/** m0[lo..hi) + s·Σ aᵢΔᵢ[lo..hi) over `ms`, in float64, rounded to float32. */
function combine(
  m0: Float32Array,
  updates: readonly Float32Array[],
  coef: Coefficients,
  ms: readonly number[],
  lo: number,
  hi: number,
): Float32Array {
  const out = new Float32Array(hi - lo);
  const acc = new Float64Array(hi - lo);
  for (const i of ms) {
    const u = updates[i]!;
    const ai = coef.a[i]!;
    for (let k = lo; k < hi; k++) acc[k - lo]! += ai * u[k]!;
  }
  const s = coef.scale(ms);
  for (let k = lo; k < hi; k++) out[k - lo] = m0[k]! + s * acc[k - lo]!;
  return out;
}

/**
 * An evaluator of coalition models (see the module comment for the two modes). Results are
 * remembered per coalition, so the scalar and class-wise games built on one evaluator share
 * evaluations. Throws RangeError/TypeError naming a bad field.
 */
export function createCoalitionEvaluator(
  setup: CoalitionSetup,
  options: EvaluatorOptions = {},
): CoalitionEvaluator {
  const coef = checkSetup(setup);
  const mode = options.mode ?? 'auto';
  if (mode !== 'auto' && mode !== 'combined' && mode !== 'naive')
    throw new RangeError(`mode: expected auto, combined or naive, got ${String(mode)}`);
  const batchSize = options.batchSize ?? 2000;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError(`batchSize: expected a positive integer, got ${batchSize}`);
  const { spec, data } = setup;
  const firstParam = spec.layers.findIndex((l) => l.kind === 'dense' || l.kind === 'conv');
  const denseFirst =
    firstParam >= 0 &&
    spec.layers[firstParam]!.kind === 'dense' &&
    spec.layers.slice(0, firstParam).every((l) => l.kind === 'flatten');
  if (mode === 'combined' && !denseFirst)
    throw new RangeError(
      `mode: combined evaluation needs a dense first layer; ${spec.name} starts with a conv`,
    );
  const resolved = mode === 'naive' || !denseFirst ? 'naive' : 'combined';
  const n = setup.updates.length;
  const C = spec.numClasses;
  const memo = new Map<string, Evaluation>();
  const inner = resolved === 'combined' ? combinedEvaluator(setup, coef, firstParam) : undefined;

  const evaluateOne = (ms: number[]): Evaluation => {
    if (inner) return inner.evaluate([ms])[0]!;
    return evaluate(spec, combine(setup.m0, setup.updates, coef, ms, 0, setup.m0.length), data, {
      batchSize,
    });
  };

  return {
    n,
    numClasses: C,
    mode: resolved,
    get evaluations() {
      return memo.size;
    },
    async values(coalitions) {
      const lists = checkCoalitions(coalitions, n);
      const keys = coalitions.map(coalitionKey);
      const todo: { key: string; ms: number[] }[] = [];
      const queued = new Set<string>();
      lists.forEach((ms, b) => {
        const k = keys[b]!;
        if (!memo.has(k) && !queued.has(k)) {
          queued.add(k);
          todo.push({ key: k, ms });
        }
      });
      if (inner) {
        const results = inner.evaluate(todo.map((t) => t.ms));
        for (const [j, t] of todo.entries()) memo.set(t.key, results[j]!);
      } else {
        for (const t of todo) {
          memo.set(t.key, evaluateOne(t.ms));
          await Promise.resolve();
        }
      }
      const out = {
        accuracy: new Float64Array(coalitions.length),
        negLoss: new Float64Array(coalitions.length),
        perClassAccuracy: new Float64Array(coalitions.length * C),
      };
      keys.forEach((k, b) => {
        const e = memo.get(k)!;
        out.accuracy[b] = e.accuracy;
        out.negLoss[b] = e.negLoss;
        out.perClassAccuracy.set(e.perClassAccuracy, b * C);
      });
      return out;
    },
    dispose() {
      inner?.dispose();
    },
  };
}

/** The combined evaluator of a model whose first parametrized layer (index `first`) is dense. */
function combinedEvaluator(setup: CoalitionSetup, coef: Coefficients, first: number) {
  const { spec, data, m0, updates } = setup;
  const layout = paramLayout(spec);
  const [wE, bE] = [layout[0]!, layout[1]!];
  const restStart = bE.offset + bE.size;
  const rest = layout.slice(2);
  const C = spec.numClasses;
  const N = data.n;
  const F = wE.shape[0]!;
  const H = wE.shape[1]!;
  // P₀ and aᵢPᵢ, computed once. X is only needed while building them.
  const firstLayer = (p: Float32Array, scale: number): tf.Tensor2D =>
    tf.tidy(() => {
      const x = tf.tensor2d(data.x, [N, F]);
      const w = tf.tensor2d(p.subarray(wE.offset, wE.offset + wE.size), [F, H]);
      const b = tf.tensor1d(p.subarray(bE.offset, bE.offset + bE.size));
      const z: tf.Tensor2D = tf.add(tf.matMul(x, w), b);
      return scale === 1 ? z : tf.mul(z, scale);
    });
  const p0 = firstLayer(m0, 1);
  const q = updates.map((u, i) => firstLayer(u, coef.a[i]!));
  const relu = (spec.layers[first] as { relu: boolean }).relu;

  function evaluateBatch(lists: number[][]): Evaluation[] {
    const results: Evaluation[] = new Array(lists.length);
    // Visit coalitions in lexicographic order of their member lists so that consecutive ones
    // share prefixes; the stack holds U = Σ aᵢPᵢ for each prefix of the current list.
    const order = lists.map((_, b) => b).sort((x, y) => lexCompare(lists[x]!, lists[y]!));
    const prefix: number[] = [];
    const stack: tf.Tensor2D[] = [];
    try {
      for (const b of order) {
        const ms = lists[b]!;
        let common = 0;
        while (common < prefix.length && common < ms.length && prefix[common] === ms[common]) common++;
        while (prefix.length > common) {
          prefix.pop();
          stack.pop()!.dispose();
        }
        for (let d = common; d < ms.length; d++) {
          const i = ms[d]!;
          const sum: tf.Tensor2D = d === 0 ? tf.clone(q[i]!) : tf.add(stack[d - 1]!, q[i]!);
          prefix.push(i);
          stack.push(sum);
        }
        results[b] = evaluateCoalition(ms, ms.length === 0 ? undefined : stack[ms.length - 1]);
      }
    } finally {
      for (const t of stack) t.dispose();
    }
    return results;
  }

  function evaluateCoalition(ms: number[], u: tf.Tensor2D | undefined): Evaluation {
    const s = coef.scale(ms);
    const restParams = combine(m0, updates, coef, ms, restStart, m0.length);
    const logits = tf.tidy(() => {
      // relu?(P₀ + s·U): one native pass when the OpenBLAS addon is active, else tfjs kernels.
      let z = u === undefined ? undefined : nativeAffineRelu(p0, u, s, relu);
      if (z === undefined) {
        z = u === undefined ? p0 : tf.add(p0, tf.mul(u, s));
        if (relu) z = tf.relu(z);
      }
      const ws = rest.map((e) =>
        tf.tensor(restParams.subarray(e.offset - restStart, e.offset - restStart + e.size), [...e.shape]),
      );
      return forward(spec, ws, z, first + 1);
    });
    const confusion = new Int32Array(C * C);
    const lossSum = accumulate(logits, data.y, 0, confusion, C);
    logits.dispose();
    return summarize(confusion, lossSum, C);
  }

  return {
    evaluate: evaluateBatch,
    dispose() {
      p0.dispose();
      for (const t of q) t.dispose();
    },
  };
}

function lexCompare(x: readonly number[], y: readonly number[]): number {
  const m = Math.min(x.length, y.length);
  for (let k = 0; k < m; k++) if (x[k] !== y[k]) return x[k]! - y[k]!;
  return x.length - y.length;
}

/** Which scalar utility a coalition game reports. */
export type Utility = 'accuracy' | 'negLoss';

/**
 * The scalar game v(S) = utility of M_S on the test set, memoized (scoring/'s `memoize`:
 * `evaluations` counts distinct coalitions computed).
 */
export function coalitionGame(evaluator: CoalitionEvaluator, utility: Utility = 'accuracy'): MemoGame {
  if (!evaluator || typeof evaluator.values !== 'function')
    throw new TypeError('evaluator: expected a CoalitionEvaluator (createCoalitionEvaluator)');
  if (utility !== 'accuracy' && utility !== 'negLoss')
    throw new RangeError(`utility: expected accuracy or negLoss, got ${String(utility)}`);
  const game: Game = {
    n: evaluator.n,
    async values(coalitions) {
      return (await evaluator.values(coalitions))[utility];
    },
  };
  return memoize(game);
}

/**
 * The vector game v(S) = per-class accuracies of M_S (papers/000 Eq. 7), memoized. A class
 * absent from the test set gives NaN.
 */
export function classwiseGame(evaluator: CoalitionEvaluator): MemoVectorGame {
  if (!evaluator || typeof evaluator.values !== 'function')
    throw new TypeError('evaluator: expected a CoalitionEvaluator (createCoalitionEvaluator)');
  const game: VectorGame = {
    n: evaluator.n,
    dims: evaluator.numClasses,
    async values(coalitions) {
      return (await evaluator.values(coalitions)).perClassAccuracy;
    },
  };
  return memoizeVector(game);
}
