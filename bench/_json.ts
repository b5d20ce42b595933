/**
 * Machine-readable results for `npm run bench -- --json <file> [sections]`: a section calls
 * `report(key, rows)` next to printing its table, and bench/run.ts writes every collected key
 * into one JSON object at the end (`{ started, node, cpus, sections, <key>: [rows…] }`). Keys so
 * far: `training` and `exactShapley` (bench/ml.ts), `secagg` and `maskerVsNumpy`
 * (bench/secagg.ts), `serverRound` (bench/server.ts). A section run on its own
 * (`npx tsx bench/ml.ts`) reports into nothing that is written.
 */

const collected = new Map<string, object[]>();

/** Adds rows under `key` (several calls append). Row values should be numbers, strings or null. */
export function report(key: string, rows: readonly object[]): void {
  const list = collected.get(key) ?? [];
  list.push(...rows);
  collected.set(key, list);
}

/** Everything reported so far, as a plain object in first-reported order. */
export function reported(): Record<string, object[]> {
  return Object.fromEntries(collected);
}
