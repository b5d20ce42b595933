/**
 * The public surface of `fedscore/protocol`: Bonawitz et al. (CCS 2017) secure aggregation in its
 * actively secure form as pure state machines (messages in, messages out; randomness passed in;
 * no clock, no network), its binary codec, the weighted-FedAvg input encoding, signed score
 * reports, and an in-process simulation of a whole round. An explicit list: `_`-prefixed helpers,
 * the server's snapshot and progress internals used by fedscore's service stay internal
 * (docs/api.md lists this surface).
 */
export {
  type ClientReply,
  type ClientStage,
  type ClientState,
  type ClientStep,
  clientHandle,
  clientStart,
  createClient,
  type SecAggDeps,
} from './client.js';
export {
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  encodeServerMessage,
} from './codec.js';
export { checkRoundConfig, MAX_PARTICIPANTS, type RoundConfig } from './config.js';
export { SecAggError, type SecAggErrorCode } from './errors.js';
export type { ClientMessage, ServerMessage } from './messages.js';
export {
  decodeScoreReport,
  SCORE_REPORT_VERSION,
  type ScoreReport,
  signScoreReport,
  verifyScoreReport,
} from './score-report.js';
export {
  type AggregationResult,
  type CollectingStage,
  createServer,
  type ServerAck,
  type ServerOutput,
  type ServerStage,
  type ServerState,
  serverAdvance,
  serverHandle,
} from './server.js';
export {
  type DropPoint,
  type SimulationOptions,
  type SimulationResult,
  simulatedIdentities,
  simulateRound,
} from './simulate.js';
export {
  decodeWeightedSum,
  encodeWeightedInput,
  type WeightedEncoding,
  type WeightedSum,
} from './weighted.js';
