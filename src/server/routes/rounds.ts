/**
 * Rounds: the operator opens the next round, may close a stage before its deadline and, without
 * an evaluator, posts v(M) and v(M0). Members (signed requests) and the operator read round state
 * and the published aggregate; the viewer token reads round state without Σ w_i (whose changes
 * across rounds would tell a dropped silo's share of the data) and not the aggregate.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AdvanceInput,
  Aggregate,
  Binary,
  ConsortiumParams,
  errors,
  MEMBERS,
  READERS,
  Round,
  RoundList,
  RoundParams,
  StageProgress,
  UtilitiesInput,
} from '../../consortium/schemas.js';
import { sendBytes } from '../_http.js';

/** A round as `reader` may see it: the viewer token does not see Σ w_i. */
const shown = (reader: string | undefined, r: Round): Round =>
  reader === 'viewer' ? { ...r, totalWeight: null } : r;

const rounds: FastifyPluginAsyncTypebox = async (app) => {
  const admin = { onRequest: app.requireAdmin, bodyLimit: app.settings.maxBodyBytes };
  const readers = { onRequest: app.requireReader({ viewer: true }) };
  const members = { onRequest: app.requireReader({ viewer: false }) };
  app.post(
    '/consortia/:cid/rounds',
    {
      ...admin,
      schema: {
        summary: 'open the next round from the latest model (operator)',
        tags: ['rounds'],
        security: [{ admin: [] }],
        params: ConsortiumParams,
        response: { 201: Round, ...errors(400, 401, 404, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(await app.service.openRound(request.params.cid)),
  );
  app.get(
    '/consortia/:cid/rounds',
    {
      ...readers,
      schema: {
        summary: 'every round (members, operator, viewer)',
        tags: ['rounds'],
        security: READERS,
        params: ConsortiumParams,
        response: { 200: RoundList, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({
      rounds: (await app.service.rounds(request.params.cid)).map((r) => shown(request.reader, r)),
    }),
  );
  app.get(
    '/consortia/:cid/rounds/:round',
    {
      ...readers,
      schema: {
        summary: 'a round’s stage, deadline and participant sets (members, operator, viewer)',
        tags: ['rounds'],
        security: READERS,
        params: RoundParams,
        response: { 200: Round, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) =>
      shown(request.reader, await app.service.round(request.params.cid, request.params.round)),
  );
  app.post(
    '/consortia/:cid/rounds/:round/advance',
    {
      ...admin,
      schema: {
        summary:
          'close the current stage now, if it is the one named in the body (operator; FEDSCORE_ERR_STAGE_MISMATCH otherwise)',
        tags: ['rounds'],
        security: [{ admin: [] }],
        params: RoundParams,
        body: AdvanceInput,
        response: { 200: Round, ...errors(400, 401, 404, 409, 413, 415) },
      },
    },
    async (request) => app.service.forceAdvance(request.params.cid, request.params.round, request.body.stage),
  );
  app.post(
    '/consortia/:cid/rounds/:round/abort',
    {
      ...admin,
      schema: {
        summary: 'end a round now as aborted, whatever its stage (operator)',
        tags: ['rounds'],
        security: [{ admin: [] }],
        params: RoundParams,
        response: { 200: Round, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) => app.service.abortRound(request.params.cid, request.params.round),
  );
  app.get(
    '/consortia/:cid/rounds/:round/progress',
    {
      ...readers,
      schema: {
        summary:
          'who the current stage waits for: expected, received and missing silos (members, operator, viewer)',
        tags: ['rounds'],
        security: READERS,
        params: RoundParams,
        response: { 200: StageProgress, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => app.service.stageProgress(request.params.cid, request.params.round),
  );
  app.put(
    '/consortia/:cid/rounds/:round/utilities',
    {
      ...admin,
      schema: {
        summary: 'set v(M) and v(M0) of a round in reporting (operator, when the service has no evaluator)',
        tags: ['rounds'],
        security: [{ admin: [] }],
        params: RoundParams,
        body: UtilitiesInput,
        response: { 200: Round, ...errors(400, 401, 404, 409, 413, 415) },
      },
    },
    async (request) =>
      app.service.setUtilities(
        request.params.cid,
        request.params.round,
        request.body.full,
        request.body.empty,
      ),
  );
  app.get(
    '/consortia/:cid/rounds/:round/aggregate',
    {
      ...members,
      schema: {
        summary: 'survivors, dropouts and Σ w_i of a round whose sum is known (members, operator)',
        tags: ['rounds'],
        security: MEMBERS,
        params: RoundParams,
        response: { 200: Aggregate, ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      const { view } = await app.service.aggregate(request.params.cid, request.params.round);
      return {
        round: view.round,
        survivors: view.survivors ?? [],
        dropped: view.dropped ?? [],
        totalWeight: view.totalWeight ?? 0,
        baseModel: view.baseModel,
        resultModel: view.round,
      };
    },
  );
  app.get(
    '/consortia/:cid/rounds/:round/aggregate/sum',
    {
      ...members,
      config: { vectorRead: true },
      schema: {
        summary: 'Σ w_iΔ_i over the survivors (Float64 LE, d values; members, operator)',
        tags: ['rounds'],
        security: MEMBERS,
        params: RoundParams,
        produces: ['application/octet-stream'],
        response: { 200: Binary, ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { weightedSum } = await app.service.aggregate(request.params.cid, request.params.round);
      return sendBytes(reply, weightedSum);
    },
  );
};
export default rounds;
