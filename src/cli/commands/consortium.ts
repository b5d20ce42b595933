/** `fedscore consortium`: its flags; the action (src/cli/actions/consortium.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, httpUrlOption, idOption, integerOption, required, UsageError } from '../_flags.js';
import type { ConsortiumArgs } from '../actions/consortium.js';
import type { ConsortiumCreateArgs } from '../actions/consortium-create.js';

interface CreateFlags {
  server?: string;
  id: string;
  config: string;
  keys: string;
  out: string;
  examples?: string;
  testSetOut?: string;
  seed?: number;
  backend?: string;
  external?: boolean;
}

/** `fedscore consortium create`: the consortium file silos pin, and its registration. */
export const consortiumCreate: CommandDefinition<CreateFlags, ConsortiumCreateArgs> = {
  name: 'create',
  summary: 'write the consortium file silos pin, print its digest and register it (FEDSCORE_ADMIN_TOKEN)',
  description:
    "Writes the consortium file every silo pins with `fedscore client --consortium-file` (roster, threshold, n_C, d, model and test-set digests, schemes, convention, utility, encoding, weights, strategy, rounds) from the experiment configuration and the silos' public keys, and prints its SHA-256 digest. With --server it first checks with the service (reachable, the admin token accepted, the id free), then creates the consortium and uploads the initial model, and writes the files only once the service accepted them: a refusal is one sentence and writes nothing. With --external the consortium is reports-only (training and secure aggregation run elsewhere; the operator posts each round's v(M) and v(M0), the silos their signed reports; docs/networked.md).",
  epilog: 'Environment:\n  FEDSCORE_ADMIN_TOKEN  the service’s admin token (required with --server)',
  options: [
    required(idOption('id', 'the consortium id')),
    required(new Option('--config <file>', 'the experiment configuration the consortium runs')),
    required(
      new Option(
        '--keys <file>',
        "the silos' Ed25519 public keys, one hex key per line (silo id = line number − 1)",
      ),
    ),
    required(new Option('--out <file>', 'where to write the consortium file (JSON)')),
    httpUrlOption('server', 'register the consortium with this service, e.g. http://127.0.0.1:8080'),
    new Option(
      '--examples <counts>',
      "the silos' example counts, comma-separated, when they bring their own data (--data): the weights' public scale",
    ),
    new Option(
      '--test-set-out <dir>',
      'write the common test set there as x.npy and y.npy, for the silos’ --test-data',
    ),
    integerOption('seed', 's', "the run's seed (default: the configuration's seed, else 1)", 0, 2 ** 31 - 1),
    backendOption(' for the initial model'),
    new Option(
      '--external',
      'a reports-only consortium (secureAggregation "external"): no schedule, no model; with --server',
    ),
  ],
  plugins: true,
  args(f, env) {
    if (f.external && f.server === undefined) throw new UsageError('--external: applies only with --server');
    let adminToken: string | undefined;
    if (f.server !== undefined) {
      adminToken = env.FEDSCORE_ADMIN_TOKEN;
      if (adminToken === undefined || adminToken.length < 16)
        throw new UsageError(
          'FEDSCORE_ADMIN_TOKEN: set it to the service’s admin token (needed with --server)',
        );
    }
    let examples: number[] | undefined;
    if (f.examples !== undefined) {
      examples = f.examples.split(',').map((x) => Number(x.trim()));
      if (!examples.every((x) => Number.isInteger(x) && x > 0))
        throw new UsageError(
          `--examples: expected positive integers separated by commas, got '${f.examples}'`,
        );
    }
    return {
      id: f.id,
      config: f.config,
      keys: f.keys,
      out: f.out,
      ...(f.server !== undefined ? { server: new URL(f.server).href.replace(/\/+$/, ''), adminToken } : {}),
      ...(examples ? { examples } : {}),
      ...(f.testSetOut !== undefined ? { testSetOut: f.testSetOut } : {}),
      ...(f.seed !== undefined ? { seed: f.seed } : {}),
      ...(f.backend !== undefined ? { backend: f.backend } : {}),
      ...(f.external ? { external: true } : {}),
    };
  },
  run: async (args) => (await import('../actions/consortium-create.js')).consortiumCreateCommand(args),
};

interface ConsortiumFlags {
  server: string;
  id: string;
  config: string;
  keys: string;
  seed?: number;
  backend?: string;
}

export const consortium: CommandDefinition<ConsortiumFlags, ConsortiumArgs> = {
  name: 'consortium',
  summary: "create a networked run's consortium and upload its initial model (FEDSCORE_ADMIN_TOKEN)",
  description:
    "The operator's set-up of a networked run of an experiment configuration: creates the consortium with the engine's settings (threshold, model size, the test set's digest, clip, weight range, convention; default deadlines) and uploads the engine's initial model. It registers no schedule: rounds are then opened with `fedscore rounds open`. `fedscore consortium create` writes the consortium file silos pin and registers the configuration's schedule (the service then opens the rounds itself).",
  epilog: "Environment:\n  FEDSCORE_ADMIN_TOKEN  the service's admin token (required)",
  options: [
    required(httpUrlOption('server', 'the scoring service, e.g. http://127.0.0.1:8080')),
    required(idOption('id', 'the consortium id to create')),
    required(new Option('--config <file>', 'the experiment configuration the consortium runs')),
    required(
      new Option(
        '--keys <file>',
        "the silos' Ed25519 public keys, one hex key per line (silo id = line number − 1)",
      ),
    ),
    integerOption('seed', 's', "the run's seed (default: the configuration's seed, else 1)", 0, 2 ** 31 - 1),
    backendOption(' for the initial model'),
  ],
  plugins: true,
  args(f, env) {
    const adminToken = env.FEDSCORE_ADMIN_TOKEN;
    if (adminToken === undefined || adminToken.length < 16)
      throw new UsageError('FEDSCORE_ADMIN_TOKEN: set it to the service’s admin token');
    return {
      server: new URL(f.server).href.replace(/\/+$/, ''),
      id: f.id,
      config: f.config,
      keys: f.keys,
      ...(f.seed !== undefined ? { seed: f.seed } : {}),
      ...(f.backend !== undefined ? { backend: f.backend } : {}),
      adminToken,
    };
  },
  run: async (args) => (await import('../actions/consortium.js')).consortiumCommand(args),
  subcommands: [consortiumCreate as CommandDefinition<never, unknown>],
};
