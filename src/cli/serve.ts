/**
 * `fedscore serve --port N [--host H] [--db FILE]`: runs the scoring service.
 *
 * Storage: PostgreSQL when DATABASE_URL is set, else the SQLite file `--db` (default
 * ./fedscore.db). The operator's token comes from FEDSCORE_ADMIN_TOKEN (≥ 16 characters).
 * Logs are pino JSON lines on stdout with request ids. SIGINT/SIGTERM close the listener, let
 * in-flight requests finish, close the store and resolve with exit code 0.
 *
 * No evaluator is wired yet: after each round's sum the operator posts v(M) and v(M0) with
 * PUT /v1/consortia/:cid/rounds/:round/utilities (docs: /docs).
 */
import { parseArgs } from 'node:util';
import { buildApp } from '../server/app.js';
import { openStore, type StoreLocation } from '../server/store/database.js';

const USAGE = `Usage: fedscore serve --port N [--host H] [--db FILE]
  --port N     TCP port (0 = any free port)
  --host H     interface to listen on (default 127.0.0.1)
  --db FILE    SQLite file (default ./fedscore.db); ignored when DATABASE_URL is set
Environment: FEDSCORE_ADMIN_TOKEN (required, ≥ 16 characters), DATABASE_URL (PostgreSQL), FEDSCORE_LOG_LEVEL
`;

/** A usage error: the message is printed with the usage text, exit code 2. */
export class ServeUsageError extends Error {}

/** Parses the arguments of `fedscore serve`. @throws ServeUsageError naming the bad option. */
export function parseServeArgs(
  args: string[],
  env: Record<string, string | undefined>,
): { port: number; host: string; location: StoreLocation; adminToken: string; logLevel: string } {
  let values: { port?: string; host?: string; db?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: { port: { type: 'string' }, host: { type: 'string' }, db: { type: 'string' } },
      strict: true,
    }));
  } catch (e) {
    throw new ServeUsageError((e as Error).message);
  }
  if (values.port === undefined) throw new ServeUsageError('--port: required');
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535)
    throw new ServeUsageError(`--port: expected 0..65535, got '${values.port}'`);
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
  try {
    const store = await openStore(o.location);
    app = await buildApp({
      store,
      adminToken: o.adminToken,
      logger: { level: o.logLevel },
      closeStore: true,
    });
  } catch (e) {
    process.stderr.write(`fedscore serve: cannot start: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    await app.listen({ port: o.port, host: o.host });
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
