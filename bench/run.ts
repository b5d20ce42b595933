/**
 * `npm run bench [-- [--json <file>] <section> ...]`: runs the benchmark sections in one process,
 * one after the other, each printing its own Markdown table. Sections: shapley, estimators,
 * secagg, ml, layers-model, round, server. Comparisons inside a section are made side by side in
 * the same run (ratios), since these machines are noisy. With `--json <file>`, the rows sections
 * report (bench/_json.ts) are also written to <file> as one JSON object. Other `--flags` are left
 * for the sections (`--quick`).
 */
import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { reported } from './_json.js';

const SECTIONS = ['shapley', 'estimators', 'secagg', 'ml', 'layers-model', 'round', 'server'] as const;
const here = dirname(fileURLToPath(import.meta.url));

const args = process.argv.slice(2);
const jsonAt = args.indexOf('--json');
const jsonFile = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
if (jsonAt >= 0 && (jsonFile === undefined || jsonFile.startsWith('--'))) {
  console.error('bench: --json needs a file name');
  process.exit(2);
}
const asked = args.filter((a, i) => !a.startsWith('--') && !(jsonAt >= 0 && i === jsonAt + 1));
for (const name of asked) {
  if (!(SECTIONS as readonly string[]).includes(name)) {
    console.error(`bench: unknown section '${name}' (known: ${SECTIONS.join(', ')})`);
    process.exit(2);
  }
}
const chosen = asked.length > 0 ? asked : [...SECTIONS];

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
  const mod = (await import(pathToFileURL(file).href)) as { main?: () => Promise<void> };
  if (typeof mod.main !== 'function') throw new Error(`bench/${name}.ts does not export main()`);
  const t0 = performance.now();
  await mod.main();
  console.log(`\n(${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}

if (jsonFile !== undefined) {
  const out = {
    started,
    node: process.version,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`,
    loadAverage: os.loadavg(),
    sections: chosen,
    ...reported(),
  };
  writeFileSync(jsonFile, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`\n(wrote ${jsonFile})`);
}
