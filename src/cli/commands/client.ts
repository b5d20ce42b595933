/** `fedscore client`: its flags; the action (src/cli/client.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, httpUrlOption, idOption, integerOption, required, UsageError } from '../_flags.js';
import type { ClientArgs } from '../client.js';

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
}

export const client: CommandDefinition<ClientFlags, ClientArgs> = {
  name: 'client',
  summary: 'one silo of a networked consortium: trains, runs secure aggregation, reports',
  description:
    'One silo of a networked consortium: trains locally, takes part in secure aggregation and submits its signed score reports. Progress lines go to stderr. Exit code 1 when the silo could not take part (wrong key or test set, service unreachable, a refused request).',
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
  ],
  plugins: true,
  args(f) {
    if (f.lastRound !== undefined && f.lastRound < f.firstRound)
      throw new UsageError(`--last-round: ${f.lastRound} is before --first-round ${f.firstRound}`);
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
    };
  },
  run: async (args) => (await import('../client.js')).clientCommand(args),
};
