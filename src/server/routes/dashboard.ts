/**
 * The dashboard (issue 6): a self-contained HTML page per consortium — its configuration, each
 * round's progress through the stages, and score charts per scheme over the rounds — that reads
 * the public JSON endpoints (`GET /v1/consortia/:cid`, `…/rounds`, `…/scores`) from the browser.
 * Read-only and unauthenticated like those endpoints; the page itself is in ../_dashboard-page.ts.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { DASHBOARD_CSP, dashboardIndex, dashboardPage } from '../_dashboard-page.js';
import { ConsortiumId, ConsortiumParams, errors } from '../schemas.js';

const Html = Type.String({ description: 'text/html' });
const IndexQuery = Type.Object({ cid: Type.Optional(ConsortiumId) }, { additionalProperties: false });

const dashboard: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', DASHBOARD_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('cache-control', 'no-store');
  });
  app.get(
    '/dashboard',
    {
      schema: {
        summary: 'the dashboard’s index: a form that opens a consortium (?cid= redirects to it)',
        tags: ['dashboard'],
        querystring: IndexQuery,
        produces: ['text/html'],
        response: { 200: Html, 302: Type.Null(), ...errors(400) },
      },
    },
    async (request, reply) => {
      const { cid } = request.query;
      if (cid !== undefined) return reply.redirect(`/dashboard/${cid}`);
      return reply.type('text/html; charset=utf-8').send(dashboardIndex());
    },
  );
  app.get(
    '/dashboard/:cid',
    {
      schema: {
        summary: 'a consortium’s dashboard: stages of each round and score charts per scheme',
        tags: ['dashboard'],
        params: ConsortiumParams,
        produces: ['text/html'],
        response: { 200: Html, ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      const { id } = await app.service.consortium(request.params.cid); // 404 for an unknown id
      return reply.type('text/html; charset=utf-8').send(dashboardPage(id));
    },
  );
};
export default dashboard;
