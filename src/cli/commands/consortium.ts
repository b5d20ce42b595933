/** `fedscore consortium`: its flags; the action (src/cli/consortium.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, httpUrlOption, idOption, integerOption, required, UsageError } from '../_flags.js';
import type { ConsortiumArgs } from '../consortium.js';

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
    "The operator's set-up of a networked run of an experiment configuration: creates the consortium with the engine's settings (threshold, model size, the test set's digest, clip, weight range, convention; default deadlines) and uploads the engine's initial model. Rounds are then opened with POST /v1/consortia/:cid/rounds.",
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
  run: async (args) => (await import('../consortium.js')).consortiumCommand(args),
};
