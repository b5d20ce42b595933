/**
 * Child process for the crash test: opens the store given on the command line, builds the app and
 * drives silos 0–3 of round 1 through AdvertiseKeys and ShareKeys, printing "acked <stage> <silo>"
 * after each 2xx. Then it prints "ready" and waits to be killed with SIGKILL.
 */
import { Clock, createConsortium, harness, Silo } from './_harness.js';

const [kind, where] = process.argv.slice(2);
const location = kind === 'postgres' ? { postgres: where! } : { sqlite: where! };
const h = await harness({ location, clock: new Clock(Number(process.env.FEDSCORE_TEST_CLOCK)) });
await createConsortium(h);
await h.app.inject({
  method: 'POST',
  url: '/v1/consortia/c1/rounds',
  headers: { authorization: `Bearer ${process.env.FEDSCORE_TEST_ADMIN}` },
});
const silos = [0, 1, 2, 3].map((i) => new Silo(h, 'c1', 1, i, 3));
for (const s of silos) {
  await s.start();
  console.log(`acked advertise ${s.id}`);
}
for (const s of silos) {
  await s.step('keys');
  console.log(`acked share ${s.id}`);
}
console.log('ready');
setInterval(() => {}, 1000);
