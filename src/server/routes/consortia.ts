/** Consortia: an operator creates one (admin token); anyone may read its configuration. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Consortium, ConsortiumInput, ConsortiumParams, errors } from '../schemas.js';

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
      schema: {
        summary: 'a consortium’s configuration',
        tags: ['consortia'],
        params: ConsortiumParams,
        response: { 200: Consortium, ...errors(400, 404) },
      },
    },
    async (request) => app.service.consortium(request.params.cid),
  );
};
export default consortia;
