/**
 * `fedscore demo`: private scores against exact Shapley on a built-in consortium game.
 *
 * The game stands in for a round of cross-silo training until the experiment engine lands:
 * silo i holds n_i examples of quality q_i (q < 0: mislabeled data that hurts; q = 0: a free
 * rider) and a coalition's model reaches accuracy
 *   v(S) = base + (top − base)·(1 − exp(−Σ_{i∈S} n_i·q_i / scale)),
 * saturating like a learning curve, with v(∅) = base (chance level for 10 classes).
 */
import { coalitionOf, members } from '../../../scoring/coalition.js';
import { coalitionTable, type Game, gameFromFunction } from '../../../scoring/game.js';
import { kendallTau, normalizedL2, pearson, spearman } from '../../../scoring/metrics.js';
import {
  everybodyElse,
  fairPrivate,
  includeOneIn,
  leaveOneOut,
  type PrivateUtilities,
} from '../../../scoring/private.js';
import { createRng } from '../../../scoring/seeded-rng.js';
import { exactShapley } from '../../../scoring/shapley.js';

/** One silo of the demo consortium. */
export interface DemoSilo {
  name: string;
  examples: number;
  quality: number;
}

/** The demo consortium: n silos with seeded sizes and qualities, one free rider and one noisy silo. */
export function demoConsortium(n: number, seed: number): DemoSilo[] {
  if (!Number.isInteger(n) || n < 3 || n > 20)
    throw new RangeError(`silos: expected an integer in [3, 20], got ${n}`);
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => {
    const examples = Math.round(500 + rng.next() * 4500);
    if (i === n - 1) return { name: `silo-${i} (free rider)`, examples, quality: 0 };
    if (i === n - 2) return { name: `silo-${i} (label noise)`, examples, quality: -0.3 };
    return { name: `silo-${i}`, examples, quality: 0.5 + rng.next() * 0.5 };
  });
}

/** The accuracy-like game of the module comment. */
export function demoGame(silos: readonly DemoSilo[], base = 0.1, top = 0.92, scale = 6000): Game {
  return gameFromFunction(silos.length, (c) => {
    const mass = members(c).reduce((s, i) => s + silos[i]!.examples * silos[i]!.quality, 0);
    return (
      base + (top - base) * (1 - Math.exp(-Math.max(0, mass) / scale)) + Math.min(0, mass) / (scale * 20)
    );
  });
}

/** Everything the demo computes. */
export interface DemoResult {
  silos: DemoSilo[];
  utilities: { full: number; empty: number; withOnly: number[]; without: number[] };
  scores: Record<string, number[]>;
  comparison: Record<string, { spearman: number; kendall: number; pearson: number; l2: number }>;
}

/** Runs the demo: private utilities → LOO, IOI, FP, EE, EE-median; exact Shapley as reference. */
export async function runDemo(n: number, seed: number): Promise<DemoResult> {
  const silos = demoConsortium(n, seed);
  const game = demoGame(silos);
  const table = await coalitionTable(game);
  const all = 2 ** n - 1;
  const u: PrivateUtilities = {
    full: table[all]!,
    empty: table[0]!,
    withOnly: silos.map((_, i) => table[coalitionOf(n, [i])[0]!]!),
    without: silos.map((_, i) => table[all & ~(1 << i)]!),
  };
  const scores: Record<string, Float64Array> = {
    shapley: exactShapley(n, table),
    loo: leaveOneOut(u),
    ioi: includeOneIn(u),
    fp: fairPrivate(u),
    ee: everybodyElse(u),
    eeMedian: everybodyElse(u, { reduce: 'median' }),
  };
  const ref = scores.shapley!;
  const comparison: DemoResult['comparison'] = {};
  for (const [name, s] of Object.entries(scores)) {
    if (name === 'shapley') continue;
    comparison[name] = {
      spearman: spearman(s, ref),
      kendall: kendallTau(s, ref),
      pearson: pearson(s, ref),
      l2: normalizedL2(s, ref),
    };
  }
  return {
    silos,
    utilities: {
      full: u.full,
      empty: u.empty,
      withOnly: Array.from(u.withOnly),
      without: Array.from(u.without),
    },
    scores: Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, Array.from(v)])),
    comparison,
  };
}

const f = (x: number, d = 4) => (Number.isNaN(x) ? 'n/a' : x.toFixed(d));

/** The demo as text tables (Markdown). */
export function formatDemo(r: DemoResult): string {
  const names = Object.keys(r.scores);
  const lines = [
    `Consortium of ${r.silos.length} silos; v(M0) = ${f(r.utilities.empty)}, v(M) = ${f(r.utilities.full)}.`,
    'Private scores use only v(M), v(M0) and each silo’s own v(M0 + U_i), v(M − U_i) (papers/003 §4);',
    'exact Shapley needs all 2^n coalitions and serves as the reference.',
    '',
    `| silo | examples | quality | ${names.join(' | ')} |`,
    `|---|---:|---:|${names.map(() => '---:').join('|')}|`,
    ...r.silos.map(
      (s, i) =>
        `| ${s.name} | ${s.examples} | ${f(s.quality, 2)} | ${names.map((k) => f(r.scores[k]![i]!)).join(' | ')} |`,
    ),
    '',
    'Agreement with exact Shapley:',
    '',
    '| score | Spearman | Kendall | Pearson | normalized L2 |',
    '|---|---:|---:|---:|---:|',
    ...Object.entries(r.comparison).map(
      ([k, c]) => `| ${k} | ${f(c.spearman, 3)} | ${f(c.kendall, 3)} | ${f(c.pearson, 3)} | ${f(c.l2, 3)} |`,
    ),
  ];
  return lines.join('\n');
}
