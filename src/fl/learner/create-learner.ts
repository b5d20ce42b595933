/**
 * The learner of a configuration's model: TF.js (./tf-learner.ts) for the registered TF.js
 * models, a trainer process (./trainer-learner.ts) for the `external` model
 * (src/ml/external-model.ts), with its initial weights read from their file and the pinned digests
 * checked.
 */
import { resolve } from 'node:path';
import { EXTERNAL_MODEL, type ExternalModelOptions } from '../../ml/external-model.js';
import { paramsDigest } from '../../ml/layers-model.js';
import type { Learner } from './learner.js';
import { createTfLearner, type TfLearnerOptions } from './tf-learner.js';
import { createTrainerLearner } from './trainer-learner.js';
import { readVectorFile } from './trainer-protocol.js';

/** Options of {@link createLearner}: the TF.js learner's, and where an external trainer runs. */
export interface LearnerOptions extends TfLearnerOptions {
  /** The working directory of an external trainer and its relative paths (default: this process's). */
  cwd?: string;
}

/** Whether `model` is run by a trainer process. */
export function isExternalModel(model: { kind: string } | undefined): boolean {
  return model?.kind === EXTERNAL_MODEL.kind;
}

/**
 * Creates the learner of `o.model`.
 * @throws RangeError naming `model.command` (no trainer command), `model.initialWeights` (an
 *   unreadable or wrong M0 file), `model.topologyDigest` / `model.weightsDigest` (not the pinned
 *   ones); TrainerProtocolError naming the operation when the trainer misbehaves; the TF.js
 *   learner's errors for the other models.
 */
export async function createLearner(o: LearnerOptions): Promise<Learner> {
  if (!isExternalModel(o.model)) return createTfLearner(o);
  const m = o.model as ExternalModelOptions;
  if (m.command === undefined)
    throw new RangeError(
      "model.command: an 'external' model needs its trainer's command line (model.command in the configuration, or fedscore client --trainer)",
    );
  const cwd = o.cwd ?? process.cwd();
  const initial =
    m.initialWeights !== undefined ? readInitialWeights(resolve(cwd, m.initialWeights)) : undefined;
  const learner = await createTrainerLearner({
    command: m.command,
    cwd,
    inputShape: o.inputShape ?? [28, 28, 1],
    numClasses: o.numClasses ?? 10,
    ...(initial ? { initialParameters: initial } : {}),
    ...(m.timeouts ? { timeouts: m.timeouts } : {}),
    log: o.log ?? ((line) => process.stderr.write(`${line}\n`)),
  });
  try {
    if (m.topologyDigest !== undefined && learner.topologyDigest !== m.topologyDigest)
      throw new RangeError(
        `model.topologyDigest: the trainer's layout digest is ${learner.topologyDigest}, the consortium's ${m.topologyDigest} (another model, or another order of its tensors)`,
      );
    if (m.weightsDigest !== undefined && initial !== undefined && paramsDigest(initial) !== m.weightsDigest)
      throw new RangeError(
        `model.weightsDigest: ${m.initialWeights} has digest ${paramsDigest(initial)}, the consortium's ${m.weightsDigest}`,
      );
  } catch (e) {
    await learner.close();
    throw e;
  }
  return learner;
}

/** The M0 file of an external model. @throws RangeError naming model.initialWeights. */
function readInitialWeights(path: string): Float32Array {
  try {
    return readVectorFile(path);
  } catch (e) {
    throw new RangeError(`model.initialWeights: ${(e as Error).message}`);
  }
}

/**
 * A configuration's model with the silo's trainer command (`fedscore client --trainer`) and the
 * consortium file's pinned digests: an `external` model (the configuration's own options kept),
 * or `model` unchanged when it is not external and no command is given.
 */
export function withTrainerCommand<M extends { kind: string }>(
  model: M | undefined,
  command: string | undefined,
  pins?: { topologyDigest: string; weightsDigest: string },
): M | { kind: string; [option: string]: unknown } | undefined {
  if (command === undefined && !isExternalModel(model)) return model;
  return {
    ...(isExternalModel(model) ? model : {}),
    kind: EXTERNAL_MODEL.kind,
    ...(command !== undefined ? { command } : {}),
    ...(pins ?? {}),
  };
}
