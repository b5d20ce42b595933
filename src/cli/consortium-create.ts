/**
 * `fedscore consortium create --id ID --config FILE --keys FILE --out FILE [--server URL]
 * [--examples N,N,…] [--test-set-out DIR] [--seed S] [--backend B]`: writes the consortium file
 * every silo pins (src/fl/consortium-file.ts) from the experiment configuration and the silos'
 * public keys, prints its digest, and — with `--server` — registers the consortium with the
 * service and uploads its initial model (FEDSCORE_ADMIN_TOKEN).
 *
 * `--examples` gives the silos' example counts when they bring their own data (the weights'
 * public scale); `--test-set-out` writes the common test set as x.npy / y.npy (float32, int32)
 * for the silos' `--test-data`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Dataset } from '../data/dataset.js';
import { encodeNpy } from '../data/npy.js';
import { consortiumFileDigest } from '../fl/consortium-file.js';
import { consortiumBodyOf, consortiumFileOf } from '../fl/consortium-of-run.js';
import { initialModel, networkedLearner, networkedRun } from '../fl/networked.js';
import { loadConfig } from './_config.js';
import { UsageError } from './_flags.js';
import { readPublicKeys, registerConsortium } from './consortium.js';

/** What `fedscore consortium create` takes (src/cli/commands/consortium.ts). */
export interface ConsortiumCreateArgs {
  id: string;
  config: string;
  keys: string;
  out: string;
  /** The service's URL without a trailing slash; absent: only write the file. */
  server?: string;
  adminToken?: string;
  examples?: number[];
  testSetOut?: string;
  seed?: number;
  backend?: string;
}

/** Writes `ds` as `dir`/x.npy (float32 [n, h, w, c]) and `dir`/y.npy (int32 [n]). */
export function writeNpyDataset(dir: string, ds: Dataset): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'x.npy'), encodeNpy(Float32Array.from(ds.x), [ds.n, ...ds.shape]));
  writeFileSync(join(dir, 'y.npy'), encodeNpy(Int32Array.from(ds.y), [ds.n]));
}

/** Runs `fedscore consortium create`. @returns the exit code. */
export async function consortiumCreateCommand(o: ConsortiumCreateArgs): Promise<number> {
  const cfg = await loadConfig(o.config);
  const keys = await readPublicKeys(o.keys);
  if (keys.length !== cfg.silos)
    throw new UsageError(`--keys: ${keys.length} public keys, the configuration has ${cfg.silos} silos`);
  if (o.examples !== undefined && o.examples.length !== cfg.silos)
    throw new UsageError(`--examples: ${o.examples.length} counts, the configuration has ${cfg.silos} silos`);
  const run = networkedRun(cfg, o.seed ?? cfg.seed ?? 1);
  const learner = await networkedLearner(cfg, { ...(o.backend ? { backend: o.backend } : {}) });
  try {
    const file = consortiumFileOf(run, o.id, keys, learner, o.examples ? { examples: o.examples } : {});
    const digest = consortiumFileDigest(file);
    writeFileSync(o.out, `${JSON.stringify(file, null, 2)}\n`);
    if (o.testSetOut !== undefined) writeNpyDataset(o.testSetOut, run.data.test);
    process.stdout.write(
      `consortium file ${o.out}: ${file.participants.length} silos, t = ${file.threshold}, d = ${file.parameters}, test set ${file.testSetDigest}\n` +
        (o.testSetOut !== undefined
          ? `common test set: ${o.testSetOut}/x.npy, ${o.testSetOut}/y.npy\n`
          : '') +
        `digest ${digest}\n`,
    );
    if (o.server === undefined) return 0;
    const ok = await registerConsortium(
      o.server,
      o.adminToken!,
      consortiumBodyOf(file),
      initialModel(run, learner),
      'consortium create',
    );
    if (!ok) return 1;
    process.stdout.write(`consortium ${o.id} registered at ${o.server}; initial model uploaded\n`);
    return 0;
  } finally {
    await learner.close();
  }
}
