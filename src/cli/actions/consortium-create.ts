/**
 * `fedscore consortium create --id ID --config FILE --keys FILE --out FILE [--server URL]
 * [--examples N,N,…] [--test-set-out DIR] [--seed S] [--backend B]`: writes the consortium file
 * every silo pins (src/consortium/consortium-file.ts) from the experiment configuration and the silos'
 * public keys, prints its digest, and — with `--server` — registers the consortium with the
 * service and uploads its initial model (FEDSCORE_ADMIN_TOKEN).
 *
 * `--examples` gives the silos' example counts when they bring their own data (the weights'
 * public scale); `--test-set-out` writes the common test set as x.npy / y.npy (float32, int32)
 * for the silos' `--test-data`.
 */
import { writeFileSync } from 'node:fs';
import { consortiumFileDigest } from '../../consortium/consortium-file.js';
import type { ErrorCode } from '../../consortium/error-codes.js';
import { writeNpyDataset } from '../../data/write-local-data.js';
import { consortiumBodyOf, consortiumFileOf } from '../../fl/consortium-of-run.js';
import { initialModel, networkedLearner, networkedRun } from '../../fl/networked.js';
import { loadConfig } from '../_config.js';
import { UsageError } from '../_flags.js';
import { readPublicKeys } from './consortium.js';
import { reach, refusalSentence, ServiceRefused } from './service-errors.js';

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
  /** A reports-only consortium (`secureAggregation: "external"`): no schedule, no model. */
  external?: boolean;
}

/**
 * Creates consortium `body.id` on the service and uploads its initial model `m0` (none for a
 * reports-only consortium).
 * @throws ServiceRefused with one sentence naming the refusal and its code.
 */
async function registerConsortium(
  server: string,
  adminToken: string,
  body: { id: string },
  m0: Float32Array | undefined,
): Promise<void> {
  const headers = { authorization: `Bearer ${adminToken}` };
  const created = await reach(server, `${server}/v1/consortia`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (created.status !== 201)
    throw new ServiceRefused(
      `${refusalSentence({ server, consortium: body.id, what: `consortium '${body.id}'`, status: created.status, text: await created.text() })}: nothing was written`,
    );
  if (m0 === undefined) return;
  const model = await reach(server, `${server}/v1/consortia/${body.id}/model`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(m0.buffer, m0.byteOffset, m0.byteLength),
  });
  if (model.status !== 204)
    throw new ServiceRefused(
      `${refusalSentence({ server, consortium: body.id, what: `the initial model of '${body.id}'`, status: model.status, text: await model.text() })}: the consortium was created without its model, nothing was written`,
    );
}

/**
 * Checks with the service that consortium `id` can be created: the service answers, accepts the
 * admin token, and has no consortium of that id.
 * @throws ServiceRefused with one sentence.
 */
const CONSORTIUM_NOT_FOUND: ErrorCode = 'FEDSCORE_ERR_CONSORTIUM_NOT_FOUND';

async function checkService(server: string, adminToken: string, id: string): Promise<void> {
  const r = await reach(server, `${server}/v1/consortia/${id}`, {
    headers: { authorization: `Bearer ${adminToken}` },
  });
  const text = await r.text();
  if (r.status === 200)
    throw new ServiceRefused(`the consortium '${id}' already exists on ${server}: nothing was written`);
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { code?: string }).code;
  } catch {}
  if (r.status === 404 && code === CONSORTIUM_NOT_FOUND) return;
  throw new ServiceRefused(
    `${refusalSentence({ server, consortium: id, what: `reading consortium '${id}'`, status: r.status, text })}: nothing was written`,
  );
}

/**
 * Runs `fedscore consortium create`. With --server it is atomic: it checks with the service first
 * (reachable, token accepted, the id free), registers, and writes the files only once the service
 * has accepted the consortium (and its initial model); a refusal is one sentence and writes nothing.
 * @returns the exit code.
 */
export async function consortiumCreateCommand(o: ConsortiumCreateArgs): Promise<number> {
  const cfg = await loadConfig(o.config);
  const keys = await readPublicKeys(o.keys);
  if (keys.length !== cfg.silos)
    throw new UsageError(`--keys: ${keys.length} public keys, the configuration has ${cfg.silos} silos`);
  if (o.examples !== undefined && o.examples.length !== cfg.silos)
    throw new UsageError(`--examples: ${o.examples.length} counts, the configuration has ${cfg.silos} silos`);
  if (o.server !== undefined) await checkService(o.server, o.adminToken!, o.id);
  const run = networkedRun(cfg, o.seed ?? cfg.seed ?? 1);
  const learner = await networkedLearner(cfg, { ...(o.backend ? { backend: o.backend } : {}) });
  try {
    const file = consortiumFileOf(run, o.id, keys, learner, o.examples ? { examples: o.examples } : {});
    const digest = consortiumFileDigest(file);
    if (o.server !== undefined) {
      const body = o.external
        ? externalBody(consortiumBodyOf(file, undefined, { schedule: false }))
        : consortiumBodyOf(file);
      await registerConsortium(
        o.server,
        o.adminToken!,
        body,
        o.external ? undefined : initialModel(run, learner),
      );
    }
    writeFileSync(o.out, `${JSON.stringify(file, null, 2)}\n`);
    if (o.testSetOut !== undefined) writeNpyDataset(o.testSetOut, run.data.test);
    process.stdout.write(
      `consortium file ${o.out}: ${file.participants.length} silos, t = ${file.threshold}, d = ${file.parameters}, test set ${file.testSetDigest}\n` +
        (o.testSetOut !== undefined
          ? `common test set: ${o.testSetOut}/x.npy, ${o.testSetOut}/y.npy\n`
          : '') +
        `digest ${digest}\n`,
    );
    if (o.server !== undefined)
      process.stdout.write(
        o.external
          ? `reports-only consortium ${o.id} registered at ${o.server}: post each round's v(M) and v(M0) to POST /v1/consortia/${o.id}/rounds/:round/utilities\n`
          : `consortium ${o.id} registered at ${o.server}; initial model uploaded\n`,
      );
    return 0;
  } finally {
    await learner.close();
  }
}

/** A reports-only consortium's creation body: no schedule, strategy or seed (the service refuses them). */
function externalBody(body: ReturnType<typeof consortiumBodyOf>) {
  const {
    strategy: _s,
    seed: _seed,
    rounds: _r,
    ...rest
  } = body as ReturnType<typeof consortiumBodyOf> & {
    rounds?: number;
  };
  return { ...rest, secureAggregation: 'external' as const };
}
