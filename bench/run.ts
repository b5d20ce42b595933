/**
 * `npm run bench [-- [--json <file>] [--baseline <dir>] <section> ...]`: runs the benchmark
 * sections in one process, one after the other, each printing its own Markdown table. Sections:
 * shapley, estimators, msgtg, secagg, ml, layers-model, round, server, gpu, cores, gray-code,
 * gpu-table, products (none named: all of them; `--help` prints this). Comparisons inside a
 * section are made side by side in the same run (ratios), since these machines are noisy. With
 * `--json <file>`, what the sections report is also written to <file> as one JSON object: the
 * rows they pass to bench/_json.ts's report() (`training`, `secagg`, `serverRound`) and the `json`
 * object their main() returns (ml: `exactShapley`). Other `--flags` are left for the sections
 * (`--quick`; server's `--load [--minutes N] [--consortia C] [--silos S]`; cores' `--threads 1,2,4`,
 * `--players N` and `--repeat K`; gpu-table's `--players 10,12`, `--rows R` and `--repeat K`;
 * products' `--addon-baseline <fedscore_kernels.node>`, `--threads 1,2` and `--repeat K`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { reported } from './_json.js';

const SECTIONS = [
  'shapley',
  'estimators',
  'msgtg',
  'secagg',
  'ml',
  'layers-model',
  'round',
  'server',
  'gpu',
  'cores',
  'gray-code',
  'gpu-table',
  'products',
] as const;
const here = dirname(fileURLToPath(import.meta.url));

// Options: --json <file> writes the sections' results as one JSON object; flags (--quick, …) and
// --baseline <dir> are read by the sections themselves (bench/ml.ts, bench/_exact-shapley.ts).
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  // The usage is this file's opening comment; without a section every section runs (an hour or more).
  const text = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const usage = text.slice(text.indexOf('/**') + 3, text.indexOf('*/')).replace(/^ \* ?/gm, '');
  console.log(`${usage.trim()}\n\nSections: ${SECTIONS.join(', ')} (none named: all of them).`);
  process.exit(0);
}
const VALUED = [
  '--json',
  '--baseline',
  '--minutes',
  '--consortia',
  '--silos',
  '--store',
  '--threads',
  '--players',
  '--repeat',
  '--rows',
  '--addon-baseline',
];
const asked: string[] = [];
let jsonFile: string | undefined;
for (let i = 0; i < args.length; i++) {
  const a = args[i]!;
  if (VALUED.includes(a)) {
    if (a === '--json') jsonFile = args[i + 1];
    if (args[i + 1] === undefined) {
      console.error(`bench: ${a} needs a value`);
      process.exit(2);
    }
    i++;
  } else if (!a.startsWith('--')) asked.push(a);
}
for (const name of asked) {
  if (!(SECTIONS as readonly string[]).includes(name)) {
    console.error(`bench: unknown section '${name}' (known: ${SECTIONS.join(', ')})`);
    process.exit(2);
  }
}
const chosen = asked.length > 0 ? asked : [...SECTIONS];
const report: Record<string, unknown> = {};

const started = new Date().toISOString();
console.log(`# fedscore benchmarks — ${started}`);
console.log(
  `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${os.platform()}`,
);
for (const name of chosen) {
  const file = join(here, `${name}.ts`);
  if (!existsSync(file)) {
    console.log(`\n## ${name}: not available yet (bench/${name}.ts missing)`);
    continue;
  }
  const mod = (await import(pathToFileURL(file).href)) as { main?: () => Promise<unknown> };
  if (typeof mod.main !== 'function') throw new Error(`bench/${name}.ts does not export main()`);
  const t0 = performance.now();
  const result = await mod.main();
  // A section's results for --json: the `json` object its main() returns, merged at the top level.
  const json = (result as { json?: unknown } | undefined)?.json;
  if (json && typeof json === 'object') Object.assign(report, json);
  console.log(`\n(${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}

if (jsonFile !== undefined) {
  const out = {
    started,
    node: process.version,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`,
    loadAverage: os.loadavg(),
    sections: chosen,
    ...report,
    ...reported(),
  };
  writeFileSync(jsonFile, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`\nbench: wrote ${jsonFile}`);
}
