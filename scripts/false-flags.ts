/**
 * The detector's false-flag rate on honest runs of the example configurations (issue 37), the
 * table of docs/audit.md ("False flags").
 *
 *   npx tsx scripts/false-flags.ts record [--rounds R] [--seeds S] [--out F] [config.json …]
 *   npx tsx scripts/false-flags.ts table [--in F] [--seeds S]
 *   npx tsx scripts/false-flags.ts detection [--in F] [--seeds S]
 *   npx tsx scripts/false-flags.ts framing
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
 * label noise; Mavericks are honest), how many of them the detector quarantines now, how many the
 * detector of the last session did (the reference sets alone, without the evidence reference of
 * scoring/manipulation/_evidence.ts) and how many the detector before issue 37 did (robust z among
 * all reports, MAD scale, 5 reports), and the flags on the simulated attackers and noisy silos
 * (their reports are honest too: the engine computes every utility truthfully). `--seeds S` keeps
 * the first S seeds of each configuration.
 *
 * `detection` measures what the three detectors catch on the recorded rounds of ≥ 5 reports (where
 * quarantine acts): every silo in turn misreports, the others honest, with the audit's simulated
 * misreports (scoring/manipulation/misreports.ts: inflate-self ×2, deflate-others, 20 uniform random
 * reports; and inflate-self ×5), and the rate at which the attacker is flagged; and the rate at
 * which the simulated attackers' and noisy silos' (truthful) reports are flagged, per role.
 *
 * `framing` prints the pair table of docs/audit.md (issue 32, S1): whether a colluding pair's
 * reports get an honest silo quarantined, under the detector before issue 37 and now.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  COLLUDERS_TOLERATED,
  DEFAULT_THRESHOLD,
  detectReports,
  SCALE_FLOOR_STEPS,
  SCALE_FLOOR_TYPICAL,
} from '../scoring/manipulation/detection.js';
import { simulateAttacks } from '../scoring/manipulation/misreports.js';
import { MIN_REPORTS_FOR_QUARANTINE, quarantineReports } from '../scoring/manipulation/quarantine.js';
import { referenceZAll } from '../scoring/manipulation/reference-z.js';
import type { PrivateUtilities } from '../scoring/private.js';
import { ISSUE_27_NO_TIES, ISSUE_27_TIES, QUICKSTART_ROUND_3 } from './_audit-rounds.js';

/** The median of `x` (the script's own: scoring/_median.ts is private to scoring/). */
function median(x: ArrayLike<number>): number {
  const s = Array.from(x).sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A configuration file, parsed and checked as `fedscore experiment --config` does. */
async function loadConfig(path: string) {
  const { parseConfig } = await import('../src/records/config.js');
  return parseConfig(JSON.parse(readFileSync(path, 'utf8')), path);
}

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
/** Examples in the bundled pool the authors' split draws from. */
const BUNDLED_POOL = 8000;
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
  const { runSeedRecord } = await import('../src/sim/experiment.js');
  const { dataShapeOf } = await import('../src/fl/consortium-data.js');
  const { createTfLearner } = await import('../src/fl/learner/tf-learner.js');
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
    const data = loaded.data as { trainSize?: number; split?: string } | undefined;
    // the authors' split (paper003-code) draws T + ⌈T/4⌉ examples from the pool of 8 000
    const cap = data?.split === 'paper003-code' ? BUNDLED_POOL * 0.8 : BUNDLED_TRAIN;
    const cfg = {
      ...loaded,
      rounds,
      // the bundled Fashion-MNIST has 7 500 training examples after the split: larger configurations
      // are run on all of them (the same partition and selection at a smaller scale)
      ...(data?.trainSize !== undefined && data.trainSize > cap
        ? {
            data: {
              ...loaded.data,
              trainSize: cap,
              // the authors' test split is the ⌈T/4⌉ part
              ...(data.split === 'paper003-code'
                ? { testSize: Math.min(loaded.data?.testSize ?? cap / 4, cap / 4) }
                : {}),
            },
          }
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
  const { zi, zl } = legacyZ(u);
  if (u.withOnly.length < 5) return Array.from(u.withOnly, () => false);
  return zi.map((a, j) => Math.abs(a) > 3.5 || Math.abs(zl[j]!) > 3.5);
}

/**
 * The detector of the last session (issue 37 before the evidence reference): z against the others'
 * reference sets alone, with the same floors, threshold, rounding and minimum of reports.
 */
function previousFlags(u: PrivateUtilities, testExamples: number): boolean[] {
  const n = u.withOnly.length;
  if (n < MIN_REPORTS_FOR_QUARANTINE) return Array.from(u.withOnly, () => false);
  const step = (v: number) => Math.round(v * testExamples);
  const ioi = Float64Array.from(u.withOnly, (a) => step(a - u.empty));
  const loo = Float64Array.from(u.without, (b) => step(u.full - b));
  const mag = ioi.map((a, k) => Math.max(Math.abs(a), Math.abs(loo[k]!)));
  const floor = { floor: SCALE_FLOOR_STEPS, kappa: SCALE_FLOOR_TYPICAL };
  const zi = referenceZAll(ioi, mag, COLLUDERS_TOLERATED, floor);
  const zl = referenceZAll(loo, mag, COLLUDERS_TOLERATED, floor);
  return Array.from(zi, (z, j) => z > DEFAULT_THRESHOLD || zl[j]! > DEFAULT_THRESHOLD);
}

/** The detector now, as the scorer applies it (quarantine: ≥ 5 reports, rounded to 1/T). */
function nowFlags(u: PrivateUtilities, testExamples: number): boolean[] {
  const flags = Array.from(u.withOnly, () => false);
  for (const q of quarantineReports(u, { resolution: 1 / testExamples }).quarantined) flags[q.index] = true;
  return flags;
}

/** The first `seeds` seeds of each configuration (all when undefined). */
function firstSeeds(recorded: RecordedRound[], seeds: number | undefined): RecordedRound[] {
  if (seeds === undefined) return recorded;
  const kept = new Map<string, number[]>();
  for (const r of recorded) {
    const s = kept.get(r.config) ?? [];
    if (!s.includes(r.seed)) s.push(r.seed);
    kept.set(r.config, s);
  }
  const keep = new Map([...kept].map(([c, s]) => [c, new Set([...s].sort((a, b) => a - b).slice(0, seeds))]));
  return recorded.filter((r) => keep.get(r.config)!.has(r.seed));
}

/** The z values of the detector before issue 37 (|z| > 3.5 flagged). */
function legacyZ(u: PrivateUtilities): { zi: number[]; zl: number[] } {
  const z = (x: number[]) => {
    const med = median(Float64Array.from(x));
    const dev = x.map((y) => Math.abs(y - med));
    const mad = median(Float64Array.from(dev));
    if (mad > 0) return x.map((y) => (0.6745 * (y - med)) / mad);
    const meanAd = dev.reduce((s, y) => s + y, 0) / dev.length;
    return meanAd > 0 ? x.map((y) => (y - med) / (1.253314 * meanAd)) : x.map(() => 0);
  };
  return {
    zi: z(Array.from(u.withOnly, (a) => a - u.empty)),
    zl: z(Array.from(u.without, (b) => u.full - b)),
  };
}

const isHonest = (role: string) => role === 'honest' || role === 'maverick' || role.startsWith('non-iid');

function table(argv: string[]): void {
  const { values } = parseArgs({
    args: argv,
    options: { in: { type: 'string' }, seeds: { type: 'string' } },
  });
  const recorded = firstSeeds(
    readRecorded(values.in ?? DEFAULT_FILE),
    values.seeds === undefined ? undefined : Number(values.seeds),
  );
  interface Row {
    seeds: Set<number>;
    rounds: Set<number>;
    silos: number;
    honest: number;
    flagged: number;
    previous: number;
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
      rounds: new Set<number>(),
      silos: r.roles.length,
      honest: 0,
      flagged: 0,
      previous: 0,
      legacy: 0,
      mavericks: 0,
      mavericksFlagged: 0,
      legacyMavericks: 0,
      other: 0,
      otherFlagged: 0,
    };
    rows.set(r.config, row);
    row.seeds.add(r.seed);
    row.rounds.add(r.rounds);
    const u = { full: r.full, empty: r.empty, withOnly: r.withOnly, without: r.without };
    if (r.silos.length < 2) continue;
    const now = nowFlags(u, r.testExamples);
    const previous = previousFlags(u, r.testExamples);
    const before = legacyFlags(u);
    r.silos.forEach((s, k) => {
      const role = r.roles[s] ?? 'honest';
      if (isHonest(role)) {
        row.honest++;
        if (now[k]) row.flagged++;
        if (previous[k]) row.previous++;
        if (before[k]) row.legacy++;
        if (role === 'maverick') {
          row.mavericks++;
          if (now[k]) row.mavericksFlagged++;
          if (before[k]) row.legacyMavericks++;
        }
      } else {
        row.other++;
        if (now[k]) row.otherFlagged++;
      }
    });
  }
  const pct = (a: number, b: number) =>
    b === 0 ? '–' : `${((100 * a) / b).toFixed(a > 0 && (100 * a) / b < 0.1 ? 2 : 1)} %`;
  const out = [
    '| configuration | silos | seeds | rounds | honest silo-rounds | flagged | rate | without the evidence (last session) | before (issue 27 detector) | Maverick silo-rounds flagged (before) | attacker/noisy silo-rounds flagged |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const total = { honest: 0, flagged: 0, previous: 0, legacy: 0, mav: 0, mavF: 0, mavL: 0 };
  for (const [name, row] of [...rows].sort(([a], [b]) => a.localeCompare(b))) {
    total.honest += row.honest;
    total.flagged += row.flagged;
    total.previous += row.previous;
    total.legacy += row.legacy;
    total.mav += row.mavericks;
    total.mavF += row.mavericksFlagged;
    total.mavL += row.legacyMavericks;
    out.push(
      `| ${name} | ${row.silos} | ${row.seeds.size} | ${[...row.rounds].sort((a, b) => a - b).join(', ')} | ${row.honest} | ${row.flagged} | ${pct(row.flagged, row.honest)} | ${row.previous} (${pct(row.previous, row.honest)}) | ${row.legacy} (${pct(row.legacy, row.honest)}) | ${row.mavericks === 0 ? '–' : `${row.mavericksFlagged} of ${row.mavericks} (${row.legacyMavericks})`} | ${row.other === 0 ? '–' : `${row.otherFlagged} of ${row.other}`} |`,
    );
  }
  out.push(
    `| **all** | | | | ${total.honest} | ${total.flagged} | ${pct(total.flagged, total.honest)} | ${total.previous} (${pct(total.previous, total.honest)}) | ${total.legacy} (${pct(total.legacy, total.honest)}) | ${total.mavF} of ${total.mav} (${total.mavL}) | |`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

/**
 * What the detectors catch (see the file's doc): the audit's simulated misreports on every recorded
 * round of ≥ 5 reports, and the simulated attackers' truthful reports.
 */
function detection(argv: string[]): void {
  const { values } = parseArgs({
    args: argv,
    options: { in: { type: 'string' }, seeds: { type: 'string' } },
  });
  const recorded = firstSeeds(
    readRecorded(values.in ?? DEFAULT_FILE),
    values.seeds === undefined ? undefined : Number(values.seeds),
  );
  const detectors: [string, (u: PrivateUtilities, t: number) => boolean[]][] = [
    ['before (issue 27)', (u) => legacyFlags(u)],
    ['last session', previousFlags],
    ['now', nowFlags],
  ];
  const counts = new Map<string, number[]>();
  const count = (key: string, flags: boolean[]) => {
    const c = counts.get(key) ?? [0, ...detectors.map(() => 0)];
    c[0]!++;
    flags.forEach((f, d) => {
      if (f) c[d + 1]!++;
    });
    counts.set(key, c);
  };
  let rounds = 0;
  for (const r of recorded) {
    if (r.silos.length < MIN_REPORTS_FOR_QUARANTINE) continue;
    rounds++;
    const u = { full: r.full, empty: r.empty, withOnly: r.withOnly, without: r.without };
    const honest = detectors.map(([, f]) => f(u, r.testExamples));
    r.silos.forEach((s, k) => {
      const role = r.roles[s] ?? 'honest';
      // paper003-fig2-label-noise's silos (noise rates 0 … 1) are one row
      if (!isHonest(role))
        count(
          `${role.startsWith('noise=') ? 'label noise' : role} (truthful reports)`,
          honest.map((f) => f[k]!),
        );
    });
    const attacks = [
      ...simulateAttacks(u, { schemes: ['loo'], seed: rounds }),
      ...simulateAttacks(u, { schemes: ['loo'], inflateFactor: 5, randomTrials: 0 })
        .filter((a) => a.kind === 'inflateSelf')
        .map((a) => ({ ...a, kind: 'inflateSelf ×5' })),
    ];
    for (const a of attacks) {
      const withOnly = [...u.withOnly];
      const without = [...u.without];
      withOnly[a.attacker] = a.reports.withOnly;
      without[a.attacker] = a.reports.without;
      const lie = { ...u, withOnly, without };
      const kind = a.kind === 'inflateSelf' ? 'inflateSelf ×2' : a.kind;
      count(
        kind,
        detectors.map(([, f]) => f(lie, r.testExamples)[a.attacker]!),
      );
    }
  }
  const pct = (a: number, b: number) => (b === 0 ? '–' : `${((100 * a) / b).toFixed(1)} %`);
  const out = [
    `${rounds} recorded rounds of ≥ ${MIN_REPORTS_FOR_QUARANTINE} reports; the attacker flagged (of the cases):`,
    '',
    `| misreport | cases | ${detectors.map(([d]) => d).join(' | ')} |`,
    `| --- | ---: | ${detectors.map(() => '---:').join(' | ')} |`,
  ];
  for (const [key, [cases, ...hits]] of [...counts].sort(([a], [b]) => a.localeCompare(b)))
    out.push(`| ${key} | ${cases} | ${hits.map((h) => pct(h, cases!)).join(' | ')} |`);
  process.stdout.write(`${out.join('\n')}\n`);
}

/** The rounds of test/security/s1-framing.test.ts (docs/audit.md's 5-silo rounds, a 9-silo quickstart round). */
const FRAMING_ROUNDS: {
  name: string;
  u: { full: number; empty: number; withOnly: number[]; without: number[] };
}[] = [
  {
    name: 'issue 27 example (5 silos, ties)',
    u: ISSUE_27_TIES,
  },
  {
    name: 'issue 27 example without ties (5 silos)',
    u: ISSUE_27_NO_TIES,
  },
  {
    name: 'quickstart seed 1 round 3 (9 silos)',
    u: QUICKSTART_ROUND_3,
  },
];

/**
 * The pair table (issue 32, S1): per round and detector, over every pair of silos and reports in
 * [0, 1] (a grid of 0, 1, v(M0), v(M) and the honest reports' median, then a coordinate search
 * from the best grid points), the largest z of an honest silo and the honest silos quarantined.
 */
function framing(): void {
  type Z = (u: PrivateUtilities) => { zi: ArrayLike<number>; zl: ArrayLike<number>; quarantined: number[] };
  const detectors: [string, Z][] = [
    [
      'before (issue 27)',
      (u) => {
        const { zi, zl } = legacyZ(u);
        const f = legacyFlags(u);
        return {
          zi: zi.map(Math.abs),
          zl: zl.map(Math.abs),
          quarantined: f.flatMap((x, j) => (x ? [j] : [])),
        };
      },
    ],
    [
      'now',
      (u) => {
        const d = detectReports(u);
        return {
          zi: d.zWithOnly,
          zl: d.zWithout,
          quarantined: quarantineReports(u).quarantined.map((q) => q.index),
        };
      },
    ],
  ];
  const out = [
    '| round | detector | pairs searched | pairs that get an honest silo quarantined | honest silos quarantined (most by one pair) | largest honest z found |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  ];
  for (const { name, u } of FRAMING_ROUNDS) {
    const n = u.withOnly.length;
    const values = [...u.withOnly, ...u.without].sort((a, b) => a - b);
    const grid = [0, 1, u.empty, u.full, values[values.length >> 1]!];
    for (const [label, det] of detectors) {
      let pairs = 0;
      let framingPairs = 0;
      let most = 0;
      let zMax = Number.NEGATIVE_INFINITY;
      for (let a = 0; a < n; a++)
        for (let b = a + 1; b < n; b++) {
          pairs++;
          const lie = (x: readonly number[]) => {
            const withOnly = [...u.withOnly];
            const without = [...u.without];
            [withOnly[a], without[a], withOnly[b], without[b]] = x as [number, number, number, number];
            return { full: u.full, empty: u.empty, withOnly, without };
          };
          const evaluate = (x: readonly number[]) => {
            const r = det(lie(x));
            let z = Number.NEGATIVE_INFINITY;
            for (let h = 0; h < n; h++) if (h !== a && h !== b) z = Math.max(z, r.zi[h]!, r.zl[h]!);
            return { z, framed: r.quarantined.filter((h) => h !== a && h !== b).length };
          };
          let worst = 0;
          const scored: { x: number[]; z: number }[] = [];
          for (const p of grid)
            for (const q of grid)
              for (const r of grid)
                for (const t of grid) {
                  const x = [p, q, r, t];
                  const e = evaluate(x);
                  worst = Math.max(worst, e.framed);
                  scored.push({ x, z: e.z });
                }
          scored.sort((p, q) => q.z - p.z);
          for (const start of scored.slice(0, 2)) {
            let { x, z } = start;
            for (let step = 0.05; step > 1e-4; step /= 2) {
              let improved = true;
              while (improved) {
                improved = false;
                for (let k = 0; k < 4; k++)
                  for (const dir of [-1, 1]) {
                    const y = [...x];
                    y[k] = Math.min(1, Math.max(0, y[k]! + dir * step));
                    const e = evaluate(y);
                    worst = Math.max(worst, e.framed);
                    if (e.z > z) {
                      x = y;
                      z = e.z;
                      improved = true;
                    }
                  }
              }
            }
            zMax = Math.max(zMax, z);
          }
          if (worst > 0) framingPairs++;
          most = Math.max(most, worst);
        }
      out.push(`| ${name} | ${label} | ${pairs} | ${framingPairs} | ${most} | ${zMax.toPrecision(3)} |`);
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'record') await record(rest);
else if (command === 'table') table(rest);
else if (command === 'detection') detection(rest);
else if (command === 'framing') framing();
else {
  process.stderr.write('usage: tsx scripts/false-flags.ts record|table|detection|framing [options]\n');
  process.exitCode = 2;
}
