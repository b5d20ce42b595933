/**
 * Attack family: simulation randomness on a networked path (trust issue, "Also").
 *
 * The experiment engine derives every silo's key seeds, self-mask seed b_u and Shamir
 * coefficients from the experiment seed, which is public (it is in the configuration and in
 * results.json): anyone who knows it recomputes b_u and s_u^SK and unmasks x_u — shown below.
 * That is fine for a simulation, fatal on a network. Old behaviour (commit f34f0a2): the modules
 * the silo and the service import reached src/sim/secure-round.ts and protocol/simulate.ts (the
 * silo took its threshold rule from secure-round.ts), and the silo accepted any injected random
 * source (`SiloOptions.random`).
 *
 * Now: the seed-derived sources live in protocol/simulation-random.ts; test/arch/layers.ts
 * (`findSimulationRandomnessLeaks`) fails when any module reachable from src/client or
 * src/server imports it, protocol/simulate.ts, src/sim/secure-round.ts, or mentions a seeded
 * source at all; the silo's randomness has no option to replace it and comes from
 * crypto.getRandomValues.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { agreementKeyPairFromSeed } from '../../crypto/key-agreement.js';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { clientHandle, clientStart, createClient } from '../../protocol/client.js';
import type { RoundConfig } from '../../protocol/config.js';
import { createServer, serverAdvance, serverHandle } from '../../protocol/server.js';
import { experimentRandom } from '../../protocol/simulation-random.js';
import { siloDeps } from '../../src/client/silo.js';
import { findSimulationRandomnessLeaks, type SourceFile } from '../arch/layers.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sources(): SourceFile[] {
  const walk = (dir: string, out: string[] = []): string[] => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p, out);
      else if (name.endsWith('.ts')) out.push(p);
    }
    return out;
  };
  return ['crypto', 'protocol', 'scoring', 'src']
    .flatMap((d) => walk(join(root, d)))
    .map((abs) => ({ path: relative(root, abs).split(sep).join('/'), text: readFileSync(abs, 'utf8') }));
}

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * The bytes crypto.getRandomValues returns to crypto/random-bytes.ts `systemRandom`, in order (calls
 * from elsewhere — @noble/curves blinds its scalar multiplications with it — are not recorded).
 */
function recordSystemRandom(): Uint8Array[] {
  const drawn: Uint8Array[] = [];
  const real = globalThis.crypto.getRandomValues.bind(globalThis.crypto);
  vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(
    <T extends ArrayBufferView | null>(a: T): T => {
      real(a as unknown as Uint8Array);
      if (/crypto[/\\]random\.ts/.test(new Error().stack ?? ''))
        drawn.push(Uint8Array.from(a as unknown as Uint8Array));
      return a;
    },
  );
  return drawn;
}

describe('security: simulation randomness on networked paths', () => {
  it('why it matters: knowing the public experiment seed, anyone recomputes a silo’s self-mask seed', async () => {
    // One engine silo (global id 2, round 1, experiment seed 42) takes part in a round; an
    // eavesdropper replays the same stream and gets the same key pairs (so the same b_u).
    const ids = [0, 1, 2].map((i) => signingKeyPairFromSeed(new Uint8Array(32).fill(i + 1)));
    const config: RoundConfig = {
      session: 's',
      round: 1,
      threshold: 2,
      length: 4,
      roster: ids.map((k) => k.publicKey),
    };
    const c = createClient(config, 2, ids[2]!.secretKey, new Uint32Array(4));
    const s = clientStart(c, { random: experimentRandom(42, 1, 2) });
    const replay = experimentRandom(42, 1, 2);
    const cKeys = agreementKeyPairFromSeed(replay(32));
    expect(s.state.cKeys!.publicKey).toEqual(cKeys.publicKey);
  });

  it('no module reachable from src/client or src/server reaches protocol/simulation-random.ts or a seeded source', () => {
    const files = sources();
    expect(findSimulationRandomnessLeaks(files)).toEqual([]);
    // … and the check is not vacuous: the silo does reach the engine's shared code (src/sim).
    const leaky = [...files, { path: 'src/client/leak.ts', text: "import '../sim/secure-round.js';" }];
    expect(findSimulationRandomnessLeaks(leaky).map((v) => v.specifier)).toEqual([
      'src/client/leak.ts → src/sim/secure-round.ts',
    ]);
  });

  it("the silo's protocol randomness comes from crypto.getRandomValues: its advertised keys are those bytes", async () => {
    const drawn = recordSystemRandom();
    const ids = [0, 1, 2].map((i) => signingKeyPairFromSeed(new Uint8Array(32).fill(i + 1)));
    const config: RoundConfig = {
      session: 's',
      round: 1,
      threshold: 2,
      length: 4,
      roster: ids.map((k) => k.publicKey),
    };
    const c = createClient(config, 0, ids[0]!.secretKey, new Uint32Array(4));
    const s = clientStart(c, siloDeps());
    if (s.reply.type !== 'send' || s.reply.message.type !== 'advertise')
      throw new Error('expected an advert');
    expect(drawn.length).toBe(2);
    expect(s.reply.message.cPK).toEqual(agreementKeyPairFromSeed(drawn[0]!).publicKey);
    expect(s.reply.message.sPK).toEqual(agreementKeyPairFromSeed(drawn[1]!).publicKey);
  });

  it("every byte the silo's protocol draws (keys, b_u, Shamir coefficients, nonces) comes from crypto.getRandomValues", async () => {
    const ids = [0, 1, 2].map((i) => signingKeyPairFromSeed(new Uint8Array(32).fill(i + 1)));
    const config: RoundConfig = {
      session: 's',
      round: 1,
      threshold: 2,
      length: 4,
      roster: ids.map((k) => k.publicKey),
    };
    let server = createServer(config);
    const clients = ids.map((k, i) => createClient(config, i, k.secretKey, new Uint32Array(4)));
    const requested: number[] = [];
    const silo = siloDeps();
    const deps = ids.map((_, i) =>
      i === 0
        ? {
            random: (n: number) => {
              requested.push(n);
              return silo.random(n);
            },
          }
        : siloDeps(),
    );
    const drawn = recordSystemRandom();
    for (let i = 0; i < 3; i++) {
      const st = clientStart(clients[i]!, deps[i]!);
      clients[i] = st.state;
      if (st.reply.type === 'send') server = serverHandle(server, st.reply.message).state;
    }
    const adv = await serverAdvance(server);
    if (adv.output.type !== 'send') throw new Error('expected the key list');
    const before = drawn.length;
    const own = requested.length;
    const keys = adv.output.messages.find((m) => m.to === 0)!.message;
    const st = await clientHandle(clients[0]!, keys, deps[0]!);
    expect(st.reply.type).toBe('send');
    // ShareKeys: b_u, (t − 1) coefficients for each of the two secrets, one nonce per box
    expect(requested.slice(own)).toEqual([32, 32, 32, 24, 24]);
    expect(drawn.slice(before).map((b) => b.length)).toEqual(requested.slice(own));
  });
});
