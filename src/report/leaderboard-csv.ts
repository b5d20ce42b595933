/**
 * leaderboard.csv (issue 37): the leaderboard beside results.json / scores.json for spreadsheet and
 * pandas users — one row per silo in rank order: rank (near-ties as "2–3"), rankBest, rankWorst,
 * silo, name, headline, intervalLo, intervalHi, share (empty: never selected), every scheme's summed
 * score (`sum_<scheme>`: other rules for comparison, not a ranking), flags ("kind: reason; …").
 * RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled; a field starting
 * with =, +, -, @ that is not a number is prefixed with ' (spreadsheet formula injection).
 */
import { rankLabel } from '../../scoring/leaderboard.js';
import type { LeaderboardEntry } from '../records/leaderboard.js';
import { flagWords } from './leaderboard-table.js';

const NUMBER = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

/** One CSV field. */
function field(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let s = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value;
  if (/^[=+\-@]/.test(s) && !NUMBER.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The leaderboard as CSV text (header first, CRLF line ends as RFC 4180 asks). */
export function leaderboardCsv(entries: readonly LeaderboardEntry[]): string {
  const schemes = [...new Set(entries.flatMap((e) => Object.keys(e.scores)))];
  const header = [
    'rank',
    'rankBest',
    'rankWorst',
    'silo',
    'name',
    'headline',
    'intervalLo',
    'intervalHi',
    'share',
    ...schemes.map((m) => `sum_${m}`),
    'flags',
  ];
  const rows = entries.map((e) => [
    rankLabel(e),
    e.rankRange?.[0] ?? e.rank,
    e.rankRange?.[1] ?? e.rank,
    e.silo,
    e.name,
    e.headline,
    e.interval?.[0],
    e.interval?.[1],
    e.share,
    ...schemes.map((m) => e.scores[m]),
    e.flags.length === 0 ? '' : flagWords(e.flags),
  ]);
  return `${[header, ...rows].map((r) => r.map(field).join(',')).join('\r\n')}\r\n`;
}
