/** `fedscore up <dir>`: its flags; the action (src/cli/actions/up.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, integerOption } from '../_flags.js';
import type { UpArgs } from '../actions/up.js';

interface UpFlags {
  dir: string;
  port?: number;
  backend?: string;
  keepServing?: boolean;
  fresh?: boolean;
}

export const up: CommandDefinition<UpFlags, UpArgs> = {
  name: 'up',
  summary: 'run a consortium project (fedscore init) on this machine: the service and every silo',
  description:
    "Runs the project in <dir> on this machine as separate processes: `fedscore serve` (SQLite in the folder), `fedscore consortium create --server`, which starts the service's schedule of rounds, and one `fedscore client` per silo — the commands the project's README gives each machine. Holds the folder (a second up, or a serve on its store, refuses, naming this one's PID). Resumes the schedule from the project's store (an interrupted run goes on from its last finished round; --fresh starts over). Prints one line per round opened, stage closed and round scored (who a stage waits for, every 10 s; a silo whose process dies after joining, as a dropout; a silo that cannot start stops the run), then the leaderboard, which it also writes as <dir>/scores.json, and the dashboard URL with the viewer token (alive while up runs; --keep-serving keeps it after the last round). Ctrl-C stops every process it started. Each process's output is appended to <dir>/logs/<name>.log, one header line per run.",
  epilog:
    'Exit code 0 when every round was scored (dropouts included), 1 when a round was aborted, a silo could not start, another process holds the folder or a process failed, 130 after Ctrl-C.\nThe store (fedscore.db) is never moved aside except by --fresh, which keeps it under a dated name.',
  positionals: [{ name: 'dir', description: 'the project folder (fedscore init wrote it)', required: true }],
  options: [
    integerOption('port', 'n', "the service's TCP port (default 0: any free port)", 0, 65535),
    backendOption(' of every process'),
    new Option(
      '--keep-serving',
      'keep the service (and its dashboard) up after the last round, until Ctrl-C (without it the dashboard URL stops working when up exits)',
    ),
    new Option(
      '--fresh',
      "start over from round 1, keeping the previous store under a dated name (default: resume the project's schedule from its store)",
    ),
  ],
  args: (f) => ({
    dir: f.dir,
    port: f.port ?? 0,
    ...(f.backend !== undefined ? { backend: f.backend } : {}),
    keepServing: f.keepServing === true,
    fresh: f.fresh === true,
  }),
  async run(args) {
    const { upCommand } = await import('../actions/up.js');
    const { packageVersion } = await import('../_package.js');
    return upCommand({ ...args, version: packageVersion() });
  },
};
