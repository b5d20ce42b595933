/**
 * Consortia: an operator creates one (admin token); its members (signed requests), its operator and
 * the viewer token read its configuration.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Consortium, ConsortiumInput, ConsortiumParams, errors, READERS } from '../../consortium/schemas.js';

const consortia: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/consortia',
    {
      onRequest: app.requireAdmin,
      bodyLimit: app.settings.maxBodyBytes,
      schema: {
        summary: 'create a consortium (operator)',
        tags: ['consortia'],
        security: [{ admin: [] }],
        body: ConsortiumInput,
        response: { 201: Consortium, ...errors(400, 401, 409, 413, 415) },
      },
    },
    async (request, reply) => reply.status(201).send(await app.service.createConsortium(request.body)),
  );
  app.get(
    '/consortia/:cid',
    {
      onRequest: app.requireReader({ viewer: true }),
      schema: {
        summary: 'a consortium’s configuration (members, operator, viewer)',
        tags: ['consortia'],
        security: READERS,
        params: ConsortiumParams,
        response: { 200: Consortium, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => app.service.consortium(request.params.cid),
  );
};
export default consortia;
