/**
 * The candidates for the headline score (issue 37, "a headline a consortium can pay out"),
 * measured for docs/findings.md, "The headline score":
 *   separation — on the generated file of scripts/_separation-file.ts (6 silos × 5 rounds, ordered
 *     contributions, a free rider; 5 noise seeds): Spearman of the honest silos' cumulative weight
 *     with their true contributions, the free rider's share (max(0, h_i)/Σ max(0, h_j)) and
 *     whether it ranks last alone; and, for each results.json given, Spearman of the cumulative
 *     weight with the run's cumulative reference (mean over seeds);
 *   self-gain — docs/audit.md's table for the candidate, computed by the audit's own optimizer
 *     (`singleSiloBounds(…).selfGainUndetected`, `undetectedCollusionBounds`) on the issue 27
 *     rounds: the largest (honest + gain)/honest of one silo and of a pair; with `--audit
 *     results.json`, also on that run's last round of its first seed (docs/audit.md's third round:
 *     the quickstart's round 5; the 9-silo pair search costs minutes per candidate).
 *
 *   npx tsx scripts/headline-candidates.ts [--audit results.json] [--only 1,5] [results.json …]
 *   (--only: the candidates of those rows, 1-based)
 */
import { readFileSync } from 'node:fs';
import { undetectedCollusionBounds } from '../scoring/manipulation/collusion.js';
import { singleSiloBounds } from '../scoring/manipulation/single-silo.js';
import { spearman } from '../scoring/metrics.js';
import type { PayoutVariant } from '../scoring/payout.js';
import { payoutWeights } from '../scoring/payout.js';
import { withPayoutVariant } from '../scoring/payout-variant.js';
import { checkUtilities, type PrivateUtilities, schemeScores } from '../scoring/private.js';
import { ISSUE_27_NO_TIES, ISSUE_27_TIES } from './_audit-rounds.js';
import { separationRounds, TRUE_CONTRIBUTIONS } from './_separation-file.js';

const GATED = { base: 'eeMedian', gate: 'alpha', tau: 0.5 } as const;

const CANDIDATES: [string, PayoutVariant][] = [
  ['EE-median weight (headline before issue 37)', { base: 'eeMedian', gate: 'none', tau: 0.5, tie: 0 }],
  ['EE weight (mean of the others)', { base: 'ee', gate: 'none', tau: 0.5, tie: 0 }],
  ['trimmed mean of the others', { base: 'trimmed', gate: 'none', tau: 0.5, tie: 0 }],
  ['EE-median × gate(α, τ 0.5)', { base: 'eeMedian', gate: 'alpha', tau: 0.5, tie: 0 }],
  ['EE-median × gate(α, τ 0.5) × tie 0.05', { base: 'eeMedian', gate: 'alpha', tau: 0.5, tie: 0.05 }],
  ['EE-median × gate(α, τ 0.5) × tie 0.1', { base: 'eeMedian', gate: 'alpha', tau: 0.5, tie: 0.1 }],
  ['EE-median × gate(α, τ 0.5) × tie 0.2', { base: 'eeMedian', gate: 'alpha', tau: 0.5, tie: 0.2 }],
  ['EE-median × gate(LOO, τ 0.5) × tie 0.1', { base: 'eeMedian', gate: 'loo', tau: 0.5, tie: 0.1 }],
  ['EE-median × gate(α, τ 1) × tie 0.1', { base: 'eeMedian', gate: 'alpha', tau: 1, tie: 0.1 }],
  ['EE × gate(α, τ 0.5)', { base: 'ee', gate: 'alpha', tau: 0.5, tie: 0 }],
  ['trimmed × gate(α, τ 0.5) × tie 0.1', { base: 'trimmed', gate: 'alpha', tau: 0.5, tie: 0.1 }],
  // after issue 37's first version: the gate blended by the others' signal c_i (scoring/payout.ts)
  ['signal κ 1: quiet rounds EE-median, tie 0.1', { ...GATED, tie: 0.1, signal: 1, quiet: 1 }],
  ['signal κ 2: quiet rounds EE-median, tie 0.1', { ...GATED, tie: 0.1, signal: 2, quiet: 1 }],
  ['signal κ 1: quiet rounds EE-median × 0.5, tie 0.05', { ...GATED, tie: 0.05, signal: 1, quiet: 0.5 }],
  [
    'signal κ 1: quiet rounds even, tie 0.05',
    { ...GATED, tie: 0.05, signal: 1, quiet: 1, quietBase: 'even' },
  ],
  [
    'signal κ 1: quiet rounds even, gated part capped at even, tie 0.05',
    { ...GATED, tie: 0.05, signal: 1, quiet: 1, quietBase: 'evenCapped' },
  ],
  [
    'signal κ 1: both parts min(base, even), untrimmed, tie 0.05',
    { ...GATED, tie: 0.05, signal: 1, quiet: 1, quietBase: 'capped' },
  ],
  [
    'signal κ 1 trimmed 2: both parts min(base, even), tie 0.05 (headline)',
    { ...GATED, tie: 0.05, signal: 1, quiet: 1, quietBase: 'capped', trim: 2 },
  ],
  [
    'signal κ 1 trimmed 2: both parts min(base, even), tie 0.1',
    { ...GATED, tie: 0.1, signal: 1, quiet: 1, quietBase: 'capped', trim: 2 },
  ],
];

const AUDIT_ROUNDS: PrivateUtilities[] = [ISSUE_27_TIES, ISSUE_27_NO_TIES];

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Cumulative weight over rounds of utilities. */
function cumulative(rounds: readonly PrivateUtilities[], v: PayoutVariant, n: number): number[] {
  const total = new Array<number>(n).fill(0);
  for (const u of rounds)
    payoutWeights(checkUtilities(u), v).forEach((w, i) => {
      total[i]! += w;
    });
  return total;
}

function separation(v: PayoutVariant) {
  const rows = [1, 2, 3, 4, 5].map((seed) => {
    const h = cumulative(separationRounds(seed), v, 6);
    const pos = h.map((x) => Math.max(0, x));
    const share = pos[5]! / sum(pos);
    const rho = spearman(h.slice(0, 5), TRUE_CONTRIBUTIONS.slice(0, 5));
    const lastAlone = h.slice(0, 5).every((x) => x > h[5]!);
    return { share, rho, lastAlone };
  });
  return {
    rho: Math.min(...rows.map((r) => r.rho)),
    share: Math.max(...rows.map((r) => r.share)),
    lastAlone: rows.every((r) => r.lastAlone),
  };
}

function selfGains(v: PayoutVariant, rounds: readonly PrivateUtilities[]) {
  return withPayoutVariant(v, () => {
    let one = 1;
    let pair = 1;
    for (const u of rounds) {
      const honest = schemeScores('payout', u);
      const bounds = singleSiloBounds('payout', u);
      bounds.forEach((b, i) => {
        if (honest[i]! > 0) one = Math.max(one, (honest[i]! + b.selfGainUndetected.value) / honest[i]!);
      });
      const n = u.withOnly.length;
      for (let a = 0; a < n; a++)
        for (let b = a + 1; b < n; b++) {
          const g = undetectedCollusionBounds('payout', u, [a, b], {}, bounds).totalGain.value;
          const h = honest[a]! + honest[b]!;
          if (h > 0) pair = Math.max(pair, (h + g) / h);
        }
    }
    return { one, pair };
  });
}

interface Results {
  runs: {
    rounds: {
      utilities: { full: number; empty: number; withOnly: (number | null)[]; without: (number | null)[] };
    }[];
    cumulative: Record<string, number[]>;
  }[];
  config?: { scoring?: { reference?: string } };
}

function referenceAgreement(path: string, v: PayoutVariant): number {
  const r = JSON.parse(readFileSync(path, 'utf8')) as Results;
  const rhos = r.runs.flatMap((run) => {
    const ref = run.cumulative.mrsv ?? run.cumulative.roundSv;
    const n = run.rounds[0]!.utilities.withOnly.length;
    const total = new Array<number>(n).fill(0);
    for (const rd of run.rounds) {
      const silos = rd.utilities.withOnly.flatMap((x, i) =>
        x !== null && rd.utilities.without[i] !== null ? [i] : [],
      );
      if (silos.length < 2) continue;
      const w = payoutWeights(
        checkUtilities({
          full: rd.utilities.full,
          empty: rd.utilities.empty,
          withOnly: silos.map((i) => rd.utilities.withOnly[i]!),
          without: silos.map((i) => rd.utilities.without[i]!),
        }),
        v,
      );
      silos.forEach((g, q) => {
        total[g]! += w[q]!;
      });
    }
    return ref ? [spearman(total, ref)] : [];
  });
  return sum(rhos) / rhos.length;
}

/** The last round of a results.json's first seed over its reporting silos (docs/audit.md's third round). */
function lastRoundOf(path: string): PrivateUtilities {
  const r = JSON.parse(readFileSync(path, 'utf8')) as Results;
  const u = r.runs[0]!.rounds.at(-1)!.utilities;
  const silos = u.withOnly.flatMap((x, i) => (x !== null && u.without[i] !== null ? [i] : []));
  return {
    full: u.full,
    empty: u.empty,
    withOnly: silos.map((i) => u.withOnly[i]!),
    without: silos.map((i) => u.without[i]!),
  };
}

const args = process.argv.slice(2);
const flag = (name: string) => {
  const k = args.indexOf(name);
  if (k < 0) return undefined;
  const value = args[k + 1];
  if (value === undefined) throw new Error(`${name}: expected a value`);
  args.splice(k, 2);
  return value;
};
const auditPath = flag('--audit');
const only = flag('--only')
  ?.split(',')
  .map((x) => Number(x) - 1);
const paths = args;
const auditRound = auditPath === undefined ? undefined : lastRoundOf(auditPath);
const f = (x: number) => x.toFixed(3);
const auditHead = auditPath ? ` ${auditPath} last round: one silo × | pair × |` : '';
process.stdout.write(
  `| candidate | honest Spearman (min of 5) | free rider share (max) | last alone | ${paths.map((p) => `Spearman vs reference, ${p}`).join(' | ')}${paths.length ? ' | ' : ''}issue 27 rounds: one silo × | pair × |${auditHead}\n`,
);
process.stdout.write(
  `|---|---:|---:|---|${paths.map(() => '---:|').join('')}---:|---:|${auditPath ? '---:|---:|' : ''}\n`,
);
CANDIDATES.forEach(([name, v], k) => {
  if (only && !only.includes(k)) return;
  const s = separation(v);
  const refs = paths.map((p) => f(referenceAgreement(p, v)));
  const g = selfGains(v, AUDIT_ROUNDS);
  const a = auditRound ? selfGains(v, [auditRound]) : undefined;
  process.stdout.write(
    `| ${name} | ${f(s.rho)} | ${f(s.share)} | ${s.lastAlone ? 'yes' : 'no'} | ${refs.join(' | ')}${refs.length ? ' | ' : ''}${f(g.one)} | ${f(g.pair)} |${a ? ` ${f(a.one)} | ${f(a.pair)} |` : ''}\n`,
  );
});
