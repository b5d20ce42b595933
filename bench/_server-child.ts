/**
 * The service of the load benchmark (./_server-load.ts) in its own process, so that its resident
 * memory is measured alone: the app over the store given as JSON on the command line, listening on
 * 127.0.0.1 (the per-silo rate limit lifted: the load is many silos, not one abusive one). Prints
 * `listening <url>`; SIGTERM closes it.
 */
import { buildApp } from '../src/server/app.js';
import { openStore, type StoreLocation } from '../src/server/store/database.js';
import { ADMIN } from './_server-loader.js';

const location = JSON.parse(process.argv[2]!) as StoreLocation;
const store = await openStore(location);
const app = await buildApp({
  store,
  adminToken: ADMIN,
  rateLimit: { max: 1e9, windowMs: 60_000 },
  closeStore: true,
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${url}\n`);
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
