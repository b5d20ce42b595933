/**
 * The detector's false-flag rate on honest runs of the example configurations (issue 37), the
 * table of docs/audit.md ("False flags").
 *
 *   npx tsx scripts/false-flags.ts record [--rounds R] [--seeds S] [--out F] [config.json …]
 *   npx tsx scripts/false-flags.ts table [--in F]
 *
 * `record` runs each configuration (default: every examples/*.json) for seeds seed … seed + S − 1
 * (default 5) with quarantine off and no reference estimators, keeping at most R rounds (default 3;
 * the full runs take hours on 2 cores, and the reports of a round depend only on that round's
 * models), and appends each round's reports — v(M), v(M0), every reporter's v(M0 + U_i) and
 * v(M − U_i), the silos' roles and the test-set size — as one JSON line to F (default
 * runs/false-flags/utilities.jsonl). Configurations already in F with that many seeds and rounds
 * are skipped, so an interrupted run resumes.
 *
 * `table` re-runs the detector offline on the recorded reports (no training) and prints, per
 * configuration: seeds, rounds, honest silo-rounds (silos whose role is not a simulated attack or
 * label noise; Mavericks are honest), how many of them the detector quarantines now and how many
 * the detector before issue 37 did (robust z among all reports, MAD scale, 5 reports), and the
 * flags on the simulated attackers and noisy silos (their reports are honest too: the engine
 * computes every utility truthfully).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from '../scoring/_median.js';
import { quarantineReports } from '../scoring/manipulation/quarantine.js';
import type { PrivateUtilities } from '../scoring/private.js';

/** One recorded round. */
interface RecordedRound {
  config: string;
  seed: number;
  round: number;
  rounds: number;
  testExamples: number;
  roles: string[];
  /** Reporting silos (selected and not dropped), in order. */
  silos: number[];
  full: number;
  empty: number;
  withOnly: number[];
  without: number[];
}

/** Training examples of the bundled Fashion-MNIST subset (examples/data). */
const BUNDLED_TRAIN = 7500;
const DEFAULT_FILE = 'runs/false-flags/utilities.jsonl';

function readRecorded(file: string): RecordedRound[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RecordedRound);
}

async function record(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { rounds: { type: 'string' }, seeds: { type: 'string' }, out: { type: 'string' } },
  });
  const maxRounds = Number(values.rounds ?? 3);
  const seedCount = Number(values.seeds ?? 5);
  const file = values.out ?? DEFAULT_FILE;
  mkdirSync(dirname(file), { recursive: true });
  const { loadConfig } = await import('../src/cli/_config.js');
  const { runSeedRecord } = await import('../src/engine/experiment.js');
  const { dataShapeOf } = await import('../src/engine/setup.js');
  const { createTfLearner } = await import('../src/learner/tf-learner.js');
  const { readdirSync } = await import('node:fs');
  const configs =
    positionals.length > 0
      ? positionals
      : readdirSync('examples')
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => join('examples', f));
  for (const path of configs) {
    const name = basename(path, '.json');
    const loaded = await loadConfig(path);
    const rounds = Math.min(loaded.rounds, maxRounds);
    const done = new Set(
      readRecorded(file)
        .filter((r) => r.config === name)
        .map((r) => r.seed),
    );
    const data = loaded.data as { trainSize?: number } | undefined;
    const cfg = {
      ...loaded,
      rounds,
      // the bundled Fashion-MNIST has 7 500 training examples after the split: larger configurations
      // are run on all of them (the same partition and selection at a smaller scale)
      ...(data?.trainSize !== undefined && data.trainSize > BUNDLED_TRAIN
        ? { data: { ...loaded.data, trainSize: BUNDLED_TRAIN } }
        : {}),
      scoring: { ...loaded.scoring, quarantine: false },
      // the sum is the same without masking (the utilities are computed from it in the clear)
      secureAggregation: { ...loaded.secureAggregation, enabled: false },
      comparison: { estimators: {}, trueShapley: false },
    } as typeof loaded;
    delete (cfg as { seeds?: number }).seeds;
    const learner = await createTfLearner({
      ...dataShapeOf(cfg),
      model: cfg.model,
      training: cfg.training ?? {},
    });
    try {
      for (let k = 0; k < seedCount; k++) {
        const seed = (loaded.seed ?? 1) + k;
        if (done.has(seed)) continue;
        const t0 = performance.now();
        let seedRecord: Awaited<ReturnType<typeof runSeedRecord>>;
        try {
          seedRecord = await runSeedRecord(cfg, seed, { learner });
        } catch (e) {
          process.stderr.write(`${name} seed ${seed}: not run: ${(e as Error).message}\n`);
          break;
        }
        const { run, consortium } = seedRecord;
        for (const rd of run.rounds) {
          const silos = rd.utilities.withOnly.flatMap((x, i) => (x === null ? [] : [i]));
          const line: RecordedRound = {
            config: name,
            seed,
            round: rd.round,
            rounds,
            testExamples: consortium.testExamples,
            roles: consortium.roles,
            silos,
            full: rd.utilities.full,
            empty: rd.utilities.empty,
            withOnly: silos.map((i) => rd.utilities.withOnly[i]!),
            without: silos.map((i) => rd.utilities.without[i]!),
          };
          appendFileSync(file, `${JSON.stringify(line)}\n`);
        }
        process.stderr.write(`${name} seed ${seed}: ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
      }
    } finally {
      await learner.close();
    }
  }
}

/** The detector before issue 37: robust z of IOI and LOO among all reports, MAD scale, ≥ 5 reports. */
function legacyFlags(u: PrivateUtilities): boolean[] {
  const z = (x: number[]) => {
    const med = median(Float64Array.from(x));
    const dev = x.map((y) => Math.abs(y - med));
    const mad = median(Float64Array.from(dev));
    if (mad > 0) return x.map((y) => (0.6745 * (y - med)) / mad);
    const meanAd = dev.reduce((s, y) => s + y, 0) / dev.length;
    return meanAd > 0 ? x.map((y) => (y - med) / (1.253314 * meanAd)) : x.map(() => 0);
  };
  if (u.withOnly.length < 5) return Array.from(u.withOnly, () => false);
  const zi = z(Array.from(u.withOnly, (a) => a - u.empty));
  const zl = z(Array.from(u.without, (b) => u.full - b));
  return zi.map((a, j) => Math.abs(a) > 3.5 || Math.abs(zl[j]!) > 3.5);
}

const isHonest = (role: string) => role === 'honest' || role === 'maverick' || role.startsWith('non-iid');

function table(argv: string[]): void {
  const { values } = parseArgs({ args: argv, options: { in: { type: 'string' } } });
  const recorded = readRecorded(values.in ?? DEFAULT_FILE);
  interface Row {
    seeds: Set<number>;
    rounds: number;
    silos: number;
    honest: number;
    flagged: number;
    legacy: number;
    mavericks: number;
    mavericksFlagged: number;
    legacyMavericks: number;
    other: number;
    otherFlagged: number;
  }
  const rows = new Map<string, Row>();
  for (const r of recorded) {
    const row = rows.get(r.config) ?? {
      seeds: new Set<number>(),
      rounds: r.rounds,
      silos: r.roles.length,
      honest: 0,
      flagged: 0,
      legacy: 0,
      mavericks: 0,
      mavericksFlagged: 0,
      legacyMavericks: 0,
      other: 0,
      otherFlagged: 0,
    };
    rows.set(r.config, row);
    row.seeds.add(r.seed);
    const u = { full: r.full, empty: r.empty, withOnly: r.withOnly, without: r.without };
    if (r.silos.length < 2) continue;
    const now = new Set(
      quarantineReports(u, { resolution: 1 / r.testExamples }).quarantined.map((q) => r.silos[q.index]!),
    );
    const before = legacyFlags(u);
    r.silos.forEach((s, k) => {
      const role = r.roles[s] ?? 'honest';
      if (isHonest(role)) {
        row.honest++;
        if (now.has(s)) row.flagged++;
        if (before[k]) row.legacy++;
        if (role === 'maverick') {
          row.mavericks++;
          if (now.has(s)) row.mavericksFlagged++;
          if (before[k]) row.legacyMavericks++;
        }
      } else {
        row.other++;
        if (now.has(s)) row.otherFlagged++;
      }
    });
  }
  const pct = (a: number, b: number) => (b === 0 ? '–' : `${((100 * a) / b).toFixed(1)} %`);
  const out = [
    '| configuration | silos | seeds | rounds | honest silo-rounds | flagged | rate | before (issue 27 detector) | Maverick silo-rounds flagged (before) | attacker/noisy silo-rounds flagged |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const total = { honest: 0, flagged: 0, legacy: 0, mav: 0, mavF: 0, mavL: 0 };
  for (const [name, row] of [...rows].sort(([a], [b]) => a.localeCompare(b))) {
    total.honest += row.honest;
    total.flagged += row.flagged;
    total.legacy += row.legacy;
    total.mav += row.mavericks;
    total.mavF += row.mavericksFlagged;
    total.mavL += row.legacyMavericks;
    out.push(
      `| ${name} | ${row.silos} | ${row.seeds.size} | ${row.rounds} | ${row.honest} | ${row.flagged} | ${pct(row.flagged, row.honest)} | ${row.legacy} (${pct(row.legacy, row.honest)}) | ${row.mavericks === 0 ? '–' : `${row.mavericksFlagged} of ${row.mavericks} (${row.legacyMavericks})`} | ${row.other === 0 ? '–' : `${row.otherFlagged} of ${row.other}`} |`,
    );
  }
  out.push(
    `| **all** | | | | ${total.honest} | ${total.flagged} | ${pct(total.flagged, total.honest)} | ${total.legacy} (${pct(total.legacy, total.honest)}) | ${total.mavF} of ${total.mav} (${total.mavL}) | |`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'record') await record(rest);
else if (command === 'table') table(rest);
else {
  process.stderr.write('usage: tsx scripts/false-flags.ts record|table [options]\n');
  process.exitCode = 2;
}
