/** Published scores: per round and cumulative over the scored rounds, for every configured scheme. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ConsortiumParams, CumulativeScores, errors, RoundParams, RoundScores } from '../schemas.js';

const scores: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/consortia/:cid/rounds/:round/scores',
    {
      schema: {
        summary: 'a scored round’s utilities and scores (silo-indexed)',
        tags: ['scores'],
        params: RoundParams,
        response: { 200: RoundScores, ...errors(400, 404, 409) },
      },
    },
    async (request) => app.service.roundScores(request.params.cid, request.params.round),
  );
  app.get(
    '/consortia/:cid/scores',
    {
      schema: {
        summary: 'scores of every scored round and their per-silo sums',
        tags: ['scores'],
        params: ConsortiumParams,
        response: { 200: CumulativeScores, ...errors(400, 404) },
      },
    },
    async (request) => app.service.cumulativeScores(request.params.cid),
  );
};
export default scores;
