/**
 * The secure-aggregation requests of silos (Bonawitz et al. 2017, rounds 0–4): posting a signed
 * client message to its stage, fetching the server's message for it from the inbox, and reading
 * the round's published aggregate. A message the protocol server accepts is stored in the same
 * transaction that checks it; the stage closes as soon as every expected silo has sent
 * (protocol/server.ts `stageProgress`).
 */
import { decodeClientMessage } from '../../../protocol/codec.js';
import { SecAggError } from '../../../protocol/errors.js';
import type { ClientMessage } from '../../../protocol/messages.js';
import {
  type CollectingStage,
  isCollectingStage,
  type StageMessageType,
  serverHandle,
  stageProgress,
} from '../../../protocol/server.js';
import { secAggCode } from '../../consortium/error-codes.js';
import type { Round } from '../../consortium/schemas.js';
import { ServiceError } from '../errors.js';
import type { Aggregation } from './aggregation.js';
import type { Consortia } from './consortia.js';
import { refuseExternal } from './external.js';
import { storedMessage, storedPairs, storeMessage } from './messages.js';
import { errorOf, type RoundRows, selectedOf, view } from './round-rows.js';
import type { Rounds } from './rounds.js';

function secAggFailure(e: unknown): ServiceError {
  if (e instanceof SecAggError) return new ServiceError(secAggCode(e.code), e.message);
  if (e instanceof TypeError || e instanceof RangeError)
    return new ServiceError('FEDSCORE_ERR_SECAGG_MALFORMED', e.message);
  throw e;
}

/** Silos' secure-aggregation messages, their inbox and the published aggregate. */
export class SecAgg {
  constructor(
    private readonly consortia: Consortia,
    private readonly rows: RoundRows,
    private readonly rounds: Rounds,
    private readonly aggregation: Aggregation,
  ) {}

  /**
   * Accepts one secure-aggregation message posted by `silo` to the `stage` endpoint. Posting a
   * message identical to one already accepted is an idempotent success (a silo retrying after a
   * lost answer), except for a masked input after the round's sum was computed (masked inputs are
   * deleted then).
   * @throws ServiceError EXTERNAL_AGGREGATION (a reports-only consortium), WRONG_MESSAGE_TYPE,
   *   FORBIDDEN (sender ≠ silo), ROUND_CLOSED, or
   *   FEDSCORE_ERR_SECAGG_* for the protocol's rejections (the stored state is then unchanged).
   */
  async post(
    id: string,
    round: number,
    stage: CollectingStage,
    silo: number,
    bytes: Uint8Array,
  ): Promise<Round> {
    const loaded = await this.consortia.load(id);
    refuseExternal(loaded.consortium, 'it runs no masking stages');
    let message: ClientMessage;
    try {
      // A plain copy: protocol/codec.ts's reader slices its input, and Buffer#slice is a view
      // into Node's pool, which the vector decoder would then read from the pool's offset 0.
      message = decodeClientMessage(new Uint8Array(bytes));
    } catch (e) {
      throw secAggFailure(e);
    }
    if (message.type !== stage)
      throw new ServiceError('FEDSCORE_ERR_WRONG_MESSAGE_TYPE', `${message.type} message posted to ${stage}`);
    if (message.sender !== silo)
      throw new ServiceError(
        'FEDSCORE_ERR_FORBIDDEN',
        `silo ${silo} sent a message as silo ${message.sender}`,
      );
    let accepted = false;
    const row = await this.rounds.lockedCurrent(id, round, async (trx, row) => {
      // A retry of an accepted message (its answer was lost) is accepted again, whatever the
      // stage now is; a different message from the same silo and stage is the protocol's DUPLICATE.
      const listed = await storedPairs(trx, row);
      if (listed.some((p) => p.stage === stage && p.silo === silo)) {
        const stored = await storedMessage(trx, row, stage, silo);
        if (stored && Buffer.compare(stored, Buffer.from(bytes)) === 0) return row;
      }
      if (!isCollectingStage(row.stage))
        throw new ServiceError('FEDSCORE_ERR_ROUND_CLOSED', `round ${round} is ${row.stage}`);
      // The strategy's selection (./selection.ts): an unselected silo takes no part in the round.
      const selected = selectedOf(row);
      if (selected !== null && !selected.includes(silo))
        throw new ServiceError(
          'FEDSCORE_ERR_NOT_SELECTED',
          `silo ${silo} is not among the silos selected for round ${round} (${selected.join(', ')})`,
        );
      const state = await this.aggregation.state(trx, loaded, row, 'handle', listed);
      const step = serverHandle(state, message);
      if (step.reply.type === 'rejected')
        throw new ServiceError(secAggCode(step.reply.code), step.reply.detail);
      await storeMessage(trx, row, stage, silo, bytes);
      accepted = true;
      const { complete } = stageProgress(step.state, row.stage);
      return complete ? this.rounds.advance(trx, loaded, row, false) : row;
    });
    // Committed: later steps of the round take the message from the process, not the store.
    if (accepted && isCollectingStage(row.stage))
      this.aggregation.remember(row, stage, silo, message, bytes.byteLength);
    return view(row);
  }

  /**
   * The server message of `kind` addressed to `silo` (binary codec).
   * @throws ServiceError NOT_READY, SECAGG_ABORTED when the round aborted.
   */
  async inbox(id: string, round: number, kind: StageMessageType, silo: number): Promise<Buffer> {
    // A message the process holds exists whatever the round's deadline: no query.
    const held = this.aggregation.heldServerMessage({ consortium: id, round }, kind, silo);
    if (held !== undefined) return held;
    const row = await this.rounds.tickRow(id, round);
    const found = await this.aggregation.serverMessage(row, kind, silo);
    if (found) return found;
    if (row.stage === 'aborted') throw new ServiceError('FEDSCORE_ERR_SECAGG_ABORTED', errorOf(row)?.code);
    throw new ServiceError(
      'FEDSCORE_ERR_NOT_READY',
      `no ${kind} message for silo ${silo} in round ${round} (${row.stage})`,
    );
  }

  /**
   * The published aggregate of a round (`weightedSum` is the process's shared copy: read-only).
   * @throws ServiceError NOT_READY before the sum is known.
   */
  async aggregate(id: string, round: number): Promise<{ view: Round; weightedSum: Buffer }> {
    const row = await this.rounds.tickRow(id, round);
    const weightedSum = await this.rows.weightedSum(id, round);
    if (!weightedSum) throw new ServiceError('FEDSCORE_ERR_NOT_READY', `round ${round} is ${row.stage}`);
    return { view: view(row), weightedSum };
  }
}
