// docs/api.md's `fedscore/crypto` example in plain JavaScript (ESM): in a project that installed
// fedscore (docs/api.md, "Installing from a checkout"), `node crypto.mjs`. test/package/package.test.ts
// runs it from the packed tarball and checks it prints what the TypeScript example prints.

import {
  agree,
  agreementKeyPairFromSeed,
  combineShares,
  hkdfSha256,
  open,
  seal,
  seededRandomFromInts,
  sign,
  signingKeyPairFromSeed,
  splitSecret,
  verify,
} from 'fedscore/crypto';

const random = seededRandomFromInts(42); // replayable; systemRandom() outside tests
const text = new TextEncoder();
// X25519 between silos 0 and 1, HKDF to a key, XChaCha20-Poly1305 bound to sender, receiver, session, round
const a = agreementKeyPairFromSeed(random(32));
const b = agreementKeyPairFromSeed(random(32));
const derive = (shared) => hkdfSha256(shared, new Uint8Array(0), text.encode('demo key'), 32);
const context = { sender: 0, receiver: 1, session: 'demo', round: 1 };
const box = seal(derive(agree(a.secretKey, b.publicKey)), random(24), text.encode('a share'), context);
const key = derive(agree(b.secretKey, a.publicKey)); // silo 1 derives the same key
const opened = open(key, box, context);
const moved = open(key, box, { ...context, round: 2 }); // relayed into another round: refused
console.log('opened:', new TextDecoder().decode(opened), '| in round 2:', moved);
// Shamir 2-of-3 sharing of a 32-byte secret
const secret = random(32);
const shares = await splitSecret(secret, 3, 2, random);
const back = await combineShares([shares[0], shares[2]]);
console.log(
  'recovered from 2 of 3 shares:',
  back.every((x, i) => x === secret[i]),
);
// Ed25519
const silo = signingKeyPairFromSeed(random(32));
const message = text.encode('round 1 report');
console.log('signature valid:', verify(silo.publicKey, message, sign(silo.secretKey, message)));
