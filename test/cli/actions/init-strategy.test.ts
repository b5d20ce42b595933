/**
 * Issue 37: `fedscore init --strategy <name> [--clients-per-round k]` writes a networked strategy
 * into the project: config.json names it, the consortium file pins it (its digest covers it), a
 * silo on its own data accepts it as `fedscore client --data` does, and a strategy the silos would
 * refuse — unknown, not networked, rounds of fewer than 3 silos or fewer than t — is a usage error
 * naming the flag, before the project is written.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type InitArgs, initProject } from '../../../src/cli/actions/init.js';
import { readConsortiumFile } from '../../../src/consortium/consortium-file.js';
import { networkedRun, siloPlan } from '../../../src/fl/networked.js';
import { checkLocalStrategy, localNetworkedRun } from '../../../src/fl/own-data.js';
import { parseConfig } from '../../../src/records/config.js';
import { cli, dryRun } from '../_cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'fedscore-init-strategy-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const args = (dir: string, o: Partial<InitArgs> = {}): InitArgs => ({
  dir: join(tmp, dir),
  silos: 4,
  data: 'synthetic',
  formats: ['npy'],
  model: 'mlp',
  examplesPerSilo: 30,
  testSize: 30,
  rounds: 3,
  corruptSilos: 0,
  seed: 2,
  backend: 'cpu',
  ...o,
});

describe('fedscore init --strategy', () => {
  it('the flags reach the action', async () => {
    const { commands, calls } = dryRun();
    const r = await cli(['init', 'p', '--strategy', 'score-weighted', '--clients-per-round', '3'], {
      commands,
    });
    expect(r.err).toBe('');
    expect(calls[0]!.args).toMatchObject({ strategy: 'score-weighted', clientsPerRound: 3 });
  });

  it('score-weighted, 3 of 4 silos: config.json and the pinned consortium file name it; silos accept it', async () => {
    const o = args('sw', { strategy: 'score-weighted', clientsPerRound: 3 });
    await initProject(o, () => {});
    const config = JSON.parse(readFileSync(join(o.dir, 'config.json'), 'utf8'));
    expect(config.strategy).toEqual({ name: 'score-weighted', clientsPerRound: 3, weights: 'equal' });
    const project = JSON.parse(readFileSync(join(o.dir, 'fedscore-project.json'), 'utf8'));
    const { file } = readConsortiumFile(join(o.dir, 'consortium.json'), project.digest);
    expect(file.strategy).toMatchObject({ name: 'score-weighted', parameters: { clientsPerRound: 3 } });
    // As `fedscore up` runs it: the configuration read back from the project selects 3 of 4 …
    const cfg = parseConfig(
      { ...config, model: { ...config.model, path: join(o.dir, config.model.path) } },
      'config',
    );
    const run = networkedRun(cfg, file.seed);
    expect((await siloPlan(run, 1, []))!.selected).toHaveLength(3);
    // … and each silo, on its own data, accepts the plan (`fedscore client --data`'s check).
    for (const silo of [0, 1, 2, 3]) {
      const local = localNetworkedRun(cfg, file.seed, {
        silo,
        train: run.data.silos[silo]!,
        test: run.data.test,
        file,
      });
      await expect(checkLocalStrategy(local, silo)).resolves.toBeUndefined();
    }
  }, 60_000);

  it('FedAvg k-of-n and score-selection are written with equal weights (a silo knows only its own count)', async () => {
    const o = args('fedavg', { strategy: 'fedavg', clientsPerRound: 3 });
    await initProject(o, () => {});
    expect(JSON.parse(readFileSync(join(o.dir, 'config.json'), 'utf8')).strategy).toEqual({
      name: 'fedavg',
      clientsPerRound: 3,
      weights: 'equal',
    });
    const s = args('selection', { strategy: 'score-selection', clientsPerRound: 3 });
    await initProject(s, () => {});
    expect(JSON.parse(readFileSync(join(s.dir, 'config.json'), 'utf8')).strategy).toEqual({
      name: 'score-selection',
      clientsPerRound: 3,
      weights: 'equal',
    });
  }, 60_000);

  it('refuses what the silos would refuse, naming the flag, and writes no project', async () => {
    const cases: [Partial<InitArgs>, RegExp][] = [
      [{ strategy: 'nope' }, /^--strategy: unknown strategy 'nope'/],
      [{ strategy: 'fedms' }, /^--strategy: 'fedms' does not run over the network: /],
      [
        { strategy: 'fedavg', clientsPerRound: 5 },
        /^--clients-per-round: 5 is more than the project's 4 silos/,
      ],
      [
        { strategy: 'score-weighted', clientsPerRound: 2 },
        /^--clients-per-round: the strategy selects 2 of the 4 silos a round; a round needs at least 3 .*: pass --clients-per-round 3/,
      ],
      // score-selection's own default (half the silos) is 2 of 4: too few
      [{ strategy: 'score-selection' }, /^--clients-per-round: the strategy selects 2 of the 4 silos/],
      [{ clientsPerRound: 3 }, /^--clients-per-round: only with --strategy/],
    ];
    for (const [k, [o, message]] of cases.entries()) {
      const a = args(`bad-${k}`, o);
      await expect(initProject(a, () => {})).rejects.toThrow(message);
      expect(existsSync(a.dir) ? readdirSync(a.dir) : []).toEqual([]);
    }
    // through the command line: a usage error (exit code 2) with the same message
    const r = await cli(['init', join(tmp, 'bad-cli'), '--data', 'synthetic', '--strategy', 'fedtsv']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^fedscore: --strategy: 'fedtsv' does not run over the network/);
  }, 60_000);
});
