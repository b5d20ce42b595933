/** src/cli/_flags.ts: the shared flag parsers name the flag. */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  backendOption,
  httpUrlOption,
  idOption,
  integerFlag,
  integerOption,
  isRequired,
  required,
  UsageError,
} from '../../src/cli/_flags.js';

/** Parses `args` with one option; returns its value. */
function parse(option: ReturnType<typeof integerOption>, args: string[]): unknown {
  const cmd = new Command().exitOverride().addOption(option).parse(args, { from: 'user' });
  return cmd.getOptionValue(option.attributeName());
}

describe('flag parsers', () => {
  it('integerFlag: decimal digits in [min, max], else a UsageError naming the flag', () => {
    expect(integerFlag('n', undefined, 1, 5)).toBeUndefined();
    expect(integerFlag('n', '5', 1, 5)).toBe(5);
    for (const raw of ['0', '6', '-1', '1.5', '1e1', ' 2', ''])
      expect(() => integerFlag('n', raw, 1, 5)).toThrow(
        new UsageError(`--n: expected an integer in [1, 5], got '${raw}'`),
      );
  });

  it('integer, URL, id and backend options check their value as commander reads it', () => {
    expect(parse(integerOption('silos', 'n', '', 3, 20), ['--silos', '7'])).toBe(7);
    expect(() => parse(integerOption('silos', 'n', '', 3, 20), ['--silos=50'])).toThrow(/^--silos: /);
    expect(parse(httpUrlOption('server', ''), ['--server', 'https://h:1/x'])).toBe('https://h:1/x');
    expect(() => parse(httpUrlOption('server', ''), ['--server', 'h:1'])).toThrow(
      "--server: expected an http(s) URL, got 'h:1'",
    );
    expect(parse(idOption('id', ''), ['--id', 'net-1'])).toBe('net-1');
    expect(() => parse(idOption('id', ''), ['--id', '-x'])).toThrow(/^--id: expected lower-case/);
    expect(parse(backendOption(), ['--backend', 'wasm'])).toBe('wasm');
    expect(() => parse(backendOption(), ['--backend', 'gpu'])).toThrow(
      "--backend: expected one of webgpu, tensorflow, wasm, cpu, got 'gpu'",
    );
  });

  it('required marks an option without commander’s own mandatory check', () => {
    const option = required(integerOption('port', 'n', '', 0, 65535));
    expect(isRequired(option)).toBe(true);
    expect(option.mandatory).toBe(false);
    expect(isRequired(integerOption('port', 'n', '', 0, 65535))).toBe(false);
  });
});
