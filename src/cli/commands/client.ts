/** `fedscore client`: its flags; the action (src/cli/actions/client.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, httpUrlOption, idOption, integerOption, required, UsageError } from '../_flags.js';
import type { ClientArgs } from '../actions/client.js';

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

interface ClientFlags {
  server: string;
  consortium: string;
  silo: number;
  key: string;
  config: string;
  seed?: number;
  firstRound: number;
  lastRound?: number;
  backend?: string;
  timeout: number;
  quiet?: boolean;
  consortiumFile?: string;
  consortiumDigest?: string;
  insecureUnpinned?: boolean;
  deterministicTraining?: boolean;
  data?: string;
  dataFormat?: string;
  testData?: string;
  model?: string;
  trainer?: string;
}

export const client: CommandDefinition<ClientFlags, ClientArgs> = {
  name: 'client',
  summary: 'one silo of a networked consortium: trains, runs secure aggregation, reports',
  description:
    "One silo of a networked consortium: trains locally, takes part in secure aggregation and submits its signed score reports. Before sending anything it compares the server's consortium with the pinned consortium file (--consortium-file) field by field. Progress lines go to stderr. Exit code 1 when the silo could not take part (a consortium that is not the pinned one, wrong key, data or test set, service unreachable, a refused request).",
  options: [
    required(httpUrlOption('server', 'the scoring service, e.g. http://127.0.0.1:8080')),
    required(idOption('consortium', 'the consortium id')),
    required(
      integerOption(
        'silo',
        'n',
        "this silo's id, 0..254 (its index in the consortium's participants)",
        0,
        254,
      ),
    ),
    required(
      new Option(
        '--key <file>',
        "this silo's Ed25519 secret key: 64 hex digits (fedscore keygen writes one)",
      ),
    ),
    required(
      new Option(
        '--config <file>',
        'the experiment configuration the consortium runs (data, model, training)',
      ),
    ),
    integerOption('seed', 's', "the run's seed (default: the configuration's seed, else 1)", 0, 2 ** 31 - 1),
    integerOption('first-round', 'r', 'first round to take part in', 1, 0xffffffff).default(1),
    integerOption(
      'last-round',
      'r',
      "last round to take part in (default: the configuration's rounds)",
      1,
      0xffffffff,
    ),
    backendOption(),
    integerOption(
      'timeout',
      'seconds',
      'give up waiting for the server after this long',
      1,
      7 * 24 * 3600,
    ).default(3600),
    new Option('--quiet', 'no progress lines'),
    new Option(
      '--consortium-file <file>',
      'the consortium file you agreed to (fedscore consortium create): the server must serve exactly it, or nothing is sent',
    ),
    new Option(
      '--consortium-digest <sha256>',
      "the consortium file's SHA-256 digest (64 hex digits), agreed out of band: the file must have it",
    ),
    new Option(
      '--insecure-unpinned',
      "take part without a consortium file, trusting the server's roster and threshold (a malicious server can then unmask this silo's input)",
    ),
    new Option(
      '--deterministic-training',
      "train with the run's seed stream (seed, round, silo), as the in-process engine does, instead of fresh randomness: a server that replays a round can then reproduce this silo's update; for tests and reproductions only",
    ),
    new Option('--data <path>', "this silo's own training data (IDX pair, x.npy + y.npy, CSV, image folder)"),
    new Option(
      '--data-format <format>',
      'the format of --data and --test-data instead of detecting it (one of the formats in docs/data-and-models.md; checked before any data is read)',
    ),
    new Option(
      '--test-data <path>',
      "the common test set in one of --data's formats; its digest must be the consortium's testSetDigest",
    ),
    new Option(
      '--model <file>',
      "a TF.js Layers model (model.json + weight files) instead of the configuration's; its digests must be the consortium file's",
    ),
    new Option(
      '--trainer <command>',
      'train and evaluate in this silo\'s own trainer process (e.g. "python3 model.py", docs/trainer.md): JSON lines over its stdin and stdout, vectors as .npy files in a private folder',
    ),
  ],
  plugins: true,
  args(f) {
    if (f.lastRound !== undefined && f.lastRound < f.firstRound)
      throw new UsageError(`--last-round: ${f.lastRound} is before --first-round ${f.firstRound}`);
    if (f.consortiumDigest !== undefined && f.consortiumFile === undefined)
      throw new UsageError(
        '--consortium-digest: pins a consortium file; pass the file with --consortium-file',
      );
    if (f.consortiumFile === undefined && f.insecureUnpinned !== true)
      throw new UsageError(
        "--consortium-file: required — pin the consortium you agreed to (or pass --insecure-unpinned to trust the server's roster)",
      );
    if (f.consortiumFile !== undefined && f.insecureUnpinned === true)
      throw new UsageError('--insecure-unpinned: cannot be combined with --consortium-file');
    if (f.consortiumDigest !== undefined && !SHA256_HEX.test(f.consortiumDigest))
      throw new UsageError(`--consortium-digest: expected 64 hex digits, got '${f.consortiumDigest}'`);
    if (f.data !== undefined && f.testData === undefined)
      throw new UsageError('--test-data: required with --data (the common test set, in any --data format)');
    if (f.testData !== undefined && f.data === undefined)
      throw new UsageError('--test-data: only with --data');
    if (f.data !== undefined && f.consortiumFile === undefined)
      throw new UsageError(
        "--data: needs --consortium-file (the weights' public scale is the consortium file's)",
      );
    if (f.trainer !== undefined && f.model !== undefined)
      throw new UsageError('--trainer: cannot be combined with --model (the trainer holds the model)');
    if (f.trainer !== undefined && f.trainer.trim() === '')
      throw new UsageError('--trainer: expected a command line, e.g. "python3 model.py"');
    if (f.dataFormat !== undefined && f.data === undefined)
      throw new UsageError('--data-format: only with --data');
    return {
      server: f.server,
      consortium: f.consortium,
      silo: f.silo,
      key: f.key,
      config: f.config,
      ...(f.seed !== undefined ? { seed: f.seed } : {}),
      firstRound: f.firstRound,
      ...(f.lastRound !== undefined ? { lastRound: f.lastRound } : {}),
      ...(f.backend !== undefined ? { backend: f.backend } : {}),
      timeoutMs: f.timeout * 1000,
      quiet: f.quiet === true,
      ...(f.consortiumFile !== undefined ? { consortiumFile: f.consortiumFile } : {}),
      ...(f.consortiumDigest !== undefined ? { consortiumDigest: f.consortiumDigest.toLowerCase() } : {}),
      insecureUnpinned: f.insecureUnpinned === true,
      deterministicTraining: f.deterministicTraining === true,
      ...(f.data !== undefined ? { data: f.data } : {}),
      ...(f.dataFormat !== undefined ? { dataFormat: f.dataFormat } : {}),
      ...(f.testData !== undefined ? { testData: f.testData } : {}),
      ...(f.model !== undefined ? { model: f.model } : {}),
      ...(f.trainer !== undefined ? { trainer: f.trainer } : {}),
    };
  },
  run: async (args) => (await import('../actions/client.js')).clientCommand(args),
};
