/** `fedscore worker`: runs sweep jobs from the queue; the action (src/cli/actions/worker.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, integerOption, required } from '../_flags.js';
import type { WorkerArgs } from '../actions/worker.js';
import { queueOption } from './sweep.js';

interface WorkerFlags {
  queue: string;
  concurrency?: number;
  backend?: string;
  poll?: number;
  maintenance?: number;
  idleExit?: number;
  quiet?: boolean;
}

export const worker: CommandDefinition<WorkerFlags, WorkerArgs> = {
  name: 'worker',
  summary: 'run sweep jobs from the queue (fedscore sweep submit) until stopped',
  description:
    'Takes sweep jobs from the PostgreSQL queue one at a time per process and writes their results to the database. Start one on every machine that reaches the database and the data; --concurrency c starts c worker processes here (each trains its silos on a pool of threads, so 1 per machine is usually enough). SIGINT or SIGTERM stops it after its current job; a worker killed outright loses only that attempt: the queue runs the job again once it expires.',
  options: [
    required(queueOption()),
    integerOption('concurrency', 'c', 'worker processes on this machine, 1..256 (default 1)', 1, 256),
    backendOption(),
    integerOption('poll', 'seconds', 'seconds between polls of an empty queue, 1..600 (default 2)', 1, 600),
    integerOption(
      'maintenance',
      'seconds',
      "seconds between the queue's maintenance runs, which take back expired jobs, 1..3600 (default 60)",
      1,
      3600,
    ),
    integerOption(
      'idle-exit',
      'seconds',
      'exit after this many seconds without a job (default: never)',
      1,
      86_400,
    ),
    new Option('--quiet', 'no progress lines on stderr'),
  ],
  plugins: true,
  args: (f) => ({
    queue: f.queue,
    concurrency: f.concurrency ?? 1,
    ...(f.backend !== undefined ? { backend: f.backend } : {}),
    ...(f.poll !== undefined ? { poll: f.poll } : {}),
    ...(f.maintenance !== undefined ? { maintenance: f.maintenance } : {}),
    ...(f.idleExit !== undefined ? { idleExit: f.idleExit } : {}),
    ...(f.quiet ? { quiet: true } : {}),
  }),
  run: async (args) => (await import('../actions/worker.js')).workerCommand(args),
};
