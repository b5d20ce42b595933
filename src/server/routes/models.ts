/**
 * Global models as Float32 little-endian parameter vectors: the operator sets the initial model
 * (version 0, exactly 4·d bytes) before the first round; version r is the model after round r.
 * Members (signed requests) and the operator read them; the viewer token does not.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { Binary, ConsortiumParams, errors, MEMBERS, VersionParams } from '../../consortium/schemas.js';
import { bodyBytes, sendBytes } from '../_http.js';

const MODEL_VERSION_HEADER = 'x-fedscore-model-version';

const models: FastifyPluginAsyncTypebox = async (app) => {
  app.put(
    '/consortia/:cid/model',
    {
      onRequest: app.requireAdmin,
      preParsing: app.limitBody('model'),
      bodyLimit: app.settings.maxVectorBytes,
      schema: {
        summary: 'set the initial model (operator; Float32 LE, d parameters)',
        tags: ['models'],
        security: [{ admin: [] }],
        params: ConsortiumParams,
        consumes: ['application/octet-stream'],
        body: Binary,
        response: {
          204: Type.Null({ description: 'stored' }),
          ...errors(400, 401, 404, 409, 413, 415),
        },
      },
    },
    async (request, reply) => {
      await app.service.setInitialModel(request.params.cid, bodyBytes(request));
      return reply.status(204).send(null);
    },
  );
  app.get(
    '/consortia/:cid/model',
    {
      onRequest: app.requireReader({ viewer: false }),
      config: { vectorRead: true },
      schema: {
        summary: 'the latest global model (Float32 LE); its version is in x-fedscore-model-version',
        tags: ['models'],
        security: MEMBERS,
        params: ConsortiumParams,
        produces: ['application/octet-stream'],
        response: { 200: Binary, ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const m = await app.service.model(request.params.cid);
      return sendBytes(reply, m.bytes, { [MODEL_VERSION_HEADER]: String(m.version) });
    },
  );
  app.get(
    '/consortia/:cid/models/:version',
    {
      onRequest: app.requireReader({ viewer: false }),
      config: { vectorRead: true },
      schema: {
        summary: 'one model version (Float32 LE)',
        tags: ['models'],
        security: MEMBERS,
        params: VersionParams,
        produces: ['application/octet-stream'],
        response: { 200: Binary, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const m = await app.service.model(request.params.cid, request.params.version);
      return sendBytes(reply, m.bytes, { [MODEL_VERSION_HEADER]: String(m.version) });
    },
  );
};
export default models;
