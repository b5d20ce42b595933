/**
 * A child process of a local sweep (local.ts): imports the plugins it is given, then runs the
 * seeds its parent sends, one at a time with one learner, and sends each seed's record back.
 * Messages in: `{ plugins }` first, then `{ cfg, seed, backend? }`, then `{ stop: true }`.
 * Messages out: `{ ok: true, seed, record }` or `{ ok: false, seed, error }`.
 */
import { pathToFileURL } from 'node:url';
import { dataShapeOf } from '../fl/consortium-data.js';
import { createLearner } from '../fl/learner/create-learner.js';
import type { Learner } from '../fl/learner/learner.js';
import { type ExperimentConfig, parseConfig } from '../records/config.js';
import { runSeedRecord } from '../sim/experiment.js';

type Message =
  | { plugins: string[] }
  | { cfg: ExperimentConfig; seed: number; backend?: string }
  | { stop: true };

let learner: Learner | undefined;
let queue = Promise.resolve();

async function handle(m: Message): Promise<void> {
  if ('plugins' in m) {
    for (const p of m.plugins) await import(pathToFileURL(p).href);
    return;
  }
  if ('stop' in m) {
    const l = learner;
    learner = undefined;
    await l?.close();
    if (process.connected) process.disconnect();
    return;
  }
  try {
    const cfg = parseConfig(m.cfg);
    learner ??= await createLearner({
      ...dataShapeOf(cfg),
      model: cfg.model,
      training: cfg.training ?? {},
      ...(m.backend ? { backend: m.backend } : {}),
    });
    const record = await runSeedRecord(cfg, m.seed, { learner });
    process.send?.({ ok: true, seed: m.seed, record });
  } catch (e) {
    process.send?.({
      ok: false,
      seed: m.seed,
      error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
    });
  }
}

process.on('message', (m: Message) => {
  queue = queue.then(() => handle(m));
});
