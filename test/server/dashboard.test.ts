/**
 * The dashboard (routes/dashboard.ts): its HTTP contract through app.inject, then the page itself
 * in real headless Chromium (Debian's `chromium`, driven by playwright-core) against the service
 * listening on 127.0.0.1 while two rounds run through it — the second with a dropout — checking
 * what the page shows: the consortium, each round's stages, and one chart series per silo whose
 * values are the published scores.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signedReport, siloCoalitionModels } from '../../src/fl/private-scoring.js';
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
const SCREENSHOT = join(tmpdir(), 'fedscore-dashboard.png');
const SCHEMES = ['loo', 'ioi', 'fp', 'ee', 'eeMedian'];
/** Shown as the model's name: must appear as text, never as markup. */
const HOSTILE = '<img src=x onerror="window.__pwned=1"><b>toy</b>';

describe('dashboard routes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
    await createConsortium(h);
  });
  afterAll(async () => h.close());

  test('GET /dashboard/:cid is an HTML page with a strict CSP and the escaped id', async () => {
    const r = await h.app.inject({ method: 'GET', url: '/dashboard/c1' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*'; /);
    expect(r.body).toContain('<h1 id="cid">c1</h1>');
    expect(r.body).toContain('<body data-cid="c1">');
    // Nothing external: no script or stylesheet file, no URL but the SVG namespace.
    expect(r.body).not.toMatch(
      /<script[^>]+src=|<link[^>]+href="(?!data:,")|https?:\/\/(?!www\.w3\.org\/2000\/svg')/,
    );
  });

  test('unknown and malformed consortium ids get coded JSON errors', async () => {
    const unknown = await h.app.inject({ method: 'GET', url: '/dashboard/nope' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      code: 'FEDSCORE_ERR_CONSORTIUM_NOT_FOUND',
      message: 'no such consortium: nope',
    });
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

  test('the OpenAPI document lists both pages', async () => {
    const paths = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json().paths;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/dashboard', '/dashboard/{cid}']));
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
    if ((await h.app.inject({ method: 'GET', url })).json().stage !== STAGES_AFTER_ADVERTISE[k])
      h.clock.advance(10 * 60_000);
    for (const s of silos) if (k === 0 || !gone.includes(s.id)) await s.step(STEPS[k]!);
  }
}

/** The survivors submit their signed reports (as src/fl/private-scoring.ts computes them). */
async function report(h: Harness, r: number) {
  const agg = (
    await h.app.inject({ method: 'GET', url: `/v1/consortia/${CID}/rounds/${r}/aggregate` })
  ).json();
  const sum = await h.app.inject({ method: 'GET', url: `/v1/consortia/${CID}/rounds/${r}/aggregate/sum` });
  const weightedSum = new Float64Array(new Uint8Array(sum.rawPayload).buffer);
  const base = await h.app.inject({ method: 'GET', url: `/v1/consortia/${CID}/models/${r - 1}` });
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
declare const document: Node_ & { readonly title: string; readonly body: Node_ };
declare const window: object;

/** What the page shows, read from the DOM. */
function pageState(page: Page) {
  return page.evaluate(() => {
    const text = (s: string) => document.querySelector(s)?.textContent ?? null;
    return {
      title: document.title,
      cid: text('#cid'),
      silos: text('[data-fact="silos"]'),
      threshold: text('[data-fact="threshold t"]'),
      model: text('[data-fact="model"]'),
      schemes: text('[data-fact="schemes"]'),
      message: text('#message'),
      live: document.body.dataset.live,
      rounds: [...document.querySelectorAll('#rounds-body tr[data-round]')].map((tr) => ({
        round: Number(tr.getAttribute('data-round')),
        stage: tr.getAttribute('data-stage'),
        survivors: tr.querySelector('.survivors')?.textContent,
        dropped: tr.querySelector('.dropped')?.textContent,
        chips: [...tr.querySelectorAll('.stage')].map((s) => `${s.className.slice(6)}:${s.textContent}`),
      })),
      charts: [...document.querySelectorAll('svg.chart')].map((svg) => ({
        scheme: svg.getAttribute('data-scheme'),
        kind: svg.getAttribute('data-kind'),
        xLabels: [...svg.querySelectorAll(':scope > text')].map((t) => t.textContent),
        series: [...svg.querySelectorAll('g.series')].map((g) => ({
          silo: Number(g.getAttribute('data-silo')),
          values: JSON.parse(g.getAttribute('data-values') ?? 'null') as (number | null)[],
          dots: [...g.querySelectorAll('circle')].map((c) => Number(c.getAttribute('cy'))),
          hasPath: g.querySelector('path') !== null,
        })),
      })),
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
    h = await harness({ clock: new Clock(Date.now()) });
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
    // Before any round.
    await page.goto(`${base}/dashboard/${CID}`);
    await page.waitForFunction(() => document.body.dataset.updates === '1');
    let s = await pageState(page);
    expect(s).toMatchObject({ title: `${CID} — fedscore dashboard`, cid: CID, silos: '4', threshold: '3' });
    expect(s.model).toBe(`${HOSTILE} (d = ${INITIAL.length})`); // shown as text …
    expect(s.injected).toBe(false); // … not parsed as markup
    expect(s.schemes).toBe(SCHEMES.join(', '));
    expect(s.rounds).toEqual([]);
    expect(await page.textContent('#rounds-body')).toBe('no round yet');
    expect(await page.textContent('#scores-note')).toBe('no scored round yet');
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
    const charts1 = s.charts;
    expect(charts1).toHaveLength(2 * SCHEMES.length);

    // Round 2 finishes without silo 3 (it vanished after ShareKeys): the page follows without a reload.
    await step(h, 2, round2, 1, STEPS.length, [3]);
    await report(h, 2);
    await page.waitForFunction(
      () =>
        document.querySelector('#rounds-body tr[data-round="2"]')?.getAttribute('data-stage') === 'scored',
      undefined,
      { timeout: 15_000 },
    );
    s = await pageState(page);
    expect(s.live).toBe('false');
    expect(s.rounds[0]).toMatchObject({ round: 2, stage: 'scored', survivors: '3/4', dropped: '3' });
    expect(s.rounds[0]!.chips).toEqual([
      'done:advertise 4/4',
      'done:share 4/4',
      'done:mask 3/4',
      'done:consistency 3/4',
      'done:unmask 3/4',
      'done:reporting',
      'done:scored',
    ]);

    // Charts: per scheme, a per-round and a cumulative chart, one series per silo, the published values.
    const published = (await h.app.inject({ method: 'GET', url: `/v1/consortia/${CID}/scores` })).json();
    expect(published.rounds.map((r: { round: number }) => r.round)).toEqual([1, 2]);
    expect(s.charts.map((c) => `${c.scheme}/${c.kind}`)).toEqual(
      SCHEMES.flatMap((m) => [`${m}/round`, `${m}/cumulative`]),
    );
    for (const c of s.charts) {
      expect(c.series.map((x) => x.silo)).toEqual([0, 1, 2, 3]);
      expect(c.xLabels).toEqual(expect.arrayContaining(['1', '2', 'round']));
      for (const { silo, values, dots, hasPath } of c.series) {
        const perRound = published.rounds.map(
          (r: { schemes: Record<string, (number | null)[]> }) => r.schemes[c.scheme!]![silo],
        );
        if (c.kind === 'round') {
          expect(values).toEqual(perRound);
          expect(dots).toHaveLength(perRound.filter((v: number | null) => v !== null).length);
        } else {
          expect(values).toEqual([perRound[0] ?? 0, (perRound[0] ?? 0) + (perRound[1] ?? 0)]);
          expect(values[1]).toBe(published.cumulative[c.scheme!][silo]);
          expect(dots).toHaveLength(2);
        }
        expect(hasPath).toBe(true);
      }
      expect(c.series[3]!.values[1] === null).toBe(c.kind === 'round'); // the dropout has no round-2 score
      // The drawing follows the values: a larger score is drawn higher (smaller y).
      const points = c.series.flatMap((x) =>
        x.values.flatMap((v, k) => (v === null || k !== 0 ? [] : [{ v, y: x.dots[0]! }])),
      );
      for (const a of points) for (const b of points) if (a.v > b.v + 1e-12) expect(a.y).toBeLessThan(b.y);
    }
    expect(await page.textContent('#scores-note')).toBe('2 scored rounds; one line per silo');
    expect(s.injected).toBe(false);

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
    expect(await page.textContent('#scores-note')).toBe('2 scored rounds; one line per silo');

    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(problems).toEqual([]);
  }, 120_000);
});
