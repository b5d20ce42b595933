/** Writes an experiment's outputs: results.json, report.md, report.html and charts/*.svg. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildCharts, renderHtml, renderMarkdown } from './report.js';
import type { ExperimentResults } from './results.js';

/** Writes every output file into `dir` (created if missing); returns the paths written. */
export async function writeOutputs(dir: string, results: ExperimentResults): Promise<string[]> {
  await mkdir(join(dir, 'charts'), { recursive: true });
  const charts = await buildCharts(results);
  const files: [string, string][] = [
    ['results.json', `${JSON.stringify(results, null, 2)}\n`],
    ['report.md', `${renderMarkdown(results, charts)}\n`],
    ['report.html', renderHtml(results, charts)],
    ...charts.map((c) => [join('charts', `${c.id}.svg`), c.svg] as [string, string]),
  ];
  for (const [name, text] of files) await writeFile(join(dir, name), text);
  return files.map(([name]) => join(dir, name));
}
