/**
 * Issue 35: every command docs/trainer.md gives in a shell block is one test/e2e/trainer-up.test.ts
 * runs (the same arguments, less the test's small data set, `--backend cpu` and `--keep-serving`),
 * and every flag its `fedscore` mentions name is a flag of that command.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/program.js';
import { TORCH_INIT, TORCH_UP } from '../e2e/_torch.js';

const doc = readFileSync(new URL('../../docs/trainer.md', import.meta.url), 'utf8');

const flagsOf = (name: string): string[] =>
  COMMANDS.find((x) => x.name === name)!.options.map((o) => o.long!);

describe('docs/trainer.md', () => {
  it('gives in shell blocks exactly the commands the e2e test runs', () => {
    const commands = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.trim().split('\n'));
    expect(commands).toEqual([`fedscore ${TORCH_INIT.join(' ')}`, `fedscore ${TORCH_UP.join(' ')}`]);
  });

  it('names only flags the commands have', () => {
    const text = doc.replace(/\\\n\s*/g, '');
    const mentions = [...text.matchAll(/fedscore (init|up|client|experiment)((?: [^`\n]*)?)/g)];
    expect(mentions.length).toBeGreaterThan(3);
    for (const [, command, rest] of mentions)
      for (const flag of rest!.match(/--[a-z][a-z-]*/g) ?? [])
        expect(flagsOf(command!), `${command} ${flag}`).toContain(flag);
  });
});
