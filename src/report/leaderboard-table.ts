/**
 * The leaderboard as rows of cells (header first) — the one layout every output prints: the
 * console of `experiment`, `score` and `audit`, report.md/report.html and the silo's own line.
 */
import { rankLabel } from '../../scoring/leaderboard.js';
import { inertText } from '../consortium/inert-text.js';
import {
  HEADLINE,
  headlineAgreementOf,
  type LeaderboardEntry,
  type LeaderboardFlag,
} from '../records/leaderboard.js';

const fmt = (x: number | null | undefined, d = 4) =>
  x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d);

/** A silo's flags in words: `free-rider: …; noisy: …`, or `–`. */
export const flagWords = (flags: readonly LeaderboardFlag[]) =>
  flags.length === 0 ? '–' : flags.map((f) => `${f.kind}: ${f.reason}`).join('; ');

/**
 * The columns after the headline: the private schemes and the reference, as the entries carry
 * them, less the `hidden` private schemes (src/records/shown-schemes.ts: FP unless asked for).
 */
export function scoreColumns(
  entries: readonly LeaderboardEntry[],
  hidden: ReadonlySet<string> = new Set(),
): string[] {
  return [...new Set(entries.flatMap((e) => Object.keys(e.scores)))].filter((m) => !hidden.has(m));
}

/** The heading line of the leaderboard. */
export function leaderboardHeading(seedWords?: string): string {
  return `Leaderboard — headline: ${HEADLINE} weight, summed over the scored rounds${seedWords ? ` (${seedWords})` : ''}; rank 1 contributed most, "2–3" is a near-tie (95 % bootstrap over rounds); share = fraction of the reward; the "Σ scheme" columns are other schemes' summed scores for comparison, not a ranking`;
}

/** A share as a percentage, or why there is none. */
export const shareWords = (share: number | null | undefined) =>
  share === undefined ? '–' : share === null ? 'never selected' : `${(100 * share).toFixed(1)} %`;

/** An interval as `[lo, hi]`, or `–`. */
export const intervalWords = (iv: readonly [number, number] | undefined, d = 4) =>
  iv ? `[${fmt(iv[0], d)}, ${fmt(iv[1], d)}]` : '–';

/** The header of a scheme's comparison column: its summed scores, labelled as not a ranking. */
export const schemeColumnLabel = (scheme: string) => `Σ ${scheme}`;

/** The leaderboard as rows of cells, header first, without the `hidden` schemes' columns. */
export function leaderboardRows(
  entries: readonly LeaderboardEntry[],
  hidden: ReadonlySet<string> = new Set(),
): string[][] {
  const columns = scoreColumns(entries, hidden);
  return [
    [
      'rank',
      'silo',
      `headline (${HEADLINE})`,
      '95 % interval',
      'share',
      'last round',
      ...columns.map(schemeColumnLabel),
      'flags',
    ],
    ...entries.map((e) => [
      rankLabel(e),
      inertText(e.name), // a name from a file (issue 32, T1): no escape, and one line per silo
      fmt(e.headline),
      intervalWords(e.interval),
      shareWords(e.share),
      fmt(e.lastRound),
      ...columns.map((c) => fmt(e.scores[c])),
      flagWords(e.flags),
    ]),
  ];
}

/** One silo's line, as `fedscore client` prints it after a scored round. */
export function leaderboardLine(e: LeaderboardEntry, of: number, round?: number): string {
  const others = Object.entries(e.scores)
    .map(([m, v]) => `${m} ${fmt(v)}`)
    .join(', ');
  return `leaderboard${round !== undefined ? ` after round ${round}` : ''}: ${e.name} rank ${rankLabel(e)} of ${of}, headline (${HEADLINE}) ${fmt(e.headline)} ${intervalWords(e.interval)}, share ${shareWords(e.share)} (last round ${fmt(e.lastRound)}); summed scores of other schemes (not a ranking): ${others}; flags: ${flagWords(e.flags)}`;
}

/**
 * The agreement of what the leaderboard shows with the cumulative reference (issue 37), one line
 * per reference: `agreement with the cumulative mrsv (9 silos): headline Spearman 0.950, Kendall
 * 0.833; share Spearman …`; empty without a reference.
 */
export function agreementLines(entries: readonly LeaderboardEntry[]): string[] {
  const f = (a: { spearman: number; kendall: number } | null) =>
    a ? `Spearman ${a.spearman.toFixed(3)}, Kendall ${a.kendall.toFixed(3)}` : 'undefined (constant)';
  return headlineAgreementOf(entries).map(
    (a) =>
      `agreement with the cumulative ${a.reference} (${a.silos} silos): headline ${f(a.headline)}; share ${f(a.share)}`,
  );
}

/** Rows as aligned text columns (first two left-aligned, the flags last and unpadded). */
export function textColumns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
  const last = (rows[0]?.length ?? 0) - 1;
  return rows
    .map((r) =>
      `  ${r
        .map((c, i) =>
          i === last ? `  ${c}` : i <= 1 ? `${c.padEnd(widths[i]!)}  ` : `${c.padStart(widths[i]!)}  `,
        )
        .join('')}`.trimEnd(),
    )
    .join('\n');
}

/** The markdown table of rows (header first; the first two columns left-aligned). */
function mdTable(rows: readonly (readonly string[])[]): string {
  const [head, ...body] = rows;
  if (!head) return '';
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i <= 1 || i === head.length - 1 ? '---' : '---:')).join('|')}|`,
    ...body.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** The leaderboard section of report.md (empty without a leaderboard: files written before it). */
export function leaderboardMarkdown(
  entries: readonly LeaderboardEntry[] | undefined,
  seedWords?: string,
  hidden?: ReadonlySet<string>,
): string[] {
  if (!entries || entries.length === 0) return [];
  const agreement = agreementLines(entries);
  return [
    `## ${leaderboardHeading(seedWords)}`,
    '',
    mdTable(leaderboardRows(entries, hidden)),
    '',
    ...(agreement.length > 0 ? [...agreement.map((l) => `- ${l}`), ''] : []),
  ];
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!,
  );

/** The leaderboard section of report.html: a table whose flagged rows are marked (class `flagged`). */
export function leaderboardHtml(
  entries: readonly LeaderboardEntry[] | undefined,
  seedWords?: string,
  hidden?: ReadonlySet<string>,
): string {
  if (!entries || entries.length === 0) return '';
  const [head, ...body] = leaderboardRows(entries, hidden);
  return `<section id="leaderboard"><h2>${escapeHtml(leaderboardHeading(seedWords))}</h2>
<table class="leaderboard"><thead><tr>${head!.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${body
    .map(
      (row, k) =>
        `<tr${entries[k]!.flags.length > 0 ? ' class="flagged"' : ''}>${row
          .map((c, i) => `<td${i === row.length - 1 ? ' class="flags"' : ''}>${escapeHtml(c)}</td>`)
          .join('')}</tr>`,
    )
    .join('')}</tbody></table>${agreementLines(entries)
    .map((l) => `<p class="agreement">${escapeHtml(l)}</p>`)
    .join('')}</section>`;
}
