/**
 * `fedscore score --utilities <file.json> --out <dir>` (flags: src/cli/commands/score.ts): the
 * private scores of a utilities file (src/records/utility-scores.ts), written as scores.json with the
 * report and charts of an experiment (src/report/outputs.ts).
 */

import { inertLines } from '../../consortium/inert-text.js';
import { REFERENCE, scoreUtilities } from '../../records/utility-scores.js';
import {
  agreementLines,
  leaderboardHeading,
  leaderboardRows,
  textColumns,
} from '../../report/leaderboard-table.js';
import { writeOutputs } from '../../report/outputs.js';
import { comparisonRows, fpSignWarnings } from '../../report/report.js';
import { hiddenOf } from '../../report/report-common.js';
import { packageVersion } from '../_package.js';
import { schemesFlag } from '../_schemes.js';
import { loadUtilities } from '../_utilities.js';

/** What `fedscore score` takes: its flags. */
export interface ScoreFlags {
  /** The utilities file (docs/utilities.md). */
  utilities: string;
  /** The output directory. */
  out: string;
  /** The private schemes shown, comma-separated (default: all but fp). */
  schemes?: string;
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
  // Utilities outside the file's declared range (default [0, 1]) are refused with their JSON paths
  // and, for values in (1, 100], the percent hint (UtilitiesFileError, exit 2).
  const schemes = flags.schemes === undefined ? undefined : schemesFlag(flags.schemes);
  const file = await loadUtilities(flags.utilities);
  const scores = await scoreUtilities(file, {
    source: flags.utilities,
    fedscoreVersion: packageVersion(),
    ...(schemes ? { schemes } : {}),
  });
  const written = await writeOutputs(flags.out, scores);
  const skipped = scores.rounds.filter((r) => r.skipped !== undefined).map((r) => r.round);
  // FP's reversal note only where FP was asked for (--schemes): it is not shown otherwise.
  const fp = hiddenOf(scores).has('fp') ? [] : fpSignWarnings(scores);
  // Names and the file's path come from outside (issue 32, T1): escapes go before stdout.
  process.stdout.write(
    inertLines(
      [
        '',
        `${leaderboardHeading()}:`,
        '',
        textColumns(leaderboardRows(scores.leaderboard ?? [], hiddenOf(scores))),
        ...agreementLines(scores.leaderboard ?? []).map((l) => `  ${l}`),
        '',
        `Scores of ${flags.utilities}: ${scores.silos.count} silos, ${scores.rounds.length} rounds${skipped.length > 0 ? ` (not scored, fewer than 2 reports: ${skipped.join(', ')})` : ''}; the leaderboard's columns are cumulative over rounds.`,
        '',
        ...(scores.comparison
          ? [`Agreement with ${REFERENCE} (cumulative scores):`, '', textTable(comparisonRows(scores)), '']
          : ['No reference: the file has no coalition tables (a `table` in every round gives MR-SV).', '']),
        ...(fp.length > 0
          ? [
              `note: the Fair-Private normalizer Σα was ≤ 0 (${fp.join('; ')}): there FP reverses the ranking (report.md); the headline score does not.`,
              '',
            ]
          : []),
        `wrote ${written.slice(0, 3).join(', ')} (+ charts)`,
        '',
      ].join('\n'),
    ),
  );
  return 0;
}
