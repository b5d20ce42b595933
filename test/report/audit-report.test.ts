import { describe, expect, it } from 'vitest';
import { auditExperiment } from '../../src/audit/manipulation-audit.js';
import type { ExperimentResults } from '../../src/records/results.js';
import {
  auditHtml,
  auditMarkdown,
  auditSummaryRows,
  lastAuditedRound,
} from '../../src/report/audit-report.js';

function results(): ExperimentResults {
  const withOnly = [0.5, 0.45, 0.4, 0.2];
  const without = [0.62, 0.64, 0.66, 0.7];
  return {
    schemaVersion: 1,
    config: { name: 'audit-report' },
    backend: 'cpu',
    versions: { fedscore: 't', node: process.version, tfjs: 't' },
    createdAt: new Date(0).toISOString(),
    dataSource: 'synthetic',
    visibility: { serverReadIndividualUpdates: false, harnessReadIndividualUpdates: true, note: '' },
    seeds: [1],
    silos: {
      count: 4,
      names: ['a', 'b', 'c', 'd'],
      examples: [1, 1, 1, 1],
      roles: ['honest', 'honest', 'honest', 'honest'],
    },
    runs: [
      {
        seed: 1,
        rounds: [
          {
            round: 1,
            selected: [0, 1, 2, 3],
            dropped: [],
            aggregationWeights: [1, 1, 1, 1],
            testAccuracy: 0.72,
            testLoss: 1,
            utilities: { full: 0.72, empty: 0.1, withOnly, without },
            scores: {},
            evaluations: {},
            timingsMs: {},
          },
        ],
        cumulative: {},
        compared: {},
        finalAccuracy: 0.72,
        finalLoss: 1,
        evaluations: {},
        timingsMs: {},
        participation: [1, 1, 1, 1],
      },
    ],
    comparison: { reference: 'mrsv', at: 'cumulative', methods: {} },
    wallTimeMs: 1,
  };
}

describe('audit report section', () => {
  it('summarizes every scheme and shows the EE influence matrix with a zero diagonal', () => {
    const audit = auditExperiment(results(), { collusionSizes: [2] });
    const rows = auditSummaryRows(audit);
    expect(rows.map((r) => r[0])).toEqual(['scheme', 'loo', 'ioi', 'fp', 'ee', 'eeMedian']);
    expect(rows[1]![1]).toBe('0/4'); // LOO is linear in the reports: bounded self-gain
    const rd = lastAuditedRound(audit)!;
    rd.schemes.ee.influence.forEach((row, i) => {
      expect(row[i]).toBe(0);
    });
    const md = auditMarkdown(audit);
    expect(md).toContain('## Manipulation audit');
    // rows and columns named as results.json names the silos
    expect(md).toContain('| scored \\ reporting | a | b | c | d |');
    expect(md).toMatch(/\n\| c \| [-0-9.]+ \| [-0-9.]+ \| 0\.000 \| [-0-9.]+ \|\n/);
    expect(md).not.toMatch(/silo-\d/);
    const html = auditHtml(audit);
    expect(html).toMatch(/^<section id="audit">[\s\S]*<\/section>$/);
    expect(html).toContain('<th>scored \\ reporting</th><th>a</th><th>b</th><th>c</th><th>d</th>');
  });
});
