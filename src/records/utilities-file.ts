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
import { type SchemaIssue, schemaIssues } from '../contract/schema-issues.js';
import { MAX_EXACT_PLAYERS } from '../estimators/mrsv.js';
import { jsonTextDepth, MAX_JSON_DEPTH } from '../ml/json-depth.js';

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

/** The percent hint for a value in (1, 100] under a range whose top is 1. */
const percentHint = (v: number, hi: number) =>
  hi === 1 && v > 1 && v <= 100
    ? ` — ${v} looks like a percentage (100·correct/total): write ${v / 100}, the fraction`
    : '';

/**
 * The utilities outside the file's declared range (`range`, default [0, 1]), outside the command's
 * `range` or beyond ±MAX_UTILITY_MAGNITUDE, in file order.
 */
function rangeIssues(
  file: Static<typeof UtilitiesFileSchema>,
  range: readonly [number, number] | undefined,
): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  const declared = file.range ?? DEFAULT_UTILITY_RANGE;
  if (file.range && !(file.range[0]! < file.range[1]!))
    out.push({ path: 'range', message: `expected [lo, hi] with lo < hi, got [${file.range.join(', ')}]` });
  for (const [path, v] of utilities(file)) {
    if (!(Math.abs(v) <= MAX_UTILITY_MAGNITUDE))
      out.push({
        path,
        message: `${v} is beyond ±${MAX_UTILITY_MAGNITUDE.toExponential()}, the largest utility read (accuracies lie in [0, 1])`,
      });
    else if (!(v >= declared[0]! && v <= declared[1]!))
      out.push({
        path,
        message: `${v} is outside the declared range [${declared[0]}, ${declared[1]}]${file.range ? ' (`range`)' : ' (the default; a file of other utilities declares `range`)'}${percentHint(v, declared[1]!)}`,
      });
    else if (range && !(v >= range[0] && v <= range[1]))
      out.push({
        path,
        message: `${v} is outside [${range[0]}, ${range[1]}], the range this command takes${percentHint(v, range[1])}`,
      });
  }
  return out;
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
