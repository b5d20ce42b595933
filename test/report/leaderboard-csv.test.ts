import { describe, expect, it } from 'vitest';
import type { LeaderboardEntry } from '../../src/records/leaderboard.js';
import { leaderboardCsv } from '../../src/report/leaderboard-csv.js';

const entry = (silo: number, name: string, extra: Partial<LeaderboardEntry> = {}): LeaderboardEntry => ({
  silo,
  name,
  rank: silo + 1,
  rankRange: [silo + 1, silo + 2],
  headline: 0.1 / (silo + 1),
  interval: [0, 0.2],
  share: silo === 2 ? null : 0.5,
  lastRound: null,
  scores: { loo: 0.01, ee: 0.3 },
  flags: [],
  ...extra,
});

describe('leaderboard.csv', () => {
  it('one row per silo: rank range, interval, share (empty: never selected), every scheme, flags; quoted', () => {
    const csv = leaderboardCsv([
      entry(0, 'a'),
      entry(1, 'b, "quoted"', { flags: [{ kind: 'noisy', reason: 'label noise' }] }),
      entry(2, '=cmd()'),
    ]);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(
      'rank,rankBest,rankWorst,silo,name,headline,intervalLo,intervalHi,share,sum_loo,sum_ee,flags',
    );
    expect(lines[1]).toBe('1–2,1,2,0,a,0.1,0,0.2,0.5,0.01,0.3,');
    expect(lines[2]).toBe('2–3,2,3,1,"b, ""quoted""",0.05,0,0.2,0.5,0.01,0.3,noisy: label noise');
    expect(lines[3]).toContain(",'=cmd(),");
    expect(lines[3]!.split(',')[8]).toBe('');
    expect(lines).toHaveLength(5); // trailing CRLF
  });
});
