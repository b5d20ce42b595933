/**
 * One sweep job, start to end: the seed's record (src/sim/experiment.ts `runSeedRecord`), or one
 * chunk of its true Shapley value's table (src/sim/reference-chunks.ts), with the digests of what
 * it ran — the configuration, the data the seed's consortium was built from, and the code version.
 */
import { createHash } from 'node:crypto';
import { datasetDigest } from '../data/digest.js';
import { buildConsortium, dataShapeOf } from '../fl/consortium-data.js';
import { createLearner } from '../fl/learner/create-learner.js';
import type { Learner } from '../fl/learner/learner.js';
import { parseConfig } from '../records/config.js';
import { canonicalJson } from '../schema/canonical-json.js';
import { runSeedRecord } from '../sim/experiment.js';
import { CHUNKED_REFERENCE, chunkRanges, type ReferenceChunk } from '../sim/reference-chunks.js';
import { retrainingValues } from '../sim/retraining-game.js';
import { configDigest, type SweepJob, type SweepSpec } from './spec.js';
import type { JobResult } from './store.js';

/** How a job runs on this machine. */
export interface RunJobOptions {
  /** `fedscore@<version>` (and the commit when known): recorded with the result. */
  codeVersion: string;
  /** The tensor backend (`--backend`); default: the best one available. */
  backend?: string;
  /**
   * Learners kept between jobs, by their options (starting one costs seconds: its training
   * threads); the caller closes them. Without it each job starts and closes its own.
   */
  learners?: Map<string, Learner>;
}

/**
 * Hex SHA-256 over the digests (src/data/digest.ts) of every silo's training data, the test set
 * and the validation set of the seed's consortium, in that order.
 */
export function consortiumDataDigest(cfg: ReturnType<typeof parseConfig>, seed: number): string {
  const c = buildConsortium(cfg, seed);
  const h = createHash('sha256').update('fedscore/consortium-data/v1\n');
  for (const d of [...c.silos, c.test, c.validation]) h.update(`${datasetDigest(d)}\n`);
  return h.digest('hex');
}

/**
 * Runs job `job` of `spec`: configuration `configIndex` at `seed` (without its true Shapley value
 * when the sweep computes that in chunks), or one chunk of that value's table.
 * @throws what the experiment throws.
 */
export async function runJob(
  spec: SweepSpec,
  job: Pick<SweepJob, 'configIndex' | 'seed' | 'chunk'>,
  o: RunJobOptions,
): Promise<JobResult> {
  const { configIndex, seed, chunk } = job;
  const entry = spec.configs[configIndex];
  if (!entry) throw new RangeError(`job: the sweep has no configuration ${configIndex}`);
  const cfg = parseConfig(entry.config, entry.path);
  const digest = configDigest(entry.config);
  if (digest !== entry.digest)
    throw new Error(
      `job: configuration ${entry.label} has digest ${digest}, the sweep recorded ${entry.digest}`,
    );
  const options = {
    ...dataShapeOf(cfg),
    model: cfg.model,
    training: cfg.training ?? {},
    ...(o.backend ? { backend: o.backend } : {}),
  };
  const key = canonicalJson(options);
  const kept = o.learners?.get(key);
  const learner = kept ?? (await createLearner(options));
  if (!kept) o.learners?.set(key, learner);
  try {
    const chunked = (spec.chunks?.[configIndex] ?? 0) > 0;
    const output = chunk
      ? { chunk: await referenceChunk(cfg, seed, learner, chunk) }
      : {
          record: await runSeedRecord(cfg, seed, { learner, ...(chunked ? { trueShapley: 'chunked' } : {}) }),
        };
    return {
      ...output,
      configDigest: digest,
      dataDigest: consortiumDataDigest(cfg, seed),
      codeVersion: o.codeVersion,
    };
  } finally {
    if (!o.learners) await learner.close();
  }
}

/** Chunk `index` of `of` of the seed's retraining-game table: v(S) for its coalition range. */
async function referenceChunk(
  cfg: ReturnType<typeof parseConfig>,
  seed: number,
  learner: Learner,
  chunk: { index: number; of: number },
): Promise<ReferenceChunk> {
  const range = chunkRanges(cfg.silos, chunk.of)[chunk.index];
  if (!range)
    throw new RangeError(`job: chunk ${chunk.index} of ${chunk.of} does not exist for ${cfg.silos} silos`);
  const values = await retrainingValues(cfg, seed, learner, range);
  return { reference: CHUNKED_REFERENCE, from: range.from, to: range.to, values: Array.from(values) };
}
