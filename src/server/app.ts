/**
 * The fastify application of the scoring service. {@link buildApp} builds it and never listens
 * (the CLI does; tests use `app.inject()`).
 *
 * Shared services are decorated onto the instance (`service`, `settings`, and the access hooks of
 * access.ts: `requireAdmin`, `requireSilo`, `requireReader`, `checkSignedBody`, `limitBody`); each
 * resource is one encapsulated plugin under routes/. Every error body is `{ code, message }` from
 * errors.ts — also for what fails below the routes: Node's HTTP parser (`clientErrorHandler`),
 * fastify's router (`frameworkErrors`) and timeouts. Request ids come from `x-request-id` (or are
 * generated) and are echoed in the response and in every pino log line.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { type TypeBoxTypeProvider, TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import { ERRORS, type ErrorBody, type ErrorCode, errorBody } from '../consortium/error-codes.js';
import type { UploadKind } from './_limits.js';
import {
  type AccessContext,
  authenticateReader,
  authenticateSilo,
  CANONICAL_INTEGER,
  canonicalMessage,
  checkSignedBody,
  limitBody,
} from './access.js';
import { checkAdminToken, declaresBody } from './auth.js';
import { ServiceError } from './errors.js';
import { RateLimited, type RateLimits, SiloLimiter } from './rate-limits.js';
import { roundLogLine } from './round-log.js';
import consortiaRoutes from './routes/consortia.js';
import dashboardRoutes from './routes/dashboard.js';
import externalRoutes from './routes/external.js';
import healthRoutes from './routes/health.js';
import modelRoutes from './routes/models.js';
import reportRoutes from './routes/reports.js';
import roundRoutes from './routes/rounds.js';
import scoreRoutes from './routes/scores.js';
import secaggRoutes from './routes/secagg.js';
import { type Evaluator, type RoundEvent, ScoringService } from './service/scoring-service.js';
import type { StoreHandle } from './store/database.js';

/** Connection timeouts in ms (see {@link BuildAppOptions.timeouts}). */
export interface Timeouts {
  /** The request line and headers must arrive within this (default 10 s). */
  readonly headersMs: number;
  /** The whole request, body included, must arrive within this (default 120 s; ≥ headersMs). */
  readonly requestMs: number;
  /** A socket with no traffic either way is closed after this (default 300 s). */
  readonly idleMs: number;
  /** How often the two limits above are checked (default 1 s). */
  readonly checkIntervalMs: number;
}

/** Options of {@link buildApp}. */
export interface BuildAppOptions {
  /** An open store (store/database.ts `openStore`); the app does not close it unless `closeStore`. */
  readonly store: StoreHandle;
  /** The operator's bearer token (at least 16 characters). */
  readonly adminToken: string;
  /**
   * A read-only bearer token for the dashboard (at least 16 characters, not the admin token): it
   * reads consortia, rounds (without Σ w_i) and scores, nothing else. Without it only the admin
   * token opens the dashboard.
   */
  readonly viewerToken?: string;
  /** v(·) on the consortium's test set; without it the operator posts each round's utilities. */
  readonly evaluate?: Evaluator;
  /** Clock in ms since the epoch (default Date.now). */
  readonly now?: () => number;
  /** pino logger options, or false (default) for none. */
  readonly logger?: FastifyServerOptions['logger'];
  /** Largest accepted gap between a signed request's timestamp and the clock (default 5 min). */
  readonly freshnessMs?: number;
  /**
   * Per-silo request limits (rate-limits.ts): `max` requests per window on each write route and
   * over all reads (default 600 per 60 s), of which `maxVectorReads` reads of a model or an
   * aggregate sum (default 60).
   */
  readonly rateLimit?: { readonly max: number; readonly windowMs: number; readonly maxVectorReads?: number };
  /**
   * Cap on the vector uploads (default 64 MiB); each consortium's own limits follow its d
   * (_limits.ts) and a consortium whose uploads exceed this cap is refused.
   */
  readonly maxVectorBytes?: number;
  /** Body limit of every other endpoint, default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Connection timeouts (each optional; defaults in {@link Timeouts}). */
  readonly timeouts?: Partial<Timeouts>;
  /**
   * How often the operator's schedules run (service/schedule.ts), in ms (default 1000); false: never
   * by themselves (tests call `app.service.runSchedule()`).
   */
  readonly scheduleIntervalMs?: number | false;
  /** Close the store when the app closes (the CLI sets it). */
  readonly closeStore?: boolean;
}

/** Resolved settings, decorated as `app.settings`. */
export interface Settings {
  readonly now: () => number;
  readonly freshnessMs: number;
  readonly rateLimit: RateLimits;
  readonly maxVectorBytes: number;
  readonly maxBodyBytes: number;
  readonly timeouts: Timeouts;
}

type Hook = (request: FastifyRequest) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    service: ScoringService;
    settings: Settings;
    /** onRequest: the admin bearer token. */
    requireAdmin: Hook;
    /** onRequest: a silo's signed request, checked before its body (access.ts); sets `request.silo`. */
    requireSilo: Hook;
    /** onRequest: a read of consortium data — a member silo, the admin token, or (`viewer`) the viewer token. */
    requireReader: (o: { viewer: boolean }) => Hook;
    /** preHandler: a signed body must match its signed digest. */
    checkSignedBody: Hook;
    /** preParsing: the body limit of an upload of `kind` to the consortium in the path. */
    limitBody: (
      kind: UploadKind,
    ) => (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: NodeJS.ReadableStream,
    ) => Promise<NodeJS.ReadableStream>;
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

const DEFAULT_TIMEOUTS: Timeouts = {
  headersMs: 10_000,
  requestMs: 120_000,
  idleMs: 300_000,
  checkIntervalMs: 1_000,
};

/**
 * Builds the service (routes, hooks, OpenAPI document) without listening, in named steps: check
 * the options, create the fastify instance, install request validation and body parsing, the
 * scoring service and the access checks, the hooks, the OpenAPI document, the routes, and the
 * schedules.
 *
 * @throws TypeError / RangeError naming a bad option.
 */
export async function buildApp(options: BuildAppOptions): Promise<App> {
  const o = options;
  const settings = checkedSettings(o);
  const app = createFastify(settings, o.logger ?? false);
  installValidation(app);
  installBodyParsers(app);
  const service = new ScoringService({
    store: o.store,
    now: settings.now,
    maxVectorBytes: settings.maxVectorBytes,
    ...(o.evaluate ? { evaluate: o.evaluate } : {}),
    onWarning: (message, error) => app.log.warn({ err: error }, message),
    onRoundEvent: (e) => logRoundEvent(app, e),
  });
  installAccess(app, o, service, settings);
  installHooks(app);
  await registerOpenApi(app);
  await registerRoutes(app);
  const every = o.scheduleIntervalMs ?? 1000;
  if (every !== false) runScheduleEvery(app, positive('options.scheduleIntervalMs', every));
  app.addHook('onClose', async () => service.close());
  if (o.closeStore) app.addHook('onClose', async () => o.store.close());
  return app;
}

/** The options checked, with their defaults: the app's `settings`. @throws TypeError / RangeError naming the option. */
function checkedSettings(o: BuildAppOptions): Settings {
  if (typeof o !== 'object' || o === null) throw new TypeError('options: expected an object');
  if (typeof o.store?.db !== 'object') throw new TypeError('options.store: expected an open store');
  if (typeof o.adminToken !== 'string' || o.adminToken.length < 16)
    throw new RangeError('options.adminToken: expected a string of at least 16 characters');
  if (o.viewerToken !== undefined && (typeof o.viewerToken !== 'string' || o.viewerToken.length < 16))
    throw new RangeError('options.viewerToken: expected a string of at least 16 characters');
  if (o.viewerToken !== undefined && o.viewerToken === o.adminToken)
    throw new RangeError('options.viewerToken: must differ from the admin token');
  const t = { ...DEFAULT_TIMEOUTS, ...o.timeouts };
  const timeouts: Timeouts = {
    headersMs: positive('options.timeouts.headersMs', t.headersMs),
    requestMs: positive('options.timeouts.requestMs', t.requestMs),
    idleMs: positive('options.timeouts.idleMs', t.idleMs),
    checkIntervalMs: positive('options.timeouts.checkIntervalMs', t.checkIntervalMs),
  };
  if (timeouts.requestMs < timeouts.headersMs)
    throw new RangeError('options.timeouts.requestMs: must be at least options.timeouts.headersMs');
  return {
    now: o.now ?? Date.now,
    freshnessMs: positive('options.freshnessMs', o.freshnessMs ?? 300_000),
    rateLimit: {
      max: positive('options.rateLimit.max', o.rateLimit?.max ?? 600),
      windowMs: positive('options.rateLimit.windowMs', o.rateLimit?.windowMs ?? 60_000),
      maxVectorReads: positive('options.rateLimit.maxVectorReads', o.rateLimit?.maxVectorReads ?? 60),
    },
    maxVectorBytes: positive('options.maxVectorBytes', o.maxVectorBytes ?? 64 * 1024 * 1024),
    maxBodyBytes: positive('options.maxBodyBytes', o.maxBodyBytes ?? 1024 * 1024),
    timeouts,
  };
}

/** The fastify instance: logging, limits, timeouts, request ids and the framework's own errors. */
function createFastify(settings: Settings, logger: BuildAppOptions['logger'] & {}): App {
  return Fastify({
    logger,
    // Requests are logged at debug level (the onResponse hook below): at info the log is the rounds'.
    logController: new LogController({ disableRequestLogging: true }),
    // Routes that take vectors set their own limit; anything else (the 404 route too) this one.
    bodyLimit: settings.maxBodyBytes,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    ajv: { customOptions: { coerceTypes: false } },
    requestTimeout: settings.timeouts.requestMs,
    connectionTimeout: settings.timeouts.idleMs,
    http: {
      headersTimeout: settings.timeouts.headersMs,
      connectionsCheckingInterval: settings.timeouts.checkIntervalMs,
    },
    clientErrorHandler,
    frameworkErrors: (error, _request, reply) => {
      const code: ErrorCode =
        error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'FEDSCORE_ERR_VALIDATION'
          : 'FEDSCORE_ERR_INTERNAL';
      return (reply as FastifyReply)
        .status(ERRORS[code].status)
        .send(errorBody(code, code === 'FEDSCORE_ERR_INTERNAL' ? undefined : error.message));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/**
 * Request validation: TypeBox schemas; binary bodies are checked by the handlers (decoders; a
 * `format: binary` schema documents them). Integer path parameters must be in their canonical
 * decimal form before TypeBox converts them: its conversion would read `1.5`, `+1`, `01`, ` 1` and
 * `true` as round 1.
 */
function installValidation(app: App): void {
  app.setValidatorCompiler((route) => {
    if ((route.schema as { format?: string }).format === 'binary') return (value: unknown) => ({ value });
    const check = TypeBoxValidatorCompiler(route as Parameters<typeof TypeBoxValidatorCompiler>[0]);
    if (route.httpPart !== 'params') return check;
    const properties = (route.schema as { properties?: Record<string, { type?: string }> }).properties ?? {};
    const integers = Object.keys(properties).filter((k) => properties[k]!.type === 'integer');
    if (integers.length === 0) return check;
    return (value: unknown) => {
      for (const k of integers) {
        const raw = (value as Record<string, unknown>)[k];
        if (typeof raw !== 'string' || !CANONICAL_INTEGER.test(raw))
          return {
            error: [
              {
                keyword: 'pattern',
                instancePath: `/${k}`,
                schemaPath: `#/properties/${k}`,
                params: {},
                message: canonicalMessage(k).slice(`params/${k} `.length),
              },
            ],
          };
      }
      return check(value);
    };
  });
}

/** JSON and octet-stream only: a text/plain body is refused with 415 rather than parsed. */
function installBodyParsers(app: App): void {
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => {
    done(null, body);
  });
}

/** The service and settings on the app, and the access checks the routes call (tokens, signatures, body limits). */
function installAccess(app: App, o: BuildAppOptions, service: ScoringService, settings: Settings): void {
  const access: AccessContext = {
    service,
    now: settings.now,
    freshnessMs: settings.freshnessMs,
    adminToken: o.adminToken,
    viewerToken: o.viewerToken,
    maxBodyBytes: settings.maxBodyBytes,
    maxVectorBytes: settings.maxVectorBytes,
    limiter: new SiloLimiter(settings.rateLimit, settings.now),
  };
  app.decorate('service', service);
  app.decorate('settings', settings);
  app.decorateRequest('silo', -1);
  app.decorateRequest('reader', undefined);
  app.decorateRequest('signedDigest', undefined);
  app.decorate('requireAdmin', async (request: FastifyRequest) => {
    if (!checkAdminToken(request.headers.authorization, o.adminToken))
      throw new ServiceError('FEDSCORE_ERR_ADMIN_TOKEN');
    request.reader = 'admin';
  });
  app.decorate('requireSilo', (request: FastifyRequest) => authenticateSilo(access, request));
  app.decorate(
    'requireReader',
    ({ viewer }: { viewer: boolean }) =>
      (request: FastifyRequest) =>
        authenticateReader(access, request, viewer),
  );
  app.decorate('checkSignedBody', async (request: FastifyRequest) => checkSignedBody(request));
  app.decorate(
    'limitBody',
    (kind: UploadKind) => (request: FastifyRequest, _reply: FastifyReply, payload: NodeJS.ReadableStream) =>
      limitBody(access, kind, request, payload),
  );
}

/** Hooks: 404 before any body is read, request logging, request ids, the error handler. */
function installHooks(app: App): void {
  // No route, no body: answered before anything is read.
  app.addHook('onRequest', async (request) => {
    if (request.is404)
      throw new ServiceError('FEDSCORE_ERR_ROUTE_NOT_FOUND', `${request.method} ${request.url}`);
  });
  app.addHook('onResponse', async (request, reply) => {
    const ms = Math.round(reply.elapsedTime);
    request.log.debug(
      { method: request.method, url: request.url, statusCode: reply.statusCode, ms },
      `${request.method} ${request.url} ${reply.statusCode} ${ms} ms`,
    );
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Answered before its body was read (refused): close rather than read the rest to keep alive.
    if (request.raw.complete === false && declaresBody(request.headers)) reply.header('connection', 'close');
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { status, body } = toErrorResponse(error);
    if (error instanceof RateLimited) reply.header('retry-after', String(error.retryAfterS));
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.debug({ code: body.code }, body.message);
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody('FEDSCORE_ERR_ROUTE_NOT_FOUND', `${request.method} ${request.url}`)),
  );
}

/** The OpenAPI document and its UI (/docs). */
async function registerOpenApi(app: App): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'fedscore scoring service',
        description:
          'Silos run secure aggregation (Bonawitz et al. 2017) over these endpoints and submit signed score reports; ' +
          'the service publishes per-round and cumulative private scores to the consortium’s members, its operator ' +
          'and the holders of its viewer token. Error codes: docs/errors.md.',
        version: '1',
      },
      components: {
        securitySchemes: {
          admin: { type: 'http', scheme: 'bearer', description: 'the admin token' },
          viewer: { type: 'http', scheme: 'bearer', description: 'the read-only viewer token' },
          silo: { type: 'apiKey', in: 'header', name: 'x-fedscore-signature' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}

/** The routes: health, the /v1 API, the dashboard. */
async function registerRoutes(app: App): Promise<void> {
  await app.register(healthRoutes);
  await app.register(consortiaRoutes, { prefix: '/v1' });
  await app.register(modelRoutes, { prefix: '/v1' });
  await app.register(roundRoutes, { prefix: '/v1' });
  await app.register(externalRoutes, { prefix: '/v1' });
  await app.register(secaggRoutes, { prefix: '/v1' });
  await app.register(reportRoutes, { prefix: '/v1' });
  await app.register(scoreRoutes, { prefix: '/v1' });
  await app.register(dashboardRoutes);
}

/**
 * Runs the schedules every `ms` once the app is ready, one pass at a time, until it closes (the
 * pass under way is awaited before the store closes).
 */
function runScheduleEvery(app: App, ms: number): void {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;
  const pass = () => {
    running = app.service
      .runSchedule()
      .catch((e: unknown) => app.log.warn({ err: e }, 'schedule pass failed'))
      .finally(() => {
        if (!closed) timer = setTimeout(pass, ms).unref();
      });
  };
  app.addHook('onReady', async () => {
    timer = setTimeout(pass, 0);
  });
  app.addHook('onClose', async () => {
    closed = true;
    clearTimeout(timer);
    await running;
  });
}

/** The operator's log of a round (./round-log.ts): info lines, warn for a round ended early. */
function logRoundEvent(app: App, e: RoundEvent): void {
  app.service.consortium(e.consortium).then(
    (c) => {
      const { level, message, fields } = roundLogLine(e, c);
      app.log[level](fields, message);
    },
    () => {},
  );
}

function positive(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
    throw new RangeError(`${name}: expected a positive number`);
  return v;
}

/**
 * Errors of Node's HTTP parser and its timeouts, answered in the catalogue's shape on the raw
 * socket (no request object exists yet, or it is being torn down), then the socket is closed.
 */
function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ErrorCode =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? 'FEDSCORE_ERR_REQUEST_TIMEOUT'
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? 'FEDSCORE_ERR_HEADERS_TOO_LARGE'
        : 'FEDSCORE_ERR_MALFORMED_REQUEST';
  const { status } = ERRORS[code];
  const body = JSON.stringify(
    errorBody(code, code === 'FEDSCORE_ERR_MALFORMED_REQUEST' ? error.code : undefined),
  );
  this.log.debug({ code, reason: error.code }, 'client error');
  // Never into a response already under way on this connection (its bytes would be corrupted).
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && current?.headersSent !== true)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(error);
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
      return of('FEDSCORE_ERR_MALFORMED_REQUEST', 'content-length does not match the body');
  }
  if (error instanceof SyntaxError && e.statusCode === 400) return of('FEDSCORE_ERR_MALFORMED_JSON');
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500)
    return of('FEDSCORE_ERR_VALIDATION', e.message);
  return of('FEDSCORE_ERR_INTERNAL');
}
