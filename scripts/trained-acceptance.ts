/**
 * Issue 37's acceptance on trained runs with misbehaving silos (docs/findings.md, "The headline
 * score"): for every seed of each results.json given (an experiment whose configuration computes
 * the true Shapley value of the retraining game, `comparison.trueShapley`), the Spearman of the
 * cumulative headline (`payout`, the seed's own leaderboard) with the cumulative true Shapley
 * value, the Spearman of cumulative LOO with it, and the honest silos with a positive true Shapley
 * value whose report was quarantined (and not released) in some round.
 *
 *   nice npx tsx src/cli/main.ts experiment --config <config> --out <dir> --seeds 5 --workers 1
 *   npx tsx scripts/trained-acceptance.ts <dir>/results.json …
 */
import { readFileSync } from 'node:fs';
import type { EmptyCoalition } from '../scoring/empty-coalition.js';
import { spearman } from '../scoring/metrics.js';
import { leaderboardOf } from '../src/records/leaderboard.js';
import type { ExperimentResults } from '../src/records/results.js';

const TRUE_SV = 'trueSv';

interface SeedRow {
  seed: number;
  headline: number;
  loo: number;
  /** Honest silos with a positive true Shapley value quarantined in some round. */
  quarantinedHonest: number[];
  /** Every silo quarantined in some round. */
  quarantined: number[];
}

function seedRows(path: string): { name: string; rows: SeedRow[] } {
  const r = JSON.parse(readFileSync(path, 'utf8')) as ExperimentResults;
  const names = r.silos.names;
  const roles = r.silos.roles;
  const empty = (r.scoring?.emptyCoalition ?? 'initialModel') as EmptyCoalition;
  const rows = r.runs.map((run) => {
    const sv = run.cumulative[TRUE_SV];
    const loo = run.cumulative.loo;
    if (!sv)
      throw new Error(`${path}: seed ${run.seed} has no cumulative ${TRUE_SV} (set comparison.trueShapley)`);
    if (!loo) throw new Error(`${path}: seed ${run.seed} has no cumulative loo`);
    const rounds = run.rounds.map((rd) => ({
      ...rd,
      quarantined: (rd.quarantined ?? []).filter((q) => !q.released).map((q) => q.silo),
    }));
    // the seed's own leaderboard: the headline as every output shows it for one run
    const board = leaderboardOf({
      names,
      emptyCoalition: empty,
      runs: [{ cumulative: run.cumulative, rounds }],
    });
    const headline = names.map((_, i) => board.find((e) => e.silo === i)?.headline ?? 0);
    const quarantined = [...new Set(rounds.flatMap((rd) => rd.quarantined))].sort((a, b) => a - b);
    return {
      seed: run.seed,
      headline: spearman(headline, sv),
      loo: spearman(loo, sv),
      quarantined,
      quarantinedHonest: quarantined.filter((i) => roles[i] === 'honest' && sv[i]! > 0),
    };
  });
  return { name: (r.config as { name?: string }).name ?? path, rows };
}

const paths = process.argv.slice(2);
if (paths.length === 0) {
  console.error('usage: npx tsx scripts/trained-acceptance.ts <results.json> …');
  process.exit(2);
}
const f = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const summary: string[] = [];
for (const path of paths) {
  const { name, rows } = seedRows(path);
  console.log(`\n${path}: ${name}`);
  console.log(
    '| seed | Spearman payout vs trueSv | Spearman LOO vs trueSv | quarantined (any round) | honest, trueSv > 0, quarantined |',
  );
  console.log('|---:|---:|---:|---|---|');
  for (const row of rows)
    console.log(
      `| ${row.seed} | ${f(row.headline)} | ${f(row.loo)} | ${row.quarantined.join(', ') || '–'} | ${row.quarantinedHonest.join(', ') || '–'} |`,
    );
  const h = mean(rows.map((x) => x.headline));
  const l = mean(rows.map((x) => x.loo));
  const bad = rows.reduce((s, x) => s + x.quarantinedHonest.length, 0);
  console.log(`mean: payout ${f(h)}, LOO ${f(l)}; honest positive-SV silos quarantined: ${bad}`);
  summary.push(`| ${path} | ${rows.length} | ${f(h)} | ${f(l)} | ${bad} |`);
}
console.log(
  '\n| results | seeds | mean Spearman payout vs trueSv | mean Spearman LOO vs trueSv | honest positive-SV quarantined |',
);
console.log('|---|---:|---:|---:|---:|');
for (const s of summary) console.log(s);
