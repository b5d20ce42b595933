/**
 * `npx tsx bench/heap-diff.ts A.heapsnapshot B.heapsnapshot [--top N]`: what grew between two V8
 * heap snapshots (node:v8 `writeHeapSnapshot`, e.g. the load benchmark's with
 * `FEDSCORE_BENCH_SNAPSHOT=<dir>`, bench/_server-load.ts): objects counted and their self sizes
 * summed per constructor — strings, arrays, closures, compiled code and V8's own objects in one
 * group each, as the DevTools summary view shows them — and the N groups (default 25) whose self
 * size changed most, then the N whose count changed most. A leak shows as a group that grows with
 * the rounds run; a heap that only breathes shows no such group.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** The part of the snapshot format read here (v8's heap-snapshot-generator). */
interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** One group of a snapshot: how many objects, and their self sizes summed (bytes). */
export interface Group {
  count: number;
  bytes: number;
}

/** The group of a node of type `type` and name `name`. */
function groupOf(type: string, name: string): string {
  switch (type) {
    case 'object':
    case 'native':
      return name;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'closure':
      return '(closure)';
    case 'code':
      return '(compiled code)';
    case 'hidden':
    case 'object shape':
      return '(system)';
    default:
      return `(${type})`;
  }
}

/** Objects per group of the snapshot text `json`. */
export function groups(json: string): Map<string, Group> {
  const s = JSON.parse(json) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  if (typeAt! < 0 || nameAt! < 0 || sizeAt! < 0)
    throw new Error('heap snapshot: node_fields lacks type, name or self_size');
  const out = new Map<string, Group>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt!]!] ?? 'unknown';
    const key = groupOf(type, s.strings[s.nodes[i + nameAt!]!] ?? '');
    const g = out.get(key) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += s.nodes[i + sizeAt!]!;
    out.set(key, g);
  }
  return out;
}

/** Rows of the groups of `a` and `b`, the largest change of `by` first. */
export function diff(a: Map<string, Group>, b: Map<string, Group>, by: keyof Group, top: number) {
  const none = { count: 0, bytes: 0 };
  return [...new Set([...a.keys(), ...b.keys()])]
    .map((name) => ({ name, a: a.get(name) ?? none, b: b.get(name) ?? none }))
    .sort((x, y) => Math.abs(y.b[by] - y.a[by]) - Math.abs(x.b[by] - x.a[by]))
    .slice(0, top);
}

function main(): void {
  const args = process.argv.slice(2);
  const t = args.indexOf('--top');
  const top = t < 0 ? 25 : Number(args[t + 1]);
  const files = args.filter((_, i) => i !== t && i !== t + 1);
  if (files.length !== 2 || !(top > 0)) {
    console.error('usage: npx tsx bench/heap-diff.ts A.heapsnapshot B.heapsnapshot [--top N]');
    process.exit(2);
  }
  const [a, b] = files.map((f) => groups(readFileSync(f, 'utf8'))) as [
    Map<string, Group>,
    Map<string, Group>,
  ];
  const total = (g: Map<string, Group>) =>
    [...g.values()].reduce((s, x) => ({ count: s.count + x.count, bytes: s.bytes + x.bytes }), {
      count: 0,
      bytes: 0,
    });
  const kib = (x: number) => (x / 1024).toFixed(0);
  const [ta, tb] = [total(a), total(b)];
  console.log(`A: ${files[0]}: ${ta.count} objects, ${kib(ta.bytes)} KiB`);
  console.log(`B: ${files[1]}: ${tb.count} objects, ${kib(tb.bytes)} KiB\n`);
  for (const by of ['bytes', 'count'] as const) {
    console.log(`Largest change of ${by === 'bytes' ? 'self size' : 'count'}:\n`);
    console.log('| constructor | count A | count B | Δ count | KiB A | KiB B | Δ KiB |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const r of diff(a, b, by, top))
      console.log(
        `| ${r.name.slice(0, 60).replace(/\|/g, '\\|') || '(no name)'} | ${r.a.count} | ${r.b.count} | ${r.b.count - r.a.count} | ${kib(r.a.bytes)} | ${kib(r.b.bytes)} | ${kib(r.b.bytes - r.a.bytes)} |`,
      );
    console.log('');
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
