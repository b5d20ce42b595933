/**
 * `fedscore consortium --server URL --id ID --config FILE --keys FILE [--seed S] [--backend B]`:
 * the operator's set-up of a networked run of an experiment configuration (src/fl/networked.ts).
 * Creates the consortium with the engine's settings (threshold, model size, the test set's
 * digest, clip, weight range, convention; default deadlines) and uploads the engine's initial
 * model. `--keys` lists the silos' Ed25519 public keys, one hex key per line, silo id = line.
 * The admin token comes from FEDSCORE_ADMIN_TOKEN. Rounds are then opened with `fedscore rounds
 * open` (POST /v1/consortia/:cid/rounds).
 */
import { inertText } from '../../consortium/inert-text.js';
import { consortiumInput, initialModel, networkedLearner, networkedRun } from '../../fl/networked.js';
import { loadConfig } from '../_config.js';
import { readFlagFile, UsageError } from '../_flags.js';

/** What `fedscore consortium` takes: its flags and environment, checked (src/cli/commands/consortium.ts). */
export interface ConsortiumArgs {
  /** The service's URL without a trailing slash. */
  server: string;
  id: string;
  config: string;
  keys: string;
  seed?: number;
  backend?: string;
  adminToken: string;
}

/** Reads a public-key list: one 64-hex-digit key per non-empty line. @throws UsageError naming --keys. */
export async function readPublicKeys(path: string): Promise<string[]> {
  const text = await readFlagFile('keys', path);
  const keys = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  keys.forEach((k, i) => {
    if (!/^[0-9a-fA-F]{64}$/.test(k))
      throw new UsageError(`--keys: line ${i + 1} of ${path} is not a 64-hex-digit Ed25519 public key`);
  });
  return keys.map((k) => k.toLowerCase());
}

/**
 * Creates consortium `body.id` on the service and uploads its initial model `m0` (admin token).
 * @returns false after printing the service's refusal (`fedscore <command>: …`).
 */
export async function registerConsortium(
  server: string,
  adminToken: string,
  body: { id: string },
  m0: Float32Array,
  command: string,
): Promise<boolean> {
  const headers = { authorization: `Bearer ${adminToken}` };
  const created = await fetch(`${server}/v1/consortia`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (created.status !== 201) {
    process.stderr.write(
      `fedscore ${command}: POST /v1/consortia: HTTP ${created.status} ${inertText(await created.text())}\n`,
    );
    return false;
  }
  const model = await fetch(`${server}/v1/consortia/${body.id}/model`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(m0.buffer, m0.byteOffset, m0.byteLength),
  });
  if (model.status !== 204) {
    process.stderr.write(
      `fedscore ${command}: PUT model: HTTP ${model.status} ${inertText(await model.text())}\n`,
    );
    return false;
  }
  return true;
}

/** Runs `fedscore consortium`. @returns the exit code. */
export async function consortiumCommand(o: ConsortiumArgs): Promise<number> {
  const cfg = await loadConfig(o.config);
  const keys = await readPublicKeys(o.keys);
  if (keys.length !== cfg.silos)
    throw new UsageError(`--keys: ${keys.length} public keys, the configuration has ${cfg.silos} silos`);
  const run = networkedRun(cfg, o.seed ?? cfg.seed ?? 1);
  const learner = await networkedLearner(cfg, { ...(o.backend ? { backend: o.backend } : {}) });
  try {
    const body = consortiumInput(run, o.id, keys, learner.parameterCount);
    const ok = await registerConsortium(
      o.server,
      o.adminToken,
      body,
      initialModel(run, learner),
      'consortium',
    );
    if (!ok) return 1;
    process.stdout.write(
      `consortium ${o.id}: ${keys.length} silos, threshold ${body.threshold}, ${learner.parameterCount} parameters, test set ${run.testSetDigest}; initial model uploaded\n`,
    );
    return 0;
  } finally {
    await learner.close();
  }
}
