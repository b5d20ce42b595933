/**
 * What `fedscore up` ends with (issue 37: "`fedscore up` ends with the leaderboard and writes
 * `scores.json`"): the service's published rounds (`GET /v1/consortia/:cid/scores`) as a scores.json
 * in `fedscore score`'s format (src/records/utility-scores.ts) — each scored round's reported
 * utilities scored as `fedscore score --utilities` scores them, the silos the service left out
 * (quarantined reports not released) left out here too — with the leaderboard of the published
 * rounds (src/records/leaderboard.ts `leaderboardOfPublished`, the dashboard's and the silos'),
 * and that leaderboard as the console prints it everywhere (src/report/leaderboard-table.ts).
 */
import type { EmptyCoalition } from '../../../scoring/empty-coalition.js';
import type { CumulativeScores } from '../../consortium/schemas.js';
import { leaderboardOfPublished } from '../../records/leaderboard.js';
import { scoreUtilities, type UtilityScores } from '../../records/utility-scores.js';
import { leaderboardHeading, leaderboardRows, textColumns } from '../../report/leaderboard-table.js';
import { hiddenOf } from '../../report/report-common.js';

/**
 * scores.json of a project's published rounds.
 * @param source what the record says it was computed from.
 */
export async function projectScores(
  published: CumulativeScores,
  names: readonly string[],
  o: { source: string; fedscoreVersion: string; emptyCoalition?: EmptyCoalition },
): Promise<UtilityScores> {
  const n = names.length;
  // A silo the service did not score in a round (no report, or quarantined) reports nothing there.
  const scoredOnly = (values: readonly (number | null)[], silos: readonly number[]) =>
    Array.from({ length: n }, (_, i) => (silos.includes(i) ? (values[i] ?? null) : null));
  const file = {
    silos: [...names],
    range: [-1e6, 1e6] as [number, number],
    rounds: published.rounds.map((r) => ({
      round: r.round,
      full: r.utilities.full,
      empty: r.utilities.empty,
      withOnly: scoredOnly(r.withOnly, r.silos),
      without: scoredOnly(r.without, r.silos),
    })),
  };
  const scores = await scoreUtilities(file, { source: o.source, fedscoreVersion: o.fedscoreVersion });
  // The published leaderboard: the same rows, with the service's quarantine flags.
  return { ...scores, leaderboard: leaderboardOfPublished(names, published.rounds, o.emptyCoalition) };
}

/** The leaderboard as `fedscore score` prints it. */
export function leaderboardText(scores: UtilityScores): string {
  return [
    `${leaderboardHeading()}:`,
    '',
    textColumns(leaderboardRows(scores.leaderboard ?? [], hiddenOf(scores))),
    '',
  ].join('\n');
}
