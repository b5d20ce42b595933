import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/records/config.js';
import { didYouMean, editDistance, nearestName } from '../../src/schema/did-you-mean.js';

describe('didYouMean', () => {
  it('names the nearest key of a misspelt one, and none for a word that is no typo', () => {
    const keys = ['silos', 'rounds', 'training', 'data', 'model', 'comparison'];
    expect(didYouMean('trainig', keys)).toBe(" (did you mean 'training'?)");
    expect(didYouMean('rnouds', keys)).toBe(" (did you mean 'rounds'?)"); // a swap counts as one edit
    expect(didYouMean('Silos', keys)).toBe(" (did you mean 'silos'?)");
    expect(didYouMean('bogus', keys)).toBe('');
    expect(nearestName('x', [])).toBeUndefined();
  });

  it('is a distance: zero only for the same name (case aside), symmetric, one per edit', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        expect(editDistance(a, b)).toBe(editDistance(b, a));
        expect(editDistance(a, b) === 0).toBe(a.toLowerCase() === b.toLowerCase());
        expect(editDistance(a, b)).toBeLessThanOrEqual(Math.max(a.length, b.length));
      }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 12 }), fc.nat(), (a, at) => {
        const i = at % a.length;
        expect(editDistance(a, a.slice(0, i) + a.slice(i + 1))).toBe(1);
      }),
    );
  });

  it('reaches the configuration: a misspelt key of any block says what it meant', () => {
    const problems = (config: unknown) => {
      try {
        parseConfig(config);
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(problems({ silos: 3, rounds: 2, trainig: {} })).toContain(
      "trainig: unknown key (did you mean 'training'?)",
    );
    expect(problems({ silos: 3, rounds: 2, training: { epoch: 1 } })).toContain(
      "training.epoch: unknown key (did you mean 'epochs'?)",
    );
    // A key that moved out of the configuration says where it went.
    expect(problems({ silos: 3, rounds: 2, scoring: { schemes: ['loo'] } })).toContain(
      'scoring.schemes: no longer a configuration key: it only chose what the report shows; pass --schemes <list> to fedscore experiment or score',
    );
    expect(problems({ silos: 3, rounds: 2, data: { synthetc: {} } })).toContain(
      "data.synthetc: unknown key (did you mean 'synthetic'?)",
    );
  });
});
