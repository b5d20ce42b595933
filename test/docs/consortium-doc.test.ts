/**
 * Issue 23: docs/consortium.md starts with the two commands test/e2e/up.test.ts runs (the same
 * arguments, less the test's `--backend cpu`), and every flag its init/up section names is a flag
 * of the command it belongs to (as `fedscore <command> --help` lists them).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/program.js';
import { INIT_ARGS, UP_ARGS } from '../e2e/_quickstart.js';

const doc = readFileSync(new URL('../../docs/consortium.md', import.meta.url), 'utf8');
const section = doc.slice(0, doc.indexOf('## The manual walk-through'));

const flagsOf = (name: string): string[] => {
  const [top, sub] = name.split(' ');
  let c = COMMANDS.find((x) => x.name === top)!;
  if (sub) c = c.subcommands!.find((x) => x.name === sub)!;
  return c.options.map((o) => o.long!);
};

describe('docs/consortium.md', () => {
  it('shows the commands the e2e test runs, in its first shell block', () => {
    const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!.trim().split('\n');
    expect(block).toEqual([`fedscore ${INIT_ARGS.join(' ')}`, `fedscore ${UP_ARGS.join(' ')}`]);
  });

  it('names only flags the commands have', () => {
    const mentions = [...section.matchAll(/`fedscore ((?:consortium )?[a-z]+)((?: [^`]*)?)`/g)];
    expect(mentions.length).toBeGreaterThan(4);
    for (const [, command, rest] of mentions) {
      const known = flagsOf(command!);
      for (const flag of rest!.match(/--[a-z][a-z-]*/g) ?? [])
        expect(known, `${command} ${flag}`).toContain(flag);
    }
    // The flags the prose names for init and up.
    for (const flag of ['--model', '--data', '--format', '--corrupt-silos'])
      expect(flagsOf('init')).toContain(flag);
  });
});
