/**
 * `fedscore sweep submit|status|collect`: experiment sweeps on a PostgreSQL job queue
 * (docs/sweeps.md); the actions (src/cli/actions/sweep.ts) are imported when they run. Workers:
 * `fedscore worker` (commands/worker.ts).
 */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { integerOption, required, UsageError } from '../_flags.js';
import type { SweepArgs } from '../actions/sweep.js';

/** `--queue <url>`: a postgres:// or postgresql:// URL. @throws UsageError naming the flag. */
export const queueOption = () =>
  new Option(
    '--queue <url>',
    'the PostgreSQL database of the queue and the results, postgres://user@host:port/db',
  ).argParser((raw: string) => {
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {}
    if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:'))
      throw new UsageError(`--queue: expected a postgres:// URL, got '${raw}'`);
    return raw;
  });

/** `--id <sweep>`: what `sweep submit` printed. */
const idOption = () =>
  new Option('--id <sweep>', 'the sweep id `sweep submit` printed (sw- and 16 hex digits)').argParser(
    (raw: string) => {
      if (!/^sw-[0-9a-f]{16}$/.test(raw))
        throw new UsageError(`--id: expected sw- and 16 hex digits, got '${raw}'`);
      return raw;
    },
  );

interface SubmitFlags {
  queue: string;
  config: string[];
  seeds?: number;
  chunks?: number;
  retries?: number;
  expireIn?: number;
}

interface IdFlags {
  queue: string;
  id: string;
  out?: string;
  json?: boolean;
}

const run = async (args: SweepArgs) => (await import('../actions/sweep.js')).sweepCommand(args);

const submit: CommandDefinition<SubmitFlags, SweepArgs> = {
  name: 'submit',
  summary: 'enqueue a sweep: every configuration × seed is one job; prints the sweep id',
  description:
    'Records a sweep in the database and enqueues one job per configuration and seed (seeds counted as `experiment --seeds k` counts them). The sweep id is a digest of the configurations and seeds: submitting the same sweep again prints the same id and enqueues only jobs that are neither done nor failed for good. Jobs run on `fedscore worker` processes, on any machine that reaches the database and the data.',
  epilog:
    'A job that runs longer than --expire-in (a worker killed or lost) is taken back by the queue and run again, up to --retries more times.',
  options: [
    required(queueOption()),
    required(new Option('--config <file...>', 'experiment configurations, JSON files (one or more)')),
    integerOption(
      'seeds',
      'k',
      "seeds per configuration, 1..100 (default: each configuration's seeds, else 1)",
      1,
      100,
    ),
    integerOption(
      'chunks',
      'n',
      "split each seed's reference table into n jobs, 1..65536: a configuration that computes the true Shapley value (comparison.trueShapley) gets n more jobs per seed, each retraining a range of the 2^silos coalitions (at most 2^silos jobs); collect puts the table back together (default: computed in the seed's job)",
      1,
      65_536,
    ),
    integerOption('retries', 'n', 'further attempts of a failed or expired job, 0..10 (default 2)', 0, 10),
    integerOption(
      'expire-in',
      'seconds',
      'seconds a job may run before the queue takes it back and retries it, 1..86399 (default 82800, 23 h)',
      1,
      86_399,
    ),
  ],
  plugins: true,
  args: (f) => ({
    action: 'submit',
    queue: f.queue,
    configs: f.config,
    ...(f.seeds !== undefined ? { seeds: f.seeds } : {}),
    ...(f.chunks !== undefined ? { chunks: f.chunks } : {}),
    ...(f.retries !== undefined ? { retries: f.retries } : {}),
    ...(f.expireIn !== undefined ? { expireIn: f.expireIn } : {}),
  }),
  run,
};

const status: CommandDefinition<IdFlags, SweepArgs> = {
  name: 'status',
  summary:
    'per configuration: jobs done, running, queued, failed and retried; the failures with their errors',
  options: [required(queueOption()), required(idOption()), new Option('--json', 'print the status as JSON')],
  args: (f) => ({ action: 'status', queue: f.queue, id: f.id, ...(f.json ? { json: true } : {}) }),
  run,
};

const collect: CommandDefinition<IdFlags, SweepArgs> = {
  name: 'collect',
  summary: "writes each finished configuration's results.json and reports to <out>/<name>/",
  description:
    "Writes, for each configuration whose jobs are all done, the same results.json, report.html, report.md and charts that `experiment --seeds k` writes for it, to <out>/<name>/ (<name>: the configuration file's base name). Configurations with jobs not done are listed and skipped (exit code 1).",
  options: [
    required(queueOption()),
    required(idOption()),
    required(new Option('--out <dir>', 'the output directory')),
  ],
  args: (f) => ({ action: 'collect', queue: f.queue, id: f.id, out: f.out! }),
  run,
};

export const sweep: CommandDefinition<Record<string, never>, never> = {
  name: 'sweep',
  summary: 'experiment sweeps on a PostgreSQL job queue: submit | status | collect (docs/sweeps.md)',
  description:
    'A sweep is configurations × seeds, one job each, queued in PostgreSQL (pg-boss) and run by `fedscore worker` processes on as many machines as reach the database; results are stored in the database and collected into the same results.json `experiment --seeds k` writes.',
  epilog: 'Run "fedscore sweep <submit|status|collect> --help" for the flags of each.',
  options: [],
  args() {
    throw new UsageError('expected a subcommand: submit, status or collect');
  },
  run: async () => 2,
  subcommands: [submit, status, collect] as unknown as CommandDefinition<never, unknown>[],
};
