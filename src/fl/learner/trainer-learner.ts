/**
 * The `Learner` of a trainer process (docs/trainer.md): local training, evaluation and the
 * full-visibility coalition games run in the silo's own trainer (PyTorch on its GPU, or any
 * language speaking ./trainer-protocol.ts); secure aggregation, the model chain and the reports
 * stay in fedscore. Every vector read back is checked (size before reading, then length d,
 * finite, |v| ≤ MAX_VECTOR_MAGNITUDE) before the silo quantizes or evaluates with it.
 *
 * Data go to the trainer as `.npy` files written once per data set (x float32 [n, h, w, c] in
 * [0, 1], y int32 [n]); the trainer evaluates exactly the test set whose digest the silo checked.
 *
 * Coalition models M_S = M0 + s(S)·Σ_{i∈S} w_iΔ_i (src/ml/coalition-model.ts `combine`, the
 * same float64 accumulation as the TF.js evaluator) are built here and evaluated in batched
 * `evaluate` requests; each distinct coalition once, shared by the scalar and class-wise games.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coalition, coalitionKey, members } from '../../../scoring/coalition.js';
import { type Game, memoize, memoizeVector, type VectorGame } from '../../../scoring/game.js';
import { ADDITIVE_CONVENTION, coalitionScale } from '../../consortium/convention.js';
import type { Dataset } from '../../data/dataset.js';
import { encodeNpy } from '../../data/npy.js';
import { type Coefficients, combine } from '../../ml/coalition-model.js';
import { type CoalitionSpec, type Learner, type Utilities, utilityValue } from './learner.js';
import {
  DEFAULT_TRAINER_TIMEOUTS,
  PYTHON_HELPER_DIR,
  TrainerProcess,
  type TrainerTimeouts,
} from './trainer-process.js';
import {
  checkEvaluateAnswer,
  checkLayoutAnswer,
  checkTrainAnswer,
  checkVector,
  type EvaluateResult,
  encodeRequest,
  type LayoutAnswer,
  layoutDigest,
  parameterCountOf,
  parseAnswer,
  readVector,
  TrainerProtocolError,
} from './trainer-protocol.js';

/** Options of {@link createTrainerLearner}. */
export interface TrainerLearnerOptions {
  /** The trainer's command line (`python3 model.py`). */
  readonly command: string;
  /** Its working directory (default: this process's). */
  readonly cwd?: string;
  /** The data the model is for: checked against the layout's digest by the caller. */
  readonly inputShape: readonly [number, number, number];
  readonly numClasses: number;
  /** Fixed initial parameters (the consortium's M0 file); otherwise the trainer's `init`. */
  readonly initialParameters?: Float32Array;
  /** Seconds per operation. */
  readonly timeouts?: Partial<TrainerTimeouts>;
  /** Coalition models per `evaluate` request (default 16). */
  readonly batch?: number;
  /** Receives the trainer's stderr lines and a description line. */
  readonly log?: (line: string) => void;
}

/** A trainer-process learner: a `Learner` with the trainer's layout and its digest. */
export interface TrainerLearner extends Learner {
  readonly layout: LayoutAnswer;
  readonly topologyDigest: string;
  /** The trainer's `init` for `seed` in the running trainer; `initialParameters(seed)` then returns it. */
  initialize(seed: number): Promise<Float32Array>;
  /** Utilities of k parameter vectors in one request. */
  evaluateMany(params: readonly Float32Array[], data: Dataset): Promise<Utilities[]>;
}

const toUtilities = (r: EvaluateResult): Utilities => ({
  accuracy: r.accuracy,
  loss: r.loss,
  perClass: Float64Array.from(r.perClass, (x) => (x === null ? Number.NaN : x)),
});

/**
 * Starts the trainer and asks its layout.
 * @throws TrainerProtocolError naming `layout` when it does not answer it properly (the trainer
 *   is then stopped); TypeError for a missing command.
 */
export async function createTrainerLearner(o: TrainerLearnerOptions): Promise<TrainerLearner> {
  const proc = TrainerProcess.start({
    command: o.command,
    ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
    ...(o.timeouts ? { timeouts: o.timeouts } : {}),
    ...(o.log ? { log: o.log } : {}),
  });
  let layout: LayoutAnswer;
  try {
    layout = await proc.request({ op: 'layout' }, checkLayoutAnswer);
  } catch (e) {
    await proc.close();
    throw e;
  }
  const d = parameterCountOf(layout.layout);
  const classes = o.numClasses;
  const batch = o.batch ?? 16;
  if (o.initialParameters !== undefined)
    checkVector('init', 'the initial parameters', o.initialParameters, d);
  const dataFiles = new WeakMap<Dataset, { x: string; y: string }>();
  let files = 0;
  const dataOf = (ds: Dataset) => {
    let f = dataFiles.get(ds);
    if (!f) {
      const dir = proc.file(`data-${files++}`);
      mkdirSync(dir, { mode: 0o700 });
      f = { x: join(dir, 'x.npy'), y: join(dir, 'y.npy') };
      writeFileSync(f.x, encodeNpy(ds.x, [ds.n, ...ds.shape]), { mode: 0o600 });
      writeFileSync(f.y, encodeNpy(Int32Array.from(ds.y), [ds.n]), { mode: 0o600 });
      dataFiles.set(ds, f);
    }
    return f;
  };
  let file = 0;
  const writeVectors = (vs: readonly Float32Array[]) => {
    const path = proc.file(`params-${file++}.npy`);
    const flat = new Float32Array(vs.length * d);
    vs.forEach((v, i) => {
      checkVector('evaluate', `parameters[${i}]`, v, d);
      flat.set(v, i * d);
    });
    writeFileSync(path, encodeNpy(flat, [vs.length, d]), { mode: 0o600 });
    return path;
  };
  const evaluateMany = async (vs: readonly Float32Array[], data: Dataset): Promise<Utilities[]> => {
    const out: Utilities[] = [];
    for (let at = 0; at < vs.length; at += batch) {
      const chunk = vs.slice(at, at + batch);
      const params = writeVectors(chunk);
      try {
        const results = await proc.request(
          { op: 'evaluate', params, data: dataOf(data), classes: data.numClasses },
          (a) => checkEvaluateAnswer(a, chunk.length, data.numClasses),
        );
        out.push(...results.map(toUtilities));
      } finally {
        rmSync(params, { force: true });
      }
    }
    return out;
  };
  const inits = new Map<number, Float32Array>();
  const learner: TrainerLearner = {
    backend: 'trainer',
    kernels: `${layout.library} on ${layout.device}`,
    tfjsVersion: '',
    parameterCount: d,
    layout,
    topologyDigest: layoutDigest(layout.layout, { inputShape: o.inputShape, numClasses: classes }),
    initialParameters(seed) {
      if (o.initialParameters) return Float32Array.from(o.initialParameters);
      let v = inits.get(seed);
      if (!v) {
        v = initSync(o, seed, d);
        inits.set(seed, v);
      }
      return Float32Array.from(v);
    },
    async initialize(seed) {
      if (o.initialParameters) return Float32Array.from(o.initialParameters);
      const out = proc.file(`init-${file++}.npy`);
      try {
        const v = await proc.request({ op: 'init', seed, out }, () =>
          readVector('init', 'the initial parameters', out, d),
        );
        inits.set(seed, v);
        return Float32Array.from(v);
      } finally {
        rmSync(out, { force: true });
      }
    },
    async trainMany(params, jobs) {
      const base = writeVectors([params]);
      const updates: Float32Array[] = [];
      try {
        for (const job of jobs) {
          const out = proc.file(`update-${file++}.npy`);
          try {
            const update = await proc.request(
              {
                op: 'train',
                params: base,
                data: dataOf(job.data),
                seed: job.seed,
                out,
                ...(job.steps !== undefined ? { steps: job.steps } : {}),
              },
              (a) => {
                checkTrainAnswer(a);
                return readVector('train', 'the update', out, d);
              },
            );
            updates.push(update);
          } finally {
            rmSync(out, { force: true });
          }
        }
      } finally {
        rmSync(base, { force: true });
      }
      return updates;
    },
    async evaluate(params, data) {
      return (await evaluateMany([params], data))[0]!;
    },
    evaluateMany,
    coalitionGames(c: CoalitionSpec) {
      return trainerCoalitionGames(c, evaluateMany);
    },
    async close() {
      await proc.close();
    },
  };
  o.log?.(
    `trainer '${o.command}': ${layout.library} on ${layout.device}, ${layout.layout.length} tensors, ${d} parameters`,
  );
  return learner;
}

/**
 * The trainer's `init` for `seed`, synchronously (Learner.initialParameters is synchronous): a
 * second, short-lived trainer process answers `layout` and `init` and ends with its stdin.
 * @throws TrainerProtocolError naming `init`.
 */
function initSync(o: TrainerLearnerOptions, seed: number, d: number): Float32Array {
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-trainer-init-'));
  try {
    const out = join(dir, 'init.npy');
    const seconds =
      (o.timeouts?.layout ?? DEFAULT_TRAINER_TIMEOUTS.layout) +
      (o.timeouts?.init ?? DEFAULT_TRAINER_TIMEOUTS.init);
    const r = spawnSync(o.command, {
      shell: true,
      cwd: o.cwd,
      input: encodeRequest(1, { op: 'layout' }) + encodeRequest(2, { op: 'init', seed, out }),
      env: {
        ...process.env,
        FEDSCORE_TRAINER_DIR: dir,
        PYTHONPATH: [PYTHON_HELPER_DIR, process.env.PYTHONPATH].filter(Boolean).join(':'),
      },
      timeout: seconds * 1000,
      killSignal: 'SIGKILL',
      maxBuffer: 8 * 1024 * 1024,
      encoding: 'utf8',
    });
    if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT')
      throw new TrainerProtocolError('init', `no answer within ${seconds} s; the trainer is stopped`);
    const lines = (r.stdout ?? '').split('\n').filter((l) => l.trim() !== '');
    if (lines.length < 2)
      throw new TrainerProtocolError(
        'init',
        `the trainer '${o.command}' ended (code ${r.status}) without answering init; its last stderr lines: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}`,
      );
    const layout = checkLayoutAnswer(parseAnswer('layout', 1, lines[0]!));
    if (parameterCountOf(layout.layout) !== d)
      throw new TrainerProtocolError(
        'init',
        `a second start of the trainer has another layout (${parameterCountOf(layout.layout)} parameters, not ${d})`,
      );
    parseAnswer('init', 2, lines[1]!);
    return readVector('init', 'the initial parameters', out, d);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The scalar and class-wise coalition games of `c` over a batched evaluator: each distinct
 * coalition's model built once (float64 accumulation, rounded once) and evaluated in batches.
 */
export function trainerCoalitionGames(
  c: CoalitionSpec,
  evaluateMany: (vs: readonly Float32Array[], data: Dataset) => Promise<Utilities[]>,
): { game: Game; perClass: VectorGame; dispose(): void } {
  const n = c.updates.length;
  if (n < 1) throw new RangeError('updates: expected at least one update');
  if (c.weights.length !== n) throw new RangeError(`weights: expected ${n} weights, got ${c.weights.length}`);
  const a = Float64Array.from(c.weights);
  a.forEach((x, i) => {
    if (!(Number.isFinite(x) && x >= 0))
      throw new RangeError(`weights[${i}]: expected a number ≥ 0, got ${x}`);
  });
  const grand = a.reduce((p, x) => p + x, 0);
  const coef: Coefficients = {
    a,
    fixedScale: c.convention === ADDITIVE_CONVENTION,
    zeroWeight: a.some((x) => x === 0),
    scale: (ms) =>
      coalitionScale(
        c.convention,
        ms.reduce((p, i) => p + a[i]!, 0),
        grand,
      ),
  };
  const memo = new Map<string, Utilities>();
  const utilitiesOf = async (coalitions: readonly Coalition[]): Promise<Utilities[]> => {
    const missing = new Map<string, number[]>();
    for (const s of coalitions) {
      const k = coalitionKey(s);
      if (!memo.has(k) && !missing.has(k)) {
        const ms = members(s);
        if (ms.some((i) => i >= n))
          throw new RangeError(`coalitions: player ${ms.at(-1)} is outside [0, ${n})`);
        missing.set(k, ms);
      }
    }
    const keys = [...missing.keys()];
    const d = c.base.length;
    const models = keys.map((k) => combine(c.base, c.updates, coef, missing.get(k)!, 0, d));
    const got = await evaluateMany(models, c.test);
    for (const [i, k] of keys.entries()) memo.set(k, got[i]!);
    return coalitions.map((s) => memo.get(coalitionKey(s))!);
  };
  const game: Game = {
    n,
    async values(coalitions) {
      return Float64Array.from(await utilitiesOf(coalitions), (u) => utilityValue(u, c.utility));
    },
  };
  const classes = c.test.numClasses;
  const perClass: VectorGame = {
    n,
    dims: classes,
    async values(coalitions) {
      const us = await utilitiesOf(coalitions);
      const out = new Float64Array(us.length * classes);
      for (const [i, u] of us.entries()) out.set(u.perClass, i * classes);
      return out;
    },
  };
  return { game: memoize(game), perClass: memoizeVector(perClass), dispose: () => memo.clear() };
}
