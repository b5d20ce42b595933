/**
 * The service in a child process for the fault matrix's real crashes (./_faults.ts `crashChildAt`):
 * opens the store given on the command line (and the silos' journal folder), creates consortium c1, opens round 1 and drives it to
 * its scores, printing "acked <stage> <silo>" after each 2xx and "first <stage>" after a stage's
 * first one, until the parent SIGKILLs it.
 */
import { Clock } from '../../server/_harness.js';
import { consortiumOn, driveRound, openRound } from './_faults.js';
import { SiloJournals } from './_journals.js';

const [kind, where, journalDir] = process.argv.slice(2);
const location = kind === 'postgres' ? { postgres: where! } : { sqlite: where! };
const h = await consortiumOn(location, new Clock(Number(process.env.FEDSCORE_TEST_CLOCK)));
await openRound(h, 1);
const acked = {
  push(a: { stage: string; silo: number }) {
    process.stdout.write(`acked ${a.stage} ${a.silo}\n`);
    return 0;
  },
} as unknown as { stage: string; silo: number }[];
await driveRound(() => h, 1, {
  acked,
  journals: new SiloJournals(journalDir!),
  afterFirstAck: async (stage) => {
    process.stdout.write(`first ${stage}\n`);
  },
});
process.stdout.write('done\n');
setInterval(() => {}, 1000);
