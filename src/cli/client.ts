/**
 * `fedscore client --server URL --consortium ID --silo N --key FILE --config FILE [options]`:
 * one silo of a networked consortium (src/client/silo.ts). Progress lines go to stderr, one per
 * step; the exit code is 0 when every round ended (reported, or a dropout the protocol handled),
 * 2 on a usage error, 1 when the silo could not take part (wrong key or test set, service
 * unreachable, a refused request).
 */
import { parseArgs } from 'node:util';
import { SiloHttp } from '../client/http.js';
import { runSilo } from '../client/silo.js';
import { networkedLearner, networkedRun } from '../fl/networked.js';
import { integerFlag, loadConfig, readFlagFile, UsageError } from './_config.js';

export const CLIENT_USAGE = `Usage: fedscore client --server URL --consortium ID --silo N --key FILE --config FILE [options]
  --server URL        the scoring service, e.g. http://127.0.0.1:8080
  --consortium ID     the consortium id
  --silo N            this silo's id (its index in the consortium's participants)
  --key FILE          this silo's Ed25519 secret key: 64 hex digits (fedscore keygen writes one)
  --config FILE       the experiment configuration the consortium runs (data, model, training)
  --seed S            the run's seed (default: the configuration's seed, else 1)
  --first-round R     first round to take part in (default 1)
  --last-round R      last round to take part in (default: the configuration's rounds)
  --backend NAME      tensorflow | wasm | cpu (default FEDSCORE_BACKEND, then automatic)
  --timeout SECONDS   give up waiting for the server after this long (default 3600)
  --quiet             no progress lines
`;

/** Parsed options of `fedscore client`. */
export interface ClientArgs {
  server: string;
  consortium: string;
  silo: number;
  key: string;
  config: string;
  seed?: number;
  firstRound: number;
  lastRound?: number;
  backend?: string;
  timeoutMs: number;
  quiet: boolean;
}

/** Parses the arguments of `fedscore client`. @throws UsageError naming the bad flag. */
export function parseClientArgs(args: string[]): ClientArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        server: { type: 'string' },
        consortium: { type: 'string' },
        silo: { type: 'string' },
        key: { type: 'string' },
        config: { type: 'string' },
        seed: { type: 'string' },
        'first-round': { type: 'string' },
        'last-round': { type: 'string' },
        backend: { type: 'string' },
        timeout: { type: 'string' },
        quiet: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const str = (k: string) => values[k] as string | undefined;
  for (const k of ['server', 'consortium', 'silo', 'key', 'config'])
    if (str(k) === undefined) throw new UsageError(`--${k}: required`);
  const server = str('server')!;
  let url: URL | undefined;
  try {
    url = new URL(server);
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new UsageError(`--server: expected an http(s) URL, got '${server}'`);
  const consortium = str('consortium')!;
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(consortium))
    throw new UsageError(`--consortium: expected lower-case letters, digits and dashes, got '${consortium}'`);
  const firstRound = integerFlag('first-round', str('first-round'), 1, 0xffffffff) ?? 1;
  const lastRound = integerFlag('last-round', str('last-round'), 1, 0xffffffff);
  if (lastRound !== undefined && lastRound < firstRound)
    throw new UsageError(`--last-round: ${lastRound} is before --first-round ${firstRound}`);
  const seed = integerFlag('seed', str('seed'), 0, 2 ** 31 - 1);
  const timeout = integerFlag('timeout', str('timeout'), 1, 7 * 24 * 3600) ?? 3600;
  const backend = str('backend');
  return {
    server,
    consortium,
    silo: integerFlag('silo', str('silo'), 0, 254)!,
    key: str('key')!,
    config: str('config')!,
    ...(seed !== undefined ? { seed } : {}),
    firstRound,
    ...(lastRound !== undefined ? { lastRound } : {}),
    ...(backend !== undefined ? { backend } : {}),
    timeoutMs: timeout * 1000,
    quiet: values.quiet === true,
  };
}

/**
 * Reads a silo's secret key file: 64 hex digits (surrounding whitespace allowed).
 * @throws UsageError naming --key.
 */
export async function readKeyFile(path: string): Promise<Uint8Array> {
  const text = await readFlagFile('key', path);
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex))
    throw new UsageError(`--key: ${path} must hold a 32-byte Ed25519 secret key as 64 hex digits`);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** Runs `fedscore client`. @returns the exit code. */
export async function clientCommand(args: string[]): Promise<number> {
  const o = parseClientArgs(args);
  const log = (line: string) => {
    if (!o.quiet) process.stderr.write(`${line}\n`);
  };
  const secretKey = await readKeyFile(o.key);
  const cfg = await loadConfig(o.config);
  if (o.silo >= cfg.silos)
    throw new UsageError(`--silo: ${o.silo} is not a silo of the configuration (silos: ${cfg.silos})`);
  const lastRound = o.lastRound ?? cfg.rounds;
  if (lastRound < o.firstRound)
    throw new UsageError(`--first-round: ${o.firstRound} is after the last round ${lastRound}`);
  const run = networkedRun(cfg, o.seed ?? cfg.seed ?? 1);
  const learner = await networkedLearner(cfg, { ...(o.backend ? { backend: o.backend } : {}) });
  log(
    `fedscore client: silo ${o.silo} of ${o.consortium} at ${o.server}; ${run.data.silos[o.silo]!.n} local examples; backend ${learner.backend}; rounds ${o.firstRound}..${lastRound}`,
  );
  const http = new SiloHttp({
    server: o.server,
    consortium: o.consortium,
    silo: o.silo,
    secretKey,
    onRetry: (request, attempt, reason) =>
      log(`silo ${o.silo}: retrying ${request} (attempt ${attempt}: ${reason})`),
  });
  try {
    const outcomes = await runSilo({
      http,
      run,
      learner,
      secretKey,
      firstRound: o.firstRound,
      lastRound,
      log,
      waitTimeoutMs: o.timeoutMs,
    });
    const reported = outcomes.filter((x) => x.status === 'reported').length;
    log(`fedscore client: silo ${o.silo} done; reported in ${reported} of ${outcomes.length} round(s)`);
    return 0;
  } catch (e) {
    const name = (e as Error).name;
    if (['SiloSetupError', 'ServiceResponseError', 'UnreachableError'].includes(name)) {
      process.stderr.write(`fedscore client: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  } finally {
    await learner.close();
  }
}
