/**
 * Score reports: after the aggregate is published, each surviving silo posts its signed report
 * (protocol/score-report.ts) of v(M0 + U_i) and v(M − U_i), each in the consortium's declared
 * utility range. The request is signed by the silo (checked before its body is read) and the
 * report by the same key; a silo can submit only its own report.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bodyBytes } from '../_http.js';
import { Binary, errors, ReportAccepted, RoundParams } from '../schemas.js';

const reports: FastifyPluginAsyncTypebox = async (app) => {
  const { settings } = app;
  app.post(
    '/consortia/:cid/rounds/:round/reports',
    {
      onRequest: app.requireSilo,
      preHandler: app.checkSignedBody,
      bodyLimit: settings.maxBodyBytes,
      schema: {
        summary: 'submit the silo’s signed score report',
        tags: ['reports'],
        security: [{ silo: [] }],
        params: RoundParams,
        consumes: ['application/octet-stream'],
        body: Binary,
        response: {
          201: ReportAccepted,
          200: ReportAccepted,
          ...errors(400, 401, 403, 404, 409, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const { cid, round } = request.params;
      const r = await app.service.submitReport(cid, round, request.silo, bodyBytes(request));
      return reply
        .status(r.duplicate ? 200 : 201)
        .send({ silo: request.silo, duplicate: r.duplicate, stage: r.round.stage });
    },
  );
};
export default reports;
