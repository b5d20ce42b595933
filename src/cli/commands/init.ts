/** `fedscore init <dir>`: its flags; the action (src/cli/actions/init.ts) is imported when it runs. */

import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, idOption, integerOption, UsageError } from '../_flags.js';
import type { InitArgs } from '../actions/init.js';

interface InitFlags {
  dir: string;
  silos?: number;
  data: string;
  format: string;
  model: string;
  examples?: number;
  testSize?: number;
  rounds?: number;
  corruptSilos?: number;
  id?: string;
  seed?: number;
  backend?: string;
  strategy?: string;
  clientsPerRound?: number;
  trainer?: string;
}

export const init: CommandDefinition<InitFlags, InitArgs> = {
  name: 'init',
  summary: 'write a consortium project (model, silos and their data, keys, tokens, consortium file, README)',
  description:
    "Writes a consortium project into <dir> (a new or empty folder): config.json, a TF.js Layers model (model/), one folder per silo (silos/<name>/) with its split of the data in its format and its secret key, keys.txt, the common test set (test-set/), the operator's tokens (tokens/), the consortium file and its digest, fedscore-project.json and a README saying what each file is and which command each machine runs. `fedscore up <dir>` runs it on this machine.",
  epilog:
    'Example:\n  fedscore init hospitals --silos 3 --format idx,npy,csv\n  fedscore init hospitals --silos 4 --strategy score-weighted --clients-per-round 3\n  fedscore up hospitals',
  positionals: [{ name: 'dir', description: 'the project folder to write (new or empty)', required: true }],
  options: [
    integerOption(
      'silos',
      'n',
      "number of silos, at least 3: in a round of 2 each silo would read the other's update off the sum (default 3)",
      // MIN_SELECTED_SILOS (src/consortium/weight-floor.ts; initProject checks it too): a literal here,
      // since the command definitions load no module beyond the CLI's own.
      3,
      64,
    ),
    new Option(
      '--data <name-or-file>',
      "the data the silos split: a built-in data set (fashion-mnist, synthetic, …) or your own file — x.npy with y.npy beside it (or their folder), an IDX images file with its labels file, a .csv file with a 'label' column (copied into source-data/)",
    ).default('fashion-mnist'),
    new Option(
      '--format <formats>',
      "the silos' data format, one of the formats `fedscore client --data` reads (docs/data-and-models.md; checked when the command runs); comma-separated to give the silos formats in turn",
    ).default('npy'),
    new Option(
      '--model <model>',
      'mlp (a small Layers MLP) or the path of a TF.js Layers model.json to copy',
    ).default('mlp'),
    integerOption('examples', 'n', 'training examples per silo, on average (default 100)', 10, 100_000),
    integerOption('test-size', 'n', 'examples in the common test set (default 100)', 10, 10_000),
    integerOption('rounds', 'n', 'rounds the schedule runs (default 3)', 1, 1000),
    integerOption(
      'corrupt-silos',
      'n',
      'n_C, silos that may collude with the server (default 0: t = ⌊n/2⌋ + 1, so a round survives dropouts down to t)',
      0,
      63,
    ),
    idOption('id', "the consortium id (default: from the folder's name)"),
    integerOption(
      'seed',
      's',
      "the project's seed: its split, model and selections (default 1)",
      0,
      2 ** 31 - 1,
    ),
    backendOption(' for the initial model'),
    new Option(
      '--strategy <name>',
      'a networked strategy the project runs, pinned by its consortium file: score-weighted, score-selection or fedavg (default: FedAvg over every silo every round); silos weigh equally where the strategy has the choice',
    ),
    integerOption(
      'clients-per-round',
      'k',
      "the strategy's silos per round (with --strategy; at least 3 and at least t)",
      1,
      64,
    ),
    new Option(
      '--trainer <kind>',
      "torch: a PyTorch project — model.py (a small CNN with model(), train() and evaluate()) runs as each silo's trainer process, its init makes the initial model (docs/trainer.md); needs python3 with torch ($FEDSCORE_PYTHON picks the interpreter)",
    ).choices(['torch']),
  ],
  args(f) {
    const formats = f.format.split(',').map((x) => x.trim());
    return {
      dir: f.dir,
      silos: f.silos ?? 3,
      data: f.data,
      formats,
      model: f.model,
      examplesPerSilo: f.examples ?? 100,
      testSize: f.testSize ?? 100,
      rounds: f.rounds ?? 3,
      corruptSilos: f.corruptSilos ?? 0,
      ...(f.id !== undefined ? { id: f.id } : {}),
      seed: f.seed ?? 1,
      ...(f.backend !== undefined ? { backend: f.backend } : {}),
      ...(f.strategy !== undefined ? { strategy: f.strategy } : {}),
      ...(f.clientsPerRound !== undefined ? { clientsPerRound: f.clientsPerRound } : {}),
      ...(f.trainer !== undefined ? { trainer: f.trainer as 'torch' } : {}),
    };
  },
  async run(args) {
    const { initProject } = await import('../actions/init.js');
    try {
      await initProject(args);
    } catch (e) {
      if (e instanceof RangeError && /^(<dir>|--\w)/.test(e.message)) throw new UsageError(e.message);
      throw e;
    }
    return 0;
  },
};
