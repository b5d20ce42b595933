/**
 * The stored traffic of secure aggregation: `messages` holds the client messages the protocol
 * server accepted (binary codec, one per round, stage and silo), `outbox` the server messages a
 * closing stage produced (one per round, kind and recipient), which silos fetch from their inbox.
 *
 * Reading a round's messages back ({@link loadMessages}) lists the stored (stage, silo) pairs and
 * takes the bodies it can from the process's cache of committed messages (./blob-cache.ts, filled
 * by ./aggregation.ts after each accepted message commits); only the others — sent through
 * another replica, evicted, or stored in the running transaction — are read. A masked input is
 * 4·d bytes, which PostgreSQL sends as 8·d hex digits that pg turns into a string and back: reading
 * them back (at the Unmasking close, and the stage's earlier ones on every MaskedInputCollection
 * post) took most of a 20-silo PostgreSQL round's storage time at d = 10^6 (issue 17).
 */
import { decodeClientMessage, encodeServerMessage } from '../../../protocol/codec.js';
import type { ClientMessage, ServerMessage } from '../../../protocol/messages.js';
import { COLLECTING_STAGES, type CollectingStage } from '../../../protocol/server.js';
import { asBuffer } from '../_bytes.js';
import type { BlobCache } from './blob-cache.js';
import type { Executor } from './context.js';

/** The name of a client message in the message cache. */
export const messageName = (stage: CollectingStage, silo: number): string => `${stage}/${silo}`;

/** A round of a consortium. */
export interface RoundKey {
  readonly consortium: string;
  readonly round: number;
}

/** The stored body of `silo`'s message of `stage`, if any. */
export async function storedMessage(
  db: Executor,
  key: RoundKey,
  stage: CollectingStage,
  silo: number,
): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('messages')
    .select('body')
    .where('consortium', '=', key.consortium)
    .where('round', '=', key.round)
    .where('stage', '=', stage)
    .where('silo', '=', silo)
    .executeTakeFirst();
  return row === undefined ? undefined : Buffer.from(row.body);
}

/** Stores an accepted client message. */
export async function storeMessage(
  db: Executor,
  key: RoundKey,
  stage: CollectingStage,
  silo: number,
  body: Uint8Array,
): Promise<void> {
  await db
    .insertInto('messages')
    .values({ consortium: key.consortium, round: key.round, stage, silo, body: Buffer.from(body) })
    .execute();
}

/** A stored client message's place in its round. */
export interface StoredPair {
  readonly stage: string;
  readonly silo: number;
}

/** The (stage, silo) pairs of every client message stored for the round. */
export async function storedPairs(db: Executor, key: RoundKey): Promise<StoredPair[]> {
  return db
    .selectFrom('messages')
    .select(['stage', 'silo'])
    .where('consortium', '=', key.consortium)
    .where('round', '=', key.round)
    .execute();
}

/**
 * The accepted client messages of `stages`, decoded, in stage and silo order: from `cache` where
 * it holds them, else from the store. `listed`: the round's {@link storedPairs} when the caller
 * has just read them in the same transaction (one query fewer).
 */
export async function loadMessages(
  db: Executor,
  key: RoundKey,
  stages: readonly CollectingStage[],
  cache?: BlobCache<ClientMessage>,
  listed?: readonly StoredPair[],
): Promise<ClientMessage[]> {
  if (stages.length === 0) return [];
  const wanted = new Set<string>(stages);
  const stored = (listed ?? (await storedPairs(db, key))).filter((p) => wanted.has(p.stage));
  const found: { stage: string; silo: number; message: ClientMessage }[] = [];
  const missing = new Map<string, number[]>();
  for (const { stage, silo } of stored) {
    const hit = cache?.get(key, messageName(stage as CollectingStage, silo));
    if (hit !== undefined) found.push({ stage, silo, message: hit });
    else missing.set(stage, [...(missing.get(stage) ?? []), silo]);
  }
  for (const [stage, silos] of missing) {
    const rows = await db
      .selectFrom('messages')
      .select(['silo', 'body'])
      .where('consortium', '=', key.consortium)
      .where('round', '=', key.round)
      .where('stage', '=', stage)
      .where('silo', 'in', silos)
      .execute();
    for (const { silo, body } of rows)
      found.push({ stage, silo, message: decodeClientMessage(new Uint8Array(body)) });
  }
  const order = (stage: string) => COLLECTING_STAGES.indexOf(stage as CollectingStage);
  found.sort((a, b) => order(a.stage) - order(b.stage) || a.silo - b.silo);
  return found.map((f) => f.message);
}

/** Deletes the round's messages of `stage` (masked inputs, once the sum is stored). */
export async function deleteMessages(db: Executor, key: RoundKey, stage: CollectingStage): Promise<void> {
  await db
    .deleteFrom('messages')
    .where('consortium', '=', key.consortium)
    .where('round', '=', key.round)
    .where('stage', '=', stage)
    .execute();
}

/** A stored server message: its kind, recipient and encoded body. */
export interface OutboxEntry {
  readonly kind: string;
  readonly silo: number;
  readonly body: Buffer;
}

/** Stores the server messages a stage produced, each for its recipient; returns them encoded. */
export async function storeOutbox(
  db: Executor,
  key: RoundKey,
  messages: readonly { readonly to: number; readonly message: ServerMessage }[],
): Promise<OutboxEntry[]> {
  const entries = messages.map(({ to, message }) => ({
    kind: message.type,
    silo: to,
    body: asBuffer(encodeServerMessage(message)),
  }));
  if (entries.length === 0) return entries;
  await db
    .insertInto('outbox')
    .values(entries.map((e) => ({ consortium: key.consortium, round: key.round, ...e })))
    .execute();
  return entries;
}

/** The name of a server message in the outbox cache. */
export const outboxName = (kind: string, silo: number): string => `outbox/${kind}/${silo}`;

/** The stored server message of `kind` for `silo`, if any. */
export async function outboxMessage(
  db: Executor,
  key: RoundKey,
  kind: string,
  silo: number,
): Promise<Buffer | undefined> {
  const found = await db
    .selectFrom('outbox')
    .select('body')
    .where('consortium', '=', key.consortium)
    .where('round', '=', key.round)
    .where('kind', '=', kind)
    .where('silo', '=', silo)
    .executeTakeFirst();
  return found === undefined ? undefined : Buffer.from(found.body);
}
