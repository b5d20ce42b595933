/**
 * A sweep: configurations × seeds, each (configuration, seed) one job — a pure function of the
 * configuration, the seed, the data and the code version (src/sim/experiment.ts `runSeedRecord`)
 * — and, with `--chunks k`, k more jobs per seed for the chunks of its true Shapley value's table.
 * The sweep's id is a digest of what it runs, so submitting the same configurations and seeds
 * again names the same sweep and the same jobs (docs/sweeps.md).
 */
import { createHash } from 'node:crypto';
import type { ExperimentConfig } from '../records/config.js';
import { canonicalJson } from '../schema/canonical-json.js';

/** One configuration of a sweep, as submitted. */
export interface SweepConfig {
  /** The name its outputs go under (`collect --out <dir>/<label>`): the file's base name, made unique. */
  label: string;
  /** The file it was read from (for the record; workers read the configuration from the database). */
  path: string;
  config: ExperimentConfig;
  /** Hex SHA-256 of the configuration's canonical JSON. */
  digest: string;
}

/** What `sweep submit` stores: the configurations and the seeds each runs. */
export interface SweepSpec {
  configs: SweepConfig[];
  /** The seeds of configuration i: `seeds[i]`. */
  seeds: number[][];
  /**
   * `sweep submit --chunks`: configuration i's true Shapley value is computed by `chunks[i]` jobs
   * per seed, each a range of the retraining game's coalitions (src/sim/reference-chunks.ts);
   * 0 or absent: in the seed's own job.
   */
  chunks?: number[];
}

/** One job: configuration `configIndex` at `seed`, or chunk `chunk.index` of its reference table. Its key is unique within the sweep. */
export interface SweepJob {
  key: string;
  configIndex: number;
  seed: number;
  /** A chunk of the seed's reference table (of `chunk.of`); absent: the seed's run. */
  chunk?: { index: number; of: number };
}

/** Hex SHA-256 of a configuration's canonical JSON (sorted keys). */
export function configDigest(cfg: ExperimentConfig): string {
  return createHash('sha256').update(canonicalJson(cfg)).digest('hex');
}

/**
 * A label names a folder under `collect --out` (issue 32, Q1): 1–100 of `A-Z a-z 0-9 . _ -`, not
 * starting with a dot, so never `.`, `..`, a hidden name, a separator or a control character.
 */
const LABEL = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;

/**
 * Checks a label read back from anywhere (the queue database included) before it becomes a path.
 * @param field what the label is, for the message (`sweep <id>: configs[2].label`).
 * @throws RangeError naming `field` when the label is not one {@link labelsOf} could have made.
 */
export function checkLabel(label: unknown, field: string): string {
  if (typeof label !== 'string' || !LABEL.test(label))
    throw new RangeError(
      `${field}: expected 1 to 100 of A-Z a-z 0-9 . _ - not starting with a dot (a folder name under --out), got ${JSON.stringify(label)}`,
    );
  return label;
}

/**
 * `examples/paper003-table4.json` → `paper003-table4`; repeated names get `-2`, `-3`, … A name that
 * would not be a plain folder (`...json` → `..`, `.hidden.json`) loses its leading dots, and an
 * empty one becomes `config` (issue 32, Q1); every label passes {@link checkLabel}.
 */
export function labelsOf(paths: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return paths.map((p) => {
    const base = (p.split(/[\\/]/).pop() ?? p).replace(/\.json$/i, '');
    const clean =
      base
        .replace(/[^A-Za-z0-9._-]/g, '_')
        .replace(/^\.+/, '')
        .slice(0, 90) || 'config';
    const k = (seen.get(clean) ?? 0) + 1;
    seen.set(clean, k);
    return k === 1 ? clean : `${clean}-${k}`;
  });
}

/**
 * The seeds of a configuration as `experiment` counts them: `count` seeds (default: the
 * configuration's `seeds`, else 1) up from its `seed` (default 1).
 */
export function seedsOf(cfg: ExperimentConfig, count?: number): number[] {
  const k = count ?? cfg.seeds ?? 1;
  return Array.from({ length: k }, (_, i) => (cfg.seed ?? 1) + i);
}

/**
 * The sweep's id: `sw-` and 16 hex digits of SHA-256 over the configurations' digests, seeds and
 * chunks (a sweep without chunks hashes as before they existed).
 */
export function sweepId(spec: SweepSpec): string {
  const chunked = (spec.chunks ?? []).some((k) => k > 0);
  const h = createHash('sha256')
    .update(
      canonicalJson({
        configs: spec.configs.map((c) => c.digest),
        seeds: spec.seeds,
        ...(chunked ? { chunks: spec.chunks } : {}),
      }),
    )
    .digest('hex');
  return `sw-${h.slice(0, 16)}`;
}

/** The sweep's jobs, configuration by configuration, seeds in order, each seed's run before its chunks. */
export function jobsOf(spec: SweepSpec): SweepJob[] {
  return spec.configs.flatMap((c, i) =>
    (spec.seeds[i] ?? []).flatMap((seed) => {
      const key = `${i}:${c.digest.slice(0, 12)}:${seed}`;
      const of = spec.chunks?.[i] ?? 0;
      return [
        { key, configIndex: i, seed },
        ...Array.from({ length: of }, (_, index) => ({
          key: `${key}:sv${index + 1}/${of}`,
          configIndex: i,
          seed,
          chunk: { index, of },
        })),
      ];
    }),
  );
}

/**
 * The queue's id of a job: a UUID (version-8 layout) from SHA-256 of the sweep id and the job
 * key, so a resubmission names the job the queue already holds.
 */
export function queueJobId(sweep: string, key: string): string {
  const h = createHash('sha256').update(`fedscore/sweep-job/v1\n${sweep}\n${key}`).digest('hex');
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
