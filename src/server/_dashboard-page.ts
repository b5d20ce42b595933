/**
 * The dashboard's HTML (internal to routes/dashboard.ts): one page per consortium with inline CSS
 * and JavaScript, and charts drawn in the browser by vega-embed from the Vega-Lite specifications
 * of src/report/charts.ts (the experiment report's charts module) — vega, vega-lite and vega-embed are
 * served by the dashboard itself from node_modules (`/dashboard/_assets/`), no CDN, so it works
 * on a machine without internet.
 *
 * The page opens with the leaderboard (every silo's rank, headline score cumulative and in the last
 * scored round, the other schemes, flags with reasons), then the consortium, the rounds and the
 * charts. It reads the JSON endpoints `GET /v1/consortia/:cid` and `…/rounds` and its leaderboard
 * and charts `GET /dashboard/:cid/charts` with `authorization: Bearer <token>` — the viewer token (or the
 * admin token) — and redraws itself every 2 s while a round is running (every 15 s when idle, to
 * notice the next round). The page itself holds no data and is public. The operator opens
 * `/dashboard/<id>#token=<viewer token>`: a URL fragment never reaches a server or a Referer; the
 * script takes the token from it, removes it from the address bar and history
 * (`history.replaceState`) and keeps it in memory and in the tab's sessionStorage (so a reload
 * keeps working; closing the tab forgets it). Without a token, or when it is refused, the page asks
 * for it in a password field (handled by the script, never submitted anywhere). The script builds every node with `textContent` /
 * `setAttribute`, never `innerHTML`, so no text from the API (model names, ids, error messages) is
 * parsed as HTML; the only value the server writes into the markup, the consortium id, goes
 * through {@link escapeHtml}; Vega draws chart text as SVG text. A Content-Security-Policy allows
 * scripts from the page's own origin and its inline script (by hash), its inline style (by hash),
 * and nothing else — in particular no 'unsafe-eval': the page has vega-embed parse expressions to
 * an AST that the bundled vega-interpreter evaluates (`ast: true`), instead of compiling them with
 * `Function`.
 */
import { createHash } from 'node:crypto';
import { ASSET_NAMES } from './_dashboard-assets.js';
import { PARTICIPATION_SCRIPT } from './_dashboard-participation.js';

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
#message:empty, #weak-threshold[hidden] { display: none; }
#login form { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
#message, #weak-threshold { background: #ffebee; border-color: #ef9a9a; color: var(--bad); }
.fault { color: var(--bad); }
.scheme { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; margin-bottom: 14px; }
.scheme figure { margin: 0; }
.scheme figcaption { color: var(--muted); font-size: 12px; }
.chart { min-height: 240px; }
.chart svg { max-width: 100%; height: auto; }
.muted { color: var(--muted); }
#leaderboard td.flags { font-size: 13px; }
#leaderboard th, #leaderboard td.name { white-space: nowrap; }
#leaderboard tr.flagged td.name { color: var(--bad); font-weight: 600; }
#leaderboard .flag { display: block; }
#leaderboard .flag .kind { color: var(--bad); font-weight: 600; }
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
  // vega-embed: SVG, no actions menu (its editor link leaves the page), no injected <style> (the
  // CSP allows only the page's own), Vega's own tooltips (a title attribute), and expressions
  // evaluated by the bundled vega-interpreter instead of compiled with Function (no unsafe-eval).
  var EMBED = { mode: 'vega-lite', renderer: 'svg', actions: false, defaultStyle: false, tooltip: false,
    ast: true };
  var drawn = {}; // 'scheme/kind' → { json, result } of the chart on the page
  // The drawn charts' Vega views, in page order, for tests and the browser console.
  window.fedscoreDashboard = { charts: [] };
  var timer = null;
${PARTICIPATION_SCRIPT}
  // The viewer token: from #token=… (then removed from the URL), else this tab's sessionStorage.
  var TOKEN_KEY = 'fedscore-dashboard-token:' + cid;
  var token = null;
  var fromHash = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (fromHash) {
    token = decodeURIComponent(fromHash[1]);
    try { sessionStorage.setItem(TOKEN_KEY, token); } catch (e) { /* storage disabled: memory only */ }
    history.replaceState(null, '', location.pathname + location.search);
  } else {
    try { token = sessionStorage.getItem(TOKEN_KEY); } catch (e) { token = null; }
  }

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  // Numbers as a person reads them (issue 37): 4 significant digits; a value within rounding
  // noise of 0 (|x| < 1e-12, e.g. 2.78e-17 left by a sum of differences) is 0, not an exponent.
  function fmt(x) {
    if (x === null || x === undefined) return '–';
    var a = Math.abs(x);
    if (a < 1e-12) return '0';
    return a >= 1e4 || a < 1e-3 ? x.toExponential(2) : String(Number(x.toPrecision(4)));
  }
  function when(ms) { return new Date(ms).toLocaleString(); }

  function Refused(message) { this.message = message; }

  async function getJson(url) {
    var res = await fetch(url, {
      headers: { accept: 'application/json', authorization: 'Bearer ' + token },
      cache: 'no-store',
      credentials: 'omit',
    });
    var body = await res.json().catch(function () { return null; });
    if (!res.ok) {
      var what = body && body.code ? body.code + ': ' + body.message : 'HTTP ' + res.status;
      if (res.status === 401 || res.status === 403) throw new Refused('GET ' + url + ' → ' + what);
      throw new Error('GET ' + url + ' → ' + what);
    }
    return body;
  }

  /** Asks for the token (the form is handled here; it is never submitted to a server). */
  function askToken(why) {
    $('login').hidden = false;
    $('status').textContent = 'needs the viewer token';
    $('message').textContent = why || '';
    document.body.setAttribute('data-live', 'false');
  }
  $('token-form').addEventListener('submit', function (e) {
    e.preventDefault();
    token = $('token').value;
    $('token').value = '';
    try { sessionStorage.setItem(TOKEN_KEY, token); } catch (err) { /* memory only */ }
    $('login').hidden = true;
    clearTimeout(timer);
    refresh();
  });

  function renderConsortium(c, rounds) {
    var dl = $('consortium-facts');
    dl.replaceChildren();
    var last = rounds[rounds.length - 1];
    var facts = [
      ['silos', c.participants.length],
      ['secure aggregation', c.secureAggregation === 'external' ? 'external (reports only)' : 'fedscore'],
      ['threshold t', c.threshold],
      ['corrupted silos tolerated n_C', c.corruptSilos],
      ['minimum threshold', c.minimumThreshold + ' = ⌊(n + n_C)/2⌋ + 1'],
      ['schedule', c.rounds === undefined ? 'rounds opened by the operator'
        : 'round ' + (last ? last.round : 0) + ' of ' + c.rounds +
          (last && last.round >= c.rounds && TERMINAL.indexOf(last.stage) >= 0 ? ' (done)' : '')],
      ['strategy', c.strategy ? c.strategy.name : 'every silo, example-count weights'],
      ['model', c.model.name + ' (d = ' + c.model.parameters.toLocaleString() + ')'],
      ['schemes', c.schemes.join(', ')],
      ['coalitions', c.convention],
      ['empty coalition', c.emptyCoalition === 'zero' ? 'v(∅) = 0' : 'v(∅) = v(M0)'],
      ['test-set digest', c.testSetDigest.slice(0, 16) + '…'],
      ['created', when(c.createdAt)],
    ];
    facts.forEach(function (f) {
      dl.append(el('dt', null, f[0]), el('dd', { 'data-fact': f[0] }, f[1]));
    });
    // The weak-threshold opt-in (allowWeakThreshold) is shown, never hidden in the facts.
    var weak = $('weak-threshold');
    weak.hidden = !c.weakThreshold;
    weak.textContent = c.weakThreshold
      ? 'Weak threshold (opted in): t = ' + c.threshold + ' is below the minimum ' + c.minimumThreshold +
        ' for n = ' + c.participants.length + ' silos and n_C = ' + c.corruptSilos +
        ' corrupted ones. Rounds are not private against a malicious server colluding with n_C silos.'
      : '';
  }

  /** A reports-only consortium's rounds skip the protocol stages: one chip says so. */
  function stageCells(r, n, external) {
    var box = el('div', { class: 'stages' });
    var at = STAGES.indexOf(r.stage);
    var failed = r.stage === 'aborted' || r.stage === 'closed';
    var reached = failed ? (external ? 5 : r.sets.length) : at;
    var who = participation(r, n);
    STAGES.forEach(function (s, k) {
      if (external && k < 5) {
        if (k === 0) box.append(el('span', { class: 'stage', 'data-stage': 'external' }, 'aggregated elsewhere'));
        return;
      }
      var cls = 'stage', label = s;
      if (k < 5 && k < r.sets.length) {
        cls += ' done';
        label += ' ' + who.stages[k];
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

  /** The faults the server recorded in a round, each naming the silo that sent the bad data. */
  function faultCell(faults) {
    var td = el('td', { class: 'faults' });
    if (faults.length === 0) { td.textContent = 'none'; return td; }
    faults.forEach(function (f) {
      td.append(el('div', { class: 'fault', title: f.detail }, 'silo ' + f.silo + ': ' + f.code));
    });
    return td;
  }

  function renderRounds(rounds, n, external) {
    var body = $('rounds-body');
    body.replaceChildren();
    if (rounds.length === 0) {
      var empty = el('tr');
      empty.append(el('td', { colspan: 8, class: 'muted' }, 'no round yet'));
      body.append(empty);
    }
    rounds.slice().reverse().forEach(function (r) {
      var tr = el('tr', { 'data-round': r.round, 'data-stage': r.stage });
      var st = el('td');
      st.append(stageCells(r, n, external));
      tr.append(
        el('td', { class: 'num' }, r.round),
        el('td', null, r.stage),
        st,
        el('td', { class: 'survivors' }, participation(r, n).survivors),
        el('td', { class: 'dropped' }, r.dropped ? (r.dropped.length ? r.dropped.join(', ') : 'none') : '–'),
        el('td', { class: 'num' }, r.utilities ? fmt(r.utilities.full) + ' / ' + fmt(r.utilities.empty) : '–'),
        el('td', { class: 'selected' }, participation(r, n).selected),
        faultCell(r.faults || []),
      );
      body.append(tr);
    });
  }

  /**
   * The leaderboard (src/records/leaderboard.ts, as the service computes it from the published
   * rounds): one row per silo in rank order — rank, name, headline score summed over the scored
   * rounds and in the last one, every published scheme's cumulative score, flags with reasons.
   */
  function renderLeaderboard(board) {
    var entries = board.entries;
    var columns = [];
    entries.forEach(function (e) {
      Object.keys(e.scores).forEach(function (m) { if (columns.indexOf(m) < 0) columns.push(m); });
    });
    $('leaderboard-note').textContent = board.round === null
      ? 'no scored round yet'
      : 'headline: ' + board.headline + ' weight, summed over the scored rounds (to round ' + board.round +
        '); rank 1 contributed most; "2–3" is a near-tie (95 % bootstrap over rounds); share = fraction of the reward; the "Σ scheme" columns are other schemes\u2019 summed scores for comparison, not a ranking';
    var head = $('leaderboard-head');
    head.replaceChildren();
    var tr = el('tr');
    tr.append(el('th', { class: 'num' }, 'rank'), el('th', null, 'silo'),
      el('th', { class: 'num' }, 'headline Σ'), el('th', { class: 'num' }, '95 % interval'),
      el('th', { class: 'num' }, 'share'),
      el('th', { class: 'num' }, board.round === null ? 'last round' : 'round ' + board.round));
    columns.forEach(function (m) { tr.append(el('th', { class: 'num' }, 'Σ ' + m)); });
    tr.append(el('th', null, 'flags'));
    head.append(tr);
    var body = $('leaderboard-body');
    body.replaceChildren();
    if (entries.length === 0) {
      var empty = el('tr');
      empty.append(el('td', { colspan: 7 + columns.length, class: 'muted' }, 'no scored round yet'));
      body.append(empty);
      return;
    }
    entries.forEach(function (e) {
      var row = el('tr', { 'data-silo': e.silo, class: e.flags.length ? 'flagged' : '' });
      var rr = e.rankRange;
      var rankText = rr && rr[0] !== rr[1] ? rr[0] + '\u2013' + rr[1] : String(e.rank);
      var share = e.share === undefined ? '\u2013' : e.share === null ? 'never selected'
        : (100 * e.share).toFixed(1) + ' %';
      var iv = e.interval ? '[' + fmt(e.interval[0]) + ', ' + fmt(e.interval[1]) + ']' : '\u2013';
      row.append(el('td', { class: 'num rank' }, rankText), el('td', { class: 'name' }, e.name),
        el('td', { class: 'num headline' }, fmt(e.headline)),
        el('td', { class: 'num interval' }, iv), el('td', { class: 'num share' }, share),
        el('td', { class: 'num last' }, fmt(e.lastRound)));
      columns.forEach(function (m) {
        row.append(el('td', { class: 'num', 'data-scheme': m }, fmt(e.scores[m])));
      });
      var flags = el('td', { class: 'flags' });
      if (e.flags.length === 0) flags.textContent = '–';
      e.flags.forEach(function (f) {
        var line = el('span', { class: 'flag', 'data-kind': f.kind });
        line.append(el('span', { class: 'kind' }, f.kind), document.createTextNode(': ' + f.reason));
        flags.append(line);
      });
      row.append(flags);
      body.append(row);
    });
  }

  function forget() {
    for (var key in drawn) drawn[key].result.finalize();
    drawn = {};
    window.fedscoreDashboard.charts = [];
  }

  /** Per scheme a per-round and a cumulative chart; a chart is redrawn only when its data changed. */
  async function renderScores(data) {
    var box = $('charts');
    var xs = data.rounds;
    $('scores-note').textContent = xs.length === 0
      ? 'no scored round yet'
      : xs.length + ' scored round' + (xs.length === 1 ? '' : 's') + '; one line per silo' +
        (data.quarantined || []).map(function (q) {
          return '; round ' + q.round + ': silo ' + q.silo + ' flagged (' + q.flagged.map(function (f) {
            return f + ' z = ' + fmt(f === 'withOnly' ? q.zWithOnly : q.zWithout);
          }).join(', ') + ')' + (q.released ? ', released' : ', quarantined: not scored');
        }).join('');
    var layout = xs.length === 0 ? '' : JSON.stringify(data.charts.map(function (c) { return [c.scheme, c.kind]; }));
    if (box.getAttribute('data-layout') !== layout) {
      forget();
      box.replaceChildren();
      box.setAttribute('data-layout', layout);
      var sec = null;
      if (xs.length > 0) data.charts.forEach(function (c) {
        if (c.kind === 'round') {
          sec = el('div', { class: 'scheme', 'data-scheme': c.scheme });
          box.append(sec);
        }
        var slot = el('div', { class: 'chart', 'data-scheme': c.scheme, 'data-kind': c.kind });
        var fig = el('figure');
        fig.append(el('h3', null, c.scheme + (c.kind === 'round' ? ' — per round' : ' — cumulative')), slot,
          el('figcaption'));
        sec.append(fig);
      });
    }
    if (xs.length === 0) return;
    var slots = box.querySelectorAll('.chart');
    await Promise.all(data.charts.map(async function (c, k) {
      var slot = slots[k], key = c.scheme + '/' + c.kind, json = JSON.stringify(c.spec);
      slot.parentNode.querySelector('figcaption').textContent = c.kind === 'round'
        ? 'score of each silo in each scored round (gaps: no report)'
        : 'running sum over the scored rounds (final: ' + c.final.map(fmt).join(', ') + ')';
      var old = drawn[key];
      if (old && old.json === json) return;
      delete drawn[key];
      if (old) old.result.finalize();
      drawn[key] = { json: json, result: await vegaEmbed(slot, c.spec, EMBED) };
    }));
    window.fedscoreDashboard.charts = data.charts.map(function (c) {
      return { scheme: c.scheme, kind: c.kind, view: drawn[c.scheme + '/' + c.kind].result.view };
    });
  }

  async function refresh() {
    var live = false;
    try {
      var got = await Promise.all([getJson(api), getJson(api + '/rounds'),
        getJson('/dashboard/' + encodeURIComponent(cid) + '/charts')]);
      var c = got[0], rounds = got[1].rounds;
      renderConsortium(c, rounds);
      renderRounds(rounds, c.participants.length, c.secureAggregation === 'external');
      renderLeaderboard(got[2].leaderboard);
      await renderScores(got[2]);
      var last = rounds[rounds.length - 1];
      live = !!last && TERMINAL.indexOf(last.stage) < 0;
      $('message').textContent = '';
      $('status').textContent = (live ? 'round ' + last.round + ' running — live' : 'idle') +
        ' · updated ' + new Date().toLocaleTimeString();
    } catch (e) {
      if (e instanceof Refused) {
        try { sessionStorage.removeItem(TOKEN_KEY); } catch (err) { /* memory only */ }
        askToken(e.message);
        return;
      }
      $('message').textContent = String(e && e.message ? e.message : e);
      $('status').textContent = 'update failed · ' + new Date().toLocaleTimeString();
    }
    $('status').className = live ? 'live' : '';
    document.body.setAttribute('data-live', String(live));
    document.body.setAttribute('data-updates', String(Number(document.body.getAttribute('data-updates') || 0) + 1));
    timer = setTimeout(refresh, live ? LIVE_MS : IDLE_MS);
  }
  if (token) refresh();
  else askToken('');
})();
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The page's Content-Security-Policy: scripts from its own origin (the vega files under
 * /dashboard/_assets/) and its inline script, its inline style, fetches to itself; no eval.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  `script-src 'self' ${sha256(SCRIPT)}`,
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
<section id="login" hidden><h2>Viewer token</h2><form id="token-form"><label>token
<input id="token" type="password" autocomplete="off" required></label><button type="submit">open</button></form>
<p class="muted">Ask the operator for the consortium's viewer token, or open this page as /dashboard/&lt;id&gt;#token=&lt;token&gt;.</p></section>
<section id="weak-threshold" role="alert" hidden></section>
<section id="leaderboard"><h2>Leaderboard</h2><p id="leaderboard-note" class="muted"></p>
<table><thead id="leaderboard-head"></thead><tbody id="leaderboard-body"></tbody></table></section>
<section id="consortium"><h2>Consortium</h2><dl id="consortium-facts"></dl></section>
<section id="rounds"><h2>Rounds</h2>
<table><thead><tr><th class="num">round</th><th>stage</th><th>progress (|U_k| / the round's silos, per closed stage)</th>
<th>survivors</th><th>dropped</th><th class="num">v(M) / v(M0)</th><th>selected</th><th>faults (sender: code)</th></tr></thead>
<tbody id="rounds-body"></tbody></table></section>
<section id="scores"><h2>Scores</h2><p id="scores-note" class="muted"></p><div id="charts"></div></section>
</main>
${ASSET_NAMES.map((name) => `<script src="/dashboard/_assets/${name}"></script>`).join('\n')}
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
