/**
 * `fedscore score --utilities <file.json> --out <dir>` (flags: src/cli/commands/score.ts): the
 * private scores of a utilities file (src/fl/utility-scores.ts), written as scores.json with the
 * report and charts of an experiment (src/fl/outputs.ts).
 */
import { SCHEMES } from '../../scoring/private.js';
import { writeOutputs } from '../fl/outputs.js';
import { comparisonRows, fpSignWarnings } from '../fl/report.js';
import { firstOutside } from '../fl/utilities-file.js';
import { REFERENCE, scoreUtilities } from '../fl/utility-scores.js';
import { packageVersion } from './_package.js';
import { loadUtilities } from './_utilities.js';

/** What `fedscore score` takes: its flags. */
export interface ScoreFlags {
  /** The utilities file (docs/utilities.md). */
  utilities: string;
  /** The output directory. */
  out: string;
}

/** Rows of cells as an aligned text table (first column left, the others right). */
function textTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, k) => Math.max(...rows.map((r) => r[k]!.length)));
  return rows
    .map(
      (r) => `  ${r.map((c, k) => (k === 0 ? c.padEnd(widths[k]!) : c.padStart(widths[k]! + 2))).join('')}`,
    )
    .join('\n');
}

/** Runs `fedscore score`. @returns the exit code. */
export async function scoreCommand(flags: ScoreFlags): Promise<number> {
  const file = await loadUtilities(flags.utilities);
  const outside = firstOutside(file, 0, 1);
  if (outside)
    process.stderr.write(
      `warning: ${flags.utilities}: ${outside[0]} = ${outside[1]} is outside [0, 1]: the scores take any scale, but accuracies are fractions${outside[1] > 1 && outside[1] <= 100 ? ' (percentages? divide by 100)' : ''} and \`fedscore audit\` refuses utilities outside [0, 1]\n`,
    );
  const scores = await scoreUtilities(file, { source: flags.utilities, fedscoreVersion: packageVersion() });
  const written = await writeOutputs(flags.out, scores);
  const methods = [...SCHEMES, ...(scores.comparison ? [REFERENCE] : [])];
  const cumulative = [
    ['silo', ...methods],
    ...scores.silos.names.map((name, i) => [
      name,
      ...methods.map((m) => scores.cumulative[m]![i]!.toFixed(4)),
    ]),
  ];
  const skipped = scores.rounds.filter((r) => r.skipped !== undefined).map((r) => r.round);
  const fp = fpSignWarnings(scores);
  process.stdout.write(
    [
      `Scores of ${flags.utilities}: ${scores.silos.count} silos, ${scores.rounds.length} rounds${skipped.length > 0 ? ` (not scored, fewer than 2 reports: ${skipped.join(', ')})` : ''}; cumulative over rounds:`,
      '',
      textTable(cumulative),
      '',
      ...(scores.comparison
        ? [`Agreement with ${REFERENCE} (cumulative scores):`, '', textTable(comparisonRows(scores)), '']
        : ['No reference: the file has no coalition tables (a `table` in every round gives MR-SV).', '']),
      ...(fp.length > 0
        ? [
            `warning: the Fair-Private normalizer Σα was ≤ 0 (${fp.join('; ')}): there FP reverses the ranking.`,
            '',
          ]
        : []),
      `wrote ${written.slice(0, 3).join(', ')} (+ charts)`,
      '',
    ].join('\n'),
  );
  return 0;
}
