/** src/strategies/selection-groups.ts: selection in fixed groups (issue 32; So et al., AAAI 2023). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRng } from '../../scoring/seeded-rng.js';
import { createStrategy } from '../../src/strategies/registry.js';
import { groupSelection } from '../../src/strategies/selection-groups.js';

describe('groupSelection', () => {
  it('takes the group holding most of the selection', () => {
    expect(groupSelection([3, 4, 8], 9, 3, createRng(1))).toEqual([3, 4, 5]);
    expect(groupSelection([0, 1, 2, 3], 9, 3, createRng(1)).length).toBe(6);
  });

  it('property: a union of whole groups, at least as large as the selection; same seed, same groups', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 20 }),
        fc.integer({ min: 3, max: 6 }),
        fc.integer(),
        (n, g, seed) => {
          const rng = createRng(seed);
          const chosen = Array.from({ length: n }, (_, i) => i).filter(() => rng.next() < 0.4);
          fc.pre(chosen.length > 0);
          const out = groupSelection(chosen, n, g, createRng(seed));
          expect(out).toEqual(groupSelection(chosen, n, g, createRng(seed)));
          expect(out.length).toBeGreaterThanOrEqual(chosen.length);
          for (const s of out)
            for (let i = Math.floor(s / g) * g; i < Math.min(n, (Math.floor(s / g) + 1) * g); i++)
              expect(out).toContain(i);
        },
      ),
    );
  });

  it('is a parameter of every strategy, checked', () => {
    expect(createStrategy({ name: 'fedavg', clientsPerRound: 3, selectionGroups: 3 } as never).name).toBe(
      'fedavg',
    );
    expect(() => createStrategy({ name: 'fedavg', selectionGroups: 2 } as never)).toThrow(
      /^strategy\.selectionGroups: expected an integer ≥ 3/,
    );
    expect(() => createStrategy({ name: 'fedavg', selectionGroups: 'x' } as never)).toThrow(
      /strategy\.selectionGroups/,
    );
  });
});
