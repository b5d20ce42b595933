/**
 * `fedscore score --utilities` and `fedscore audit --utilities`, end to end in-process: the
 * scores.json of generated files equals scoring/private.ts called directly (a property over
 * random files the test writes and the command reads), the report and charts are written with the
 * agreement table and the FP-inversion warning, bad files are refused with the JSON path of the
 * problem (exit code 2), and the audit runs on the same files.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { AuditResult, RoundAudit } from '../../src/audit/manipulation-audit.js';
import type { UtilityScores } from '../../src/records/utility-scores.js';
import { expectScoresOfFile, type UtilitiesJson, utilitiesFileArb } from '../records/_utilities-files.js';
import { cli } from './_cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'fedscore-score-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const EXAMPLE = new URL('../../examples/utilities/four-silos.json', import.meta.url).pathname;

let count = 0;
/** Writes `json` to a fresh file under the test's directory; returns its path. */
function writeJson(json: unknown): string {
  const path = join(tmp, `u${++count}.json`);
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
  return path;
}
const readJson = <T>(path: string) => JSON.parse(readFileSync(path, 'utf8')) as T;

/** `cli(argv)` with what the command itself prints to stdout (it writes to process.stdout). */
async function run(argv: string[]) {
  let stdout = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  try {
    return { ...(await cli(argv)), stdout };
  } finally {
    spy.mockRestore();
  }
}

describe('fedscore score --utilities', () => {
  it('scores examples/utilities/four-silos.json: scores.json, report with agreement table and FP warning (--schemes asks for fp), charts', async () => {
    const out = join(tmp, 'example');
    const r = await run([
      'score',
      '--utilities',
      EXAMPLE,
      '--out',
      out,
      '--schemes',
      'loo,ioi,fp,ee,eeMedian',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const file = readJson<UtilitiesJson>(EXAMPLE);
    const scores = readJson<UtilityScores>(join(out, 'scores.json'));
    expectScoresOfFile(file, scores);
    expect(scores.silos.names).toEqual(['hospital-a', 'hospital-b', 'clinic-c', 'free-rider-d']);
    expect(scores.rounds[2]!.scores.ee![3]).toBeNull(); // free-rider-d did not report in round 3
    expect(Object.keys(scores.cumulative)).toEqual(['loo', 'ioi', 'fp', 'ee', 'eeMedian', 'mrsv']);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toContain('# fedscore report: scores of four-silos.json');
    expect(md).toContain(
      '## Agreement with mrsv (multi-round: each round’s exact Shapley value summed over all rounds (MR-SV)); scores summed over the rounds, one set of scores',
    );
    expect(md).toMatch(/\| fp † Σα ≤ 0 in some rounds \| \d\.\d{3} \|/);
    expect(md).toMatch(/\| ee \| 1\.000 \| 1\.000 \| \d\.\d{3} \| \d\.\d{3} \|/);
    expect(md).toContain('warning: the Fair-Private normalizer Σα was ≤ 0 (rounds 2, 3)');
    // The leaderboard is the report's first section, the headline never reversed.
    expect(md.split('\n## ')[1]).toMatch(/^Leaderboard — headline: payout weight/);
    expect(scores.headline).toBe('payout');
    expect(scores.leaderboard!.map((e) => e.name)).toEqual([
      'hospital-a',
      'hospital-b',
      'clinic-c',
      'free-rider-d',
    ]);
    // EE-median's weight tied hospital-a and hospital-b; the headline's tie-break on their own
    // improvement orders them (scoring/payout.ts)
    expect(scores.leaderboard!.map((e) => e.rank)).toEqual([1, 2, 3, 4]);
    expect(scores.leaderboard![3]!.flags).toEqual([
      {
        kind: 'missing-reports',
        reason: 'no report in 1 of the 3 round(s) it was selected for (round 3)',
      },
    ]);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain(
      '<h2>Agreement with mrsv (multi-round: each round’s exact Shapley value summed over all rounds (MR-SV)); scores summed over the rounds, one set of scores</h2>',
    );
    expect(html).not.toContain('<script');
    for (const chart of ['scores', 'history'])
      expect(readFileSync(join(out, 'charts', `${chart}.svg`), 'utf8')).toMatch(/^<svg[\s\S]*<\/svg>$/);
    expect(r.stdout).toContain('Agreement with mrsv (cumulative scores):');
    // The console opens with the leaderboard: rank, silo, headline, last round, schemes, flags.
    expect(r.stdout.trimStart()).toMatch(/^Leaderboard — headline: payout weight/);
    expect(r.stdout.indexOf('Leaderboard')).toBeLessThan(r.stdout.indexOf('Agreement with'));
    expect(r.stdout).toMatch(
      / {2}1–4 {3}free-rider-d +0\.0069 +\[0\.0000, 0\.0208\] +4\.0 % +– +0\.0026 .* missing-reports: no report in 1 of the 3/,
    );
    expect(r.stdout).toContain('note: the Fair-Private normalizer Σα was ≤ 0 (rounds 2, 3)');
  });

  it('by default FP is not shown: no fp row, column or reversal note; scores.json still records it', async () => {
    const out = join(tmp, 'default-schemes');
    const r = await run(['score', '--utilities', EXAMPLE, '--out', out]);
    expect([r.code, r.err]).toEqual([0, '']);
    const scores = readJson<UtilityScores>(join(out, 'scores.json'));
    expect(Object.keys(scores.cumulative)).toEqual(['loo', 'ioi', 'fp', 'ee', 'eeMedian', 'mrsv']);
    expect(scores.schemes).toBeUndefined();
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    for (const text of [r.stdout, md, readFileSync(join(out, 'report.html'), 'utf8')]) {
      expect(text).not.toMatch(/†|Σα|Fair-Private/);
      expect(text).not.toMatch(/\bfp\b/);
    }
    expect(md).toContain(
      '| rank | silo | headline (payout) | 95 % interval | share | last round | Σ loo | Σ ioi | Σ ee | Σ eeMedian | Σ mrsv | flags |',
    );
    expect(md).toMatch(/\| ee \| 1\.000 \| 1\.000 \| \d\.\d{3} \| \d\.\d{3} \|/);
    // a wrong --schemes names the flag and the name
    const bad = await run([
      'score',
      '--utilities',
      EXAMPLE,
      '--out',
      join(tmp, 'bad-schemes'),
      '--schemes',
      'ee,fpp',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      "--schemes: 'fpp' is not a private scheme (expected loo, ioi, fp, ee, eeMedian)",
    );
  });

  it('writes what scoring/private.ts gives on random files it has not seen (hidden inputs)', async () => {
    await fc.assert(
      fc.asyncProperty(utilitiesFileArb(false), utilitiesFileArb(true), fc.boolean(), async (a, b, pick) => {
        const file = pick ? b : a;
        const out = join(tmp, `random-${++count}`);
        const r = await run(['score', '--utilities', writeJson(file), '--out', out]);
        expect(r.err).toBe('');
        expect(r.code).toBe(0);
        const scores = readJson<UtilityScores>(join(out, 'scores.json'));
        expectScoresOfFile(file, scores);
        expect(scores.comparison !== undefined).toBe(pick);
        expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain(
          pick ? '## Agreement with mrsv' : '- no reference: the file has no coalition tables',
        );
      }),
      { numRuns: 6 },
    );
  });

  it('refuses a bad file with the JSON path of the problem (exit 2, nothing written)', async () => {
    const round = (k: number) => ({
      round: k,
      full: 0.8,
      empty: 0.5,
      withOnly: [0.6, 0.7, 0.6, 0.6],
      without: [0.7, 0.6, 0.7, 0.7],
    });
    const bad = { rounds: [round(1), round(2), { ...round(3), withOnly: [0.6, 0.7, 0.6, '0.6'] }] };
    const out = join(tmp, 'bad');
    const r = await cli(['score', '--utilities', writeJson(bad), '--out', out]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^fedscore: .*u\d+\.json: invalid utilities file \(docs\/utilities\.md\)\n {2}rounds\[2\]\.withOnly\[3\]: expected a number or null\n$/,
    );
    expect(existsSync(out)).toBe(false);
    const notJson = await cli(['score', '--utilities', writeJson('{"rounds": ['), '--out', out]);
    expect(notJson.code).toBe(2);
    expect(notJson.err).toContain('(root): not valid JSON');
    // Percentages: refused (exit 2) naming the first path, as one problem with the fix (issue 37).
    const percent = { rounds: [{ ...round(1), full: 80, empty: 50, withOnly: [60, 0.7, 0.6, 0.6] }] };
    const p = await cli(['score', '--utilities', writeJson(percent), '--out', out]);
    expect(p.code).toBe(2);
    const lines = p.err.split('\n');
    expect(lines[0]).toMatch(/u\d+\.json: invalid utilities file \(docs\/utilities\.md\)$/);
    expect(lines[1]).toBe(
      '  rounds[0].full: 80 is outside the declared range [0, 1] (the default; a file of other utilities declares `range`); so are 2 more utilities in (1, 100] (rounds[0].empty, rounds[0].withOnly[0]): the file looks like percentages (100·correct/total) — declare `"range": [0, 100]` in the file (the scores are then in the same units), or write each as a fraction (v → v/100)',
    );
    expect(lines[2]).toBe('');
    expect(existsSync(out)).toBe(false);
    const three = {
      rounds: [
        round(1),
        { ...round(1), withOnly: [0.6, 0.7, 0.6], without: [0.7, null, 0.7, 0.7], full: 1.5 },
      ],
    };
    const t = await cli(['score', '--utilities', writeJson(three), '--out', out]);
    expect(t.code).toBe(2);
    expect(t.err).toContain('— 4 problems');
    for (const path of [
      'rounds[1].full: 1.5 is outside',
      'rounds[1].round:',
      'rounds[1].withOnly: expected 4 entries',
    ])
      expect(t.err).toContain(`  ${path}`);
    const declared = {
      range: [-5, 0],
      rounds: [
        { ...round(1), full: -0.8, empty: -1.2, withOnly: [-1, -1, -1, -1], without: [-1, -1, -1, -1] },
      ],
    };
    expect((await cli(['score', '--utilities', writeJson(declared), '--out', join(tmp, 'neg')])).code).toBe(
      0,
    );
    const missing = await cli(['score', '--utilities', join(tmp, 'nope.json'), '--out', out]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--utilities: cannot read');
    expect(missing.err).toContain('Run "fedscore score --help" for usage.');
  });
});

describe('fedscore audit --utilities', () => {
  it('audits the file: audit.json of its rounds, the section added to the reports score wrote', async () => {
    const out = join(tmp, 'audited');
    expect((await run(['score', '--utilities', EXAMPLE, '--out', out])).code).toBe(0);
    const r = await run(['audit', '--utilities', EXAMPLE, '--out', out]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('audit section added to report.html and report.md');
    // The leaderboard opens the audit's output, with the audit's flags: none here. The detector of
    // issue 37 flags only reports that raise a silo's marginals above the others' (one-sided):
    // free-rider-d's reports (IOI 0, a zero update's) lie below them and only lower its own score;
    // its missing round-3 report is flagged.
    expect(r.stdout.trimStart()).toMatch(
      /^Leaderboard — headline: payout weight.*flags include the audit's:/,
    );
    expect(r.stdout.indexOf('Leaderboard')).toBeLessThan(r.stdout.indexOf('Manipulation audit of'));
    expect(r.stdout).toMatch(
      /free-rider-d .*missing-reports: no report in 1 of the 3 round\(s\) it was selected for/,
    );
    expect(r.stdout).not.toMatch(/self-gain: the audit's detector flags/);
    const audit = readJson<AuditResult>(join(out, 'audit.json'));
    expect(audit.source).toEqual({
      createdAt: null,
      dataSource: `utilities file ${EXAMPLE}`,
      silos: ['hospital-a', 'hospital-b', 'clinic-c', 'free-rider-d'],
      resultsSchemaVersion: null,
    });
    const scores = readJson<UtilityScores>(join(out, 'scores.json'));
    const rounds = audit.runs[0]!.rounds as RoundAudit[];
    expect(rounds.map((rd) => rd.silos)).toEqual([
      [0, 1, 2, 3],
      [0, 1, 2, 3],
      [0, 1, 2],
    ]);
    rounds.forEach((rd, t) => {
      for (const s of ['loo', 'ioi', 'fp', 'ee', 'eeMedian'] as const)
        expect(rd.schemes[s].scores).toEqual(rd.silos.map((i) => scores.rounds[t]!.scores[s]![i]));
    });
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('## Manipulation audit');
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toMatch(/<section id="audit">[\s\S]*<\/body>/);
  });

  it('into a directory without reports writes audit.json only', async () => {
    const out = join(tmp, 'audit-only');
    const r = await run(['audit', '--utilities', EXAMPLE, '--out', out]);
    expect(r.code).toBe(0);
    expect(existsSync(join(out, 'audit.json'))).toBe(true);
    expect(existsSync(join(out, 'report.md'))).toBe(false);
    expect(r.stdout).toContain('wrote ');
    expect(r.stdout).not.toContain('audit section added');
  });

  it('without --out prints the summary and writes nothing', async () => {
    const r = await run(['audit', '--utilities', EXAMPLE]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Manipulation audit of .*four-silos\.json[\s\S]*\n {2}eeMedian /);
    expect(r.stdout).toContain('(--out <dir> writes audit.json, docs/audit.md)');
    expect(r.stdout).not.toContain('wrote');
  });

  it('takes --from or --utilities, not both; --out only with --utilities', async () => {
    const cases: [string[], string][] = [
      [
        ['audit', '--from', 'd', '--utilities', EXAMPLE, '--out', 'o'],
        '--utilities: give either --from or --utilities, not both',
      ],
      [['audit', '--utilities', EXAMPLE, '--out', 'o', '--config', 'c.json'], '--config: only with --from'],
      [['audit', '--from', 'd', '--out', 'o'], '--out: only with --utilities'],
      [['audit'], '--from: required (or --utilities)'],
    ];
    for (const [argv, message] of cases) {
      const r = await cli(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toContain(message);
    }
    const bad = await cli([
      'audit',
      '--utilities',
      writeJson({ rounds: [{ round: 1 }] }),
      '--out',
      join(tmp, 'x'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('rounds[0].full: required');
  });
});
