import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { demoConsortium, runDemo } from '../../src/cli/demo.js';

const run = promisify(execFile);

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

  it('runs from the command line, and rejects unknown options with exit code 2', async () => {
    const { stdout } = await run('npx', ['tsx', 'src/cli/main.ts', 'demo', '--silos', '5', '--json']);
    const parsed = JSON.parse(stdout) as { scores: Record<string, number[]> };
    expect(parsed.scores.ee).toHaveLength(5);
    await expect(run('npx', ['tsx', 'src/cli/main.ts', 'demo', '--bogus'])).rejects.toMatchObject({
      code: 2,
    });
  });
});
