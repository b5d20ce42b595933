/**
 * `npm run bench [-- <section> ...]`: runs the benchmark sections in one process, one after the
 * other, each printing its own Markdown table. Sections: shapley, estimators, msgtg, secagg, ml,
 * layers-model, round, server.
 * Comparisons inside a section are made side by side in the same run (ratios), since these
 * machines are noisy.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SECTIONS = [
  'shapley',
  'estimators',
  'msgtg',
  'secagg',
  'ml',
  'layers-model',
  'round',
  'server',
] as const;
const here = dirname(fileURLToPath(import.meta.url));

const asked = process.argv.slice(2);
for (const name of asked) {
  if (!(SECTIONS as readonly string[]).includes(name)) {
    console.error(`bench: unknown section '${name}' (known: ${SECTIONS.join(', ')})`);
    process.exit(2);
  }
}
const chosen = asked.length > 0 ? asked : [...SECTIONS];

console.log(`# fedscore benchmarks — ${new Date().toISOString()}`);
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
