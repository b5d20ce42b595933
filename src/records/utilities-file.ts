/**
 * The utilities file of `fedscore score --utilities` and `fedscore audit --utilities`
 * (docs/utilities.md): per round the four kinds of utilities private scoring needs, computed by
 * any federated-learning stack, with the names of scoring/private.ts — `full` = v(M),
 * `empty` = v(M0), `withOnly[i]` = v(M0 + U_i), `without[i]` = v(M − U_i), null for a silo that
 * did not report — and optionally the round's full coalition table for the Shapley reference.
 * The schema is TypeBox (docs/utilities.schema.json is generated from it:
 * scripts/gen-utilities-schema.ts); `parseUtilitiesFile` checks it and what a schema cannot say,
 * and names the JSON path of every problem.
 */
import Type, { type Static } from 'typebox';
import { MAX_EXACT_PLAYERS } from '../estimators/mrsv.js';
import { type SchemaIssue, schemaIssues } from '../schema/issues.js';
import { jsonTextDepth, MAX_JSON_DEPTH } from '../schema/json-depth.js';

/** Largest number of silos a coalition table may cover: as many as MR-SV handles (2^20 values per round). */
export const MAX_TABLE_SILOS = MAX_EXACT_PLAYERS;

/**
 * Largest |utility| a file may hold (issue 27, A7: 1e308 passed the schema and overflowed the
 * audit to ∞). Accuracies lie in [0, 1], negative losses within a few units; a value beyond this
 * is a units error. Refused at read time with its JSON path.
 */
export const MAX_UTILITY_MAGNITUDE = 1e6;

/** Two utilities agree when they differ by at most this much, relative to max(1, |a|, |b|). */
const AGREEMENT = 1e-6;

const Report = Type.Union([Type.Number(), Type.Null()]);

/** One round of the file. */
export const UtilitiesRoundSchema = Type.Object(
  {
    round: Type.Integer({
      minimum: 1,
      description: 'The round number, 1-based; rounds are listed in increasing order.',
    }),
    full: Type.Number({
      description: 'v(M): utility of the round’s aggregated model on the common test set.',
    }),
    empty: Type.Number({ description: 'v(M0): utility of the round’s starting model.' }),
    withOnly: Type.Array(Report, {
      minItems: 2,
      description:
        'v(M0 + U_i) per silo, in silo order: the utility of the starting model plus silo i’s update alone. null: silo i did not report this round.',
    }),
    without: Type.Array(Report, {
      minItems: 2,
      description:
        'v(M − U_i) per silo, in silo order: the utility of the aggregate without silo i’s update. null exactly where withOnly is null (a silo reports both or neither).',
    }),
    table: Type.Optional(
      Type.Array(Type.Number(), {
        minItems: 4,
        description: `Optional full coalition table of the round: 2^n values v(S), index = bitmask over the n silos (bit i = silo i), table[0] = v(∅) = empty, table[2^n − 1] = full; at most ${MAX_TABLE_SILOS} silos. Given in every round or in none; it gives the exact Shapley reference (MR-SV) and the agreement table.`,
      }),
    ),
  },
  { additionalProperties: false },
);

/** The whole file. */
export const UtilitiesFileSchema = Type.Object(
  {
    $schema: Type.Optional(
      Type.String({ description: 'The JSON schema the file follows, for editors; not read.' }),
    ),
    range: Type.Optional(
      Type.Array(Type.Number(), {
        minItems: 2,
        maxItems: 2,
        description:
          'The declared range [lo, hi] of every utility (default [0, 1]: accuracies as fractions). A utility outside it is refused with its JSON path; a value in (1, 100] under [0, 1] is most likely a percentage.',
      }),
    ),
    silos: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 2,
        description:
          'Silo names in silo order (default silo-0, silo-1, …); its length is the number of silos.',
      }),
    ),
    rounds: Type.Array(UtilitiesRoundSchema, {
      minItems: 1,
      description: 'The scored rounds, in increasing round order.',
    }),
  },
  {
    additionalProperties: false,
    title: 'fedscore utilities file',
    description:
      'Per round, the utilities private contribution scores are computed from (papers/003 §4): v(M), v(M0), and per silo v(M0 + U_i) and v(M − U_i). Read by `fedscore score --utilities` and `fedscore audit --utilities` (docs/utilities.md).',
  },
);

/** What a command requires of the utilities beyond the file format. */
export interface UtilitiesReadOptions {
  /**
   * The range every utility must lie in (the audit: [0, 1]), checked besides the file's own
   * declared `range` (default [0, 1]); refused with its path otherwise.
   */
  readonly range?: readonly [number, number];
}

/** The range a file declares when it says nothing: accuracies as fractions. */
export const DEFAULT_UTILITY_RANGE: readonly [number, number] = [0, 1];

/** At most this many problems are listed (each with its JSON path); the count of the rest follows. */
export const MAX_LISTED_ISSUES = 20;

/** A round of a validated utilities file. */
export type UtilitiesRound = Static<typeof UtilitiesRoundSchema>;

/** A validated utilities file, with its silo names filled in. */
export interface UtilitiesFile {
  /** Silo names in silo order (`silos`, or silo-0, silo-1, …). */
  silos: string[];
  /** The declared range of the utilities (`range`, default [0, 1]). */
  range: [number, number];
  rounds: UtilitiesRound[];
}

/** Thrown by `parseUtilitiesFile`; `issues` lists every problem, the message the first few. */
export class UtilitiesFileError extends Error {
  readonly issues: SchemaIssue[];
  constructor(issues: SchemaIssue[], source = 'utilities') {
    const shown = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `  ${i.path || '(root)'}: ${i.message}`);
    const more =
      issues.length > MAX_LISTED_ISSUES ? [`  … and ${issues.length - MAX_LISTED_ISSUES} more`] : [];
    const count = issues.length > 1 ? ` — ${issues.length} problems` : '';
    super(`${source}: invalid utilities file (docs/utilities.md)${count}\n${[...shown, ...more].join('\n')}`);
    this.name = 'UtilitiesFileError';
    this.issues = issues;
  }
}

const close = (a: number, b: number) => Math.abs(a - b) <= AGREEMENT * Math.max(1, Math.abs(a), Math.abs(b));

/** Every utility of the file with its JSON path, in file order. */
function* utilities(file: Static<typeof UtilitiesFileSchema>): Generator<[string, number]> {
  for (const [k, r] of file.rounds.entries()) {
    const at = `rounds[${k}]`;
    yield [`${at}.full`, r.full];
    yield [`${at}.empty`, r.empty];
    for (const key of ['withOnly', 'without'] as const)
      for (const [i, v] of r[key].entries()) if (v !== null) yield [`${at}.${key}[${i}]`, v];
    for (const [i, v] of (r.table ?? []).entries()) yield [`${at}.table[${i}]`, v];
  }
}

/**
 * Which of the values outside a range whose top is 1 look like percentages (issue 37): a value in
 * (1, 100] whose hundredth lies among the file's values inside the range (half the smallest
 * positive to 1.5 times the largest, at most 1) — 62 beside accuracies of 0.5 … 0.8 — or any value
 * in (1, 100] when such values are at least half the file. 1.02 beside accuracies of 0.6 is not
 * one (0.0102 is no accuracy of that file): it is just outside the range.
 */
function percentLike(
  outside: readonly number[],
  inside: readonly number[],
  total: number,
): (v: number) => boolean {
  const candidates = outside.filter((v) => v > 1 && v <= 100);
  const positive = inside.filter((v) => v > 0);
  if (candidates.length * 2 >= total || positive.length === 0) return (v) => v > 1 && v <= 100;
  const lo = 0.5 * Math.min(...positive);
  const hi = Math.min(1, 1.5 * Math.max(...positive));
  return (v) => v > 1 && v <= 100 && v / 100 >= lo && v / 100 <= hi;
}

/**
 * The problems of the values outside [lo, hi]: one line each, except that the values that look
 * like percentages (see {@link percentLike}) become one grouped line with the fix — declare
 * `"range": [0, 100]`, or write fractions — instead of one near-identical line per value.
 */
function outsideIssues(
  outside: readonly [string, number][],
  inside: readonly number[],
  total: number,
  hi: number,
  what: (v: number) => string,
  fix: string,
): SchemaIssue[] {
  const isPercent =
    hi === 1
      ? percentLike(
          outside.map(([, v]) => v),
          inside,
          total,
        )
      : () => false;
  const percent = outside.filter(([, v]) => isPercent(v));
  const out: SchemaIssue[] = [];
  for (const [path, v] of outside) {
    if (percent.length > 0 && isPercent(v)) {
      if (path !== percent[0]![0]) continue;
      out.push({
        path,
        // One such value among fractions is a typo (write the fraction); many are a file in percent.
        message:
          percent.length === 1
            ? `${what(v)} — ${v} looks like a percentage (100·correct/total): write ${v / 100}, the fraction`
            : `${what(v)}; so ${percent.length === 2 ? 'is 1 more utility' : `are ${percent.length - 1} more utilities`} in (1, 100] (${percent
                .slice(1, 4)
                .map(([p]) => p)
                .join(
                  ', ',
                )}${percent.length > 4 ? ', …' : ''}): the file looks like percentages (100·correct/total) — ${fix}`,
      });
    } else out.push({ path, message: what(v) });
  }
  return out;
}

/**
 * The utilities outside the file's declared range (`range`, default [0, 1]), outside the command's
 * `range` or beyond ±MAX_UTILITY_MAGNITUDE, in file order (values that look like percentages
 * grouped into one problem).
 */
function rangeIssues(
  file: Static<typeof UtilitiesFileSchema>,
  range: readonly [number, number] | undefined,
): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  const declared = file.range ?? DEFAULT_UTILITY_RANGE;
  if (file.range && !(file.range[0]! < file.range[1]!))
    out.push({ path: 'range', message: `expected [lo, hi] with lo < hi, got [${file.range.join(', ')}]` });
  const all = [...utilities(file)];
  const outsideDeclared: [string, number][] = [];
  const outsideCommand: [string, number][] = [];
  const inside: number[] = [];
  for (const [path, v] of all) {
    if (!(Math.abs(v) <= MAX_UTILITY_MAGNITUDE))
      out.push({
        path,
        message: `${v} is beyond ±${MAX_UTILITY_MAGNITUDE.toExponential()}, the largest utility read (accuracies lie in [0, 1])`,
      });
    else if (!(v >= declared[0]! && v <= declared[1]!)) outsideDeclared.push([path, v]);
    else if (range && !(v >= range[0] && v <= range[1])) outsideCommand.push([path, v]);
    else inside.push(v);
  }
  out.push(
    ...outsideIssues(
      outsideDeclared,
      inside,
      all.length,
      declared[1]!,
      (v) =>
        `${v} is outside the declared range [${declared[0]}, ${declared[1]}]${file.range ? ' (`range`)' : ' (the default; a file of other utilities declares `range`)'}`,
      range && range[1] === 1
        ? `this command takes [${range[0]}, ${range[1]}]: write each as a fraction (v → v/100)`
        : `declare \`"range": [0, 100]\` in the file (the scores are then in the same units), or write each as a fraction (v → v/100)`,
    ),
  );
  if (range)
    out.push(
      ...outsideIssues(
        outsideCommand,
        inside,
        all.length,
        range[1],
        (v) => `${v} is outside [${range[0]}, ${range[1]}], the range this command takes`,
        `this command takes [${range[0]}, ${range[1]}]: write each as a fraction (v → v/100)`,
      ),
    );
  // In file order, whatever the kind.
  const order = new Map(all.map(([path], k) => [path, k]));
  return out.sort((a, b) => (order.get(a.path) ?? -1) - (order.get(b.path) ?? -1));
}

/** What the schema cannot check: lengths against the number of silos, paired nulls, order, tables. */
function fileIssues(file: Static<typeof UtilitiesFileSchema>): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  const n = file.silos?.length ?? file.rounds[0]!.withOnly.length;
  const nFrom = file.silos ? 'silos' : 'rounds[0].withOnly';
  const withTable = file.rounds.findIndex((r) => r.table !== undefined);
  file.rounds.forEach((r, k) => {
    const at = `rounds[${k}]`;
    if (k > 0 && r.round <= file.rounds[k - 1]!.round)
      out.push({
        path: `${at}.round`,
        message: `expected a round number greater than ${file.rounds[k - 1]!.round} (rounds in increasing order)`,
      });
    for (const key of ['withOnly', 'without'] as const)
      if (r[key].length !== n)
        out.push({
          path: `${at}.${key}`,
          message: `expected ${n} entries, one per silo (as ${nFrom}), got ${r[key].length}`,
        });
    const silos = Math.min(n, r.withOnly.length, r.without.length);
    for (let i = 0; i < silos; i++) {
      const a = r.withOnly[i];
      const b = r.without[i];
      if ((a === null) !== (b === null))
        out.push({
          path: `${at}.${a === null ? 'without' : 'withOnly'}[${i}]`,
          message: `expected null, as ${at}.${a === null ? 'withOnly' : 'without'}[${i}] is null (a silo reports both utilities or neither)`,
        });
    }
    if (r.table === undefined) {
      if (withTable >= 0)
        out.push({
          path: `${at}.table`,
          message: `required, as rounds[${withTable}] has one (a table in every round or in none)`,
        });
      return;
    }
    if (n > MAX_TABLE_SILOS) {
      out.push({
        path: `${at}.table`,
        message: `a coalition table covers at most ${MAX_TABLE_SILOS} silos, not ${n}`,
      });
      return;
    }
    const size = 2 ** n;
    if (r.table.length !== size) {
      out.push({
        path: `${at}.table`,
        message: `expected 2^${n} = ${size} values (index = bitmask over the ${n} silos), got ${r.table.length}`,
      });
      return;
    }
    // The table and the utilities describe the same round: a reversed bit order shows up here.
    const all = size - 1;
    const agree = (index: number, value: number | null, name: string, what: string) => {
      if (value !== null && !close(r.table![index]!, value))
        out.push({
          path: `${at}.table[${index}]`,
          message: `${what} = ${r.table![index]} differs from ${at}.${name} = ${value} (index = bitmask, bit i = silo i)`,
        });
    };
    agree(0, r.empty, 'empty', 'v(∅)');
    agree(all, r.full, 'full', 'v(N)');
    for (let i = 0; i < n; i++) {
      agree(2 ** i, r.withOnly[i] ?? null, `withOnly[${i}]`, `v({${i}})`);
      agree(all - 2 ** i, r.without[i] ?? null, `without[${i}]`, `v(N ∖ {${i}})`);
    }
  });
  return out;
}

/**
 * Validates a parsed utilities file (docs/utilities.md): the schema, then one entry per silo in
 * every round (as `silos`, else as the first round), both reports of a silo null or neither,
 * increasing round numbers, and tables of 2^n values in every round or none that agree with the
 * round's utilities, and every utility within ±MAX_UTILITY_MAGNITUDE (and within
 * `options.range` when given).
 * @param value the parsed JSON.
 * @param source the file name, for the message.
 * @throws UtilitiesFileError listing every problem with its JSON path
 *   (`rounds[2].withOnly[3]: expected a number or null`).
 */
export function parseUtilitiesFile(
  value: unknown,
  source = 'utilities',
  options: UtilitiesReadOptions = {},
): UtilitiesFile {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UtilitiesFileError([{ path: '', message: 'expected a JSON object' }], source);
  const issues = schemaIssues(UtilitiesFileSchema, value, {
    expectedTypes: true,
    unions: {
      'rounds[].withOnly[]': 'expected a number or null',
      'rounds[].without[]': 'expected a number or null',
    },
  });
  if (issues.length > 0) throw new UtilitiesFileError(issues, source);
  const file = value as Static<typeof UtilitiesFileSchema>;
  // Every problem at once, in file order of kind: the ranges, then what the schema cannot say.
  const problems = [...rangeIssues(file, options.range), ...fileIssues(file)];
  if (problems.length > 0) throw new UtilitiesFileError(problems, source);
  const n = file.silos?.length ?? file.rounds[0]!.withOnly.length;
  return {
    range: file.range ? [file.range[0]!, file.range[1]!] : ([...DEFAULT_UTILITY_RANGE] as [number, number]),
    silos: file.silos ? [...file.silos] : Array.from({ length: n }, (_, i) => `silo-${i}`),
    rounds: file.rounds,
  };
}

/**
 * Parses the text of a utilities file.
 * @throws UtilitiesFileError when it is not JSON or not a valid utilities file.
 */
export function parseUtilitiesText(
  text: string,
  source = 'utilities',
  options: UtilitiesReadOptions = {},
): UtilitiesFile {
  if (jsonTextDepth(text) > MAX_JSON_DEPTH)
    throw new UtilitiesFileError(
      [{ path: '', message: `nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects` }],
      source,
    );
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UtilitiesFileError([{ path: '', message: `not valid JSON (${(e as Error).message})` }], source);
  }
  return parseUtilitiesFile(json, source, options);
}
