/**
 * The dashboard (issue 6): an HTML page per consortium — its configuration, each round's progress
 * through the stages, and score charts per scheme over the rounds — that reads the JSON endpoints
 * (`GET /v1/consortia/:cid`, `…/rounds`) and its charts (`GET /dashboard/:cid/charts`, Vega-Lite
 * specifications of src/report/charts.ts, the report's chart module) from the browser with the viewer
 * (or admin) token, and draws the charts with vega-embed from `/dashboard/_assets/` (vega,
 * vega-lite and vega-embed from node_modules, no CDN). The page, the index and the scripts hold no
 * consortium data and are public; the page is served for any well-formed id, existing or not, so
 * it tells nothing either (the data endpoints need the token: the operator opens
 * `/dashboard/<id>#token=<viewer token>`, see ../_dashboard-page.ts). `_assets` cannot be a
 * consortium id (ids start with a letter or digit).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ConsortiumId, ConsortiumParams, errors, READERS } from '../../consortium/schemas.js';
import { ASSET_NAMES, dashboardAsset } from '../_dashboard-assets.js';
import { dashboardCharts } from '../_dashboard-charts.js';
import { DASHBOARD_CSP, dashboardIndex, dashboardPage } from '../_dashboard-page.js';

const Html = Type.String({ description: 'text/html' });
const Script = Type.Unsafe<Buffer>({ type: 'string', description: 'text/javascript (gzip when accepted)' });
const IndexQuery = Type.Object({ cid: Type.Optional(ConsortiumId) }, { additionalProperties: false });
const AssetParams = Type.Object(
  { file: Type.Union(ASSET_NAMES.map((name) => Type.Literal(name))) },
  { additionalProperties: false },
);
const Leaderboard = Type.Object(
  {
    headline: Type.String({
      description: 'the headline scheme (its weight, summed over rounds, is the headline score)',
    }),
    round: Type.Union([Type.Integer(), Type.Null()], { description: 'the last scored round' }),
    entries: Type.Array(
      Type.Object(
        {
          silo: Type.Integer({ description: 'the silo’s 0-based index' }),
          name: Type.String(),
          rank: Type.Integer({ description: '1 = highest headline score; equal scores share a rank' }),
          rankRange: Type.Optional(
            Type.Tuple([Type.Integer(), Type.Integer()], {
              description: '[best, worst] rank over a 95 % bootstrap over rounds; best ≠ worst: a near-tie',
            }),
          ),
          headline: Type.Number({ description: 'the headline score summed over the scored rounds' }),
          interval: Type.Optional(
            Type.Tuple([Type.Number(), Type.Number()], {
              description: '95 % bootstrap interval of the headline (over rounds)',
            }),
          ),
          share: Type.Optional(
            Type.Union([Type.Number(), Type.Null()], {
              description:
                'fraction of the reward (≥ 0, Σ = 1 over silos ever selected); null: never selected',
            }),
          ),
          lastRound: Type.Union([Type.Number(), Type.Null()], {
            description: 'the headline score of the last scored round (null: not scored in it)',
          }),
          scores: Type.Record(Type.String(), Type.Number(), {
            description: 'every published scheme’s cumulative score',
          }),
          flags: Type.Array(
            Type.Object({ kind: Type.String(), reason: Type.String() }, { additionalProperties: false }),
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'in rank order (src/records/leaderboard.ts); empty before the first scored round' },
    ),
  },
  { additionalProperties: false },
);
const Charts = Type.Object(
  {
    leaderboard: Leaderboard,
    rounds: Type.Array(Type.Integer(), { description: 'the scored rounds' }),
    charts: Type.Array(
      Type.Object(
        {
          scheme: Type.String(),
          kind: Type.Union([Type.Literal('round'), Type.Literal('cumulative')]),
          spec: Type.Unknown({
            description: 'a Vega-Lite specification with its data (src/report/charts.ts)',
          }),
          final: Type.Optional(Type.Array(Type.Number(), { description: 'cumulative: each silo’s sum' })),
        },
        { additionalProperties: false },
      ),
    ),
    quarantined: Type.Array(
      Type.Object(
        {
          round: Type.Integer(),
          silo: Type.Integer(),
          flagged: Type.Array(Type.String(), { description: 'the report(s) the detector flagged' }),
          zWithOnly: Type.Number(),
          zWithout: Type.Number(),
          released: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
      { description: 'reports the detector quarantined (not scored unless released)' },
    ),
  },
  { additionalProperties: false },
);

const dashboard: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', DASHBOARD_CSP);
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
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
        summary:
          'a consortium’s dashboard: stages of each round and score charts per scheme (the page is public and holds no data; open it with #token=<viewer token>)',
        tags: ['dashboard'],
        params: ConsortiumParams,
        produces: ['text/html'],
        response: { 200: Html, ...errors(400) },
      },
    },
    // No lookup: the same page for every well-formed id, so the page does not tell which exist.
    async (request, reply) => reply.type('text/html; charset=utf-8').send(dashboardPage(request.params.cid)),
  );
  app.get(
    '/dashboard/:cid/charts',
    {
      onRequest: app.requireReader({ viewer: true }),
      schema: {
        summary:
          'the dashboard’s data: the leaderboard (headline score cumulative and last round, every scheme, flags) and, per scheme, per-round and cumulative scores as Vega-Lite',
        tags: ['dashboard'],
        security: READERS,
        params: ConsortiumParams,
        response: { 200: Charts, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const consortium = await app.service.consortium(request.params.cid);
      const scores = await app.service.cumulativeScores(consortium.id);
      return dashboardCharts(
        consortium.schemes,
        consortium.participants.length,
        scores,
        consortium.emptyCoalition,
      );
    },
  );
  app.get(
    '/dashboard/_assets/:file',
    {
      schema: {
        summary: 'the dashboard’s scripts: vega, vega-lite and vega-embed from node_modules',
        tags: ['dashboard'],
        params: AssetParams,
        produces: ['text/javascript'],
        response: { 200: Script, 304: Type.Null(), ...errors(400) },
      },
    },
    async (request, reply) => {
      const asset = await dashboardAsset(request.params.file);
      reply.header('etag', asset.etag).header('cache-control', 'no-cache').header('vary', 'accept-encoding');
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send(null);
      reply.type('text/javascript; charset=utf-8');
      if (!/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) return reply.send(asset.body);
      return reply.header('content-encoding', 'gzip').send(asset.gzipped);
    },
  );
};
export default dashboard;
