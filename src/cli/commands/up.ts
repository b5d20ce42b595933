/** `fedscore up <dir>`: its flags; the action (src/project/up.ts) is imported when it runs. */
import { Option } from 'commander';
import type { UpArgs } from '../../project/up.js';
import type { CommandDefinition } from '../_command.js';
import { backendOption, integerOption } from '../_flags.js';

interface UpFlags {
  dir: string;
  port?: number;
  backend?: string;
  keepServing?: boolean;
}

export const up: CommandDefinition<UpFlags, UpArgs> = {
  name: 'up',
  summary: 'run a consortium project (fedscore init) on this machine: the service and every silo',
  description:
    "Runs the project in <dir> on this machine as separate processes: `fedscore serve` (SQLite in the folder), `fedscore consortium create --server`, which starts the service's schedule of rounds, and one `fedscore client` per silo — the commands the project's README gives each machine. Prints one line per round opened, stage closed and round scored (who a stage waits for, every 10 s; a silo whose process dies, as a dropout), then the per-silo scores and the dashboard URL with the viewer token. Ctrl-C stops every process it started. Each process's output is in <dir>/logs/.",
  epilog:
    "Exit code 0 when every round was scored (dropouts included), 1 when a round was aborted or a process failed, 130 after Ctrl-C.\nA previous run's store (fedscore.db) is kept aside under a dated name.",
  positionals: [{ name: 'dir', description: 'the project folder (fedscore init wrote it)', required: true }],
  options: [
    integerOption('port', 'n', "the service's TCP port (default 0: any free port)", 0, 65535),
    backendOption(' of every process'),
    new Option(
      '--keep-serving',
      'keep the service (and its dashboard) up after the last round, until Ctrl-C',
    ),
  ],
  args: (f) => ({
    dir: f.dir,
    port: f.port ?? 0,
    ...(f.backend !== undefined ? { backend: f.backend } : {}),
    keepServing: f.keepServing === true,
  }),
  async run(args) {
    const { upCommand } = await import('../../project/up.js');
    return upCommand(args);
  },
};
