/**
 * Service-level fixtures (no HTTP): a {@link ScoringService} over an in-memory SQLite store with a
 * fake clock, the consortium of ../_harness.ts, and protocol clients that talk to the service
 * directly in the binary codec.
 */
import { seededRandomFromInts } from '../../../crypto/random-bytes.js';
import { type ClientState, clientHandle, clientStart, createClient } from '../../../protocol/client.js';
import { decodeServerMessage, encodeClientMessage } from '../../../protocol/codec.js';
import type { ClientMessage } from '../../../protocol/messages.js';
import type { StageMessageType } from '../../../protocol/server.js';
import { simulatedIdentities } from '../../../protocol/simulate.js';
import type { ConsortiumInput } from '../../../src/consortium/schemas.js';
import { ScoringService } from '../../../src/server/service/scoring-service.js';
import { openStore, type StoreHandle } from '../../../src/server/store/database.js';
import { Clock, consortiumBody, D, f32bytes, INITIAL } from '../_harness.js';

export interface Fixture {
  service: ScoringService;
  store: StoreHandle;
  clock: Clock;
  keys: ReturnType<typeof simulatedIdentities>;
  close(): Promise<void>;
}

/** ../_harness.ts's consortium body (c1, t = 3) as the service takes it. */
export function consortiumInput(keys: Fixture['keys'], threshold = 3): ConsortiumInput {
  return consortiumBody(keys, 'c1', threshold) as ConsortiumInput;
}

/** A service over a fresh in-memory store; `consortium`: create c1 (n = 4, t = 3) with its model. */
export async function fixture(o: { consortium?: boolean } = {}): Promise<Fixture> {
  const store = await openStore({ sqlite: ':memory:' });
  const clock = new Clock();
  const service = new ScoringService({ store, now: clock.now });
  const keys = simulatedIdentities(4, 11);
  if (o.consortium !== false) {
    await service.createConsortium(consortiumInput(keys));
    await service.setInitialModel('c1', f32bytes(INITIAL));
  }
  return { service, store, clock, keys, close: () => store.close() };
}

/** Silo `id`'s protocol client in round `round` of c1 (keys drawn from `seed`), posting straight to the service. */
export class DirectSilo {
  private state: ClientState;
  private readonly deps;
  constructor(
    private readonly f: Fixture,
    readonly id: number,
    private readonly round = 1,
    seed = 5,
  ) {
    const config = {
      session: 'c1',
      round,
      threshold: 3,
      length: D + 1,
      roster: f.keys.map((k) => k.publicKey),
    };
    const input = Uint32Array.from({ length: D + 1 }, (_, j) => 1000 * id + j);
    this.state = createClient(config, id, f.keys[id]!.secretKey, input);
    this.deps = { random: seededRandomFromInts(seed, round, id) };
  }

  /** Posts a message to its stage; returns the round's stage afterwards. */
  async post(m: ClientMessage): Promise<string> {
    return (await this.f.service.postMessage('c1', this.round, m.type, this.id, encodeClientMessage(m)))
      .stage;
  }

  /** Round 0: the AdvertiseKeys message (not posted). */
  advertise(): ClientMessage {
    const step = clientStart(this.state, this.deps);
    this.state = step.state;
    if (step.reply.type !== 'send') throw new Error('advertise: nothing to send');
    return step.reply.message;
  }

  /** Reads the inbox message of `kind` and returns the reply (not posted). */
  async answer(kind: StageMessageType): Promise<ClientMessage> {
    const bytes = await this.f.service.inbox('c1', this.round, kind, this.id);
    const step = await clientHandle(this.state, decodeServerMessage(new Uint8Array(bytes)), this.deps);
    this.state = step.state;
    if (step.reply.type !== 'send') throw new Error(`${kind}: client replied ${JSON.stringify(step.reply)}`);
    return step.reply.message;
  }
}
