/**
 * The dashboard (routes/dashboard.ts): its HTTP contract through app.inject (page, charts, the
 * vega scripts it serves), then the page itself in real headless Chromium (Debian's `chromium`,
 * driven by playwright-core) against the service listening on 127.0.0.1 while two rounds run
 * through it — the second with a dropout — checking what the page shows: the consortium, each
 * round's stages, and, read back from each chart's Vega view and its SVG, one line per silo whose
 * points are the published scores; and that the page runs under its CSP without a violation.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signedReport, siloCoalitionModels } from '../../src/consortium/private-scoring.js';
import { headlineOfRound, leaderboardOfPublished } from '../../src/records/leaderboard.js';
import { ASSET_NAMES, assetPath } from '../../src/server/_dashboard-assets.js';
import { DASHBOARD_CSP, escapeHtml } from '../../src/server/_dashboard-page.js';
import {
  adminInject,
  Clock,
  consortiumBody,
  createConsortium,
  evaluate,
  f32bytes,
  type Harness,
  harness,
  INITIAL,
  Silo,
  STEPS,
  siloInject,
  updateOf,
} from './_harness.js';

const CHROMIUM = process.env.FEDSCORE_CHROMIUM ?? '/usr/bin/chromium';
const VIEWER = 'dashboard-viewer-token-0123456789';
const viewer = { authorization: `Bearer ${VIEWER}` };
const SCREENSHOT = join(tmpdir(), 'fedscore-dashboard.png');
const SCHEMES = ['loo', 'ioi', 'fp', 'ee', 'eeMedian'];
/** Shown as the model's name: must appear as text, never as markup. */
const HOSTILE = '<img src=x onerror="window.__pwned=1"><b>toy</b>';

describe('dashboard routes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ app: { viewerToken: VIEWER } });
    await createConsortium(h);
  });
  afterAll(async () => h.close());

  test('GET /dashboard/:cid is an HTML page with a strict CSP and the escaped id', async () => {
    const r = await h.app.inject({ method: 'GET', url: '/dashboard/c1' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    // Scripts: its own origin and its inline script's hash; never eval.
    expect(DASHBOARD_CSP).toMatch(/(^|; )script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'; /);
    expect(DASHBOARD_CSP).not.toMatch(/unsafe|\*|https?:/);
    expect(r.body).toContain('<h1 id="cid">c1</h1>');
    expect(r.body).toContain('<body data-cid="c1">');
    // Nothing external: script files only from the dashboard's own assets, no stylesheet, no URL.
    expect([...r.body.matchAll(/<script[^>]*\bsrc="([^"]*)"/g)].map((m) => m[1])).toEqual([
      '/dashboard/_assets/vega.min.js',
      '/dashboard/_assets/vega-lite.min.js',
      '/dashboard/_assets/vega-embed.min.js',
    ]);
    expect(r.body).not.toMatch(/<link[^>]+href="(?!data:,")|https?:\/\//);
  });

  test('GET /dashboard/_assets/:file serves vega, vega-lite and vega-embed from node_modules', async () => {
    expect(ASSET_NAMES).toEqual(['vega.min.js', 'vega-lite.min.js', 'vega-embed.min.js']);
    for (const name of ASSET_NAMES) {
      const file = readFileSync(assetPath(name));
      expect(assetPath(name)).toMatch(
        new RegExp(`/node_modules/${name.replace('.min.js', '')}/build/${name}$`),
      );
      const url = `/dashboard/_assets/${name}`;
      const plain = await h.app.inject({ method: 'GET', url });
      expect(plain.statusCode).toBe(200);
      expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(plain.headers['x-content-type-options']).toBe('nosniff');
      expect(plain.headers['cache-control']).toBe('no-cache');
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.rawPayload.equals(file)).toBe(true);
      const gz = await h.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, br' } });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.rawPayload).equals(file)).toBe(true);
      const etag = plain.headers.etag as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      const again = await h.app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } });
      expect(again.statusCode).toBe(304);
      expect(again.rawPayload.length).toBe(0);
    }
    const other = await h.app.inject({ method: 'GET', url: '/dashboard/_assets/..%2Fpackage.json' });
    expect(other.statusCode).toBe(400);
    expect(other.json().code).toBe('FEDSCORE_ERR_VALIDATION');
  });

  test('GET /dashboard/:cid/charts: per scheme a per-round and a cumulative Vega-Lite chart', async () => {
    const anonymous = await h.app.inject({ method: 'GET', url: '/dashboard/c1/charts' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe('FEDSCORE_ERR_CREDENTIALS_REQUIRED');
    const r = await h.app.inject({ method: 'GET', url: '/dashboard/c1/charts', headers: viewer });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.rounds).toEqual([]); // no scored round yet
    expect(body.leaderboard).toEqual({ headline: 'payout', round: null, entries: [] });
    expect(body.charts.map((c: { scheme: string; kind: string }) => `${c.scheme}/${c.kind}`)).toEqual(
      SCHEMES.flatMap((m) => [`${m}/round`, `${m}/cumulative`]),
    );
    expect(body.charts[0].spec.data).toEqual({ name: 'scores', values: [] });
    expect(body.charts[1].final).toEqual([0, 0, 0, 0]);
    const unknown = await h.app.inject({ method: 'GET', url: '/dashboard/nope/charts', headers: viewer });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('FEDSCORE_ERR_CONSORTIUM_NOT_FOUND');
  });

  test('the page of an unknown id is the same public page (it does not tell which ids exist); malformed ids get coded JSON errors', async () => {
    const unknown = await h.app.inject({ method: 'GET', url: '/dashboard/nope' });
    const known = await h.app.inject({ method: 'GET', url: '/dashboard/c1' });
    expect(unknown.statusCode).toBe(200);
    expect(unknown.body.replaceAll('nope', 'c1')).toBe(known.body);
    const bad = await h.app.inject({ method: 'GET', url: '/dashboard/%3Cscript%3E' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('FEDSCORE_ERR_VALIDATION');
    const badQuery = await h.app.inject({ method: 'GET', url: '/dashboard?cid=%22%3E' });
    expect(badQuery.statusCode).toBe(400);
    expect(badQuery.json().code).toBe('FEDSCORE_ERR_VALIDATION');
  });

  test('the index is a form; ?cid= redirects to the consortium', async () => {
    const index = await h.app.inject({ method: 'GET', url: '/dashboard' });
    expect(index.statusCode).toBe(200);
    expect(index.body).toContain('<form method="get" action="/dashboard">');
    const go = await h.app.inject({ method: 'GET', url: '/dashboard?cid=c1' });
    expect(go.statusCode).toBe(302);
    expect(go.headers.location).toBe('/dashboard/c1');
  });

  test('escapeHtml escapes the five HTML metacharacters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });

  test('the OpenAPI document lists the pages, the charts and the scripts', async () => {
    const paths = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json().paths;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        '/dashboard',
        '/dashboard/{cid}',
        '/dashboard/{cid}/charts',
        '/dashboard/_assets/{file}',
      ]),
    );
  });
});

// ── in headless Chromium ─────────────────────────────────────────────────────────────────────

const CID = 'dash-1';

const STAGES_AFTER_ADVERTISE = ['share', 'mask', 'consistency', 'unmask'];

/** Opens round `r`; all four silos advertise their keys. */
async function openRound(h: Harness, r: number): Promise<Silo[]> {
  const open = await adminInject(h, 'POST', `/v1/consortia/${CID}/rounds`);
  if (open.statusCode !== 201) throw new Error(`open round ${r}: ${open.statusCode} ${open.body}`);
  const silos = [0, 1, 2, 3].map((i) => new Silo(h, CID, r, i, 3));
  for (const s of silos) await s.start();
  return silos;
}

/**
 * Drives the protocol stages STEPS[from … to − 1]; silos in `gone` vanish after ShareKeys, and a
 * stage they leave waiting is closed at its deadline (the fake clock jumps past it).
 */
async function step(h: Harness, r: number, silos: Silo[], from: number, to: number, gone: number[] = []) {
  for (let k = from; k < to; k++) {
    const url = `/v1/consortia/${CID}/rounds/${r}`;
    if ((await adminInject(h, 'GET', url)).json().stage !== STAGES_AFTER_ADVERTISE[k])
      h.clock.advance(10 * 60_000);
    for (const s of silos) if (k === 0 || !gone.includes(s.id)) await s.step(STEPS[k]!);
  }
}

/** The survivors submit their signed reports (as src/consortium/private-scoring.ts computes them). */
async function report(h: Harness, r: number) {
  const agg = (await adminInject(h, 'GET', `/v1/consortia/${CID}/rounds/${r}/aggregate`)).json();
  const sum = await adminInject(h, 'GET', `/v1/consortia/${CID}/rounds/${r}/aggregate/sum`);
  const weightedSum = new Float64Array(new Uint8Array(sum.rawPayload).buffer);
  const base = await adminInject(h, 'GET', `/v1/consortia/${CID}/models/${r - 1}`);
  const m0 = new Float32Array(new Uint8Array(base.rawPayload).buffer);
  for (const silo of agg.survivors as number[]) {
    const models = siloCoalitionModels(m0, weightedSum, agg.totalWeight, updateOf(silo, r), 'fedavg');
    const body = signedReport(
      CID,
      r,
      silo,
      await evaluate({} as never, models.singleton),
      await evaluate({} as never, models.complement),
      h.keys[silo]!,
    );
    const res = await siloInject(h, silo, 'POST', `/v1/consortia/${CID}/rounds/${r}/reports`, body);
    if (res.statusCode !== 201) throw new Error(`report ${silo}: ${res.statusCode} ${res.body}`);
  }
}

/** The little of the DOM the page functions below use (the project's TypeScript has no DOM library). */
interface Node_ {
  readonly textContent: string | null;
  readonly className: string;
  readonly dataset: Record<string, string | undefined>;
  getAttribute(name: string): string | null;
  querySelector(selector: string): Node_ | null;
  querySelectorAll(selector: string): Iterable<Node_>;
}
/** The little of a Vega view and its scenegraph the page functions below read. */
interface Row {
  round: number;
  silo: number;
  score: number | null;
}
interface SceneNode {
  marktype?: string;
  role?: string;
  items?: SceneItem[];
}
interface SceneItem extends SceneNode {
  datum?: Row;
  y: number;
  defined?: boolean;
}
interface VegaView {
  data(name: string): Row[];
  scenegraph(): { root: SceneNode };
}
declare const document: Node_ & { readonly title: string; readonly body: Node_ };
declare const window: {
  fedscoreDashboard?: { charts: { scheme: string; kind: string; view: VegaView }[] };
  cspViolations?: string[];
};

/** Records the page's CSP violations in `window.cspViolations` (runs before the page's scripts). */
const RECORD_CSP_VIOLATIONS = `window.cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`;

/** What the page shows, read from the DOM and, for the charts, from their Vega views. */
function pageState(page: Page) {
  return page.evaluate(() => {
    const text = (s: string) => document.querySelector(s)?.textContent ?? null;
    const texts = (root: Node_ | null, s: string) =>
      [...(root?.querySelectorAll(s) ?? [])].map((t) => t.textContent);
    return {
      title: document.title,
      cid: text('#cid'),
      silos: text('[data-fact="silos"]'),
      threshold: text('[data-fact="threshold t"]'),
      secureAggregation: text('[data-fact="secure aggregation"]'),
      model: text('[data-fact="model"]'),
      schemes: text('[data-fact="schemes"]'),
      corrupt: text('[data-fact="corrupted silos tolerated n_C"]'),
      minimum: text('[data-fact="minimum threshold"]'),
      schedule: text('[data-fact="schedule"]'),
      weak:
        document.querySelector('#weak-threshold')?.getAttribute('hidden') != null
          ? null
          : text('#weak-threshold'),
      message: text('#message'),
      live: document.body.dataset.live,
      // The first section of <main> that shows data, and the leaderboard's rows.
      firstSection: [...document.querySelectorAll('main > section')]
        .filter((e) => e.getAttribute('hidden') === null && (e.textContent ?? '').trim() !== '')
        .map((e) => e.getAttribute('id'))[0],
      leaderboardHead: texts(document.querySelector('#leaderboard-head'), 'th'),
      leaderboardNote: text('#leaderboard-note'),
      leaderboard: [...document.querySelectorAll('#leaderboard-body tr[data-silo]')].map((tr) => ({
        silo: Number(tr.getAttribute('data-silo')),
        flagged: tr.className === 'flagged',
        cells: texts(tr, 'td'),
        flags: [...tr.querySelectorAll('.flag')].map((f) => f.getAttribute('data-kind')),
      })),
      rounds: [...document.querySelectorAll('#rounds-body tr[data-round]')].map((tr) => ({
        round: Number(tr.getAttribute('data-round')),
        stage: tr.getAttribute('data-stage'),
        survivors: tr.querySelector('.survivors')?.textContent,
        dropped: tr.querySelector('.dropped')?.textContent,
        selected: tr.querySelector('.selected')?.textContent,
        faults: [...tr.querySelectorAll('.fault')].map(
          (f) => `${f.textContent} (${f.getAttribute('title')})`,
        ),
        chips: [...tr.querySelectorAll('.stage')].map((s) => `${s.className.slice(6)}:${s.textContent}`),
      })),
      slots: [...document.querySelectorAll('#charts .chart')].map(
        (slot) => `${slot.getAttribute('data-scheme')}/${slot.getAttribute('data-kind')}`,
      ),
      charts: (window.fedscoreDashboard?.charts ?? []).map(({ scheme, kind, view }, k) => {
        // The data marks Vega drew (legends aside): each line's items and each point.
        const lines: (Row & { defined: boolean })[] = [];
        const points: (Row & { y: number })[] = [];
        const walk = (node: SceneNode) => {
          for (const item of node.items ?? []) {
            if (node.role === 'mark' && item.datum) {
              const { round, silo, score } = item.datum;
              if (node.marktype === 'line')
                lines.push({ round, silo, score, defined: item.defined !== false });
              if (node.marktype === 'symbol') points.push({ round, silo, score, y: item.y });
            }
            walk(item);
          }
        };
        walk(view.scenegraph().root);
        const slot = [...document.querySelectorAll('#charts .chart')][k] ?? null;
        return {
          scheme,
          kind,
          slot: slot && `${slot.getAttribute('data-scheme')}/${slot.getAttribute('data-kind')}`,
          rows: view.data('scores').map(({ round, silo, score }) => ({ round, silo, score })),
          lines,
          points,
          // …and what the SVG in the page holds.
          svgLines: [...(slot?.querySelectorAll('svg g.mark-line.role-mark path') ?? [])].length,
          svgPoints: [...(slot?.querySelectorAll('svg g.mark-symbol.role-mark path') ?? [])].length,
          axisLabels: texts(slot, 'svg g.role-axis-label text'),
          axisTitles: texts(slot, 'svg g.role-axis-title text'),
        };
      }),
      injected: document.querySelector('main img, main b') !== null || 'pwned' in window,
    };
  });
}

describe('dashboard in headless Chromium', () => {
  let h: Harness;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let profile: string;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) return; // the test fails with the reason, it is not skipped
    h = await harness({ clock: new Clock(Date.now()), app: { viewerToken: VIEWER } });
    const body = { ...consortiumBody(h.keys, CID, 3), model: { name: HOSTILE, parameters: INITIAL.length } };
    const created = await adminInject(h, 'POST', '/v1/consortia', body);
    if (created.statusCode !== 201) throw new Error(`create: ${created.body}`);
    await adminInject(h, 'PUT', `/v1/consortia/${CID}/model`, f32bytes(INITIAL));
    base = await h.app.listen({ host: '127.0.0.1', port: 0 });
    profile = mkdtempSync(join(tmpdir(), 'fedscore-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1280, height: 900 },
    });
    page = await context.newPage();
    await page.addInitScript(RECORD_CSP_VIOLATIONS);
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await h?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  test('shows the consortium, follows a running round live, and charts every silo’s scores', async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `the dashboard test needs Chromium at ${CHROMIUM} (Debian: apt-get install -y chromium; ` +
          '.ci/run installs it), or FEDSCORE_CHROMIUM=<path>',
      );
    // Before any round. The token comes in the fragment (never sent to the server) and leaves the URL.
    await page.goto(`${base}/dashboard/${CID}#token=${VIEWER}`);
    await page.waitForFunction(() => document.body.dataset.updates === '1');
    expect(page.url()).toBe(`${base}/dashboard/${CID}`);
    let s = await pageState(page);
    expect(s).toMatchObject({
      title: `${CID} — fedscore dashboard`,
      cid: CID,
      silos: '4',
      threshold: '3',
      secureAggregation: 'fedscore',
    });
    expect(s.model).toBe(`${HOSTILE} (d = ${INITIAL.length})`); // shown as text …
    expect(s.injected).toBe(false); // … not parsed as markup
    expect(s.schemes).toBe(SCHEMES.join(', '));
    // n_C, the minimum threshold and the schedule; no weak-threshold warning (t is the minimum).
    expect(s).toMatchObject({
      corrupt: '1',
      minimum: '3 = ⌊(n + n_C)/2⌋ + 1',
      schedule: 'rounds opened by the operator',
      weak: null,
    });
    expect(s.rounds).toEqual([]);
    // The leaderboard is the page's first section, empty until a round is scored.
    expect(s.firstSection).toBe('leaderboard');
    expect(s.leaderboardNote).toBe('no scored round yet');
    expect(s.leaderboard).toEqual([]);
    expect(await page.textContent('#rounds-body')).toBe('no round yet');
    expect(await page.textContent('#scores-note')).toBe('no scored round yet');
    expect(s.slots).toEqual([]);
    expect(s.charts).toEqual([]);
    expect(s.live).toBe('false');

    // Round 1, all four silos; round 2 opened and stopped while it waits for masked inputs.
    await step(h, 1, await openRound(h, 1), 0, STEPS.length);
    await report(h, 1);
    const round2 = await openRound(h, 2);
    await step(h, 2, round2, 0, 1);
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.updates === '1');
    s = await pageState(page);
    expect(s.live).toBe('true');
    expect(await page.textContent('#status')).toMatch(/^round 2 running — live/);
    expect(s.rounds.map((r) => [r.round, r.stage])).toEqual([
      [2, 'mask'],
      [1, 'scored'],
    ]);
    expect(s.rounds[0]!.chips.slice(0, 2)).toEqual(['done:advertise 4/4', 'done:share 4/4']);
    expect(s.rounds[0]!.chips[2]).toMatch(/^current:mask · \d+ s left$/);
    expect(s.rounds[0]!.chips.slice(3)).toEqual([':consistency', ':unmask', ':reporting', ':scored']);
    expect(s.rounds[1]!.chips).toEqual([
      'done:advertise 4/4',
      'done:share 4/4',
      'done:mask 4/4',
      'done:consistency 4/4',
      'done:unmask 4/4',
      'done:reporting',
      'done:scored',
    ]);
    expect(s.rounds[1]).toMatchObject({ survivors: '4/4', dropped: 'none' });
    expect(s.charts).toHaveLength(2 * SCHEMES.length);
    expect(s.charts.every((c) => c.rows.length === 4 && c.svgLines === 4)).toBe(true); // round 1
    expect(s.leaderboardNote).toBe(
      'headline: payout weight, summed over the scored rounds (to round 1); rank 1 contributed most; "2–3" is a near-tie (95 % bootstrap over rounds); share = fraction of the reward; the "Σ scheme" columns are other schemes’ summed scores for comparison, not a ranking',
    );
    expect(s.leaderboard.map((e) => e.silo).sort()).toEqual([0, 1, 2, 3]);
    // After one round the cumulative headline is that round's (cells: rank, silo, headline Σ,
    // interval, share, last round, …); shares are percentages of the reward.
    expect(s.leaderboard.every((e) => e.cells[2] === e.cells[5])).toBe(true);
    expect(s.leaderboard.every((e) => / %$/.test(e.cells[4]!))).toBe(true);

    // Round 2 finishes without silo 3 (it vanished after ShareKeys): the page follows without a reload.
    await step(h, 2, round2, 1, STEPS.length, [3]);
    await report(h, 2);
    await page.waitForFunction(
      () =>
        document.querySelector('#rounds-body tr[data-round="2"]')?.getAttribute('data-stage') === 'scored' &&
        document.body.dataset.live === 'false', // set once that refresh has drawn its charts
      undefined,
      { timeout: 15_000 },
    );
    s = await pageState(page);
    expect(s.live).toBe('false');
    expect(s.rounds[0]).toMatchObject({ round: 2, stage: 'scored', survivors: '3/4', dropped: '3' });
    expect(s.rounds.map((r) => [r.selected, r.faults])).toEqual([
      ['all', []],
      ['all', []],
    ]);
    expect(s.rounds[0]!.chips).toEqual([
      'done:advertise 4/4',
      'done:share 4/4',
      'done:mask 3/4',
      'done:consistency 3/4',
      'done:unmask 3/4',
      'done:reporting',
      'done:scored',
    ]);

    // Charts: per scheme, a per-round and a cumulative chart, read back from their Vega views and
    // SVG: one line per silo, whose points are the published scores.
    const published = (await adminInject(h, 'GET', `/v1/consortia/${CID}/scores`)).json();
    expect(published.rounds.map((r: { round: number }) => r.round)).toEqual([1, 2]);
    expect(s.charts.map((c) => `${c.scheme}/${c.kind}`)).toEqual(
      SCHEMES.flatMap((m) => [`${m}/round`, `${m}/cumulative`]),
    );
    for (const c of s.charts) {
      expect(c.slot).toBe(`${c.scheme}/${c.kind}`); // drawn under its own heading
      const expected = [0, 1, 2, 3].flatMap((silo) => {
        const own: (number | null)[] = published.rounds.map(
          (r: { schemes: Record<string, (number | null)[]> }) => r.schemes[c.scheme]![silo],
        );
        let sum = 0;
        return own.map((score, k) => {
          sum += score ?? 0;
          return { round: k + 1, silo, score: c.kind === 'round' ? score : sum };
        });
      });
      expect(c.rows).toEqual(expected);
      if (c.kind === 'cumulative')
        expect(c.rows.filter((r) => r.round === 2).map((r) => r.score)).toEqual(
          published.cumulative[c.scheme],
        );
      // The dropout has no round-2 score: a gap in the per-round line, no point.
      const drawnScores = expected.filter((r) => r.score !== null);
      expect(c.kind === 'round').toBe(drawnScores.length === 7);
      expect(c.points.map(({ y: _, ...p }) => p)).toEqual(drawnScores);
      expect([...new Set(c.lines.map((l) => l.silo))]).toEqual([0, 1, 2, 3]);
      expect(c.lines.map(({ defined: _, ...l }) => l)).toEqual(expected);
      expect(c.lines.filter((l) => !l.defined).map((l) => [l.silo, l.round])).toEqual(
        c.kind === 'round' ? [[3, 2]] : [],
      );
      expect(c.svgLines).toBe(4);
      expect(c.svgPoints).toBe(drawnScores.length);
      expect(c.axisLabels).toEqual(expect.arrayContaining(['1', '2']));
      expect(c.axisTitles).toEqual(['round', 'score']);
      // The drawing follows the values: a larger score is drawn higher (smaller y).
      for (const a of c.points)
        for (const b of c.points) if (a.score! > b.score! + 1e-12) expect(a.y).toBeLessThan(b.y);
    }
    expect(await page.textContent('#scores-note')).toBe('2 scored rounds; one line per silo');
    expect(s.injected).toBe(false);

    // The leaderboard, first on the page and above the fold: rank, name, headline Σ and round 2,
    // every published scheme's sum, flags — the entries of leaderboardOfPublished, as `fedscore
    // client` prints them; the headline Σ is the sum of each round's EE-median weights.
    const board = leaderboardOfPublished(
      [0, 1, 2, 3].map((i) => `silo-${i}`),
      published.rounds,
    );
    const fmt = (x: number | null) =>
      x === null
        ? '–'
        : x === 0
          ? '0'
          : Math.abs(x) >= 1e4 || Math.abs(x) < 1e-3
            ? x.toExponential(2)
            : String(Number(x.toPrecision(4)));
    expect(s.firstSection).toBe('leaderboard');
    expect(s.leaderboardHead).toEqual([
      'rank',
      'silo',
      'headline Σ',
      '95 % interval',
      'share',
      'round 2',
      ...SCHEMES.map((m) => `Σ ${m}`),
      'flags',
    ]);
    expect(s.leaderboard.map((e) => e.silo)).toEqual(board.map((e) => e.silo));
    for (const [k, e] of board.entries()) {
      const row = s.leaderboard[k]!;
      const perRound = published.rounds.map(
        (r: Parameters<typeof leaderboardOfPublished>[1][number]) =>
          headlineOfRound(
            {
              round: r.round,
              utilities: { ...r.utilities, withOnly: r.withOnly, without: r.without },
              scores: r.schemes,
              scored: r.silos,
            },
            4,
            'initialModel',
          )[e.silo] ?? 0,
      );
      expect(e.headline).toBeCloseTo(perRound[0]! + perRound[1]!, 12);
      const rank =
        e.rankRange && e.rankRange[0] !== e.rankRange[1]
          ? `${e.rankRange[0]}–${e.rankRange[1]}`
          : String(e.rank);
      expect(row.cells.slice(0, 3)).toEqual([rank, e.name, fmt(e.headline)]);
      expect(row.cells[5]).toBe(fmt(e.lastRound));
      expect(row.cells.slice(6, 6 + SCHEMES.length)).toEqual(
        SCHEMES.map((m) => fmt(published.cumulative[m][e.silo])),
      );
      expect(row.flags).toEqual(e.flags.map((f) => f.kind));
      expect(row.flagged).toBe(e.flags.length > 0);
    }
    // Ranks follow the headline, highest first.
    for (let k = 1; k < board.length; k++)
      expect(board[k]!.headline).toBeLessThanOrEqual(board[k - 1]!.headline);
    // Silo 3 vanished in round 2: no score in the last round, flagged for its missing report.
    const dropout = s.leaderboard.find((e) => e.silo === 3)!;
    expect(dropout.cells[5]).toBe('–');
    expect(dropout.flags).toEqual(['missing-reports']);
    expect(dropout.cells.at(-1)).toBe(
      'missing-reports: no report in 1 of the 2 round(s) it was selected for (round 2)',
    );
    expect(s.leaderboard.filter((e) => e.silo !== 3).every((e) => e.flags.length === 0)).toBe(true);
    const box = await page.locator('#leaderboard').boundingBox();
    expect(box!.y + box!.height).toBeLessThanOrEqual(900); // above the fold of the 1280×900 viewport

    // Faults the server recorded with a round (rounds.faults: bad shares, dealing, corrections —
    // recorded by the protocol server, test/security/) are shown with the silo that sent them.
    const faults = [
      { silo: 2, code: 'BAD_SHARE', detail: 'share of silo 0 from silo 2 does not verify' },
      { silo: 1, code: 'BAD_CORRECTION', detail: 'correction of silo 1 replaced' },
    ];
    await h.store.db
      .updateTable('rounds')
      .set({ faults: JSON.stringify(faults) })
      .where('consortium', '=', CID)
      .where('round', '=', 2)
      .execute();
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.updates === '1');
    s = await pageState(page);
    expect(s.rounds[0]!.faults).toEqual([
      'silo 2: BAD_SHARE (share of silo 0 from silo 2 does not verify)',
      'silo 1: BAD_CORRECTION (correction of silo 1 replaced)',
    ]);
    expect(s.rounds[1]!.faults).toEqual([]);

    // Round 3: only two silos advertise (t = 3), so the round aborts at the advertise deadline.
    await adminInject(h, 'POST', `/v1/consortia/${CID}/rounds`);
    for (const i of [0, 1]) await new Silo(h, CID, 3, i, 3).start();
    h.clock.advance(10 * 60_000);
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.updates === '1');
    s = await pageState(page);
    expect(s.rounds[0]).toMatchObject({ round: 3, stage: 'aborted', survivors: '–', dropped: '–' });
    expect(s.rounds[0]!.chips).toEqual([
      'failed:aborted (BELOW_THRESHOLD)',
      ':share',
      ':mask',
      ':consistency',
      ':unmask',
      ':reporting',
      ':scored',
    ]);
    expect(s.live).toBe('false');
    expect(s.charts).toHaveLength(2 * SCHEMES.length); // an aborted round has no scores
    expect(s.charts.every((c) => c.rows.length === 8)).toBe(true);
    expect(await page.textContent('#scores-note')).toBe('2 scored rounds; one line per silo');

    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    // FEDSCORE_SHOTS=<dir> (scripts/screenshots.sh): the first screen at 1280×800 and the whole page.
    const shots = process.env.FEDSCORE_SHOTS;
    if (shots) {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.screenshot({ path: join(shots, 'dashboard-fold.png') });
      await page.screenshot({ path: join(shots, 'dashboard-full.png'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    expect(problems).toEqual([]);
    // The page ran under its CSP without a violation — and the CSP is in force: eval is refused,
    // and reported. (The probe runs from a timer: code that page.evaluate runs directly is exempt.)
    expect(await page.evaluate(() => window.cspViolations)).toEqual([]);
    await page.evaluate(() =>
      setTimeout(() => {
        try {
          document.body.dataset.probe = String(new Function('return 1')());
        } catch (e) {
          document.body.dataset.probe = (e as Error).name;
        }
      }, 0),
    );
    await page.waitForFunction(() => document.body.dataset.probe !== undefined);
    expect(await page.evaluate(() => document.body.dataset.probe)).toBe('EvalError');
    expect(await page.evaluate(() => window.cspViolations)).toEqual(['script-src eval']);
  }, 120_000);

  test('shows the weak-threshold opt-in, n_C and the minimum threshold, and the schedule "round r of R"', async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`the dashboard test needs Chromium at ${CHROMIUM}`);
    // n = 4 with n_C = 2: the minimum is ⌊6/2⌋ + 1 = 4; t = 3 only by the explicit opt-in.
    const weak = {
      ...consortiumBody(h.keys, 'weak', 3),
      corruptSilos: 2,
      allowWeakThreshold: true,
      rounds: 5,
      strategy: { name: 'score-weighted', parameters: { score: 'ee' } },
    };
    const created = await adminInject(h, 'POST', '/v1/consortia', weak);
    expect(created.statusCode, created.body).toBe(201);
    await page.goto(`${base}/dashboard/weak#token=${VIEWER}`);
    await page.waitForFunction(() => document.body.dataset.updates === '1');
    const s = await pageState(page);
    expect(s).toMatchObject({
      threshold: '3',
      corrupt: '2',
      minimum: '4 = ⌊(n + n_C)/2⌋ + 1',
      schedule: 'round 0 of 5',
      weak: 'Weak threshold (opted in): t = 3 is below the minimum 4 for n = 4 silos and n_C = 2 corrupted ones. Rounds are not private against a malicious server colluding with n_C silos.',
    });
    expect(await page.textContent('[data-fact="strategy"]')).toBe('score-weighted');
    // The schedule moves on as rounds open (the service opens them once the model is set).
    await adminInject(h, 'PUT', '/v1/consortia/weak/model', f32bytes(INITIAL));
    await h.app.service.runSchedule();
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.updates === '1');
    expect((await pageState(page)).schedule).toBe('round 1 of 5');
    expect(problems).toEqual([]);
  }, 60_000);

  test('a reports-only consortium: one chip for the aggregation done elsewhere, then reporting, scores and charts', async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`the dashboard test needs Chromium at ${CHROMIUM}`);
    const X = 'ext-dash';
    const created = await adminInject(h, 'POST', '/v1/consortia', {
      ...consortiumBody(h.keys, X, 3),
      utility: { name: 'accuracy' },
      secureAggregation: 'external',
    });
    expect(created.statusCode, created.body).toBe(201);
    const post = (r: number, silo: number, a: number, b: number) =>
      siloInject(
        h,
        silo,
        'POST',
        `/v1/consortia/${X}/rounds/${r}/reports`,
        signedReport(X, r, silo, a, b, h.keys[silo]!),
      );
    expect(
      (await adminInject(h, 'POST', `/v1/consortia/${X}/rounds/1/utilities`, { full: 0.8, empty: 0.3 }))
        .statusCode,
    ).toBe(201);
    for (const i of [0, 1, 2])
      expect((await post(1, i, 0.5 + 0.05 * i, 0.7 - 0.05 * i)).statusCode).toBe(201);
    const p = await context.newPage();
    await p.addInitScript(RECORD_CSP_VIOLATIONS);
    const errors: string[] = [];
    p.on('pageerror', (e) => errors.push(e.message));
    await p.goto(`${base}/dashboard/${X}#token=${VIEWER}`);
    await p.waitForFunction(() => document.body.dataset.updates === '1');
    let s = await pageState(p);
    expect(s).toMatchObject({ cid: X, secureAggregation: 'external (reports only)', live: 'true' });
    expect(s.rounds).toHaveLength(1);
    expect(s.rounds[0]!.stage).toBe('reporting');
    expect(s.rounds[0]!.chips[0]).toBe(':aggregated elsewhere');
    expect(s.rounds[0]!.chips[1]).toMatch(/^current:reporting · \d+ s left$/);
    expect(s.rounds[0]!.chips.slice(2)).toEqual([':scored']);
    // The last report scores round 1; round 2 gets one report and the operator closes it.
    expect((await post(1, 3, 0.4, 0.79)).json().stage).toBe('scored');
    expect(
      (await adminInject(h, 'POST', `/v1/consortia/${X}/rounds/2/utilities`, { full: 0.85, empty: 0.8 }))
        .statusCode,
    ).toBe(201);
    expect((await post(2, 1, 0.82, 0.84)).statusCode).toBe(201);
    expect(
      (await adminInject(h, 'POST', `/v1/consortia/${X}/rounds/2/advance`, { stage: 'reporting' })).json()
        .stage,
    ).toBe('closed');
    await p.reload();
    await p.waitForFunction(() => document.body.dataset.updates === '1');
    s = await pageState(p);
    expect(s.rounds.map((r) => [r.round, r.stage, r.chips])).toEqual([
      [2, 'closed', [':aggregated elsewhere', 'failed:closed (TOO_FEW_REPORTS)', ':scored']],
      [1, 'scored', [':aggregated elsewhere', 'done:reporting', 'done:scored']],
    ]);
    expect(s.rounds[1]).toMatchObject({ survivors: '4/4', dropped: 'none' });
    expect(s.charts).toHaveLength(2 * SCHEMES.length);
    expect(s.charts.every((c) => c.rows.length === 4 && c.svgLines === 4)).toBe(true);
    expect(await p.evaluate(() => window.cspViolations)).toEqual([]);
    expect(errors).toEqual([]);
    await p.close();
  }, 60_000);

  test('without a token the page asks for it and reads nothing; a wrong token is refused, the right one opens it', async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`the dashboard test needs Chromium at ${CHROMIUM}`);
    const p = await context.newPage(); // a new tab: its sessionStorage holds no token
    const reads: string[] = [];
    p.on('request', (r) => reads.push(new URL(r.url()).pathname));
    await p.goto(`${base}/dashboard/${CID}`);
    await p.waitForSelector('#login:not([hidden])');
    expect(await p.textContent('#status')).toBe('needs the viewer token');
    expect(reads.filter((u) => u.startsWith('/v1/') || u.endsWith('/charts'))).toEqual([]);
    await p.fill('#token', 'not-the-viewer-token-0123');
    await p.click('#token-form button');
    await p.waitForFunction(() =>
      (document.querySelector('#message')?.textContent ?? '').includes('FEDSCORE_ERR_CREDENTIALS_REQUIRED'),
    );
    expect(await p.isVisible('#login')).toBe(true);
    await p.fill('#token', VIEWER);
    await p.click('#token-form button');
    await p.waitForFunction(() => document.body.dataset.updates === '1');
    expect(await p.isVisible('#login')).toBe(false);
    expect(await p.textContent('[data-fact="silos"]')).toBe('4');
    await p.close();
  }, 60_000);
});
