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
import type { Dataset } from '../data/dataset.js';
import { type LocalFormat, loadLocalData } from '../data/local-data.js';
import type { ExperimentConfig } from './config.js';
import type { ConsortiumFile } from './consortium-file.js';
import { type NetworkedRun, networkedRun } from './networked.js';
import type { Consortium } from './setup.js';

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
  config: ExperimentConfig,
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
  return pinnedWeights(networkedRun(config, seed, data), o.file);
}

/**
 * `run` with the pinned file's weight scale and minimum weight (the silo divides its weight by
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
  return { ...run, weightScale: file.weights.scale, minWeight: file.encoding.minWeight };
}
