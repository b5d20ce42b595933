/** `fedscore experiment`: its flags; the action (src/cli/actions/experiment.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, integerOption, required } from '../_flags.js';
import type { ExperimentFlags } from '../actions/experiment.js';

export const experiment: CommandDefinition<ExperimentFlags, ExperimentFlags> = {
  name: 'experiment',
  summary: 'run a consortium experiment (docs/results.md describes the outputs)',
  description:
    'Runs a consortium experiment: private scores under secure aggregation against Shapley-family references, over one or more seeds; writes results.json, report.html, report.md and charts (docs/results.md).',
  options: [
    required(new Option('--config <file>', 'the experiment configuration, a JSON file')),
    required(new Option('--out <dir>', 'the output directory')),
    integerOption(
      'seeds',
      'k',
      "number of seeds, 1..100, counted up from the configuration's seed (default: the configuration's seeds, else 1)",
      1,
      100,
    ),
    backendOption(),
    integerOption(
      'workers',
      'n',
      'processes the seeds run in on this machine, 1..256 (default: one per core, at most one per seed; 1: this process, with progress by round). Across machines: fedscore sweep',
      1,
      256,
    ),
    new Option(
      '--schemes <list>',
      "the private schemes the outputs show, comma-separated (loo,ioi,fp,ee,eeMedian; default: the configuration's scoring.schemes, else all but fp); fp is shown, with its reversal analysis, only when listed",
    ),
    new Option('--quiet', 'no progress lines on stderr'),
  ],
  plugins: true,
  args: (flags) => flags,
  run: async (flags) => (await import('../actions/experiment.js')).experimentCommand(flags),
};
