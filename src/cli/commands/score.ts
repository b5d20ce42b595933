/** `fedscore score`: its flags; the action (src/cli/actions/score.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { required } from '../_flags.js';
import type { ScoreFlags } from '../actions/score.js';

export const score: CommandDefinition<ScoreFlags, ScoreFlags> = {
  name: 'score',
  summary: 'private scores of utilities computed by any FL stack (docs/utilities.md): scores.json + report',
  description:
    'Scores utilities computed anywhere (docs/utilities.md): per round LOO, IOI, FP, EE and EE-median from v(M), v(M0), v(M0 + U_i) and v(M − U_i), their sums over rounds, and with coalition tables the exact Shapley reference (MR-SV) and the agreement table. Writes <dir>/scores.json, report.html, report.md and charts.',
  options: [
    required(new Option('--utilities <file>', 'the utilities file, JSON (docs/utilities.schema.json)')),
    required(new Option('--out <dir>', 'the output directory')),
    new Option(
      '--schemes <list>',
      'the private schemes the console and the report show, comma-separated (loo,ioi,fp,ee,eeMedian; default: all but fp); fp is shown, with its reversal analysis, only when listed. scores.json records every scheme',
    ),
  ],
  args: (flags) => flags,
  run: async (flags) => (await import('../actions/score.js')).scoreCommand(flags),
};
