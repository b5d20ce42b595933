/**
 * `fedscore rounds open|status|close|release`: the operator's manual control of a consortium's rounds over
 * HTTP with the admin token; the actions (src/cli/actions/rounds.ts) are imported when they run.
 */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { httpUrlOption, idOption, integerOption, required, UsageError } from '../_flags.js';
import type { RoundsArgs } from '../actions/rounds.js';

interface RoundsFlags {
  server: string;
  consortium: string;
  tokenFile?: string;
  round?: number;
  abort?: boolean;
  silo?: number;
  stage?: string;
}

/** The stages `close` may name (those a running round is in). */
const STAGES = ['advertise', 'share', 'mask', 'consistency', 'unmask', 'reporting'];

const EPILOG = [
  'Environment:',
  "  FEDSCORE_ADMIN_TOKEN  the service's admin token (unless --token-file is given)",
  '',
  'Exit codes: 0 done; 1 the service refused or could not be reached; 2 usage error.',
].join('\n');

/** The flags every `rounds` subcommand takes. */
const common = () => [
  required(httpUrlOption('server', 'the scoring service, e.g. http://127.0.0.1:8080')),
  required(idOption('consortium', 'the consortium id')),
  new Option('--token-file <file>', 'a file holding the admin token (default: FEDSCORE_ADMIN_TOKEN)'),
];

/** The flags and environment, checked: the token comes from --token-file or FEDSCORE_ADMIN_TOKEN. */
function argsOf(
  action: RoundsArgs['action'],
  f: RoundsFlags,
  env: Readonly<Record<string, string | undefined>>,
) {
  const token = f.tokenFile === undefined ? env.FEDSCORE_ADMIN_TOKEN : undefined;
  if (f.tokenFile === undefined && (token === undefined || token.length === 0))
    throw new UsageError('FEDSCORE_ADMIN_TOKEN: set it to the service’s admin token, or give --token-file');
  return {
    action,
    server: new URL(f.server).href.replace(/\/+$/, ''),
    consortium: f.consortium,
    ...(f.tokenFile !== undefined ? { tokenFile: f.tokenFile } : { token: token! }),
    ...(f.round !== undefined ? { round: f.round } : {}),
    ...(f.abort ? { abort: true } : {}),
    ...(f.silo !== undefined ? { silo: f.silo } : {}),
    ...(f.stage !== undefined ? { stage: f.stage } : {}),
  } satisfies RoundsArgs;
}

const run = async (args: RoundsArgs) => (await import('../actions/rounds.js')).roundsCommand(args);

const open: CommandDefinition<RoundsFlags, RoundsArgs> = {
  name: 'open',
  summary: 'open the next round from the latest model (POST …/rounds)',
  description:
    'Opens the next round of the consortium from its latest model (the previous round must be over). Prints the round, the silos it takes and its first deadline.',
  epilog: EPILOG,
  options: common(),
  args: (f, env) => argsOf('open', f, env),
  run,
};

const status: CommandDefinition<RoundsFlags, RoundsArgs> = {
  name: 'status',
  summary: 'a table of the rounds, the current stage, who it waits for and the time left',
  description:
    'Prints the consortium (silos, threshold t, n_C, the schedule "round r of R"), a table of its rounds (stage, selected silos, survivors, dropouts, v(M) / v(M0), faults) and, for a running round, its stage, the silos it still waits for and the time left before its deadline.',
  epilog: EPILOG,
  options: common(),
  args: (f, env) => argsOf('status', f, env),
  run,
};

const close: CommandDefinition<RoundsFlags, RoundsArgs> = {
  name: 'close',
  summary: 'close the current stage now (missing silos are dropouts), or --abort the round',
  description:
    "Closes the current stage of the running round now instead of at its deadline: silos that have not sent are dropouts (the round aborts if fewer than t remain; reporting is scored from the reports in). The request names the stage to close (--stage, or the round's current stage read just before); if that stage has closed meanwhile (its deadline, its last message) the service refuses with FEDSCORE_ERR_STAGE_MISMATCH naming the current one, and nothing is closed. With --abort the round ends at once as aborted (ABORTED_BY_OPERATOR) and the next one may open; the model stays the round's base model.",
  epilog: EPILOG,
  options: [
    ...common(),
    integerOption('round', 'r', 'the round (default: the latest one)', 1, 0xffffffff),
    new Option('--stage <stage>', 'the stage to close (default: the current one)').choices(STAGES),
    new Option('--abort', 'end the round as aborted instead of closing its current stage'),
  ],
  args: (f, env) => argsOf('close', f, env),
  run,
};

const release: CommandDefinition<RoundsFlags, RoundsArgs> = {
  name: 'release',
  summary: 'release a quarantined score report: the round is scored again with it',
  description:
    'A report the manipulation audit\'s detector flags is quarantined: the round is scored without it (docs/networked.md, "Quarantined reports"). This releases silo --silo\'s report of round --round after the operator has looked at it (POST …/rounds/:r/reports/:silo/release) and prints the silos now scored.',
  epilog: EPILOG,
  options: [
    ...common(),
    required(integerOption('round', 'r', 'the scored round', 1, 0xffffffff)),
    required(integerOption('silo', 'i', 'the silo whose quarantined report is released', 0, 254)),
  ],
  args: (f, env) => argsOf('release', f, env),
  run,
};

export const rounds: CommandDefinition<Record<string, never>, never> = {
  name: 'rounds',
  summary: "the operator's control of a consortium's rounds: open | status | close | release (admin token)",
  description:
    "Manual control of a consortium's rounds over HTTP with the admin token. `fedscore serve` runs a consortium's schedule by itself when it was created with `rounds` (docs/networked.md); these commands open a round, show where the rounds stand, close a stage or abort a round by hand, and release a quarantined score report.",
  epilog: 'Run "fedscore rounds <open|status|close|release> --help" for the flags of each.',
  options: [],
  args() {
    throw new UsageError('expected a subcommand: open, status, close or release');
  },
  run: async () => 2,
  subcommands: [open, status, close, release] as unknown as CommandDefinition<never, unknown>[],
};
