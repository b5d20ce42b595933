/**
 * `fedscore client --server URL --consortium ID --silo N --key FILE --config FILE [options]`:
 * one silo of a networked consortium (src/client/silo.ts; flags: src/cli/commands/client.ts).
 * Progress lines go to stderr, one per step; the exit code is 0 when every round ended
 * (reported, or a dropout the protocol handled), 2 on a usage error, 1 when the silo could not
 * take part (wrong key or test set, service unreachable, a refused request).
 */
import { SiloHttp } from '../../client/http.js';
import { journalPathOf, SiloJournal } from '../../client/journal.js';
import { runSilo } from '../../client/silo.js';
import { type ConsortiumFile, readConsortiumFile } from '../../consortium/consortium-file.js';
import { inertText } from '../../consortium/inert-text.js';
import { DATA_FORMAT_NAMES } from '../../data/formats/registry.js';
import { checkLocalAgainstFile } from '../../fl/consortium-of-run.js';
import { withTrainerCommand } from '../../fl/learner/create-learner.js';
import { type NetworkedRun, networkedLearner, networkedRun } from '../../fl/networked.js';
import { checkLocalStrategy, localNetworkedRun, pinnedWeights, readSiloData } from '../../fl/own-data.js';
import { describeAdapter } from '../../ml/adapter.js';
import { LAYERS_MODEL } from '../../ml/model-registry.js';
import type { ExperimentConfig } from '../../records/config.js';
import { canonicalJson } from '../../schema/canonical-json.js';
import { DEFAULT_STRATEGY } from '../../strategies/registry.js';
import { loadConfig } from '../_config.js';
import { readFlagFile, UsageError } from '../_flags.js';

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
  consortiumFile?: string;
  consortiumDigest?: string;
  insecureUnpinned: boolean;
  /** `--deterministic-training`: the engine's training seeds instead of fresh randomness. */
  deterministicTraining: boolean;
  data?: string;
  dataFormat?: string;
  testData?: string;
  model?: string;
  trainer?: string;
}

/** Errors whose message says what went wrong: printed as one line, exit code 1. */
const SILO_ERRORS = [
  'SiloSetupError',
  'ServiceResponseError',
  'UnreachableError',
  'ConsortiumFileError',
  'ConsortiumMismatchError',
  'LocalDataError',
  'JournalError',
  'ReplayRefusedError',
  'ModelChainError',
  'TrainerProtocolError',
  'TrainerError',
];

/** The configuration with `--model`'s Layers model (and the pinned digests, checked on loading). */
function withModel(
  cfg: ExperimentConfig,
  model: string | undefined,
  pinned?: ConsortiumFile,
): ExperimentConfig {
  if (model === undefined) return cfg;
  return {
    ...cfg,
    model: {
      kind: LAYERS_MODEL.kind,
      path: model,
      ...(pinned
        ? { topologyDigest: pinned.model.topologyDigest, weightsDigest: pinned.model.initialWeightsDigest }
        : {}),
    },
  };
}

/**
 * The configuration with the pinned file's strategy: the silo replays the strategy the consortium
 * agreed to (and the service selects by), whatever its local configuration says.
 */
function withPinnedStrategy(cfg: ExperimentConfig, pinned?: ConsortiumFile): ExperimentConfig {
  if (pinned === undefined) return cfg;
  const { name, ...parameters } = (cfg.strategy ?? DEFAULT_STRATEGY) as { name: string } & Record<
    string,
    unknown
  >;
  if (canonicalJson({ name, parameters }) === canonicalJson(pinned.strategy)) return cfg;
  return {
    ...cfg,
    strategy: { ...pinned.strategy.parameters, name: pinned.strategy.name } as ExperimentConfig['strategy'],
  };
}

/** The silo's run: its own data files (`--data`), or its partition of the configuration's data. */
async function siloRun(
  o: ClientArgs,
  cfg: ExperimentConfig,
  seed: number,
  pinned?: ConsortiumFile,
): Promise<NetworkedRun> {
  if (o.data === undefined) {
    const run = networkedRun(cfg, seed);
    return pinned ? pinnedWeights(run, pinned) : run;
  }
  const shape = {
    inputShape: pinned!.data.inputShape,
    numClasses: pinned!.data.numClasses,
    ...(o.dataFormat ? { format: o.dataFormat } : {}),
  };
  const train = await readSiloData('--data', o.data, shape);
  const test = await readSiloData('--test-data', o.testData!, shape);
  const run = localNetworkedRun(cfg, seed, { silo: o.silo, train, test, file: pinned! });
  await checkLocalStrategy(run, o.silo);
  return run;
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
  // The format registry's names (the flag declaration loads no registry, so it is checked here first).
  if (o.dataFormat !== undefined && !DATA_FORMAT_NAMES.includes(o.dataFormat))
    throw new UsageError(
      `--data-format: expected one of ${DATA_FORMAT_NAMES.join(', ')}, got '${o.dataFormat}'`,
    );
  // Issue 32, T1: every line may quote the server (a stage, a message): inert before stderr.
  const log = (line: string) => {
    if (!o.quiet) process.stderr.write(`${inertText(line)}\n`);
  };
  const secretKey = await readKeyFile(o.key);
  let pinned: ConsortiumFile | undefined;
  try {
    pinned = o.consortiumFile ? readConsortiumFile(o.consortiumFile, o.consortiumDigest).file : undefined;
    if (pinned && pinned.id !== o.consortium)
      throw new UsageError(`--consortium: '${o.consortium}' is not the consortium file's id '${pinned.id}'`);
  } catch (e) {
    if ((e as Error).name !== 'ConsortiumFileError') throw e;
    process.stderr.write(`fedscore client: ${inertText((e as Error).message)}\n`);
    return 1;
  }
  if (!pinned)
    process.stderr.write(
      "fedscore client: WARNING: --insecure-unpinned: taking the roster and threshold from the server; a malicious server can unmask this silo's input\n",
    );
  const loaded = withModel(await loadConfig(o.config), o.model, pinned);
  // `--trainer`: the silo's own trainer process trains and evaluates (docs/trainer.md).
  const model = withTrainerCommand(
    loaded.model,
    o.trainer,
    pinned && {
      topologyDigest: pinned.model.topologyDigest,
      weightsDigest: pinned.model.initialWeightsDigest,
    },
  );
  const cfg = withPinnedStrategy({ ...loaded, ...(model ? { model } : {}) } as ExperimentConfig, pinned);
  if (pinned && o.seed !== undefined && o.seed !== pinned.seed)
    throw new UsageError(
      `--seed: ${o.seed} is not the consortium file's seed ${pinned.seed} (the strategy's selection and weights replay it)`,
    );
  if (o.silo >= cfg.silos)
    throw new UsageError(`--silo: ${o.silo} is not a silo of the configuration (silos: ${cfg.silos})`);
  const lastRound = o.lastRound ?? pinned?.rounds ?? cfg.rounds;
  if (lastRound < o.firstRound)
    throw new UsageError(`--first-round: ${o.firstRound} is after the last round ${lastRound}`);
  let run: NetworkedRun;
  try {
    run = await siloRun(o, cfg, pinned?.seed ?? o.seed ?? cfg.seed ?? 1, pinned);
  } catch (e) {
    if (!SILO_ERRORS.includes((e as Error).name)) throw e;
    process.stderr.write(`fedscore client: ${inertText((e as Error).message)}\n`);
    return 1;
  }
  let journal: SiloJournal;
  try {
    // Beside the key, kept across restarts (issue 32, R1): what this silo masked and unmasked.
    journal = SiloJournal.open(journalPathOf(o.key));
  } catch (e) {
    if ((e as Error).name !== 'JournalError') throw e;
    process.stderr.write(`fedscore client: ${(e as Error).message}\n`);
    return 1;
  }
  const learner = await networkedLearner(cfg, { ...(o.backend ? { backend: o.backend } : {}) });
  try {
    if (pinned) checkLocalAgainstFile(pinned, run, learner, o.silo);
    log(
      `fedscore client: silo ${o.silo} of ${o.consortium} at ${o.server}; ${run.data.silos[o.silo]!.n} local examples${o.data ? ` from ${o.data}` : ''}; backend ${learner.backend}${learner.adapter ? ` on ${describeAdapter(learner.adapter)}` : ''}; rounds ${o.firstRound}..${lastRound}${pinned ? `; pinned consortium file ${o.consortiumFile}` : ''}`,
    );
    const http = new SiloHttp({
      server: o.server,
      consortium: o.consortium,
      silo: o.silo,
      secretKey,
      onRetry: (request, attempt, reason) =>
        log(`silo ${o.silo}: retrying ${request} (attempt ${attempt}: ${reason})`),
    });
    const outcomes = await runSilo({
      http,
      run,
      learner,
      secretKey,
      firstRound: o.firstRound,
      lastRound,
      log,
      waitTimeoutMs: o.timeoutMs,
      journal,
      deterministicTraining: o.deterministicTraining,
      ...(pinned ? { pinned } : { insecureUnpinned: true }),
    });
    const reported = outcomes.filter((x) => x.status === 'reported').length;
    log(`fedscore client: silo ${o.silo} done; reported in ${reported} of ${outcomes.length} round(s)`);
    return 0;
  } catch (e) {
    if (SILO_ERRORS.includes((e as Error).name)) {
      process.stderr.write(`fedscore client: ${inertText((e as Error).message)}\n`);
      return 1;
    }
    throw e;
  } finally {
    journal.close();
    await learner.close();
  }
}
