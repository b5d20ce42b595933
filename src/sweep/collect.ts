/**
 * `sweep collect`: each configuration whose jobs are all done becomes the same results.json and
 * reports that `experiment --seeds k` writes (src/sim/experiment.ts `assembleResults`), under
 * `<out>/<label>/`. A seed whose true Shapley value was computed in chunks gets it here, from the
 * chunks' table put back together (src/sim/reference-chunks.ts).
 */
import { isAbsolute, relative, resolve } from 'node:path';
import { parseConfig } from '../records/config.js';
import type { ExperimentResults } from '../records/results.js';
import { writeOutputs } from '../report/outputs.js';
import { assembleResults, type SeedRecord, withTrueShapley } from '../sim/experiment.js';
import { combineChunks, type ReferenceChunk } from '../sim/reference-chunks.js';
import { retrainingShapleyOf } from '../sim/retraining-game.js';
import { checkLabel, jobsOf, type SweepJob } from './spec.js';
import { type JobResult, SweepStore } from './store.js';

export interface Collected {
  /** Written configurations: their label, directory and results. */
  written: { label: string; dir: string; results: ExperimentResults }[];
  /** Configurations not written, with how many of their jobs are not done. */
  incomplete: { label: string; missing: number }[];
}

/** Collects sweep `id` into `out`. @throws SweepNotFound naming `--id`. */
export async function collectSweep(
  url: string,
  id: string,
  out: string,
  o: { fedscoreVersion: string },
): Promise<Collected> {
  const store = await SweepStore.open(url);
  try {
    const spec = await store.spec(id);
    const results = await store.results(id);
    const rows = await store.jobs(id);
    const collected: Collected = { written: [], incomplete: [] };
    const jobs = jobsOf(spec);
    // Issue 32, Q1: the labels come back from the queue database; each must name a folder inside
    // --out, checked for every configuration before anything is written.
    const dirs = spec.configs.map((c, i) => labelFolder(out, c.label, `sweep ${id}: configs[${i}].label`));
    for (const [i, c] of spec.configs.entries()) {
      const mine = jobs.filter((j) => j.configIndex === i);
      const missing = mine.filter((j) => !results.has(j.key)).length;
      if (missing > 0) {
        collected.incomplete.push({ label: c.label, missing });
        continue;
      }
      const cfg = parseConfig(c.config, c.path);
      const records = mine.filter((j) => j.chunk === undefined).map((j) => withChunks(cfg, j, mine, results));
      // the wall time of a sweep is the sum of its jobs' run times (they ran on several machines)
      const seconds = rows.filter((r) => r.configIndex === i).reduce((s, r) => s + (r.seconds ?? 0), 0);
      const r = assembleResults(cfg, records, {
        fedscoreVersion: o.fedscoreVersion,
        wallTimeMs: seconds * 1000,
      });
      const dir = dirs[i]!;
      await writeOutputs(dir, r);
      collected.written.push({ label: c.label, dir, results: r });
    }
    return collected;
  } finally {
    await store.close();
  }
}

/**
 * The folder of configuration label `label` under `out`: the label checked ({@link checkLabel}),
 * then the resolved folder checked to lie strictly inside `out`.
 * @throws RangeError naming `field` otherwise.
 */
export function labelFolder(out: string, label: unknown, field: string): string {
  const root = resolve(out);
  const dir = resolve(root, checkLabel(label, field));
  const rel = relative(root, dir);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
    throw new RangeError(`${field}: ${JSON.stringify(label)} resolves to ${dir}, outside --out ${root}`);
  return dir;
}

/**
 * The record of seed job `job` (done), with its true Shapley value from the seed's chunk jobs (done)
 * when there are any: the chunks' table, as one run computes it, then papers/003 Eq. 1 on it.
 * @throws Error when a chunk ran on other data than the seed's job (data digests differ).
 */
function withChunks(
  cfg: ReturnType<typeof parseConfig>,
  job: SweepJob,
  jobs: readonly SweepJob[],
  results: ReadonlyMap<string, JobResult>,
): SeedRecord {
  const own = results.get(job.key);
  if (!own?.record) throw new Error(`job ${job.key}: its result holds no seed record`);
  const chunks: ReferenceChunk[] = [];
  for (const j of jobs)
    if (j.chunk !== undefined && j.seed === job.seed) {
      const r = results.get(j.key);
      if (!r?.chunk) throw new Error(`job ${j.key}: its result holds no reference chunk`);
      if (r.dataDigest !== own.dataDigest)
        throw new Error(
          `job ${j.key}: ran on data ${r.dataDigest.slice(0, 12)}…, the seed's run on ${own.dataDigest.slice(0, 12)}…; not combined`,
        );
      chunks.push(r.chunk);
    }
  if (chunks.length === 0) return own.record;
  const sv = retrainingShapleyOf(cfg, combineChunks(cfg.silos, chunks));
  return { ...own.record, run: withTrueShapley(own.record.run, sv) };
}
