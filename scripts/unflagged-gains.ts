/**
 * The largest self-gain each private scheme allows with reports the detector does not flag
 * (issue 27, A4; the table of docs/audit.md, "What a silo can still gain unflagged").
 *
 *   npx tsx scripts/unflagged-gains.ts [results.json …]     (--example-only: the issue's round alone;
 *                                                           --scheme payout: one scheme)
 *
 * Rounds: the issue's example (v(M) = 0.86, v(M0) = 0.85, 5 silos, the honest reports of
 * test/security/in-range-manipulation.test.ts, then the same round with honest values that do not
 * tie) and, for each results.json given (default
 * runs/quickstart/results.json when it exists; `npm run quickstart` writes it in about 20 s), its
 * last round of the first seed (the pair search costs minutes per 9-silo round). Per round and scheme:
 *   one silo: max over silos of `singleSiloBounds(…).selfGainUndetected` (the audit's optimizer on
 *     the box of unflagged reports, exact), in score units and as a ratio to the silo's honest score;
 *   a pair: max over pairs of the pair's summed gain with neither member flagged
 *     (`undetectedCollusionBounds`, a coordinate search: a lower bound of the supremum).
 * "×" columns: the largest (honest + gain) / honest over silos (pairs) whose honest score is > 0;
 * n/a when none is; Infinity when a gain is unbounded (the reports can drive D to zero). Also printed: the false flags of the detector on the honest reports at
 * thresholds 3.5, 3.0 and 2.5 (item 4 of the issue's A4).
 */
import { existsSync, readFileSync } from 'node:fs';
import { undetectedCollusionBounds } from '../scoring/manipulation/collusion.js';
import { detectReports } from '../scoring/manipulation/detection.js';
import { singleSiloBounds } from '../scoring/manipulation/single-silo.js';
import {
  ALL_SCHEMES,
  type PrivateUtilities,
  type RegisteredScheme as Scheme,
  schemeScores,
} from '../scoring/private.js';
import { ISSUE_27_NO_TIES, ISSUE_27_TIES } from './_audit-rounds.js';

interface NamedRound {
  name: string;
  u: PrivateUtilities;
}

const EXAMPLES: NamedRound[] = [
  {
    name: 'issue 27 example (5 silos; three honest LOO_j tie at 0.003)',
    u: ISSUE_27_TIES,
  },
  {
    name: 'issue 27 example, honest reports without ties (5 silos)',
    u: ISSUE_27_NO_TIES,
  },
];

/** The last `count` rounds of a results.json's first seed, with every reporting silo. */
function roundsOf(path: string, count: number): NamedRound[] {
  const results = JSON.parse(readFileSync(path, 'utf8')) as {
    runs: {
      rounds: {
        round: number;
        utilities: { full: number; empty: number; withOnly: (number | null)[]; without: (number | null)[] };
      }[];
    }[];
  };
  const rounds = results.runs[0]?.rounds ?? [];
  return rounds.slice(-count).map((r) => {
    const silos = r.utilities.withOnly.flatMap((x, i) =>
      x !== null && r.utilities.without[i] !== null ? [i] : [],
    );
    return {
      name: `${path} round ${r.round} (${silos.length} silos)`,
      u: {
        full: r.utilities.full,
        empty: r.utilities.empty,
        withOnly: silos.map((i) => r.utilities.withOnly[i]!),
        without: silos.map((i) => r.utilities.without[i]!),
      },
    };
  });
}

const fmt = (x: number) => (Number.isFinite(x) ? x.toPrecision(3) : String(x));
const ratio = (honest: number, gain: number) => (honest > 0 ? (honest + gain) / honest : Number.NaN);

interface Row {
  scheme: Scheme;
  single: number;
  singleRatio: number;
  pair: number;
  pairRatio: number;
}

/** The largest value that is not NaN (+Infinity when a gain is unbounded), NaN when there is none. */
function maxFinite(xs: readonly number[]): number {
  const f = xs.filter((x) => !Number.isNaN(x));
  return f.length > 0 ? Math.max(...f) : Number.NaN;
}

function gainsOf(u: PrivateUtilities, scheme: Scheme): Row {
  const n = u.withOnly.length;
  const honest = schemeScores(scheme, u);
  const bounds = singleSiloBounds(scheme, u);
  const single = bounds.map((b) => b.selfGainUndetected.value);
  const pairs: { gain: number; ratio: number }[] = [];
  for (let a = 0; a < n; a++)
    for (let b = a + 1; b < n; b++) {
      const gain = undetectedCollusionBounds(scheme, u, [a, b], {}, bounds).totalGain.value;
      pairs.push({ gain, ratio: ratio(honest[a]! + honest[b]!, gain) });
    }
  return {
    scheme,
    single: Math.max(...single),
    singleRatio: maxFinite(single.map((g, i) => ratio(honest[i]!, g))),
    pair: Math.max(...pairs.map((p) => p.gain)),
    pairRatio: maxFinite(pairs.map((p) => p.ratio)),
  };
}

function falseFlags(u: PrivateUtilities): string {
  return [3.5, 3, 2.5].map((t) => `${t}: ${detectReports(u, t).flagged.filter(Boolean).length}`).join(', ');
}

const exampleOnly = process.argv.includes('--example-only');
/** `--scheme payout`: one scheme only (the 9-silo pair search costs minutes per scheme). */
const schemeAt = process.argv.indexOf('--scheme');
const ONLY = schemeAt > 0 ? [process.argv[schemeAt + 1] as Scheme] : undefined;
const paths = process.argv
  .slice(2)
  .filter((a, k, all) => a !== '--example-only' && a !== '--scheme' && all[k - 1] !== '--scheme');
if (!exampleOnly && paths.length === 0 && existsSync('runs/quickstart/results.json'))
  paths.push('runs/quickstart/results.json');
const rounds = [...EXAMPLES, ...paths.flatMap((p) => roundsOf(p, 1))];
const print = (...more: string[]) => {
  process.stdout.write(`${more.join('\n')}\n`);
};
for (const { name, u } of rounds) {
  print(`### ${name}: v(M) = ${fmt(u.full)}, v(M0) = ${fmt(u.empty)}`);
  print(`false flags on the honest reports at thresholds ${falseFlags(u)}`, '');
  print('| scheme | one silo: gain | one silo: × | pair: gain | pair: × |');
  print('|---|---:|---:|---:|---:|');
  for (const scheme of ONLY ?? ALL_SCHEMES) {
    const r = gainsOf(u, scheme);
    print(
      `| ${scheme} | ${fmt(r.single)} | ${Number.isNaN(r.singleRatio) ? 'n/a' : fmt(r.singleRatio)} | ${fmt(r.pair)} | ${Number.isNaN(r.pairRatio) ? 'n/a' : fmt(r.pairRatio)} |`,
    );
  }
  print('');
}
