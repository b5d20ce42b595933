/**
 * Writes a report's outputs: the record (results.json for an experiment, scores.json for
 * `fedscore score`), leaderboard.csv beside it, report.md, report.html and charts/*.svg.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { leaderboardCsv } from './leaderboard-csv.js';
import { buildCharts, isUtilityScores, type Reportable, renderHtml, renderMarkdown } from './report.js';

/** Writes every output file into `dir` (created if missing); returns the paths written, the record first. */
export async function writeOutputs(dir: string, results: Reportable): Promise<string[]> {
  await mkdir(join(dir, 'charts'), { recursive: true });
  const charts = await buildCharts(results);
  const record = isUtilityScores(results) ? 'scores.json' : 'results.json';
  const files: [string, string][] = [
    [record, `${JSON.stringify(results, null, 2)}\n`],
    ...(results.leaderboard
      ? [['leaderboard.csv', leaderboardCsv(results.leaderboard)] as [string, string]]
      : []),
    ['report.md', `${renderMarkdown(results, charts)}\n`],
    ['report.html', renderHtml(results, charts)],
    ...charts.map((c) => [join('charts', `${c.id}.svg`), c.svg] as [string, string]),
  ];
  for (const [name, text] of files) await writeFile(join(dir, name), text);
  return files.map(([name]) => join(dir, name));
}
