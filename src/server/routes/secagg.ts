/**
 * Secure-aggregation stage endpoints (Bonawitz et al. 2017, rounds 0–4). A silo posts its signed
 * client message in the binary codec (protocol/codec.ts) to the endpoint of its stage and reads
 * the server's messages for it from its inbox. Every request is signed by the silo and checked
 * before its body is read (access.ts), rate-limited per silo, and its body limited by the
 * consortium's d (_limits.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { type CollectingStage, STAGE_MESSAGE_TYPES } from '../../../protocol/server.js';
import { Accepted, Binary, ConsortiumId, errors } from '../../consortium/schemas.js';
import { bodyBytes, sendBytes } from '../_http.js';

const STAGES: readonly { stage: CollectingStage; summary: string }[] = [
  { stage: 'advertise', summary: 'round 0, AdvertiseKeys' },
  { stage: 'share', summary: 'round 1, ShareKeys' },
  { stage: 'mask', summary: 'round 2, MaskedInputCollection (the masked vector)' },
  { stage: 'consistency', summary: 'round 3, ConsistencyCheck' },
  { stage: 'unmask', summary: 'round 4, Unmasking' },
];

const Params = Type.Object(
  { cid: ConsortiumId, round: Type.Integer({ minimum: 1, maximum: 0xffffffff }) },
  { additionalProperties: false },
);
const InboxParams = Type.Object(
  {
    cid: ConsortiumId,
    round: Type.Integer({ minimum: 1, maximum: 0xffffffff }),
    kind: Type.Enum([...STAGE_MESSAGE_TYPES]),
  },
  { additionalProperties: false },
);

const secagg: FastifyPluginAsyncTypebox = async (app) => {
  const { settings } = app;
  for (const { stage, summary } of STAGES)
    app.post(
      `/consortia/:cid/rounds/:round/${stage}`,
      {
        onRequest: app.requireSilo,
        // Masked inputs and unmasking responses (which may carry a correction vector) hold d + 1
        // words: their limits follow the consortium's d, under the service's cap.
        ...(stage === 'mask' || stage === 'unmask'
          ? { preParsing: app.limitBody(stage), bodyLimit: settings.maxVectorBytes }
          : { bodyLimit: settings.maxBodyBytes }),
        preHandler: app.checkSignedBody,
        schema: {
          summary: `${summary}: a signed client message (binary codec)`,
          tags: ['secure aggregation'],
          security: [{ silo: [] }],
          params: Params,
          consumes: ['application/octet-stream'],
          body: Binary,
          response: { 202: Accepted, ...errors(400, 401, 403, 404, 409, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        const { cid, round } = request.params;
        const r = await app.service.postMessage(cid, round, stage, request.silo, bodyBytes(request));
        return reply.status(202).send({ accepted: true as const, stage: r.stage });
      },
    );
  app.get(
    '/consortia/:cid/rounds/:round/inbox/:kind',
    {
      onRequest: app.requireSilo,
      preHandler: app.checkSignedBody,
      schema: {
        summary: 'the server message of this kind for the signed-in silo (binary codec)',
        tags: ['secure aggregation'],
        security: [{ silo: [] }],
        params: InboxParams,
        produces: ['application/octet-stream'],
        response: { 200: Binary, ...errors(400, 401, 404, 409, 415, 429) },
      },
    },
    async (request, reply) => {
      const { cid, round, kind } = request.params;
      return sendBytes(reply, await app.service.inbox(cid, round, kind, request.silo));
    },
  );
};
export default secagg;
