/** src/server/service/blob-cache.ts: a byte-bounded LRU per round and name. */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { BlobCache } from '../../../src/server/service/blob-cache.js';

const r1 = { consortium: 'c1', round: 1 };
const r2 = { consortium: 'c1', round: 2 };

describe('BlobCache', () => {
  test('evicts the least recently used entries past its capacity; drops a round at once', () => {
    const c = new BlobCache<string>(10);
    c.set(r1, 'a', 'A', 4);
    c.set(r1, 'b', 'B', 4);
    expect(c.get(r1, 'a')).toBe('A'); // a is now the most recent
    c.set(r2, 'a', 'C', 4); // 12 > 10: b goes
    expect(c.get(r1, 'b')).toBeUndefined();
    expect([c.get(r1, 'a'), c.get(r2, 'a'), c.bytes]).toEqual(['A', 'C', 8]);
    c.set(r1, 'x', 'X', 11); // larger than the whole cache: not kept, nothing evicted
    expect([c.get(r1, 'x'), c.bytes]).toEqual([undefined, 8]);
    c.dropRound(r1);
    expect([c.get(r1, 'a'), c.get(r2, 'a'), c.bytes]).toEqual([undefined, 'C', 4]);
    // round 1 of "c1" is not round 1 of "c1,1" or of "c" (keys do not collide)
    c.set({ consortium: 'c1,1', round: 1 }, 'a', 'D', 1);
    c.set({ consortium: 'c', round: 11 }, 'a', 'E', 1);
    c.dropRound({ consortium: 'c1', round: 1 });
    expect(c.get({ consortium: 'c1,1', round: 1 }, 'a')).toBe('D');
    expect(c.get({ consortium: 'c', round: 11 }, 'a')).toBe('E');
    expect(() => new BlobCache(-1)).toThrow(/^capacity/);
  });

  test('agrees with a reference LRU and never holds more than its capacity (fast-check)', () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant('set'), round: fc.nat(2), name: fc.nat(3), bytes: fc.nat(12) }),
      fc.record({ op: fc.constant('get'), round: fc.nat(2), name: fc.nat(3) }),
      fc.record({ op: fc.constant('drop'), round: fc.nat(2) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const cap = 20;
        const c = new BlobCache<number>(cap);
        let ref: { k: string; round: number; v: number; bytes: number }[] = []; // oldest first
        let v = 0;
        for (const o of ops) {
          const round = { consortium: 'c', round: o.round };
          if (o.op === 'set') {
            const k = `${o.round}/${o.name}`;
            ref = ref.filter((e) => e.k !== k);
            c.set(round, String(o.name), ++v, o.bytes);
            if (o.bytes <= cap) {
              ref.push({ k, round: o.round, v, bytes: o.bytes });
              while (ref.reduce((s, e) => s + e.bytes, 0) > cap) ref.shift();
            }
          } else if (o.op === 'get') {
            const k = `${o.round}/${o.name}`;
            const i = ref.findIndex((e) => e.k === k);
            expect(c.get(round, String(o.name))).toBe(i < 0 ? undefined : ref[i]!.v);
            if (i >= 0) ref.push(...ref.splice(i, 1));
          } else {
            c.dropRound(round);
            ref = ref.filter((e) => e.round !== o.round);
          }
          expect(c.bytes).toBe(ref.reduce((s, e) => s + e.bytes, 0));
          expect(c.bytes).toBeLessThanOrEqual(cap);
        }
      }),
    );
  });
});
