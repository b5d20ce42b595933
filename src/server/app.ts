/**
 * The fastify application of the scoring service. {@link buildApp} builds it and never listens
 * (the CLI does; tests use `app.inject()`).
 *
 * Shared services are decorated onto the instance (`service`, `settings`, the auth hooks
 * `requireAdmin` / `requireSilo`); each resource is one encapsulated plugin under routes/.
 * Every error body is `{ code, message }` from errors.ts; request ids come from `x-request-id`
 * (or are generated) and are echoed in the response and in every pino log line.
 */
import { randomUUID } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { type TypeBoxTypeProvider, TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyRequest,
  type FastifyServerOptions,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import { checkAdminToken, parseAuthHeaders, verifyRequest } from './auth.js';
import { ERRORS, type ErrorBody, errorBody, ServiceError } from './errors.js';
import consortiaRoutes from './routes/consortia.js';
import dashboardRoutes from './routes/dashboard.js';
import healthRoutes from './routes/health.js';
import modelRoutes from './routes/models.js';
import reportRoutes from './routes/reports.js';
import roundRoutes from './routes/rounds.js';
import scoreRoutes from './routes/scores.js';
import secaggRoutes from './routes/secagg.js';
import { type Evaluator, ScoringService } from './service.js';
import type { StoreHandle } from './store/database.js';

/** Options of {@link buildApp}. */
export interface BuildAppOptions {
  /** An open store (store/database.ts `openStore`); the app does not close it unless `closeStore`. */
  readonly store: StoreHandle;
  /** The operator's bearer token (at least 16 characters). */
  readonly adminToken: string;
  /** v(·) on the consortium's test set; without it the operator posts each round's utilities. */
  readonly evaluate?: Evaluator;
  /** Clock in ms since the epoch (default Date.now). */
  readonly now?: () => number;
  /** pino logger options, or false (default) for none. */
  readonly logger?: FastifyServerOptions['logger'];
  /** Largest accepted gap between a signed request's timestamp and the clock (default 5 min). */
  readonly freshnessMs?: number;
  /** Requests per silo and window on the silo endpoints (default 600 per 60 s). */
  readonly rateLimit?: { readonly max: number; readonly windowMs: number };
  /** Body limit of the vector endpoints (masked inputs, models), default 64 MiB. */
  readonly maxVectorBytes?: number;
  /** Body limit of every other endpoint, default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Close the store when the app closes (the CLI sets it). */
  readonly closeStore?: boolean;
}

/** Resolved settings, decorated as `app.settings`. */
export interface Settings {
  readonly now: () => number;
  readonly freshnessMs: number;
  readonly rateLimit: { readonly max: number; readonly windowMs: number };
  readonly maxVectorBytes: number;
  readonly maxBodyBytes: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    service: ScoringService;
    settings: Settings;
    /** preHandler: the admin bearer token. */
    requireAdmin: (request: FastifyRequest) => Promise<void>;
    /** preHandler: a silo's signed request; sets `request.silo`. */
    requireSilo: (request: FastifyRequest) => Promise<void>;
  }
  interface FastifyRequest {
    /** The authenticated silo id (−1 before `requireSilo`). */
    silo: number;
  }
}

/** The app type with the TypeBox provider. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * Builds the service (routes, hooks, OpenAPI document) without listening.
 *
 * @throws TypeError / RangeError naming a bad option.
 */
export async function buildApp(options: BuildAppOptions): Promise<App> {
  const o = options;
  if (typeof o !== 'object' || o === null) throw new TypeError('options: expected an object');
  if (typeof o.store?.db !== 'object') throw new TypeError('options.store: expected an open store');
  if (typeof o.adminToken !== 'string' || o.adminToken.length < 16)
    throw new RangeError('options.adminToken: expected a string of at least 16 characters');
  const settings: Settings = {
    now: o.now ?? Date.now,
    freshnessMs: positive('options.freshnessMs', o.freshnessMs ?? 300_000),
    rateLimit: {
      max: positive('options.rateLimit.max', o.rateLimit?.max ?? 600),
      windowMs: positive('options.rateLimit.windowMs', o.rateLimit?.windowMs ?? 60_000),
    },
    maxVectorBytes: positive('options.maxVectorBytes', o.maxVectorBytes ?? 64 * 1024 * 1024),
    maxBodyBytes: positive('options.maxBodyBytes', o.maxBodyBytes ?? 1024 * 1024),
  };
  const app = Fastify({
    logger: o.logger ?? false,
    bodyLimit: Math.max(settings.maxVectorBytes, settings.maxBodyBytes),
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    ajv: { customOptions: { coerceTypes: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Binary bodies are checked by the handlers (decoders); a `format: binary` schema documents them.
  app.setValidatorCompiler((route) => {
    if ((route.schema as { format?: string }).format === 'binary') return (value: unknown) => ({ value });
    return TypeBoxValidatorCompiler(route as Parameters<typeof TypeBoxValidatorCompiler>[0]);
  });
  // JSON and octet-stream only: a text/plain body is refused with 415 rather than parsed.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => {
    done(null, body);
  });

  const service = new ScoringService({
    store: o.store,
    now: settings.now,
    ...(o.evaluate ? { evaluate: o.evaluate } : {}),
    onWarning: (message, error) => app.log.warn({ err: error }, message),
  });
  app.decorate('service', service);
  app.decorate('settings', settings);
  app.decorateRequest('silo', -1);
  app.decorate('requireAdmin', async (request: FastifyRequest) => {
    if (!checkAdminToken(request.headers.authorization, o.adminToken))
      throw new ServiceError('FEDSCORE_ERR_ADMIN_TOKEN');
  });
  app.decorate('requireSilo', async (request: FastifyRequest) => {
    await authenticateSilo(service, settings, request);
  });

  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { status, body } = toErrorResponse(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: body.code }, body.message);
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody('FEDSCORE_ERR_ROUTE_NOT_FOUND', `${request.method} ${request.url}`)),
  );

  await app.register(rateLimit, {
    global: false,
    hook: 'preHandler',
    errorResponseBuilder: (_request, context) =>
      new ServiceError('FEDSCORE_ERR_RATE_LIMITED', `retry in ${context.after}`),
  });
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'fedscore scoring service',
        description:
          'Silos run secure aggregation (Bonawitz et al. 2017) over these endpoints and submit signed score reports; ' +
          'the service publishes per-round and cumulative private scores. Error codes: docs/errors.md.',
        version: '1',
      },
      components: {
        securitySchemes: {
          admin: { type: 'http', scheme: 'bearer' },
          silo: { type: 'apiKey', in: 'header', name: 'x-fedscore-signature' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await app.register(healthRoutes);
  await app.register(consortiaRoutes, { prefix: '/v1' });
  await app.register(modelRoutes, { prefix: '/v1' });
  await app.register(roundRoutes, { prefix: '/v1' });
  await app.register(secaggRoutes, { prefix: '/v1' });
  await app.register(reportRoutes, { prefix: '/v1' });
  await app.register(scoreRoutes, { prefix: '/v1' });
  await app.register(dashboardRoutes);

  if (o.closeStore) app.addHook('onClose', async () => o.store.close());
  return app;
}

function positive(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
    throw new RangeError(`${name}: expected a positive number`);
  return v;
}

async function authenticateSilo(
  service: ScoringService,
  settings: Settings,
  request: FastifyRequest,
): Promise<void> {
  const parsed = parseAuthHeaders(request.headers);
  if (!parsed.ok) throw new ServiceError('FEDSCORE_ERR_UNAUTHENTICATED', parsed.detail);
  const { cid } = request.params as { cid: string };
  const roster = await service.roster(cid);
  const key = roster[parsed.silo];
  if (key === undefined)
    throw new ServiceError(
      'FEDSCORE_ERR_BAD_REQUEST_SIGNATURE',
      `silo ${parsed.silo} is not registered in ${cid}`,
    );
  if (Math.abs(settings.now() - parsed.timestamp) > settings.freshnessMs)
    throw new ServiceError('FEDSCORE_ERR_STALE_REQUEST');
  const body = request.body;
  if (body !== undefined && body !== null && !Buffer.isBuffer(body))
    throw new ServiceError(
      'FEDSCORE_ERR_UNSUPPORTED_MEDIA_TYPE',
      'silo endpoints take application/octet-stream',
    );
  const signed = {
    method: request.method,
    path: request.url,
    silo: parsed.silo,
    timestamp: parsed.timestamp,
    nonce: parsed.nonce,
    ...(Buffer.isBuffer(body) ? { body } : {}),
  };
  if (!verifyRequest(key, signed, parsed.signature))
    throw new ServiceError('FEDSCORE_ERR_BAD_REQUEST_SIGNATURE');
  if (!(await service.useNonce(cid, parsed.silo, parsed.nonce, parsed.timestamp + settings.freshnessMs)))
    throw new ServiceError('FEDSCORE_ERR_REPLAYED_REQUEST');
  request.silo = parsed.silo;
}

/** Maps any error thrown while handling a request onto the catalogue. */
export function toErrorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof ServiceError)
    return { status: error.status, body: errorBody(error.code, error.detail) };
  const e = error as Partial<FastifyError> & { validation?: unknown };
  const of = (code: keyof typeof ERRORS, detail?: string) => ({
    status: ERRORS[code].status,
    body: errorBody(code, detail),
  });
  if (e.validation) return of('FEDSCORE_ERR_VALIDATION', e.message);
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return of('FEDSCORE_ERR_BODY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return of('FEDSCORE_ERR_UNSUPPORTED_MEDIA_TYPE', e.message);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return of('FEDSCORE_ERR_MALFORMED_JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return of('FEDSCORE_ERR_VALIDATION', 'content-length does not match the body');
  }
  if (error instanceof SyntaxError && e.statusCode === 400) return of('FEDSCORE_ERR_MALFORMED_JSON');
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500)
    return of('FEDSCORE_ERR_VALIDATION', e.message);
  return of('FEDSCORE_ERR_INTERNAL');
}
