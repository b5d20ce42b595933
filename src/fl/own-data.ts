/**
 * A networked silo on its own data (`fedscore client --data <path> --test-data <path>`): the
 * silo reads its training examples and the common test set from files (src/data/local-data.ts:
 * IDX, .npy, CSV, image folder), checked against the consortium's input shape and classes,
 * instead of rebuilding every silo's partition from the experiment configuration. The rest of
 * the run — training, encoding, coalition models — is networked.ts's, unchanged.
 *
 * The silo knows only its own example count, so the weights' public scale max_j w_j and the
 * smallest normalized weight come from the pinned consortium file (`weights.scale`,
 * `encoding.minWeight`); its weight is its example count only when the file says `examples`.
 */

import type { ConsortiumFile } from '../consortium/consortium-file.js';
import { checkWeightBounds } from '../consortium/weight-floor.js';
import type { Dataset } from '../data/dataset.js';
import { type LocalFormat, loadLocalData } from '../data/local-data.js';
import type { Consortium } from './consortium-data.js';
import { type NetworkedRun, networkedRun, siloPlan } from './networked.js';
import type { RunConfig } from './run-config.js';

/** A data file the silo cannot use: names the flag, the file and the problem. */
export class LocalDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalDataError';
  }
}

/**
 * Reads one data set of the silo (`flag` names where it came from: `--data`, `--test-data`).
 * @throws LocalDataError `<flag>: <file>: <problem>`.
 */
export async function readSiloData(
  flag: string,
  path: string,
  shape: { inputShape: readonly [number, number, number]; numClasses: number; format?: LocalFormat },
): Promise<Dataset> {
  try {
    return await loadLocalData(path, {
      inputShape: shape.inputShape,
      numClasses: shape.numClasses,
      ...(shape.format ? { format: shape.format } : {}),
    });
  } catch (e) {
    throw new LocalDataError(`${flag}: ${(e as Error).message}`);
  }
}

/**
 * The run of silo `silo` of `file` on its own `train` data and the common `test` set: the
 * configuration's training, model and seed, the file's weights.
 */
export function localNetworkedRun(
  config: RunConfig,
  seed: number,
  o: { silo: number; train: Dataset; test: Dataset; file: ConsortiumFile },
): NetworkedRun {
  const n = config.silos;
  if (!(Number.isInteger(o.silo) && o.silo >= 0 && o.silo < n))
    throw new RangeError(`silo: expected 0..${n - 1}, got ${o.silo}`);
  // Only this silo's entry exists: nothing of the run may read another silo's data.
  const silos = new Array<Dataset>(n);
  silos[o.silo] = o.train;
  const data: Consortium = {
    silos,
    roles: Array.from({ length: n }, () => 'honest'),
    updateAttacks: Array.from({ length: n }, () => undefined),
    test: o.test,
    validation: o.test,
    source: `local data ${o.train.source}`,
    numClasses: o.test.numClasses,
  };
  return withUnknownSilos(pinnedWeights(networkedRun(config, seed, data), o.file), o.silo, 0);
}

/**
 * `run` whose strategy setup gives every other silo `examples` examples and an empty label
 * histogram: placeholders for what a silo on its own data does not know (the networked strategies
 * read neither of another silo unless they weigh by example counts: {@link checkLocalStrategy}).
 */
function withUnknownSilos(run: NetworkedRun, silo: number, examples: number): NetworkedRun {
  const { setup } = run;
  const unknown = { examples, labelHistogram: new Array<number>(setup.numClasses).fill(0) };
  return {
    ...run,
    setup: {
      ...setup,
      silos: Array.from({ length: setup.numSilos }, (_, j) => (j === silo ? setup.silos[j]! : unknown)),
    },
  };
}

/**
 * Refuses a strategy whose plan needs the other silos' example counts (FedAvg weights `examples`
 * over a random selection: ŵ_i = n_i / max over the round's selected silos), which a silo on its
 * own data does not know: the plan of round 1 is computed with two different placeholder counts
 * and must not change.
 * @throws LocalDataError naming `strategy.weights`.
 */
export async function checkLocalStrategy(run: NetworkedRun, silo: number): Promise<void> {
  const plan = (examples: number) => siloPlan(withUnknownSilos(run, silo, examples), 1, []);
  const [a, b] = await Promise.all([plan(1), plan(1000)]);
  if (a === undefined || JSON.stringify(a) === JSON.stringify(b)) return;
  const name = (run.config.strategy as { name?: string } | undefined)?.name;
  throw new LocalDataError(
    `strategy.weights: '${name}' weighs the selected silos by their example counts, which a silo on its own data (--data) does not know (the consortium file has only their maximum); use weights: 'equal'`,
  );
}

/**
 * `run` with the pinned file's weight scale, minimum weight, weight floor and largest share (the silo divides its weight by
 * the consortium's public max_j w_j, not by anything it computed).
 * @throws RangeError when the file's weight kind is not the configuration's.
 */
export function pinnedWeights(run: NetworkedRun, file: ConsortiumFile): NetworkedRun {
  const kind =
    (run.config.strategy as { weights?: unknown } | undefined)?.weights === 'equal' ? 'equal' : 'examples';
  if (kind !== file.weights.kind)
    throw new RangeError(
      `weights.kind: the consortium file weighs silos by '${file.weights.kind}', the configuration by '${kind}'`,
    );
  const weightBounds = checkWeightBounds(
    {
      weightFloor: file.encoding.weightFloor,
      maxWeightShare: file.encoding.maxWeightShare,
      minEffectiveSilos: file.encoding.minEffectiveSilos,
    },
    'encoding',
  );
  return { ...run, weightScale: file.weights.scale, minWeight: file.encoding.minWeight, weightBounds };
}
