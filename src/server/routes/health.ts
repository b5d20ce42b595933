/** Liveness (`/health`: the process answers) and readiness (`/ready`: the store answers). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { errors } from '../../consortium/schemas.js';
import { ServiceError } from '../errors.js';

const Status = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });

const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health',
    { schema: { summary: 'liveness', tags: ['health'], response: { 200: Status } } },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/ready',
    {
      schema: {
        summary: 'readiness: the store answers',
        tags: ['health'],
        response: { 200: Status, ...errors(503) },
      },
    },
    async () => {
      if (!(await app.service.ping())) throw new ServiceError('FEDSCORE_ERR_NOT_READY_FOR_SERVICE');
      return { status: 'ok' as const };
    },
  );
};
export default health;
