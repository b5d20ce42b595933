/**
 * Published scores: per round and cumulative over the scored rounds, for every configured scheme,
 * to the consortium's members (signed requests), its operator and the viewer token; and, for the
 * operator only, the manipulation audit of those rounds.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import {
  AuditBody,
  ConsortiumParams,
  CumulativeScores,
  errors,
  READERS,
  RoundParams,
  RoundScores,
} from '../../consortium/schemas.js';

const scores: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/consortia/:cid/rounds/:round/scores',
    {
      onRequest: app.requireReader({ viewer: true }),
      schema: {
        summary: 'a scored round’s utilities and scores (silo-indexed; members, operator, viewer)',
        tags: ['scores'],
        security: READERS,
        params: RoundParams,
        response: { 200: RoundScores, ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => app.service.roundScores(request.params.cid, request.params.round),
  );
  app.get(
    '/consortia/:cid/scores',
    {
      onRequest: app.requireReader({ viewer: true }),
      schema: {
        summary: 'scores of every scored round and their per-silo sums (members, operator, viewer)',
        tags: ['scores'],
        security: READERS,
        params: ConsortiumParams,
        response: { 200: CumulativeScores, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => app.service.cumulativeScores(request.params.cid),
  );
  app.get(
    '/consortia/:cid/audit',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: 'manipulation audit of the scored rounds (operator; schema in docs/audit.md)',
        tags: ['scores'],
        security: [{ admin: [] }],
        params: ConsortiumParams,
        response: { 200: AuditBody, ...errors(400, 401, 404) },
      },
    },
    // stored JSON text (service/round-audits.ts): sent as it is, not serialized again
    async (request, reply) => {
      const json = await app.service.auditJson(request.params.cid);
      return reply.type('application/json; charset=utf-8').send(json as unknown as Static<typeof AuditBody>);
    },
  );
};
export default scores;
