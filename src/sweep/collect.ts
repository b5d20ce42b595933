/**
 * `sweep collect`: each configuration whose jobs are all done becomes the same results.json and
 * reports that `experiment --seeds k` writes (src/engine/experiment.ts `assembleResults`), under
 * `<out>/<label>/`.
 */
import { join } from 'node:path';
import { assembleResults } from '../engine/experiment.js';
import { parseConfig } from '../records/config.js';
import type { ExperimentResults } from '../records/results.js';
import { writeOutputs } from '../reports/outputs.js';
import { jobsOf } from './spec.js';
import { SweepStore } from './store.js';

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
    for (const [i, c] of spec.configs.entries()) {
      const mine = jobs.filter((j) => j.configIndex === i);
      const records = mine.map((j) => results.get(j.key)?.record);
      const missing = records.filter((r) => r === undefined).length;
      if (missing > 0) {
        collected.incomplete.push({ label: c.label, missing });
        continue;
      }
      const cfg = parseConfig(c.config, c.path);
      // the wall time of a sweep is the sum of its jobs' run times (they ran on several machines)
      const seconds = rows.filter((r) => r.configIndex === i).reduce((s, r) => s + (r.seconds ?? 0), 0);
      const r = assembleResults(cfg, records as NonNullable<(typeof records)[number]>[], {
        fedscoreVersion: o.fedscoreVersion,
        wallTimeMs: seconds * 1000,
      });
      const dir = join(out, c.label);
      await writeOutputs(dir, r);
      collected.written.push({ label: c.label, dir, results: r });
    }
    return collected;
  } finally {
    await store.close();
  }
}
