import { describe, expect, it } from 'vitest';
import type { ExperimentResults, RoundRecord } from '../../src/records/results.js';
import { parseUtilitiesFile } from '../../src/records/utilities-file.js';
import { scoreUtilities } from '../../src/records/utility-scores.js';
import {
  agreementTables,
  buildCharts,
  comparisonRows,
  fpSignWarnings,
  isUtilityScores,
  normalizerProblems,
  outcomeRows,
  renderHtml,
  renderMarkdown,
} from '../../src/report/report.js';

function fakeResults(): ExperimentResults {
  const round = (r: number): RoundRecord => ({
    round: r,
    selected: [0, 1, 2],
    dropped: [],
    aggregationWeights: [1, 1, 1],
    testAccuracy: 0.5 + r / 10,
    testLoss: 1 / r,
    utilities: { full: 0.7, empty: 0.1, withOnly: [0.5, 0.4, 0.1], without: [0.6, 0.65, 0.7] },
    scores: { fp: [0.3, 0.3, 0.1] },
    evaluations: { mrsv: 8 },
    timingsMs: { training: 10 },
  });
  return {
    schemaVersion: 1,
    config: { name: 'unit <test>' },
    // FP asked for (--schemes): its rows and its † analysis are shown; by default they are not
    schemes: ['loo', 'ioi', 'fp', 'ee', 'eeMedian'],
    backend: 'cpu',
    versions: { fedscore: '0.1.0', node: process.version, tfjs: '4.22.0' },
    createdAt: new Date(0).toISOString(),
    dataSource: 'synthetic',
    visibility: {
      serverReadIndividualUpdates: false,
      harnessReadIndividualUpdates: true,
      note: 'harness only',
    },
    seeds: [1],
    silos: {
      count: 3,
      names: ['a', 'b', 'c'],
      examples: [10, 10, 10],
      roles: ['honest', 'honest', 'free rider'],
    },
    runs: [
      {
        seed: 1,
        rounds: [round(1), round(2)],
        cumulative: { fp: [0.6, 0.6, 0.2], mrsv: [0.5, 0.5, -0.1] },
        compared: { fp: [0.6, 0.6, 0.2], mrsv: [0.5, 0.5, -0.1] },
        finalAccuracy: 0.7,
        finalLoss: 0.5,
        evaluations: { mrsv: 16 },
        timingsMs: { training: 20 },
        participation: [2, 2, 1],
      },
    ],
    comparison: {
      reference: 'mrsv',
      at: 'cumulative',
      methods: {
        fp: {
          spearman: { mean: 0.866, std: 0 },
          kendall: { mean: 0.816, std: 0 },
          pearson: { mean: 0.99, std: 0 },
          l2: { mean: 0.2, std: 0 },
        },
      },
    },
    wallTimeMs: 1234,
  };
}

describe('reports', () => {
  it('renders SVG charts, a Markdown report and a self-contained HTML report', async () => {
    const r = fakeResults();
    const charts = await buildCharts(r);
    // silo c sat out a round, so the participation chart says something
    expect(charts.map((c) => c.id)).toEqual(['agreement-mrsv', 'trajectories', 'accuracy', 'participation']);
    for (const c of charts) expect(c.svg).toMatch(/^<svg[\s\S]*<\/svg>$/);
    const md = renderMarkdown(r, charts);
    // one seed: the values alone, no ± std
    expect(md).toContain('| fp | 0.866 | 0.816 | 0.990 | 0.200 |');
    expect(md).not.toContain(' ± ');
    expect(md).toContain(
      '## Agreement with mrsv (multi-round: each round’s exact Shapley value summed over all rounds (MR-SV)); scores summed over the rounds, seed 1',
    );
    expect(md).toContain('![Test accuracy of the global model by round](charts/accuracy.svg)');
    expect(md).toContain(
      '- scoring: FedAvg coalitions (M_S = M0 + Σ_S w_iΔ_i/Σ_S w_i), v(∅) = v(M0) (results written before scoring was recorded)',
    );
    expect(md).not.toContain('normalizer');
    expect(md).not.toContain('Outcomes by silo role');
    r.outcomes = {
      finalAccuracy: { mean: 0.7, std: 0.01 },
      byRole: {
        honest: {
          silos: [0, 1],
          participation: { mean: 1, std: 0 },
          aggregationShare: { mean: 1.2, std: 0 },
        },
        'free rider': {
          silos: [2],
          participation: { mean: 0.5, std: 0 },
          aggregationShare: { mean: Number.NaN, std: Number.NaN },
        },
      },
    };
    const withOutcomes = renderMarkdown(r, charts);
    expect(withOutcomes).toContain('Final test accuracy: 0.700.');
    expect(withOutcomes).toContain('| honest | 2 | 1.000 | 1.200 |');
    expect(withOutcomes).toContain('| free rider | 1 | 0.500 | n/a |');
    expect(renderHtml(r, charts)).toContain('<td>free rider</td><td>1</td><td>0.500</td>');
    delete r.outcomes;
    r.runs[0]!.rounds[1]!.utilities = {
      full: 0.7,
      empty: 0.5,
      withOnly: [0.2, 0.3, 0.1],
      without: [0.65, 0.7, 0.69],
    };
    expect(fpSignWarnings(r)).toEqual(['seed 1: rounds 2']);
    const warned = renderMarkdown(r, charts);
    expect(warned).toContain('Fair-Private normalizer Σα was ≤ 0 (seed 1: rounds 2)');
    // FP is never a bare number when its normalizer reversed it: the row is marked and explained
    expect(warned).toContain('| fp † Σα ≤ 0 in some rounds | 0.866 |');
    expect(warned).toContain('† fp: Σα ≤ 0 in seed 1: rounds 2 (the cumulative scores sum these rounds)');
    expect(warned).toContain('Use instead: EE');
    expect(warned).toContain('`scoring.emptyCoalition: "zero"`');
    const html = renderHtml(r, charts);
    expect(html).toContain('unit &lt;test&gt;'); // escaped
    expect(html).not.toMatch(/<script|src="http|href="http/); // offline: no scripts, no external resources
    expect((html.match(/<svg/g) ?? []).length).toBeGreaterThanOrEqual(3);
  });
});

describe('reports of a scores.json (fedscore score)', () => {
  it('renders the same report without training: summary, FP warning, agreement only with a reference', async () => {
    const s = await scoreUtilities(
      parseUtilitiesFile({
        silos: ['a', 'b', 'c'],
        range: [0, 3], // round 1 is papers/003 Example 2, in its own units
        rounds: [
          { round: 1, full: 3, empty: 0, withOnly: [0, 1, 2], without: [3, 2, 1] },
          { round: 2, full: 0.7, empty: 0.5, withOnly: [0.2, 0.3, 0.1], without: [0.65, 0.7, 0.69] },
          { round: 4, full: 0.7, empty: 0.5, withOnly: [0.6, null, null], without: [0.6, null, null] },
        ],
      }),
      { source: 'dir/u <1>.json', fedscoreVersion: '0.1.0', schemes: ['loo', 'ioi', 'fp', 'ee', 'eeMedian'] },
    );
    expect(isUtilityScores(s)).toBe(true);
    expect(s.schemes).toEqual(['loo', 'ioi', 'fp', 'ee', 'eeMedian']);
    expect(fpSignWarnings(s)).toEqual(['rounds 2']);
    expect(outcomeRows(s)).toEqual([]);
    const charts = await buildCharts(s);
    // the leaderboard's bar chart first: each silo's final headline score, flags marked
    expect(charts.map((c) => c.id)).toEqual(['leaderboard', 'scores', 'history', 'trajectories']);
    expect(charts[0]!.svg).toContain('>c</text>'); // c, without a report in round 4, is flagged …
    expect(charts[0]!.svg).toContain('>missing-reports</text>'); // … and its flag written beside its bar
    const md = renderMarkdown(s, charts);
    // the file name is outside text: literal markdown, its `<` and `>` escaped (issue 32, T1)
    expect(md).toContain('# fedscore report: scores of u \\<1\\>.json');
    expect(md).toContain('- silos: 3; rounds: 3 (not scored, fewer than 2 reports: 4)');
    expect(md).toContain('Fair-Private normalizer Σα was ≤ 0 (rounds 2)');
    expect(md).toContain('- no reference: the file has no coalition tables');
    // … so no chart title promises an exact Shapley value (issue 37)
    expect(md).toContain('## Per-round scores of each silo; panels in the same units');
    expect(md).not.toContain('exact Shapley value');
    expect(md).not.toContain('## Agreement');
    expect(md).toContain('![Per-silo scores by scheme (cumulative over rounds)](charts/scores.svg)');
    const html = renderHtml(s, charts);
    expect(html).toContain('<h1>fedscore report: scores of u &lt;1&gt;.json</h1>');
    expect(html).not.toContain('<h2>Agreement');
    expect(html).not.toMatch(/<script|src="http|href="http/);

    const withTable = await scoreUtilities(
      parseUtilitiesFile({
        range: [0, 3],
        rounds: [
          {
            round: 1,
            full: 3,
            empty: 0,
            withOnly: [0, 1, 2],
            without: [3, 2, 1],
            table: [0, 0, 1, 1, 2, 2, 3, 3],
          },
        ],
      }),
      { source: 'e2.json', fedscoreVersion: '0.1.0' },
    );
    // fp not asked for: no row (scores.json still records it)
    expect(comparisonRows(withTable).map((x) => x[0])).toEqual(['method', 'loo', 'ioi', 'ee', 'eeMedian']);
    expect(withTable.comparison!.methods.fp!.spearman.mean).toBeCloseTo(1, 12);
    expect(renderMarkdown(withTable, [])).toContain('## Agreement with mrsv (multi-round');
    expect((await buildCharts(withTable)).map((c) => c.id)).toEqual([
      'leaderboard',
      'scores',
      'history',
      'agreement-mrsv',
      'trajectories',
    ]);
  });
});

/** Two seeds, two references, round 2 compared; `fpBad` seeds have Σα < 0 in round 2. */
function twoSeeds(
  fpBad: number[],
  emptyCoalition: 'initialModel' | 'zero' = 'initialModel',
): ExperimentResults {
  const r = fakeResults();
  const good = { full: 0.7, empty: 0.1, withOnly: [0.5, 0.4, 0.1], without: [0.6, 0.65, 0.7] };
  // Σ LOO = 0.1 + 0.05 + 0 = 0.15, Σ IOI = −0.3 + −0.4 + −0.45 = −1.15 under v(∅) = v(M0) = 0.5
  const bad = { full: 0.7, empty: 0.5, withOnly: [0.2, 0.1, 0.05], without: [0.6, 0.65, 0.7] };
  const m = (spearman: number, std: number) => ({
    spearman: { mean: spearman, std },
    kendall: { mean: spearman, std },
    pearson: { mean: spearman, std },
    l2: { mean: 0.5, std: 0.1 },
  });
  r.schemaVersion = 2;
  r.seeds = [1, 2];
  r.scoring = { utility: 'accuracy', coalitions: 'fedavg', emptyCoalition, raw: false };
  r.runs = [1, 2].map((seed) => ({
    ...r.runs[0]!,
    seed,
    rounds: r.runs[0]!.rounds.map((rd) => ({
      ...rd,
      utilities: rd.round === 2 && fpBad.includes(seed) ? bad : good,
    })),
    compared: { fp: [0.6, 0.6, 0.2], ee: [0.3, 0.3, 0.1], mrsv: [0.5, 0.5, -0.1], roundSv: [0.2, 0.1, 0] },
  }));
  r.comparison = {
    reference: 'roundSv',
    references: ['roundSv', 'mrsv'],
    at: 2,
    methods: { fp: m(-0.5, 0.2), ee: m(0.8, 0.1), mrsv: m(0.9, 0) },
    byReference: {
      roundSv: { fp: m(-0.5, 0.2), ee: m(0.8, 0.1), mrsv: m(0.9, 0) },
      mrsv: { fp: m(-0.4, 0.3), ee: m(0.7, 0.1), roundSv: m(0.9, 0) },
    },
  };
  return r;
}

describe('agreement tables', () => {
  it('one per reference, ± std with several seeds, FP marked and explained where its normalizer reversed it', () => {
    const r = twoSeeds([2]);
    const tables = agreementTables(r);
    expect(tables.map((t) => t.reference)).toEqual(['roundSv', 'mrsv']);
    expect(tables[0]!.heading).toBe(
      'Agreement with roundSv (single-round: the exact Shapley value of round 2’s own game); single-round scores of round 2, mean ± std over 2 seeds',
    );
    expect(tables[0]!.rows).toContainEqual([
      'fp † reversed: Σα ≤ 0',
      '-0.500 ± 0.200',
      '-0.500 ± 0.200',
      '-0.500 ± 0.200',
      '0.500 ± 0.100',
    ]);
    expect(tables[0]!.rows).toContainEqual([
      'ee',
      '0.800 ± 0.100',
      '0.800 ± 0.100',
      '0.800 ± 0.100',
      '0.500 ± 0.100',
    ]);
    const note = tables[1]!.notes[0]!;
    expect(note).toContain('† fp: Σα ≤ 0 in the compared round 2 of seed 2 (1 of 2)');
    expect(note).toContain('Σα = −0.500 (Σ LOO = +0.150, Σ IOI = −1.150; Δ = v(M) − v(M0) = +0.200)');
    expect(note).toContain('FedAvg coalitions');
    expect(note).toContain('Use instead: EE');
    // only the compared round counts: round 1 was fine in both seeds
    expect(normalizerProblems(r).map((p) => [p.seed, p.round, p.compared])).toEqual([[2, 2, true]]);
  });

  it('a negative FP without a reversal is explained too', () => {
    const tables = agreementTables(twoSeeds([]));
    expect(tables[0]!.rows.map((x) => x[0])).toEqual(['method', 'fp', 'ee', 'mrsv']);
    expect(tables[0]!.notes).toEqual([
      'fp: negative agreement although Σα was positive in every compared round — the weights themselves disagree with the reference here, not a reversal by the normalizer.',
    ]);
  });

  it('v(∅) = 0: the normalizers are those the run scored with', () => {
    // the same utilities give Σα > 0 once IOI is measured against 0 instead of v(M0)
    expect(normalizerProblems(twoSeeds([1, 2], 'zero'))).toEqual([]);
    expect(normalizerProblems(twoSeeds([1, 2])).map((p) => p.seed)).toEqual([1, 2]);
  });

  it('FP not asked for (the default): no fp row, no † note, no FP warning, no fp column or panel', async () => {
    const r = twoSeeds([2]);
    r.config = { name: 'default' };
    delete r.schemes;
    r.leaderboard = [
      { silo: 0, name: 'a', rank: 1, headline: 0.2, lastRound: 0.1, scores: { fp: -3, ee: 0.4 }, flags: [] },
    ];
    const tables = agreementTables(r);
    expect(tables.map((t) => t.rows.map((x) => x[0]))).toEqual([
      ['method', 'ee', 'mrsv'],
      ['method', 'ee', 'roundSv'],
    ]);
    expect(tables.flatMap((t) => t.notes)).toEqual([]);
    const charts = await buildCharts(r);
    const md = renderMarkdown(r, charts);
    expect(md).not.toMatch(/†|Σα|Fair-Private|\| fp/);
    expect(md).toContain(
      '| rank | silo | headline (payout) | 95 % interval | share | last round | Σ ee | flags |',
    );
    for (const c of charts) expect(c.svg).not.toMatch(/>fp(\b|<)/);
    expect(renderHtml(r, charts)).not.toMatch(/†|Σα/);
    // asked for again: the analysis is back
    r.schemes = ['fp', 'ee'];
    expect(renderMarkdown(r, charts)).toContain('† fp: Σα ≤ 0');
    expect(renderMarkdown(r, charts)).toContain(
      '| rank | silo | headline (payout) | 95 % interval | share | last round | Σ fp | Σ ee | flags |',
    );
  });

  it('a ratio score left with one unreversed round gets no trajectory panel; the caption says why', async () => {
    const trajectories = async (fpBad: number[]) => {
      const r = twoSeeds(fpBad);
      for (const rd of r.runs[0]!.rounds) rd.scores.ee = [0.2, 0.1, 0.05];
      return (await buildCharts(r)).find((c) => c.id === 'trajectories')!;
    };
    const reversed = await trajectories([1]); // seed 1 (the one drawn): Σα ≤ 0 in round 2
    expect(reversed.title).toContain('; fp left out: Σα ≤ 0 reverses its ranking in rounds 2');
    expect(reversed.svg).not.toContain('>fp</text>');
    expect(reversed.svg).toContain('>ee</text>');
    const fine = await trajectories([2]);
    expect(fine.title).not.toContain('left out');
    expect(fine.svg).toContain('>fp</text>');
  });

  it('the report carries both tables, the scoring line and the notes; charts per reference', async () => {
    const r = twoSeeds([2]);
    const charts = await buildCharts(r);
    expect(charts.map((c) => c.id)).toEqual([
      'agreement-roundSv',
      'agreement-mrsv',
      'trajectories',
      'accuracy',
      'participation',
    ]);
    const md = renderMarkdown(r, charts);
    expect(md).toContain('## Agreement with roundSv (single-round');
    expect(md).toContain(
      '## Agreement with mrsv (multi-round: each round’s exact Shapley value summed over rounds 1–2 (MR-SV))',
    );
    expect(md).toContain(
      '- scoring: FedAvg coalitions (M_S = M0 + Σ_S w_iΔ_i/Σ_S w_i), v(∅) = v(M0) (`aggregation.convention: fedavg`, `scoring.emptyCoalition: initialModel`)',
    );
    expect(md.match(/† fp: Σα ≤ 0/g)).toHaveLength(2);
    expect(charts[0]!.svg).toContain('Spearman -0.500 ± 0.200');
    // the trajectories leave out nothing in seed 1 (its Σα > 0 everywhere)
    expect(charts[2]!.svg).not.toContain('left out');
  });
});
