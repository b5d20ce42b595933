/**
 * `fedscore client --server URL --consortium ID --silo N --key FILE --config FILE [options]`:
 * one silo of a networked consortium (src/client/silo.ts; flags: src/cli/commands/client.ts).
 * Progress lines go to stderr, one per step; the exit code is 0 when every round ended
 * (reported, or a dropout the protocol handled), 2 on a usage error, 1 when the silo could not
 * take part (wrong key or test set, service unreachable, a refused request).
 */
import { SiloHttp } from '../client/http.js';
import { runSilo } from '../client/silo.js';
import { networkedLearner, networkedRun } from '../fl/networked.js';
import { loadConfig } from './_config.js';
import { readFlagFile, UsageError } from './_flags.js';

/** What `fedscore client` takes: its flags, checked (src/cli/commands/client.ts). */
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
export async function clientCommand(o: ClientArgs): Promise<number> {
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
