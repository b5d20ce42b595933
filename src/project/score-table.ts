/**
 * The per-silo table `fedscore up` prints at the end, from the service's published scores
 * (`GET /v1/consortia/:cid/scores`): one row per silo, its cumulative score under each scheme.
 */
import type { CumulativeScores } from '../contract/schemas.js';

/** The parts of `GET /v1/consortia/:cid/scores` (the contract's CumulativeScores) the table reads. */
export type PublishedScores = Pick<CumulativeScores, 'cumulative'> & { rounds: readonly unknown[] };

const num = (x: number | undefined) =>
  x === undefined || !Number.isFinite(x) ? '–' : String(Number(x.toPrecision(4)));

/** The table: silo, its name, then its cumulative score per scheme, ranked by the first scheme. */
export function siloScoreTable(scores: PublishedScores, names: readonly string[]): string {
  const schemes = Object.keys(scores.cumulative);
  const header = ['silo', 'name', ...schemes.map((s) => `${s} (cumulative)`)];
  const first = scores.cumulative[schemes[0]!] ?? [];
  const order = names.map((_, i) => i).sort((a, b) => (first[b] ?? -Infinity) - (first[a] ?? -Infinity));
  const rows = order.map((i) => [String(i), names[i]!, ...schemes.map((s) => num(scores.cumulative[s]![i]))]);
  const widths = header.map((h, k) => Math.max(h.length, ...rows.map((r) => r[k]!.length)));
  const fmt = (cells: string[]) =>
    cells
      .map((x, k) => x.padEnd(widths[k]!))
      .join('  ')
      .trimEnd();
  return `scores over ${scores.rounds.length} scored rounds:\n${[fmt(header), ...rows.map(fmt)].join('\n')}\n`;
}
