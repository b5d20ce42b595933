import { describe, expect, it } from 'vitest';
import { diff, groups } from '../../bench/heap-diff.js';

/** A heap snapshot in V8's format with the given nodes ([type, name, self size]; no edges). */
function snapshot(nodes: [string, string, number][]): string {
  const types = [
    'hidden',
    'array',
    'string',
    'object',
    'code',
    'closure',
    'regexp',
    'number',
    'native',
    'synthetic',
  ];
  const strings: string[] = [];
  const at = (s: string) => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  return JSON.stringify({
    snapshot: {
      meta: {
        node_fields: ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'],
        node_types: [types, 'string', 'number', 'number', 'number', 'number', 'number'],
      },
    },
    nodes: nodes.flatMap(([type, name, size], id) => [types.indexOf(type), at(name), id, size, 0, 0, 0]),
    edges: [],
    strings,
  });
}

describe('bench/heap-diff', () => {
  it('groups objects by constructor and strings, closures, code in one group each (the synthetic roots too)', () => {
    const g = groups(
      snapshot([
        ['synthetic', '(GC roots)', 0],
        ['object', 'BlobCache', 40],
        ['object', 'BlobCache', 40],
        ['string', 'a', 16],
        ['string', 'bb', 24],
        ['closure', 'f', 32],
        ['code', 'f', 100],
      ]),
    );
    expect(Object.fromEntries(g)).toEqual({
      '(synthetic)': { count: 1, bytes: 0 },
      BlobCache: { count: 2, bytes: 80 },
      '(string)': { count: 2, bytes: 40 },
      '(closure)': { count: 1, bytes: 32 },
      '(compiled code)': { count: 1, bytes: 100 },
    });
  });

  it('puts the group that grew most first, counting groups present in one snapshot only', () => {
    const a = groups(
      snapshot([
        ['object', 'Kept', 10],
        ['object', 'Gone', 500],
        ['string', 's', 8],
      ]),
    );
    const b = groups(
      snapshot([
        ['object', 'Kept', 10],
        ...Array.from({ length: 100 }, () => ['object', 'Leak', 64] as [string, string, number]),
        ['string', 's', 8],
      ]),
    );
    const bySize = diff(a, b, 'bytes', 2);
    expect(bySize.map((r) => r.name)).toEqual(['Leak', 'Gone']);
    expect(bySize[0]).toEqual({ name: 'Leak', a: { count: 0, bytes: 0 }, b: { count: 100, bytes: 6400 } });
    expect(diff(a, b, 'count', 1)[0]!.name).toBe('Leak');
  });

  it('refuses a snapshot without the fields it reads', () => {
    const bad = JSON.stringify({
      snapshot: { meta: { node_fields: ['type', 'id'], node_types: [['object']] } },
      nodes: [],
      strings: [],
    });
    expect(() => groups(bad)).toThrow(/node_fields lacks type, name or self_size/);
  });
});
