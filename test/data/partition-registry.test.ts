import { describe, expect, it } from 'vitest';
import {
  PARTITION_KINDS,
  PARTITION_OPTIONS,
  partitionKind,
  partitionProblems,
} from '../../src/data/partition-registry.js';
import { PartitionSchema } from '../../src/records/config-schema.js';

describe('the partition registry', () => {
  it("declares exactly the configuration schema's kinds and options", () => {
    const props = PartitionSchema.properties as Record<
      string,
      { enum?: string[]; anyOf?: { const: string }[] }
    >;
    const kindSchema = props.kind as { enum?: string[]; anyOf?: { const: string }[] };
    const kinds = kindSchema.enum ?? kindSchema.anyOf?.map((x) => x.const);
    expect(new Set(kinds)).toEqual(new Set(PARTITION_KINDS.map((k) => k.kind)));
    expect(new Set(Object.keys(props).filter((k) => k !== 'kind'))).toEqual(new Set(PARTITION_OPTIONS));
    for (const k of PARTITION_KINDS) for (const r of k.required) expect(k.options).toContain(r);
  });

  it('names a missing option, an option of another kind and a size the consortium cannot hold', () => {
    expect(partitionProblems({ kind: 'mixed', nonIid: 5 }, 5)).toEqual([
      { path: 'partition.alpha', message: "required for kind 'mixed'" },
      { path: 'partition.nonIid', message: 'must be < silos (5)' },
    ]);
    expect(partitionProblems({ kind: 'iid', beta: 1 }, 5)).toEqual([
      { path: 'partition.beta', message: "applies only to kind 'quantity-skew'" },
    ]);
    expect(partitionProblems({ kind: 'dirichlet', alpha: 0.5, mode: 'shared' }, 5)).toEqual([
      { path: 'partition.mode', message: "applies only to kind 'mavericks'" },
    ]);
    expect(partitionProblems({ kind: 'mavericks' }, 1)).toEqual([
      { path: 'partition.mavericks', message: 'must be < silos (1)' },
    ]);
    expect(partitionProblems({ kind: 'dirichlet', alpha: 0.5 }, 5)).toEqual([]);
    expect(() => partitionKind('stripes')).toThrow(/^partition\.kind: expected one of iid, /);
  });

  it('gives the roles of its kind to the last silos', () => {
    expect(partitionKind('mavericks').roles?.({ mavericks: 2 }, 4)).toEqual([
      undefined,
      undefined,
      'maverick',
      'maverick',
    ]);
    expect(partitionKind('mixed').roles?.({ alpha: 1, nonIid: 1 }, 3)).toEqual([
      undefined,
      undefined,
      'non-iid',
    ]);
    expect(partitionKind('iid').roles).toBeUndefined();
  });

  it('refuses to split without a required option, naming it (callers that skipped the check)', () => {
    const base = { numSilos: 2, seed: 1, indices: Int32Array.of(0, 1, 2, 3) };
    expect(() => partitionKind('dirichlet').split(Int32Array.of(0, 1, 0, 1), base, {}, 2)).toThrow(
      "partition.alpha: required for kind 'dirichlet'",
    );
  });
});
