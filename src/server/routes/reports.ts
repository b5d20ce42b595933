/**
 * Score reports: after the aggregate is published, each surviving silo posts its signed report
 * (protocol/score-report.ts) of v(M0 + U_i) and v(M − U_i), each in the consortium's declared
 * utility range. The request is signed by the silo (checked before its body is read) and the
 * report by the same key; a silo can submit only its own report.
 *
 * A report the detector flags is quarantined (src/server/service/scoring.ts): the round is scored
 * without it. The operator (admin token) may release it: the round is then scored with it.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  Binary,
  errors,
  ReportAccepted,
  ReportParams,
  RoundParams,
  RoundScores,
} from '../../consortium/schemas.js';
import { bodyBytes } from '../_http.js';

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
  app.post(
    '/consortia/:cid/rounds/:round/reports/:silo/release',
    {
      onRequest: app.requireAdmin,
      bodyLimit: settings.maxBodyBytes,
      schema: {
        summary: 'release a quarantined report: the round is scored again with it (operator)',
        tags: ['reports'],
        security: [{ admin: [] }],
        params: ReportParams,
        response: { 200: RoundScores, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const { cid, round, silo } = request.params;
      return app.service.releaseReport(cid, round, silo);
    },
  );
};
export default reports;
