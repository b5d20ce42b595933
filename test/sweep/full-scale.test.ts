/**
 * examples/full-scale/: the full-scale twin of every example configuration docs/reproductions.md
 * ran reduced (issue 25). Each is valid and differs from its reduced sibling in examples/ only in
 * its scale: the seeds, the rounds and the training set size (and its name).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/records/config.js';

const examples = join(import.meta.dirname, '../../examples');
const dir = join(examples, 'full-scale');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

/** What a twin may change: everything else must be its sibling's. */
function withoutScale(c: Record<string, unknown>) {
  const { name: _n, seeds: _s, rounds: _r, data, ...rest } = c;
  const { trainSize: _t, ...dataRest } = (data ?? {}) as Record<string, unknown>;
  return { ...rest, data: dataRest };
}

describe('examples/full-scale/*.json', () => {
  it('has the twins of the reduced papers/000, 002, 003 and 004 runs', () => {
    expect(files.filter((f) => f.startsWith('paper003-')).length).toBe(12);
    expect(files.filter((f) => f.startsWith('paper000-')).length).toBe(12);
    expect(files.filter((f) => f.startsWith('paper002-')).length).toBe(3);
    expect(files.filter((f) => f.startsWith('paper004-selection-')).length).toBe(4);
  });

  it.each(files)('%s is valid, at the papers’ scale, and otherwise its reduced sibling', (f) => {
    const full = read(join(dir, f));
    const reduced = read(join(examples, f));
    expect(() => parseConfig(full, f)).not.toThrow();
    expect(withoutScale(full)).toEqual(withoutScale(reduced));
    const scale = (c: Record<string, unknown>) => ({
      seeds: (c.seeds as number | undefined) ?? 1,
      rounds: c.rounds as number,
      trainSize:
        ((c.data as Record<string, unknown> | undefined)?.trainSize as number | undefined) ?? Infinity,
    });
    const [a, b] = [scale(full), scale(reduced)];
    expect(a.seeds).toBeGreaterThanOrEqual(b.seeds);
    expect(a.rounds).toBeGreaterThanOrEqual(b.rounds);
    expect(a.trainSize).toBeGreaterThanOrEqual(b.trainSize);
    expect(a.seeds > b.seeds || a.rounds > b.rounds || a.trainSize > b.trainSize).toBe(true);
    if (f.startsWith('paper003-')) expect(a.seeds).toBe(10);
    if (f.startsWith('paper000-')) expect([a.rounds, a.trainSize]).toEqual([100, Infinity]);
  });
});
