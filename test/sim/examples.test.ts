import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/records/config.js';
import { strategyOf } from '../../src/sim/round-loop.js';

const dir = join(import.meta.dirname, '../../examples');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('examples/*.json', () => {
  it('there are example configurations', () => {
    expect(files).toContain('quickstart.json');
  });
  it.each(files)('%s is a valid configuration with a valid strategy', (f) => {
    const cfg = parseConfig(JSON.parse(readFileSync(join(dir, f), 'utf8')), f);
    expect(() => strategyOf(cfg)).not.toThrow();
  });
});
