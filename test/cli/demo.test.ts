import { describe, expect, it } from 'vitest';
import { demoConsortium, runDemo } from '../../src/cli/actions/demo.js';
import { cli, spawnCli } from './_cli.js';

describe('fedscore demo', () => {
  it('scores every silo with every private scheme; FP and EE are efficient; the free rider gets FP 0', async () => {
    const r = await runDemo(6, 3);
    expect(Object.keys(r.scores)).toEqual(['shapley', 'loo', 'ioi', 'fp', 'ee', 'eeMedian']);
    for (const s of Object.values(r.scores)) expect(s).toHaveLength(6);
    const sum = (x: number[]) => x.reduce((a, b) => a + b, 0);
    expect(sum(r.scores.fp!)).toBeCloseTo(r.utilities.full, 12);
    expect(sum(r.scores.ee!)).toBeCloseTo(r.utilities.full, 12);
    expect(sum(r.scores.shapley!)).toBeCloseTo(r.utilities.full - r.utilities.empty, 12);
    expect(r.scores.fp![5]).toBe(0); // the free rider is a null player; FP keeps the null-player axiom
    expect(r.scores.ee![5]).toBeGreaterThan(0); // EE does not (papers/003 Example 2)
    expect(r.comparison.fp!.spearman).toBeGreaterThan(0.9);
  });

  it('validates the silo count', () => {
    expect(() => demoConsortium(2, 1)).toThrow(/^silos: expected an integer in \[3, 20\]/);
  });

  it('--silos out of range is a usage error (exit code 2) naming the flag and the range', async () => {
    for (const silos of ['50', '2', 'x'])
      expect(await cli(['demo', '--silos', silos])).toEqual({
        code: 2,
        out: '',
        err: `fedscore: --silos: expected an integer in [3, 20], got '${silos}'\nRun "fedscore demo --help" for usage.\n`,
      });
    expect((await cli(['demo', '--seed', '1.5'])).err).toMatch(/^fedscore: --seed: expected an integer/);
  });

  it('runs from the command line, and rejects unknown options with exit code 2', () => {
    const r = spawnCli(['demo', '--silos', '5', '--seed', '-3', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const parsed = JSON.parse(r.stdout) as { scores: Record<string, number[]> };
    expect(parsed.scores.ee).toHaveLength(5);
    expect(spawnCli(['demo', '--bogus']).status).toBe(2);
  });
});
