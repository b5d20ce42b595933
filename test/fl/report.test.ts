import { describe, expect, it } from 'vitest';
import {
  buildCharts,
  comparisonRows,
  fpSignWarnings,
  isUtilityScores,
  outcomeRows,
  renderHtml,
  renderMarkdown,
} from '../../src/fl/report.js';
import type { ExperimentResults, RoundRecord } from '../../src/fl/results.js';
import { parseUtilitiesFile } from '../../src/fl/utilities-file.js';
import { scoreUtilities } from '../../src/fl/utility-scores.js';

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
    expect(charts.map((c) => c.id)).toEqual(['scores', 'accuracy', 'participation']);
    for (const c of charts) expect(c.svg).toMatch(/^<svg[\s\S]*<\/svg>$/);
    const md = renderMarkdown(r, charts);
    expect(md).toContain('| fp | 0.866 ± 0.000 | 0.816 ± 0.000 | 0.990 ± 0.000 | 0.200 ± 0.000 |');
    expect(md).toContain('![Test accuracy of the global model by round](charts/accuracy.svg)');
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
    expect(withOutcomes).toContain('Final test accuracy: 0.700 ± 0.010');
    expect(withOutcomes).toContain('| honest | 2 | 1.000 ± 0.000 | 1.200 ± 0.000 |');
    expect(withOutcomes).toContain('| free rider | 1 | 0.500 ± 0.000 | n/a ± n/a |');
    expect(renderHtml(r, charts)).toContain('<td>free rider</td><td>1</td><td>0.500 ± 0.000</td>');
    delete r.outcomes;
    r.runs[0]!.rounds[1]!.utilities = {
      full: 0.7,
      empty: 0.5,
      withOnly: [0.2, 0.3, 0.1],
      without: [0.65, 0.7, 0.69],
    };
    expect(fpSignWarnings(r)).toEqual(['seed 1: rounds 2']);
    expect(renderMarkdown(r, charts)).toContain('Fair-Private normalizer Σα was ≤ 0 (seed 1: rounds 2)');
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
        rounds: [
          { round: 1, full: 3, empty: 0, withOnly: [0, 1, 2], without: [3, 2, 1] },
          { round: 2, full: 0.7, empty: 0.5, withOnly: [0.2, 0.3, 0.1], without: [0.65, 0.7, 0.69] },
          { round: 4, full: 0.7, empty: 0.5, withOnly: [0.6, null, null], without: [0.6, null, null] },
        ],
      }),
      { source: 'dir/u <1>.json', fedscoreVersion: '0.1.0' },
    );
    expect(isUtilityScores(s)).toBe(true);
    expect(fpSignWarnings(s)).toEqual(['rounds 2']);
    expect(outcomeRows(s)).toEqual([]);
    const charts = await buildCharts(s);
    expect(charts.map((c) => c.id)).toEqual(['scores', 'history']);
    const md = renderMarkdown(s, charts);
    expect(md).toContain('# fedscore report: scores of u <1>.json');
    expect(md).toContain('- silos: 3; rounds: 3 (not scored, fewer than 2 reports: 4)');
    expect(md).toContain('Fair-Private normalizer Σα was ≤ 0 (rounds 2)');
    expect(md).toContain('- no reference: the file has no coalition tables');
    expect(md).not.toContain('## Agreement');
    expect(md).toContain('![Per-silo scores by scheme (cumulative over rounds)](charts/scores.svg)');
    const html = renderHtml(s, charts);
    expect(html).toContain('<h1>fedscore report: scores of u &lt;1&gt;.json</h1>');
    expect(html).not.toContain('<h2>Agreement');
    expect(html).not.toMatch(/<script|src="http|href="http/);

    const withTable = await scoreUtilities(
      parseUtilitiesFile({
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
    expect(comparisonRows(withTable)).toContainEqual(['fp', '1.000', '1.000', '1.000', '0.000']);
    expect(renderMarkdown(withTable, [])).toContain('## Agreement with mrsv (cumulative scores)');
  });
});
