// docs/api.md's `fedscore/protocol` example in plain JavaScript (ESM): in a project that installed
// fedscore (docs/api.md, "Installing from a checkout"), `node protocol.mjs`. test/package/package.test.ts
// runs it from the packed tarball and checks it prints what the TypeScript example prints.

import {
  decodeWeightedSum,
  encodeWeightedInput,
  signScoreReport,
  simulatedIdentities,
  simulateRound,
  verifyScoreReport,
} from 'fedscore/protocol';

// Four silos send x_i = (w_i·Δ_i, w_i), quantized into Z_(2^32); the server learns only the sum.
// valueRange bounds |w_i·Δ_i| (larger entries are clipped), weightRange bounds w_i.
const encoding = { valueRange: 100, weightRange: 1000, n: 4 };
const updates = [
  [0.1, -0.2],
  [0.3, 0],
  [-0.1, 0.1],
  [0.2, 0.2],
].map((u) => Float32Array.from(u));
const weights = [100, 200, 300, 400];
const keys = simulatedIdentities(4, 7); // silos' Ed25519 keys; their public keys are the roster
const result = await simulateRound({
  session: 'demo',
  round: 1,
  threshold: 3,
  inputs: updates.map((u, i) => encodeWeightedInput(u, weights[i], encoding)),
  signingKeys: keys,
  seed: 7,
  dropouts: new Map([[3, 'after-share']]), // silo 3 vanishes after sharing its keys
});
if (!result.ok) throw new Error(`round aborted: ${result.code}`);
const sum = decodeWeightedSum(result.result.sum, encoding);
console.log('survivors', result.result.survivors.join(' '), '| dropped', result.result.dropped.join(' '));
console.log(
  'Σw',
  sum.totalWeight.toFixed(2),
  '| FedAvg update',
  Array.from(sum.average, (x) => x.toFixed(4)).join(' '),
);
// After the round, silo 0 reports its two utilities, signed; the server verifies against the roster.
const report = signScoreReport(
  { session: 'demo', round: 1, silo: 0, singleton: 0.7, complement: 0.75 },
  keys[0].secretKey,
);
const roster = keys.map((k) => k.publicKey);
const checked = verifyScoreReport(report, { session: 'demo', round: 1, roster }); // throws SecAggError if not
console.log(
  'report of silo',
  checked.silo,
  '| v(M0 + U_0)',
  checked.singleton,
  '| v(M − U_0)',
  checked.complement,
);
