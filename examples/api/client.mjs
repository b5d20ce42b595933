// docs/api.md's `fedscore/client` example in plain JavaScript (ESM): in a project that installed
// fedscore (docs/api.md, "Installing from a checkout"), `node client.mjs`. test/package/package.test.ts
// runs it from the packed tarball and checks it prints what the TypeScript example prints.

import {
  NONCE_HEADER,
  requestSigningPayload,
  SIGNATURE_HEADER,
  SILO_HEADER,
  SiloHttp,
  TIMESTAMP_HEADER,
} from 'fedscore/client';
import { signingKeyPairFromSeed, verify } from 'fedscore/crypto';
import { signScoreReport } from 'fedscore/protocol';

const key = signingKeyPairFromSeed(new Uint8Array(32).fill(1)); // the silo's registered key
// A stand-in for `fedscore serve`: it checks each request's signature as the service does.
// Against a real service, leave `fetch` out.
const service = async (url, init) => {
  const headers = init.headers;
  const signed = requestSigningPayload({
    method: init.method,
    path: new URL(String(url)).pathname,
    silo: Number(headers[SILO_HEADER]),
    timestamp: Number(headers[TIMESTAMP_HEADER]),
    nonce: headers[NONCE_HEADER],
    body: init.body,
  });
  const ok = verify(key.publicKey, signed, Buffer.from(headers[SIGNATURE_HEADER], 'hex'));
  return Response.json(ok ? { accepted: true } : { code: 'BAD_SIGNATURE', message: 'not signed' }, {
    status: ok ? 201 : 401,
  });
};
const http = new SiloHttp({
  server: 'http://127.0.0.1:8080',
  consortium: 'c1',
  silo: 0,
  secretKey: key.secretKey,
  fetch: service,
});
// Silo 0's utilities of round 1, computed by any training stack, signed and submitted
const report = signScoreReport(
  { session: 'c1', round: 1, silo: 0, singleton: 0.7, complement: 0.75 },
  key.secretKey,
);
const answer = await http.expect('POST', http.path('/rounds/1/reports'), [200, 201], { body: report });
console.log(answer.status, new TextDecoder().decode(answer.bytes));
