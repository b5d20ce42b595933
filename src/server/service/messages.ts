/**
 * The stored traffic of secure aggregation: `messages` holds the client messages the protocol
 * server accepted (binary codec, one per round, stage and silo), `outbox` the server messages a
 * closing stage produced (one per round, kind and recipient), which silos fetch from their inbox.
 */
import { decodeClientMessage, encodeServerMessage } from '../../../protocol/codec.js';
import type { ClientMessage, ServerMessage } from '../../../protocol/messages.js';
import type { CollectingStage } from '../../../protocol/server.js';
import { asBuffer } from '../_bytes.js';
import type { Executor } from './context.js';

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

/** The accepted client messages of `stages`, decoded. */
export async function loadMessages(
  db: Executor,
  key: RoundKey,
  stages: readonly CollectingStage[],
): Promise<ClientMessage[]> {
  if (stages.length === 0) return [];
  const rows = await db
    .selectFrom('messages')
    .select('body')
    .where('consortium', '=', key.consortium)
    .where('round', '=', key.round)
    .where('stage', 'in', [...stages])
    .execute();
  return rows.map((m) => decodeClientMessage(new Uint8Array(m.body)));
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

/** Stores the server messages a stage produced, each for its recipient. */
export async function storeOutbox(
  db: Executor,
  key: RoundKey,
  messages: readonly { readonly to: number; readonly message: ServerMessage }[],
): Promise<void> {
  if (messages.length === 0) return;
  await db
    .insertInto('outbox')
    .values(
      messages.map(({ to, message }) => ({
        consortium: key.consortium,
        round: key.round,
        kind: message.type,
        silo: to,
        body: asBuffer(encodeServerMessage(message)),
      })),
    )
    .execute();
}

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
