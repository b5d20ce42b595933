/**
 * The dashboard's HTML (internal to routes/dashboard.ts): one self-contained page per consortium
 * with inline CSS, inline JavaScript and SVG charts drawn in the browser — no CDN, no external
 * file, so it works on a machine without internet.
 *
 * The page reads the public JSON endpoints `GET /v1/consortia/:cid`, `…/rounds` and `…/scores`
 * and redraws itself every 2 s while a round is running (every 15 s when idle, to notice the next
 * round). The script builds every node with `textContent` / `setAttribute`, never `innerHTML`, so
 * no text from the API (model names, ids, error messages) is parsed as HTML; the only value the
 * server writes into the markup, the consortium id, goes through {@link escapeHtml}. A
 * Content-Security-Policy with the hashes of the inline script and style forbids anything else.
 */
import { createHash } from 'node:crypto';

/** Escapes text for an HTML text node or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const STYLE = `
:root { color-scheme: light; --fg: #1d2430; --muted: #5b6676; --line: #d8dde5; --bg: #f6f7f9;
  --done: #2e7d32; --cur: #1565c0; --bad: #c62828; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); }
header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; padding: 14px 24px;
  background: #fff; border-bottom: 1px solid var(--line); }
header h1 { margin: 0; font-size: 20px; }
header .brand { color: var(--muted); font-weight: 600; }
#status { margin-left: auto; color: var(--muted); }
#status.live::before { content: "● "; color: var(--cur); }
main { padding: 16px 24px 40px; max-width: 1280px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px;
  margin-bottom: 16px; }
h2 { font-size: 16px; margin: 0 0 10px; }
h3 { font-size: 14px; margin: 0 0 6px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.stages { display: flex; gap: 3px; flex-wrap: wrap; }
.stage { padding: 2px 7px; border-radius: 10px; font-size: 12px; border: 1px solid var(--line);
  color: var(--muted); white-space: nowrap; }
.stage.done { background: #e8f5e9; border-color: #a5d6a7; color: var(--done); }
.stage.current { background: #e3f2fd; border-color: #64b5f6; color: var(--cur); font-weight: 600; }
.stage.failed { background: #ffebee; border-color: #ef9a9a; color: var(--bad); font-weight: 600; }
.error { color: var(--bad); }
#message:empty { display: none; }
#message { background: #ffebee; border-color: #ef9a9a; color: var(--bad); }
.scheme { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; margin-bottom: 14px; }
.scheme figure { margin: 0; }
.scheme figcaption { color: var(--muted); font-size: 12px; }
svg.chart { width: 100%; height: auto; background: #fff; }
svg.chart .axis { stroke: #9aa4b2; stroke-width: 1; }
svg.chart .grid { stroke: #eef0f3; stroke-width: 1; }
svg.chart text { font-size: 11px; fill: var(--muted); }
svg.chart .series path { fill: none; stroke-width: 2; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 0 0 10px; padding: 0; list-style: none; }
.legend li { display: flex; align-items: center; gap: 5px; }
.swatch { width: 12px; height: 12px; border-radius: 2px; display: inline-block; }
.muted { color: var(--muted); }
`;

/*
 * The browser script. Plain ES2020 in a string (the project's TypeScript has no DOM types); it
 * contains no backtick and no "${" so it can live in this template literal unchanged.
 */
const SCRIPT = `
'use strict';
(function () {
  var cid = document.body.getAttribute('data-cid');
  var api = '/v1/consortia/' + encodeURIComponent(cid);
  var STAGES = ['advertise', 'share', 'mask', 'consistency', 'unmask', 'reporting', 'scored'];
  var TERMINAL = ['scored', 'closed', 'aborted'];
  var LIVE_MS = 2000, IDLE_MS = 15000;
  var PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
    '#7f7f7f', '#bcbd22', '#17becf'];
  var SVGNS = 'http://www.w3.org/2000/svg';
  var timer = null;

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVGNS, tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function color(i) {
    return i < PALETTE.length ? PALETTE[i] : 'hsl(' + ((i * 137.5) % 360) + ', 60%, 45%)';
  }
  function fmt(x) {
    if (x === null || x === undefined) return '–';
    if (x === 0) return '0';
    var a = Math.abs(x);
    return a >= 1e4 || a < 1e-3 ? x.toExponential(2) : String(Number(x.toPrecision(4)));
  }
  function when(ms) { return new Date(ms).toLocaleString(); }

  async function getJson(path) {
    var res = await fetch(api + path, { headers: { accept: 'application/json' }, cache: 'no-store' });
    var body = await res.json().catch(function () { return null; });
    if (!res.ok) {
      var what = body && body.code ? body.code + ': ' + body.message : 'HTTP ' + res.status;
      throw new Error('GET ' + api + path + ' → ' + what);
    }
    return body;
  }

  function renderConsortium(c) {
    var dl = $('consortium-facts');
    dl.replaceChildren();
    var facts = [
      ['silos', c.participants.length],
      ['threshold t', c.threshold],
      ['model', c.model.name + ' (d = ' + c.model.parameters.toLocaleString() + ')'],
      ['schemes', c.schemes.join(', ')],
      ['coalitions', c.convention],
      ['test-set digest', c.testSetDigest.slice(0, 16) + '…'],
      ['created', when(c.createdAt)],
    ];
    facts.forEach(function (f) {
      dl.append(el('dt', null, f[0]), el('dd', { 'data-fact': f[0] }, f[1]));
    });
  }

  function stageCells(r, n) {
    var box = el('div', { class: 'stages' });
    var at = STAGES.indexOf(r.stage);
    var failed = r.stage === 'aborted' || r.stage === 'closed';
    var reached = failed ? r.sets.length : at;
    STAGES.forEach(function (s, k) {
      var cls = 'stage', label = s;
      if (k < 5 && k < r.sets.length) {
        cls += ' done';
        label += ' ' + r.sets[k].length + '/' + n;
      } else if (k < reached || (s === 'scored' && r.stage === 'scored')) cls += ' done';
      else if (!failed && k === at) {
        cls += ' current';
        var left = Math.max(0, Math.round((r.deadline - Date.now()) / 1000));
        if (s !== 'scored') label += ' · ' + left + ' s left';
      } else if (failed && k === reached) {
        cls += ' failed';
        label = r.stage + (r.error ? ' (' + r.error.code + ')' : '');
      }
      box.append(el('span', { class: cls, 'data-stage': s }, label));
    });
    return box;
  }

  function renderRounds(rounds, n) {
    var body = $('rounds-body');
    body.replaceChildren();
    if (rounds.length === 0) {
      var empty = el('tr');
      empty.append(el('td', { colspan: 6, class: 'muted' }, 'no round yet'));
      body.append(empty);
    }
    rounds.slice().reverse().forEach(function (r) {
      var tr = el('tr', { 'data-round': r.round, 'data-stage': r.stage });
      var st = el('td');
      st.append(stageCells(r, n));
      tr.append(
        el('td', { class: 'num' }, r.round),
        el('td', null, r.stage),
        st,
        el('td', { class: 'survivors' }, r.survivors ? r.survivors.length + '/' + n : '–'),
        el('td', { class: 'dropped' }, r.dropped ? (r.dropped.length ? r.dropped.join(', ') : 'none') : '–'),
        el('td', { class: 'num' }, r.utilities ? fmt(r.utilities.full) + ' / ' + fmt(r.utilities.empty) : '–'),
      );
      body.append(tr);
    });
  }

  /** One line chart: x = scored rounds, one series per silo (null values are gaps). */
  function chart(title, kind, scheme, xs, series) {
    var W = 520, H = 240, L = 58, R = 12, T = 12, B = 30;
    var all = [];
    series.forEach(function (s) { s.values.forEach(function (v) { if (v !== null) all.push(v); }); });
    var lo = Math.min.apply(null, all.concat([0])), hi = Math.max.apply(null, all.concat([0]));
    if (hi - lo < 1e-12) { hi += 1; lo -= 1; }
    // Round ticks: a step of 1, 2 or 5 × 10^k, the range widened to whole steps.
    var raw = (hi - lo) / 4, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var stepV = [1, 2, 5, 10].map(function (f) { return f * mag; }).find(function (v) { return v >= raw; });
    lo = Math.floor(lo / stepV + 1e-9) * stepV; hi = Math.ceil(hi / stepV - 1e-9) * stepV;
    var ticks = Math.round((hi - lo) / stepV);
    var x = function (k) { return xs.length === 1 ? L + (W - L - R) / 2 : L + (k * (W - L - R)) / (xs.length - 1); };
    var y = function (v) { return T + ((hi - v) * (H - T - B)) / (hi - lo); };
    var root = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + H, role: 'img',
      'data-scheme': scheme, 'data-kind': kind });
    root.append(svg('title', null, title));
    for (var t = 0; t <= ticks; t++) {
      var v = Number((lo + stepV * t).toPrecision(12));
      root.append(svg('line', { class: 'grid', x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      root.append(svg('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmt(v)));
    }
    if (lo < 0 && hi > 0) root.append(svg('line', { class: 'axis', x1: L, x2: W - R, y1: y(0), y2: y(0) }));
    root.append(svg('line', { class: 'axis', x1: L, x2: L, y1: T, y2: H - B }));
    xs.forEach(function (r, k) {
      root.append(svg('text', { x: x(k), y: H - B + 16, 'text-anchor': 'middle' }, r));
    });
    root.append(svg('text', { x: (L + W - R) / 2, y: H - 2, 'text-anchor': 'middle' }, 'round'));
    series.forEach(function (s) {
      var g = svg('g', { class: 'series', 'data-silo': s.silo, 'data-values': JSON.stringify(s.values),
        stroke: color(s.silo), fill: color(s.silo) });
      g.append(svg('title', null, 'silo ' + s.silo));
      var d = '', pen = false;
      s.values.forEach(function (v, k) {
        if (v === null) { pen = false; return; }
        d += (pen ? 'L' : 'M') + x(k).toFixed(1) + ' ' + y(v).toFixed(1) + ' ';
        pen = true;
      });
      if (d) g.append(svg('path', { d: d.trim() }));
      s.values.forEach(function (v, k) {
        if (v === null) return;
        var dot = svg('circle', { cx: x(k).toFixed(1), cy: y(v).toFixed(1), r: 3 });
        dot.append(svg('title', null, 'silo ' + s.silo + ', round ' + xs[k] + ': ' + fmt(v)));
        g.append(dot);
      });
      root.append(g);
    });
    return root;
  }

  function renderScores(c, scores) {
    var box = $('charts');
    box.replaceChildren();
    var n = c.participants.length;
    var xs = scores.rounds.map(function (r) { return r.round; });
    $('scores-note').textContent = xs.length === 0
      ? 'no scored round yet'
      : xs.length + ' scored round' + (xs.length === 1 ? '' : 's') + '; one line per silo';
    if (xs.length === 0) return;
    var legend = el('ul', { class: 'legend' });
    for (var i = 0; i < n; i++) {
      var li = el('li');
      var sw = el('span', { class: 'swatch' });
      sw.style.background = color(i);
      li.append(sw, document.createTextNode('silo ' + i));
      legend.append(li);
    }
    box.append(legend);
    c.schemes.forEach(function (m) {
      var perRound = [], cumulative = [];
      for (var i = 0; i < n; i++) {
        var acc = 0;
        var own = scores.rounds.map(function (r) { var v = r.schemes[m] ? r.schemes[m][i] : null; return v === undefined ? null : v; });
        perRound.push({ silo: i, values: own });
        cumulative.push({ silo: i, values: own.map(function (v) { acc += v === null ? 0 : v; return acc; }) });
      }
      var sec = el('div', { class: 'scheme', 'data-scheme': m });
      var f1 = el('figure'), f2 = el('figure');
      f1.append(el('h3', null, m + ' — per round'), chart(m + ' per round', 'round', m, xs, perRound),
        el('figcaption', null, 'score of each silo in each scored round (gaps: no report)'));
      f2.append(el('h3', null, m + ' — cumulative'), chart(m + ' cumulative', 'cumulative', m, xs, cumulative),
        el('figcaption', null, 'running sum over the scored rounds (final: ' +
          scores.cumulative[m].map(fmt).join(', ') + ')'));
      sec.append(f1, f2);
      box.append(sec);
    });
  }

  async function refresh() {
    var live = false;
    try {
      var got = await Promise.all([getJson(''), getJson('/rounds'), getJson('/scores')]);
      var c = got[0], rounds = got[1].rounds, scores = got[2];
      renderConsortium(c);
      renderRounds(rounds, c.participants.length);
      renderScores(c, scores);
      var last = rounds[rounds.length - 1];
      live = !!last && TERMINAL.indexOf(last.stage) < 0;
      $('message').textContent = '';
      $('status').textContent = (live ? 'round ' + last.round + ' running — live' : 'idle') +
        ' · updated ' + new Date().toLocaleTimeString();
    } catch (e) {
      $('message').textContent = String(e && e.message ? e.message : e);
      $('status').textContent = 'update failed · ' + new Date().toLocaleTimeString();
    }
    $('status').className = live ? 'live' : '';
    document.body.setAttribute('data-live', String(live));
    document.body.setAttribute('data-updates', String(Number(document.body.getAttribute('data-updates') || 0) + 1));
    timer = setTimeout(refresh, live ? LIVE_MS : IDLE_MS);
  }
  refresh();
})();
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The page's Content-Security-Policy: only its own inline script and style, fetches to itself. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The document start of both pages, up to `<body>`; `title` must already be escaped. */
function pageHead(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${title}</title>
<style>${STYLE}</style>
</head>`;
}

/** The dashboard of consortium `cid` (any string; it is escaped). */
export function dashboardPage(cid: string): string {
  const id = escapeHtml(cid);
  return `${pageHead(`${id} — fedscore dashboard`)}
<body data-cid="${id}">
<header><span class="brand">fedscore</span><h1 id="cid">${id}</h1><span id="status">loading…</span></header>
<main>
<section id="message" role="alert"></section>
<section id="consortium"><h2>Consortium</h2><dl id="consortium-facts"></dl></section>
<section id="rounds"><h2>Rounds</h2>
<table><thead><tr><th class="num">round</th><th>stage</th><th>progress (|U_k| / n per closed stage)</th>
<th>survivors</th><th>dropped</th><th class="num">v(M) / v(M0)</th></tr></thead>
<tbody id="rounds-body"></tbody></table></section>
<section id="scores"><h2>Scores</h2><p id="scores-note" class="muted"></p><div id="charts"></div></section>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The index: a form that opens a consortium's dashboard (no script). */
export function dashboardIndex(): string {
  return `${pageHead('fedscore dashboard')}
<body>
<header><span class="brand">fedscore</span><h1>dashboard</h1></header>
<main><section><h2>Open a consortium</h2>
<form method="get" action="/dashboard"><label>consortium id
<input name="cid" required pattern="[a-z0-9][a-z0-9\\-]{0,62}" autofocus></label>
<button type="submit">open</button></form></section></main>
</body>
</html>
`;
}
