/**
 * Issue 23: the docs name only what the code has. Every command and subcommand prints its
 * `--help`; every flag written next to a command in docs/*.md and the README — in a code span or
 * a shell block, after `fedscore <command>` or `npm run [-s] fedscore -- <command>`, and in the
 * README's command table — is a flag of that command; every configuration key the docs write as a
 * dotted path (`partition.alpha`, `comparison.estimators.gtg.budget`) or in a JSON block is a key
 * of the configuration schema (as docs/config.md, generated from it, lists them), and a whole
 * configuration in a JSON block passes parseConfig.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  builtInSubsections,
  keyRows,
  renderConfigDocs,
  type SchemaNode,
} from '../../scripts/gen-config-docs.js';
import { buildProgram, runCli } from '../../src/cli/program.js';
import { ExperimentConfigSchema, parseConfig } from '../../src/records/config.js';

const ROOT = new URL('../..', import.meta.url);
const DOCS = [
  'README.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(new URL(file, ROOT), 'utf8');

const program = buildProgram({ out: () => {}, err: () => {}, env: {}, cwd: '.' });
/** Every command, `init` or `consortium create`, with its commander object. */
const commands = new Map<string, Command>();
for (const c of program.commands) {
  commands.set(c.name(), c);
  for (const sub of c.commands) commands.set(`${c.name()} ${sub.name()}`, sub);
}
const flagsOf = (c: Command) => new Set(['--help', ...c.options.map((o) => o.long!)]);

const FENCE = /^```([^\n]*)\n([\s\S]*?)^```/gm;

/** A doc's code: its inline code spans and its fenced blocks' lines (`\` continuations joined). */
function codeOf(text: string): string[] {
  const units: string[] = [];
  for (const [, , body] of text.matchAll(FENCE)) units.push(...body!.replace(/\\\n\s*/g, ' ').split('\n'));
  for (const [, span] of text.replace(FENCE, '').matchAll(/`([^`\n]+)`/g)) units.push(span!);
  return units;
}

interface Mention {
  file: string;
  command: string;
  flags: string[];
  text: string;
}

/** `fedscore <command>[|<command>…] [<subcommand>[|…]]`, not an output line (`fedscore client: …`). */
const WORDS = '[a-z][a-z-]*(?:\\\\?\\|[a-z][a-z-]*)*';
const INVOCATION = new RegExp(
  `(?:^|[\\s(;&|$])(?:npm (?:--prefix \\S+ )?run(?: -s)? fedscore --|npx fedscore|fedscore)\\s+(${WORDS})(?![\\w:-])(?:\\s+(${WORDS})(?![\\w:-]))?`,
  'g',
);

/** The commands the code units of `file` run, each with the flags written after it. */
function mentionsIn(file: string, units: readonly string[]): Mention[] {
  const out: Mention[] = [];
  for (const written of units) {
    // A span that starts with a command and names a flag (`rounds close --abort`) runs it too.
    const bare =
      written.search(INVOCATION) < 0 && commands.has(/^[a-z][a-z-]*(?= )/.exec(written)?.[0] ?? '');
    const unit = bare && written.includes('--') ? `fedscore ${written}` : written;
    const found = [...unit.matchAll(INVOCATION)];
    found.forEach((m, k) => {
      const end = k + 1 < found.length ? found[k + 1]!.index : unit.length;
      // A shell line's next command (`&&`, `;`, a pipe) is not this one's.
      const rest = unit.slice(m.index + m[0].length, end).split(/&&|;|\s\|\s/)[0]!;
      const subs = m[2]?.split(/\\?\|/);
      for (const top of m[1]!.split(/\\?\|/)) {
        const c = commands.get(top);
        const isSub = c !== undefined && subs !== undefined && c.commands.some((s) => s.name() === subs[0]);
        const flags = (isSub ? rest : `${m[2] ?? ''} ${rest}`).match(/(?<![\w-])--[a-z][a-z0-9-]*/g) ?? [];
        for (const command of isSub ? subs.map((s) => `${top} ${s}`) : [top])
          out.push({ file, command, flags, text: written });
      }
    });
  }
  return out;
}

/** The README's command table: the code spans of a row's first cell, `<command> …flags…`. */
function readmeTable(): Mention[] {
  const out: Mention[] = [];
  for (const [, cell] of read('README.md').matchAll(/^\| (.*?) \| /gm))
    for (const [, span] of cell!.matchAll(/`([^`]+)`/g))
      if (commands.has(/^[a-z][a-z-]*/.exec(span!)?.[0] ?? ''))
        out.push(...mentionsIn('README.md (command table)', [`fedscore ${span}`]));
  return out;
}

/** What is wrong with the mentions: a command that does not exist, a flag it does not have. */
function problems(mentions: readonly Mention[]): string[] {
  const wrong: string[] = [];
  for (const m of mentions) {
    const c = commands.get(m.command);
    if (!c) {
      wrong.push(`${m.file}: no command '${m.command}' in \`${m.text}\``);
      continue;
    }
    const known = flagsOf(c);
    for (const f of m.flags)
      if (!known.has(f)) wrong.push(`${m.file}: ${m.command} has no ${f} (\`${m.text}\`)`);
  }
  return wrong;
}

const mentions = [...DOCS.flatMap((f) => mentionsIn(f, codeOf(read(f)))), ...readmeTable()];

describe('commands and their flags in the docs', () => {
  it('every command and subcommand prints its --help (exit 0) with its usage, description and flags', async () => {
    expect(commands.size).toBeGreaterThan(15);
    const helpSpans: string[] = [];
    for (const [name, c] of commands) {
      let out = '';
      const write = (t: string) => {
        out += t;
      };
      const code = await runCli([...name.split(' '), '--help'], {
        out: write,
        err: write,
        env: {},
        cwd: '.',
      });
      expect(code, name).toBe(0);
      expect(out, name).toContain(`Usage: fedscore ${name}`);
      expect(c.description().length, name).toBeGreaterThan(10);
      expect(out.replace(/\s+/g, ' '), name).toContain(c.description().replace(/\s+/g, ' ').slice(0, 40));
      for (const flag of flagsOf(c)) expect(out, `${name} ${flag}`).toContain(flag);
      helpSpans.push(...[...out.replace(/\s+/g, ' ').matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
    }
    // The commands a help text names in `…` exist, with the flags written after them.
    const named = mentionsIn('--help', helpSpans);
    expect(named.length).toBeGreaterThan(5);
    expect(problems(named)).toEqual([]);
  });

  it('finds the command lines of the docs and the README table (the check below is not empty)', () => {
    expect(mentions.length).toBeGreaterThan(60);
    expect(mentions.reduce((k, m) => k + m.flags.length, 0)).toBeGreaterThan(150);
    const named = new Set(mentions.map((m) => m.command.split(' ')[0]));
    for (const c of ['init', 'up', 'serve', 'client', 'consortium', 'rounds', 'experiment', 'score', 'audit'])
      expect(named, c).toContain(c);
    expect(mentions.filter((m) => m.file === 'README.md (command table)').length).toBeGreaterThan(12);
  });

  it('the check names a wrong flag, an unknown command and a subcommand flag given to another', () => {
    const units = [
      'npm run -s fedscore -- serve --port 1 --bogus',
      'fedscore rounds open\\|status --server U --consortium c --abort',
      'fedscore frobnicate --x',
      'fedscore client: --whatever: an output line, not a command',
      'fedscore keygen --out k && fedscore up d --out x',
      'serve --port 1 --log-format json --verbose',
    ];
    expect(problems(mentionsIn('t.md', units))).toEqual([
      't.md: serve has no --bogus (`npm run -s fedscore -- serve --port 1 --bogus`)',
      't.md: rounds open has no --abort (`fedscore rounds open\\|status --server U --consortium c --abort`)',
      't.md: rounds status has no --abort (`fedscore rounds open\\|status --server U --consortium c --abort`)',
      "t.md: no command 'frobnicate' in `fedscore frobnicate --x`",
      't.md: up has no --out (`fedscore keygen --out k && fedscore up d --out x`)',
      't.md: serve has no --verbose (`serve --port 1 --log-format json --verbose`)',
    ]);
  });

  it('every command the docs run exists, and every flag written after it is one of its flags', () => {
    expect(problems(mentions)).toEqual([]);
  });
});

describe('configuration keys in the docs', () => {
  const rows = keyRows(ExperimentConfigSchema as unknown as SchemaNode);
  const known = new Set([
    ...[...renderConfigDocs().matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!),
    ...builtInSubsections(rows).flatMap((s) => (s.covers ? [s.covers] : [])),
  ]);
  const top = new Set(Object.keys(ExperimentConfigSchema.properties));
  /**
   * Files whose dotted names are another JSON document's: results.json, the utilities file,
   * audit.json, the library's objects, and the service's consortium and round documents
   * (`model.parameters`, `rounds.faults`).
   */
  const OTHER_DOCUMENTS = new Set([
    'docs/results.md',
    'docs/utilities.md',
    'docs/audit.md',
    'docs/api.md',
    'docs/errors.md',
    'docs/threat-model.md',
    'docs/config.md',
  ]);
  const FILE = /\.(json|md|ts|mjs|js|py|csv|npy|db|key|log|html|svg|png|toml|tgz|idx|txt|sh|gz)$/;
  const checked = DOCS.filter((f) => !OTHER_DOCUMENTS.has(f));

  it('every dotted key the docs name is a key of the schema', () => {
    const wrong: string[] = [];
    let count = 0;
    for (const file of checked)
      for (const span of codeOf(read(file))) {
        const m =
          /^([a-z][A-Za-z0-9]*(?:\[\d*\])?(?:\.[A-Za-z][A-Za-z0-9]*(?:\[\d*\])?)+)(?=$|[\s:=,)])/.exec(span);
        if (!m || FILE.test(m[1]!) || !top.has(m[1]!.split(/[.[]/)[0]!)) continue;
        const path = m[1]!.replace(/\[\d*\]/g, '[]');
        count += 1;
        if (!known.has(path)) wrong.push(`${file}: \`${span}\` (${path})`);
      }
    expect(wrong).toEqual([]);
    expect(count).toBeGreaterThan(10);
  });

  it("every key of a JSON block of configuration is the schema's; a whole configuration parses", () => {
    const wrong: string[] = [];
    let blocks = 0;
    const walk = (file: string, v: unknown, path: string) => {
      if (Array.isArray(v)) for (const x of v) walk(file, x, `${path}[]`);
      else if (v !== null && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) {
          const p = path ? `${path}.${k}` : k;
          if (!known.has(p)) wrong.push(`${file}: ${p}`);
          else walk(file, x, p);
        }
    };
    for (const file of checked)
      for (const [, lang, body] of read(file).matchAll(FENCE)) {
        if (lang !== 'json') continue;
        let v: unknown;
        for (const text of [body!, `{${body}}`])
          try {
            v = JSON.parse(text);
            break;
          } catch {}
        if (
          v === null ||
          typeof v !== 'object' ||
          Array.isArray(v) ||
          !Object.keys(v).every((k) => top.has(k))
        )
          continue;
        blocks += 1;
        walk(file, v, '');
        if ('silos' in v && 'rounds' in v) parseConfig(v, `${file}'s JSON block`);
      }
    expect(wrong).toEqual([]);
    expect(blocks).toBeGreaterThanOrEqual(2);
  });
});
