/**
 * The fault matrix's machinery (./fault-matrix.test.ts, ./fault-matrix.slow.test.ts): one round of
 * the test consortium of ../../server/_harness.ts (4 silos, t = 3, deterministic inputs and reports)
 * driven stage by stage, with a fault at one stage:
 *
 * - `service` (in process): after the first acknowledgement of the stage, the app is abandoned
 *   without closing and a second app opens the same store; the silos, whose state is their own,
 *   go on against it;
 * - `service-sigkill` (a real crash): a child process (./_fault-child.ts) runs the service over the
 *   store and drives the round; it is SIGKILLed after the stage's first acknowledgement. The silos'
 *   state is rebuilt from their deterministic random streams, and each message the store already
 *   has is not sent again (the silo has it in its journal; a message whose acknowledgement the kill
 *   cut off is there too);
 * - `silo`: silo 3 goes away at the stage (its process killed, its round state gone) and comes
 *   back for the next round. At a stage whose message is journaled (a masked input, an Unmasking
 *   response, a report's accepted model) it dies between its journal entry and its message: the
 *   write-ahead case.
 * - `silo-sigkill` (a real crash of a silo): as `silo`, but silo 3 runs in its own process
 *   (./_silo-child.ts, over HTTP to the listening service) from the start of the round, and that
 *   process is SIGKILLed right after it wrote the stage's journal entry; restarted for the next
 *   round, the silo reads the journal the killed process left.
 *
 * Every silo keeps a real masking journal (./_journals.ts). Every acknowledgement is recorded, and
 * {@link storedWrites} reads back what the store holds.
 */
import { spawn } from 'node:child_process';
import pg from 'pg';
import type { ClientMessage } from '../../../protocol/messages.js';
import type { RoundGuard } from '../../../src/client/replay-guard.js';
import { signedReport } from '../../../src/consortium/private-scoring.js';
import type { StoreLocation } from '../../../src/server/store/database.js';
import {
  ADMIN,
  adminInject,
  type Clock,
  createConsortium,
  type Harness,
  harness,
  Silo,
  siloInject,
} from '../../server/_harness.js';
import {
  acceptRound,
  beginRound,
  JOURNALED,
  journaled,
  rebuiltRound,
  type SiloJournals,
} from './_journals.js';

/** The stages of a round a fault can hit: the five protocol stages, the reports, the scoring. */
export const FAULT_STAGES = [
  'advertise',
  'share',
  'mask',
  'consistency',
  'unmask',
  'reporting',
  'scoring',
] as const;
export type FaultStage = (typeof FAULT_STAGES)[number];
export type FaultKind = 'service' | 'service-sigkill' | 'silo' | 'silo-sigkill';

/** The inbox each protocol stage's message answers (advertise answers none). */
const INBOX = { share: 'keys', mask: 'shares', consistency: 'survivors', unmask: 'unmask-request' } as const;
const PROTOCOL = ['advertise', 'share', 'mask', 'consistency', 'unmask'] as const;
export const SILOS = [0, 1, 2, 3];
/** The silo a `silo` fault takes away. */
export const VICTIM = 3;

/** Silo i's report in round r: v(M0 + U_i) and v(M − U_i) (deterministic, distinct per silo). */
export const reportOf = (i: number, r: number) => ({
  singleton: -0.2 - 0.01 * i - 0.001 * r,
  complement: -0.1 - 0.02 * i + 0.001 * r,
});

/**
 * A test silo with its journal's guard (./_journals.ts), called where src/client/silo.ts calls it:
 * before each protocol message is sent. `resend` lists the message types its journal already holds
 * for the round (a silo that survived a crash of the service sends them again, journaling nothing).
 */
export class JournaledSilo extends Silo {
  rg!: RoundGuard;
  readonly resend = new Set<string>();
  override post(message: ClientMessage): ReturnType<Silo['post']> {
    if (!this.resend.has(message.type)) this.rg.beforeSend(message.type);
    return super.post(message);
  }
}

/** Sends silo `s`'s message of a protocol stage. */
export async function siloStep(s: Silo, stage: (typeof PROTOCOL)[number]): Promise<void> {
  if (stage === 'advertise') await s.start();
  else await s.step(INBOX[stage]);
}

/**
 * A silo in its own process (./_silo-child.ts) talking HTTP to the service at `url`, for a real
 * kill: `run(stage)` has it send its message of the stage (or its report), `kill(stage)` has it
 * write the stage's journal entry and then SIGKILLs it.
 */
export class SiloProcess {
  private readonly child;
  private readonly lines: string[] = [];
  private waiting: ((line: string) => void) | undefined;
  constructor(
    url: string,
    journals: SiloJournals,
    round: number,
    readonly silo: number,
  ) {
    this.child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        new URL('./_silo-child.ts', import.meta.url).pathname,
        url,
        journals.dir,
        String(round),
        String(silo),
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let buf = '';
    this.child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) {
        const w = this.waiting;
        this.waiting = undefined;
        if (w) w(l);
        else this.lines.push(l);
      }
    });
  }

  private async command(clock: Clock, what: 'run' | 'die', stage: FaultStage): Promise<void> {
    this.child.stdin.write(`${clock.ms} ${what} ${stage}\n`);
    const line =
      this.lines.shift() ??
      (await new Promise<string>((resolve, reject) => {
        this.waiting = resolve;
        this.child.once('exit', (code) => reject(new Error(`silo ${this.silo}'s process exited ${code}`)));
      }));
    if (line !== 'ok') throw new Error(`silo ${this.silo} (${what} ${stage}): ${line}`);
  }

  /** Sends its message of `stage`. */
  run(clock: Clock, stage: FaultStage): Promise<void> {
    return this.command(clock, 'run', stage);
  }

  /** Writes the journal entry of `stage`'s message, then is SIGKILLed before sending it. */
  async kill(clock: Clock, stage: FaultStage): Promise<void> {
    await this.command(clock, 'die', stage);
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** One acknowledged write: a stage message or a report, by silo. */
export interface Ack {
  stage: string;
  silo: number;
}

/** What the store holds of round `r`: its stage messages and reports, by silo. */
export async function storedWrites(h: Pick<Harness, 'store'>, r: number): Promise<Ack[]> {
  const messages = await h.store.db
    .selectFrom('messages')
    .select(['stage', 'silo'])
    .where('consortium', '=', 'c1')
    .where('round', '=', r)
    .execute();
  const reports = await h.store.db
    .selectFrom('reports')
    .select('silo')
    .where('consortium', '=', 'c1')
    .where('round', '=', r)
    .execute();
  return [...messages, ...reports.map((x) => ({ stage: 'reporting', silo: x.silo }))];
}

/** Posts silo i's report of round r. @returns the HTTP status. */
export async function postReport(h: Pick<Harness, 'app' | 'clock' | 'keys'>, r: number, i: number) {
  const { singleton, complement } = reportOf(i, r);
  const body = signedReport('c1', r, i, singleton, complement, h.keys[i]!);
  return (await siloInject(h, i, 'POST', `/v1/consortia/c1/rounds/${r}/reports`, body)).statusCode;
}

/** A round's public view. */
export async function roundView(h: Pick<Harness, 'app'>, r: number) {
  return (await adminInject(h, 'GET', `/v1/consortia/c1/rounds/${r}`)).json() as {
    stage: string;
    survivors: number[] | null;
    dropped: number[] | null;
    error: { code: string; detail: string } | null;
  };
}

/** The published scores (GET …/scores). */
export async function published(h: Pick<Harness, 'app'>) {
  return (await adminInject(h, 'GET', '/v1/consortia/c1/scores')).json();
}

/**
 * Drives round `r` with `silos` from advertise to its scores; `before(stage)` runs before each
 * stage's messages (a fault is injected there), `acked` records each 2xx.
 * `absent(stage)` lists the silos that send nothing from that stage on.
 */
export async function driveRound(
  get: () => Harness,
  r: number,
  o: {
    acked: Ack[];
    journals: SiloJournals;
    afterFirstAck?: (stage: FaultStage) => Promise<void>;
    absentFrom?: { silo: number; stage: FaultStage };
    /** The absent silo runs in this process until it is SIGKILLed at its stage. */
    remote?: SiloProcess;
    /**
     * This silo does not take part at all (it does not begin the round: a silo that sits out,
     * ../../../src/cli/actions/up-replay.ts); the stages close without it at their deadline.
     */
    sitsOut?: number;
  },
): Promise<void> {
  const silos = SILOS.map((i) => new JournaledSilo(get(), 'c1', r, i, 3));
  const remote = (i: number) => o.remote?.silo === i;
  for (const s of silos)
    if (!remote(s.id) && s.id !== o.sitsOut) s.rg = await beginRound(get(), o.journals, r, s.id);
  const gone = (i: number, stage: FaultStage) =>
    i === o.sitsOut ||
    (o.absentFrom !== undefined &&
      o.absentFrom.silo === i &&
      FAULT_STAGES.indexOf(stage) >= FAULT_STAGES.indexOf(o.absentFrom.stage));
  /** The absent silo dies at its stage after the journal entry of the stage's message, if any. */
  const dies = (i: number, stage: FaultStage) => o.absentFrom?.silo === i && o.absentFrom.stage === stage;
  const ack = async (stage: FaultStage, silo: number, first: boolean) => {
    o.acked.push({ stage, silo });
    if (first) await o.afterFirstAck?.(stage);
  };
  for (const stage of PROTOCOL) {
    let first = true;
    for (const s of silos) {
      if (gone(s.id, stage)) {
        if (dies(s.id, stage) && remote(s.id)) await o.remote!.kill(get().clock, stage);
        else if (dies(s.id, stage) && (stage === 'mask' || stage === 'unmask')) s.rg.beforeSend(stage);
        continue;
      }
      s.h = get();
      if (remote(s.id)) await o.remote!.run(get().clock, stage);
      else await siloStep(s, stage);
      await ack(stage, s.id, first);
      first = false;
    }
    // A silo that went away: the stage it is missing from closes at its deadline (the clock passes it).
    if ((o.absentFrom || o.sitsOut !== undefined) && (await roundView(get(), r)).stage === stage)
      await closeStage(get(), r);
  }
  let first = true;
  const survivors = (await roundView(get(), r)).survivors ?? [];
  for (const i of survivors) {
    const rg = silos[i]!.rg;
    if (gone(i, 'reporting')) {
      if (dies(i, 'reporting') && remote(i)) await o.remote!.kill(get().clock, 'reporting');
      else if (dies(i, 'reporting')) await acceptRound(get(), rg, r, i);
      continue;
    }
    if (remote(i)) await o.remote!.run(get().clock, 'reporting');
    else {
      await acceptRound(get(), rg, r, i);
      const status = await postReport(get(), r, i);
      if (status !== 201) throw new Error(`report of silo ${i}: ${status}`);
    }
    await ack('reporting', i, first);
    first = false;
  }
  if ((o.absentFrom || o.sitsOut !== undefined) && (await roundView(get(), r)).stage === 'reporting')
    await closeStage(get(), r);
  await o.afterFirstAck?.('scoring');
}

/** Passes the current stage's deadline and lets a read close it. */
export async function closeStage(h: Harness, r: number): Promise<void> {
  h.clock.advance(10 * 60_000);
  await roundView(h, r);
}

/** Opens round `r` (admin). */
export async function openRound(h: Harness, r: number): Promise<void> {
  const res = await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
  if (res.statusCode !== 201) throw new Error(`open round ${r}: ${res.statusCode} ${res.body}`);
}

/** A new consortium c1 over `location` (harness app, its initial model set). */
export async function consortiumOn(location: StoreLocation, clock: Clock): Promise<Harness> {
  const h = await harness({ location, clock });
  await createConsortium(h);
  return h;
}

/**
 * A real crash: the service runs in a child process over `location` and drives round 1 (the silos'
 * journals in `journals`' folder); it is SIGKILLed right after it printed the first
 * acknowledgement of `stage`. @returns the acknowledgements it printed.
 */
export async function crashChildAt(
  location: StoreLocation,
  clock: Clock,
  stage: FaultStage,
  journals: SiloJournals,
): Promise<Ack[]> {
  const [kind, where] = 'sqlite' in location ? ['sqlite', location.sqlite] : ['postgres', location.postgres];
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./_fault-child.ts', import.meta.url).pathname, kind, where, journals.dir],
    {
      env: { ...process.env, FEDSCORE_TEST_CLOCK: String(clock.ms), FEDSCORE_TEST_ADMIN: ADMIN },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const acked: Ack[] = [];
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) {
        const m = /^acked (\w+) (\d+)$/.exec(l);
        if (m) acked.push({ stage: m[1]!, silo: Number(m[2]) });
        if (l === `first ${stage}` || l === 'done') {
          child.kill('SIGKILL');
          resolve();
        }
      }
    });
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited ${code}`)),
    );
  });
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  return acked;
}

/**
 * After a real crash: the silos of round 1 rebuild their state (same random streams and journals;
 * ./_journals.ts `rebuiltRound`) and go on against `h`, sending only what the store does not have.
 */
export async function resumeRound(h: Harness, acked: Ack[], journals: SiloJournals): Promise<void> {
  const has = async (stage: string, silo: number) =>
    (await storedWrites(h, 1)).some((w) => w.stage === stage && w.silo === silo);
  const silos = SILOS.map((i) => new JournaledSilo(h, 'c1', 1, i, 3));
  for (const s of silos) {
    s.rg = await rebuiltRound(h, journals, 1, s.id);
    for (const type of ['mask', 'unmask'] as const)
      if (journaled(journals, s.id, 1, JOURNALED[type])) s.resend.add(type);
  }
  // Past the protocol stages, a silo needs none of its round state (its report is its own).
  const now = (await roundView(h, 1)).stage;
  const protocolOver = !(PROTOCOL as readonly string[]).includes(now);
  for (const stage of protocolOver ? [] : PROTOCOL)
    for (const s of silos) {
      // A stage the round has left is complete: its masked inputs are folded into the stored sum.
      const passed = PROTOCOL.indexOf(stage) < PROTOCOL.indexOf(now as (typeof PROTOCOL)[number]);
      const stored = passed || (await has(stage, s.id));
      if (stage === 'advertise') {
        if (stored) s.replayStart();
        else await s.start();
      } else if (stored) await s.replayStep(INBOX[stage]);
      else await s.step(INBOX[stage]);
      if (!stored) acked.push({ stage, silo: s.id });
    }
  for (const i of SILOS)
    if (!(await has('reporting', i))) {
      if (!journaled(journals, i, 1, 'accepted')) await acceptRound(h, silos[i]!.rg, 1, i);
      const status = await postReport(h, 1, i);
      if (status !== 201) throw new Error(`report of silo ${i}: ${status}`);
      acked.push({ stage: 'reporting', silo: i });
    }
}

/** A fresh PostgreSQL database on DATABASE_URL's server (dropped by `dropAll`). */
export function postgresDatabases(url: string) {
  const admin = new pg.Client({ connectionString: url });
  let connected: Promise<unknown> | undefined;
  const created: string[] = [];
  return {
    async fresh(): Promise<StoreLocation> {
      connected ??= admin.connect();
      await connected;
      const name = `fedscore_faults_${process.pid}_${created.length}_${Math.random().toString(36).slice(2, 8)}`;
      await admin.query(`CREATE DATABASE ${name}`);
      created.push(name);
      const u = new URL(url);
      u.pathname = `/${name}`;
      return { postgres: u.toString() };
    },
    async dropAll(): Promise<void> {
      if (!connected) return;
      await new Promise((r) => setTimeout(r, 300));
      for (const db of created) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
    },
  };
}
