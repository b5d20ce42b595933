/**
 * One silo in its own process for the fault matrix's real silo kills (./_faults.ts `SiloProcess`):
 * silo `id` of round `round`, journal in the folder given, talking to the service over HTTP at
 * `url`. It reads one command a line on stdin, `<clock ms> run <stage>` (send the stage's message,
 * or the report) or `<clock ms> die <stage>` (write the stage's journal entry — a masked input, an
 * Unmasking response, an accepted model — and send nothing), and answers `ok` or `error <message>`;
 * the parent SIGKILLs it after `die`.
 */
import { createInterface } from 'node:readline';
import { simulatedIdentities } from '../../../protocol/simulate.js';
import type { App } from '../../../src/server/app.js';
import { Clock } from '../../server/_harness.js';
import { JournaledSilo, postReport, siloStep } from './_faults.js';
import { acceptRound, beginRound, SiloJournals } from './_journals.js';

const [url, journalDir, round, id] = process.argv.slice(2);
const r = Number(round);
const i = Number(id);
/** The harness's `app.inject`, over HTTP. */
const app = {
  async inject(o: { method: string; url: string; headers?: Record<string, string>; payload?: Buffer }) {
    const res = await fetch(`${url}${o.url}`, {
      method: o.method,
      headers: o.headers ?? {},
      ...(o.payload ? { body: o.payload } : {}),
    });
    const rawPayload = Buffer.from(await res.arrayBuffer());
    return {
      statusCode: res.status,
      body: rawPayload.toString('utf8'),
      rawPayload,
      json: () => JSON.parse(rawPayload.toString('utf8')),
    };
  },
} as unknown as App;
const h = { app, clock: new Clock(), keys: simulatedIdentities(4, 11) };
const journals = new SiloJournals(journalDir!);
const silo = new JournaledSilo(h, 'c1', r, i, 3);
let begun = false;

for await (const line of createInterface({ input: process.stdin })) {
  const [ms, what, stage] = line.split(' ');
  h.clock.ms = Number(ms);
  try {
    if (!begun) {
      silo.rg = await beginRound(h, journals, r, i);
      begun = true;
    }
    if (what === 'die') {
      if (stage === 'reporting') await acceptRound(h, silo.rg, r, i);
      else if (stage === 'mask' || stage === 'unmask') silo.rg.beforeSend(stage);
    } else if (stage === 'reporting') {
      await acceptRound(h, silo.rg, r, i);
      const status = await postReport(h, r, i);
      if (status !== 201) throw new Error(`report: ${status}`);
    } else await siloStep(silo, stage as never);
    process.stdout.write('ok\n');
  } catch (e) {
    process.stdout.write(`error ${(e as Error).message.replace(/\n/g, ' ')}\n`);
  }
}
