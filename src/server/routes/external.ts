/**
 * Reports-only consortia (`secureAggregation: "external"`, src/server/service/external.ts): the
 * operator posts each round's v(M) and v(M0), which opens the round in `reporting`; the silos then
 * post their signed reports on the ordinary report route (routes/reports.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ExternalUtilitiesInput, errors, Round, RoundParams } from '../../consortium/schemas.js';

const external: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/consortia/:cid/rounds/:round/utilities',
    {
      onRequest: app.requireAdmin,
      bodyLimit: app.settings.maxBodyBytes,
      schema: {
        summary:
          'reports-only consortium: post round r’s v(M) and v(M0), opening it for the silos’ reports (operator)',
        description:
          'Only for a consortium created with secureAggregation "external". Opens round r (the next round; the previous one must be over) in stage reporting with every member expected to report; 201. Re-posting the same values is an idempotent 200; different values are FEDSCORE_ERR_UTILITIES_SET. The round is scored when every member has reported, or at the reporting deadline (or POST …/advance) from the reports that arrived (at least 2).',
        tags: ['rounds'],
        security: [{ admin: [] }],
        params: RoundParams,
        body: ExternalUtilitiesInput,
        response: { 201: Round, 200: Round, ...errors(400, 401, 404, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const { cid, round } = request.params;
      const r = await app.service.postExternalUtilities(cid, round, request.body.full, request.body.empty);
      return reply.status(r.created ? 201 : 200).send(r.round);
    },
  );
};
export default external;
