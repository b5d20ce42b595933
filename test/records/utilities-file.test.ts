/**
 * src/records/utilities-file.ts: a valid file passes with its silo names filled in; every kind of bad
 * file is refused with the JSON path of the problem (the schema's and the cross-field checks').
 */
import { describe, expect, it } from 'vitest';
import {
  parseUtilitiesFile,
  parseUtilitiesText,
  UtilitiesFileError,
  type UtilitiesRound,
} from '../../src/records/utilities-file.js';

/** papers/003 Example 2 as one round: v(S) over A, B, C = silos 0, 1, 2. */
const example2 = (): UtilitiesRound => ({
  round: 1,
  full: 3,
  empty: 0,
  withOnly: [0, 1, 2],
  without: [3, 2, 1],
  table: [0, 0, 1, 1, 2, 2, 3, 3],
});

/** Example 2's utilities run from 0 to 3: its files declare that range (the default is [0, 1]). */
const EXAMPLE2_RANGE = [0, 3];
const inRange = (value: unknown) =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !('range' in value)
    ? { range: EXAMPLE2_RANGE, ...value }
    : value;

/** The issues `parseUtilitiesFile` reports for `value` (Example 2's range declared), as `path: message` lines. */
function issues(value: unknown): string[] {
  try {
    parseUtilitiesFile(inRange(value), 'u.json');
  } catch (e) {
    expect(e).toBeInstanceOf(UtilitiesFileError);
    return (e as UtilitiesFileError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  return [];
}

describe('parseUtilitiesFile', () => {
  it('accepts a valid file and names the silos silo-0, silo-1, … unless `silos` does', () => {
    const file = parseUtilitiesFile({ range: EXAMPLE2_RANGE, rounds: [example2()] });
    expect(file.range).toEqual([0, 3]);
    expect(file.silos).toEqual(['silo-0', 'silo-1', 'silo-2']);
    expect(file.rounds[0]!.withOnly).toEqual([0, 1, 2]);
    const named = parseUtilitiesFile({
      $schema: '../docs/utilities.schema.json',
      range: EXAMPLE2_RANGE,
      silos: ['a', 'b', 'c'],
      rounds: [
        { ...example2(), table: undefined },
        { ...example2(), round: 3, table: undefined },
      ],
    });
    expect(named.silos).toEqual(['a', 'b', 'c']);
  });

  it('accepts a silo without a report (null in both) and tables that skip its checks', () => {
    const r = { ...example2(), withOnly: [0, null, 2], without: [3, null, 1] };
    expect(issues({ rounds: [r] })).toEqual([]);
  });

  it('names the JSON path of a schema problem', () => {
    const r = { ...example2(), withOnly: [0, 'x', 2] };
    expect(issues({ rounds: [example2(), { ...example2(), round: 2 }, { ...r, round: 3 }] })).toEqual([
      'rounds[2].withOnly[1]: expected a number or null',
    ]);
    expect(issues({ rounds: [{ ...example2(), full: '0.8' }] })).toEqual([
      'rounds[0].full: expected a number',
    ]);
    expect(issues({ rounds: [{ ...example2(), round: 0 }] })).toEqual(['rounds[0].round: must be >= 1']);
    expect(issues({ rounds: [{ ...example2(), round: 1.5 }] })).toEqual([
      'rounds[0].round: expected an integer',
    ]);
    expect(issues({ rounds: [{ ...example2(), withonly: [1, 2, 3] }] })).toEqual([
      "rounds[0].withonly: unknown key (did you mean 'withOnly'?)",
    ]);
    const { without: _, ...noWithout } = example2();
    expect(issues({ rounds: [noWithout] })).toEqual(['rounds[0].without: required']);
    expect(issues({ rounds: [] })).toEqual(['rounds: must not have fewer than 1 items']);
    expect(issues({})).toEqual(['rounds: required']);
    expect(issues([])).toEqual([': expected a JSON object']);
    expect(issues({ rounds: [example2()], extra: 1 })).toEqual(['extra: unknown key']);
    expect(issues({ range: [0], rounds: [example2()] })).toEqual(['range: must not have fewer than 2 items']);
    expect(issues({ rounds: [{ ...example2(), table: [0, 1, 'x', 3] }] })).toEqual([
      'rounds[0].table[2]: expected a number',
    ]);
  });

  it('checks what the schema cannot: lengths, paired nulls, round order, tables', () => {
    expect(issues({ silos: ['a', 'b'], rounds: [example2()] })).toEqual([
      'rounds[0].withOnly: expected 2 entries, one per silo (as silos), got 3',
      'rounds[0].without: expected 2 entries, one per silo (as silos), got 3',
      'rounds[0].table: expected 2^2 = 4 values (index = bitmask over the 2 silos), got 8',
    ]);
    expect(issues({ rounds: [example2(), { ...example2(), round: 2, without: [3, 2] }] })).toContain(
      'rounds[1].without: expected 3 entries, one per silo (as rounds[0].withOnly), got 2',
    );
    expect(issues({ rounds: [{ ...example2(), withOnly: [0, null, 2] }] })).toEqual([
      'rounds[0].without[1]: expected null, as rounds[0].withOnly[1] is null (a silo reports both utilities or neither)',
    ]);
    expect(issues({ rounds: [example2(), { ...example2(), round: 1 }] })).toEqual([
      'rounds[1].round: expected a round number greater than 1 (rounds in increasing order)',
    ]);
    expect(issues({ rounds: [example2(), { ...example2(), round: 2, table: undefined }] })).toEqual([
      'rounds[1].table: required, as rounds[0] has one (a table in every round or in none)',
    ]);
    expect(issues({ rounds: [{ ...example2(), table: [0, 0, 1, 1] }] })).toEqual([
      'rounds[0].table: expected 2^3 = 8 values (index = bitmask over the 3 silos), got 4',
    ]);
  });

  it('refuses a table that disagrees with the utilities (a reversed bit order shows)', () => {
    // Bit 0 = C instead of A: v({A}) = table[1] becomes 2.
    const reversed = { ...example2(), table: [0, 2, 1, 3, 0, 2, 1, 3] };
    expect(issues({ rounds: [reversed] })).toEqual([
      'rounds[0].table[1]: v({0}) = 2 differs from rounds[0].withOnly[0] = 0 (index = bitmask, bit i = silo i)',
      'rounds[0].table[6]: v(N ∖ {0}) = 1 differs from rounds[0].without[0] = 3 (index = bitmask, bit i = silo i)',
      'rounds[0].table[4]: v({2}) = 0 differs from rounds[0].withOnly[2] = 2 (index = bitmask, bit i = silo i)',
      'rounds[0].table[3]: v(N ∖ {2}) = 3 differs from rounds[0].without[2] = 1 (index = bitmask, bit i = silo i)',
    ]);
    const nearly = { ...example2(), table: [0, 0, 1, 1, 2, 2, 3, 3 - 1e-9] };
    expect(issues({ rounds: [nearly] })).toEqual([]);
  });

  it('the error message names the file and the first problems', () => {
    expect(() => parseUtilitiesText('{"rounds": [', 'u.json')).toThrow(/^u\.json: invalid utilities file/);
    expect(() => parseUtilitiesText('{}', 'u.json')).toThrow(
      'u.json: invalid utilities file (docs/utilities.md)\n  rounds: required',
    );
    // 1e400 is Infinity once parsed: not a number JSON can carry.
    expect(() =>
      parseUtilitiesText('{"rounds":[{"round":1,"full":1e400,"empty":0,"withOnly":[0,1],"without":[1,0]}]}'),
    ).toThrow('rounds[0].full: expected a number');
  });
});
