/** Small helpers shared by the route plugins (internal). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from './errors.js';

/** Sends raw bytes. */
export function sendBytes(reply: FastifyReply, bytes: Buffer, headers: Record<string, string> = {}) {
  return reply.type('application/octet-stream').headers(headers).send(bytes);
}

/** The request body as bytes. @throws ServiceError UNSUPPORTED_MEDIA_TYPE for a non-binary body. */
export function bodyBytes(request: FastifyRequest): Buffer {
  if (!Buffer.isBuffer(request.body))
    throw new ServiceError('FEDSCORE_ERR_UNSUPPORTED_MEDIA_TYPE', 'expected application/octet-stream');
  return request.body;
}
