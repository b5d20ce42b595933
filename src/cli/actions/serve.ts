/**
 * `fedscore serve --port N [--host H] [--db FILE] [--config FILE [--seed S] [--backend B]]`:
 * runs the scoring service (flags: src/cli/commands/serve.ts).
 *
 * Storage: PostgreSQL when DATABASE_URL is set, else the SQLite file `--db` (default
 * ./fedscore.db). The operator's token comes from FEDSCORE_ADMIN_TOKEN (≥ 16 characters), the
 * dashboard's read-only token from FEDSCORE_VIEWER_TOKEN (optional).
 * Logs go to stdout: pino JSON lines, or plain lines on a terminal or with `--log-format pretty`
 * (../_log-format.ts); rounds at info level, requests at debug. SIGINT/SIGTERM close the listener, let
 * in-flight requests finish, close the store and resolve with exit code 0.
 *
 * With `--config` (an experiment configuration, src/records/config.ts) the service evaluates v(M) and
 * v(M0) itself on that configuration's common test set, with the engine's model code
 * (src/fl/networked.ts), for every consortium whose testSetDigest is that test set's. Without it
 * (or for other consortia) the operator posts the two utilities after each round's sum with
 * PUT /v1/consortia/:cid/rounds/:round/utilities (docs: /docs).
 *
 * Once listening it prints `fedscore serve: listening on <url>` on stderr (with --port 0, the
 * port the system chose).
 */

import type { Learner } from '../../fl/learner/learner.js';
import { networkedLearner, networkedRun, testSetEvaluator } from '../../fl/networked.js';
import { describeAdapter } from '../../ml/adapter.js';
import { buildApp } from '../../server/app.js';
import type { Evaluator } from '../../server/service/scoring-service.js';
import { openStore, type StoreLocation } from '../../server/store/database.js';
import { loadConfig } from '../_config.js';
import { UsageError } from '../_flags.js';
import { chooseLogFormat, type LogFormat, prettyLogStream } from '../_log-format.js';
import { acquireLock, type Lock } from './lock.js';

/** What `fedscore serve` takes: its flags and environment, checked (src/cli/commands/serve.ts). */
export interface ServeArgs {
  port: number;
  host: string;
  location: StoreLocation;
  adminToken: string;
  viewerToken?: string;
  timeouts?: { headersMs: number; requestMs: number };
  logLevel: string;
  /** Absent: pretty when stdout is a terminal, else json. */
  logFormat?: LogFormat;
  config?: string;
  seed?: number;
  backend?: string;
}

/**
 * Runs the service until SIGINT or SIGTERM.
 *
 * @returns the exit code: 0 after a graceful shutdown, 1 when the store cannot be opened or the
 *   port cannot be bound.
 */
export async function serveCommand(o: ServeArgs): Promise<number> {
  let app: Awaited<ReturnType<typeof buildApp>>;
  let learner: Learner | undefined;
  let lock: Lock | undefined;
  try {
    // One service per SQLite file (issue 34): a second one refuses at once, naming the holder.
    // PostgreSQL is not locked: replicas share one database by design.
    if ('sqlite' in o.location && o.location.sqlite !== ':memory:')
      lock = acquireLock(`${o.location.sqlite}.lock`, 'fedscore serve');
    let evaluate: Evaluator | undefined;
    if (o.config !== undefined) {
      const cfg = await loadConfig(o.config);
      const run = networkedRun(cfg, o.seed ?? cfg.seed ?? 1);
      learner = await networkedLearner(cfg, { ...(o.backend ? { backend: o.backend } : {}) });
      evaluate = testSetEvaluator(run, learner);
      process.stderr.write(
        `fedscore serve: evaluating on ${o.config} (seed ${run.seed}): ${run.data.test.n} test examples, digest ${run.testSetDigest}, ${learner.parameterCount} parameters, backend ${learner.backend}${learner.adapter ? ` on ${describeAdapter(learner.adapter)}` : ''}\n`,
      );
    }
    const store = await openStore(o.location);
    app = await buildApp({
      store,
      adminToken: o.adminToken,
      ...(o.viewerToken !== undefined ? { viewerToken: o.viewerToken } : {}),
      ...(o.timeouts !== undefined ? { timeouts: o.timeouts } : {}),
      logger: {
        level: o.logLevel,
        ...(chooseLogFormat(o.logFormat, process.stdout.isTTY === true) === 'pretty'
          ? { stream: prettyLogStream(process.stdout) }
          : {}),
      },
      closeStore: true,
      ...(evaluate ? { evaluate } : {}),
    });
    if (learner) {
      const l = learner;
      app.addHook('onClose', async () => l.close());
    }
    if (lock) {
      const held = lock;
      app.addHook('onClose', async () => held.release());
    }
  } catch (e) {
    await learner?.close();
    lock?.release();
    // An unreadable or invalid --config is the input's fault: the usage path (exit code 2).
    if (e instanceof UsageError || (e as Error).name === 'ConfigError') throw e;
    process.stderr.write(`fedscore serve: cannot start: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    const url = await app.listen({ port: o.port, host: o.host });
    process.stderr.write(`fedscore serve: listening on ${url}\n`);
  } catch (e) {
    process.stderr.write(`fedscore serve: cannot listen on ${o.host}:${o.port}: ${(e as Error).message}\n`);
    await app.close();
    lock?.release();
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
