/**
 * `fedscore serve --port N [--host H] [--db FILE] [--config FILE [--seed S] [--backend B]]`:
 * runs the scoring service.
 *
 * Storage: PostgreSQL when DATABASE_URL is set, else the SQLite file `--db` (default
 * ./fedscore.db). The operator's token comes from FEDSCORE_ADMIN_TOKEN (≥ 16 characters).
 * Logs are pino JSON lines on stdout with request ids. SIGINT/SIGTERM close the listener, let
 * in-flight requests finish, close the store and resolve with exit code 0.
 *
 * With `--config` (an experiment configuration, src/fl/config.ts) the service evaluates v(M) and
 * v(M0) itself on that configuration's common test set, with the engine's model code
 * (src/fl/networked.ts), for every consortium whose testSetDigest is that test set's. Without it
 * (or for other consortia) the operator posts the two utilities after each round's sum with
 * PUT /v1/consortia/:cid/rounds/:round/utilities (docs: /docs).
 *
 * Once listening it prints `fedscore serve: listening on <url>` on stderr (with --port 0, the
 * port the system chose).
 */
import { parseArgs } from 'node:util';
import type { Learner } from '../fl/learner.js';
import { networkedLearner, networkedRun, testSetEvaluator } from '../fl/networked.js';
import { buildApp } from '../server/app.js';
import type { Evaluator } from '../server/service.js';
import { openStore, type StoreLocation } from '../server/store/database.js';
import { loadConfig } from './_config.js';

const USAGE = `Usage: fedscore serve --port N [--host H] [--db FILE] [--config FILE [--seed S] [--backend B]]
  --port N        TCP port (0 = any free port)
  --host H        interface to listen on (default 127.0.0.1)
  --db FILE       SQLite file (default ./fedscore.db); ignored when DATABASE_URL is set
  --config FILE   evaluate v(M) and v(M0) on this experiment configuration's test set
  --seed S        the configuration's seed (default: its seed, else 1)
  --backend B     tensorflow | wasm | cpu for the evaluator (default FEDSCORE_BACKEND, then automatic)
Environment: FEDSCORE_ADMIN_TOKEN (required, ≥ 16 characters), DATABASE_URL (PostgreSQL), FEDSCORE_LOG_LEVEL
`;

/** A usage error: the message is printed with the usage text, exit code 2. */
export class ServeUsageError extends Error {}

/** Parses the arguments of `fedscore serve`. @throws ServeUsageError naming the bad option. */
export function parseServeArgs(
  args: string[],
  env: Record<string, string | undefined>,
): {
  port: number;
  host: string;
  location: StoreLocation;
  adminToken: string;
  logLevel: string;
  config?: string;
  seed?: number;
  backend?: string;
} {
  let values: { port?: string; host?: string; db?: string; config?: string; seed?: string; backend?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        db: { type: 'string' },
        config: { type: 'string' },
        seed: { type: 'string' },
        backend: { type: 'string' },
      },
      strict: true,
    }));
  } catch (e) {
    throw new ServeUsageError((e as Error).message);
  }
  if (values.port === undefined) throw new ServeUsageError('--port: required');
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535)
    throw new ServeUsageError(`--port: expected 0..65535, got '${values.port}'`);
  if (values.config === undefined && (values.seed !== undefined || values.backend !== undefined))
    throw new ServeUsageError(
      `--${values.seed !== undefined ? 'seed' : 'backend'}: applies only with --config`,
    );
  if (values.seed !== undefined && (!/^\d+$/.test(values.seed) || Number(values.seed) > 2 ** 31 - 1))
    throw new ServeUsageError(`--seed: expected an integer in [0, 2^31 − 1], got '${values.seed}'`);
  const adminToken = env.FEDSCORE_ADMIN_TOKEN;
  if (adminToken === undefined || adminToken.length < 16)
    throw new ServeUsageError('FEDSCORE_ADMIN_TOKEN: set it to a secret of at least 16 characters');
  const location: StoreLocation = env.DATABASE_URL
    ? { postgres: env.DATABASE_URL }
    : { sqlite: values.db ?? 'fedscore.db' };
  return {
    port,
    host: values.host ?? '127.0.0.1',
    location,
    adminToken,
    logLevel: env.FEDSCORE_LOG_LEVEL ?? 'info',
    ...(values.config !== undefined ? { config: values.config } : {}),
    ...(values.seed !== undefined ? { seed: Number(values.seed) } : {}),
    ...(values.backend !== undefined ? { backend: values.backend } : {}),
  };
}

/**
 * Runs the service until SIGINT or SIGTERM.
 *
 * @returns the exit code: 0 after a graceful shutdown, 2 on a usage error, 1 when the store
 *   cannot be opened or the port cannot be bound.
 */
export async function serveCommand(args: string[]): Promise<number> {
  let o: ReturnType<typeof parseServeArgs>;
  try {
    o = parseServeArgs(args, process.env);
  } catch (e) {
    if (!(e instanceof ServeUsageError)) throw e;
    process.stderr.write(`fedscore serve: ${e.message}\n${USAGE}`);
    return 2;
  }
  let app: Awaited<ReturnType<typeof buildApp>>;
  let learner: Learner | undefined;
  try {
    let evaluate: Evaluator | undefined;
    if (o.config !== undefined) {
      const cfg = await loadConfig(o.config);
      const run = networkedRun(cfg, o.seed ?? cfg.seed ?? 1);
      learner = await networkedLearner(cfg, { ...(o.backend ? { backend: o.backend } : {}) });
      evaluate = testSetEvaluator(run, learner);
      process.stderr.write(
        `fedscore serve: evaluating on ${o.config} (seed ${run.seed}): ${run.data.test.n} test examples, digest ${run.testSetDigest}, ${learner.parameterCount} parameters, backend ${learner.backend}\n`,
      );
    }
    const store = await openStore(o.location);
    app = await buildApp({
      store,
      adminToken: o.adminToken,
      logger: { level: o.logLevel },
      closeStore: true,
      ...(evaluate ? { evaluate } : {}),
    });
    if (learner) {
      const l = learner;
      app.addHook('onClose', async () => l.close());
    }
  } catch (e) {
    await learner?.close();
    process.stderr.write(`fedscore serve: cannot start: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    const url = await app.listen({ port: o.port, host: o.host });
    process.stderr.write(`fedscore serve: listening on ${url}\n`);
  } catch (e) {
    process.stderr.write(`fedscore serve: cannot listen on ${o.host}:${o.port}: ${(e as Error).message}\n`);
    await app.close();
    return 1;
  }
  return new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      app.log.info({ signal }, 'shutting down');
      app.close().then(
        () => resolve(0),
        (e: unknown) => {
          process.stderr.write(`fedscore serve: shutdown failed: ${(e as Error).message}\n`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
