/**
 * The Vega-Lite specifications of src/report/charts.ts: their data, and what vega draws from them
 * (compiled by vega-lite, run headlessly by vega, read back from the scenegraph).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { describe, expect, it } from 'vitest';
import {
  accuracySpec,
  headlineBarsSpec,
  type PanelGroup,
  participationSpec,
  type ScatterRow,
  type ScoreHistory,
  scatterSpec,
  scoreHistorySpec,
  siloScoresSpec,
  type TrajectoryRow,
  trajectoriesSpec,
} from '../../src/report/charts.js';
import { referenceAxisTitle } from '../../src/report/report-agreement.js';

interface Row {
  silo: number;
  round: number;
  score: number | null;
}

/** A line or symbol item of the scenegraph: its datum, its y, and whether the line is drawn there. */
interface Drawn extends Row {
  marktype: string;
  y: number;
  defined: boolean;
}

/** Runs a specification headlessly; its source rows and the line and symbol items drawn (legends aside). */
async function draw(spec: TopLevelSpec) {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  await view.runAsync();
  const items: Drawn[] = [];
  type Node = { marktype?: string; role?: string; items?: Item[] };
  type Item = Node & { datum?: Row; y: number; defined?: boolean };
  const walk = (node: Node) => {
    for (const item of node.items ?? []) {
      const { marktype } = node;
      if ((marktype === 'line' || marktype === 'symbol') && node.role === 'mark' && item.datum) {
        const { silo, round, score } = item.datum;
        items.push({ marktype, silo, round, score, y: item.y, defined: item.defined !== false });
      }
      walk(item);
    }
  };
  walk((view.scenegraph() as unknown as { root: Node }).root);
  const rows = (view.data('scores') as Row[]).map(({ round, silo, score }) => ({ round, silo, score }));
  view.finalize();
  return { rows, items };
}

const HISTORY: ScoreHistory = {
  rounds: [1, 2, 4],
  scores: [
    [0.5, -0.25, 1],
    [0.125, null, 0.25],
    [0, 0, 0.75],
  ],
};

describe('scoreHistorySpec', () => {
  it('per round: one row per silo and round, the scores as given, gaps where a score is missing', async () => {
    const { rows, items } = await draw(scoreHistorySpec(HISTORY, 'round'));
    expect(rows).toEqual([
      { round: 1, silo: 0, score: 0.5 },
      { round: 2, silo: 0, score: -0.25 },
      { round: 4, silo: 0, score: 1 },
      { round: 1, silo: 1, score: 0.125 },
      { round: 2, silo: 1, score: null },
      { round: 4, silo: 1, score: 0.25 },
      { round: 1, silo: 2, score: 0 },
      { round: 2, silo: 2, score: 0 },
      { round: 4, silo: 2, score: 0.75 },
    ]);
    const points = items.filter((d) => d.marktype === 'symbol');
    expect(points.map((d) => [d.silo, d.round])).toEqual([
      [0, 1],
      [0, 2],
      [0, 4],
      [1, 1],
      [1, 4],
      [2, 1],
      [2, 2],
      [2, 4],
    ]);
    const lines = items.filter((d) => d.marktype === 'line');
    expect(new Set(lines.map((d) => d.silo))).toEqual(new Set([0, 1, 2]));
    expect(lines.filter((d) => !d.defined).map((d) => [d.silo, d.round])).toEqual([[1, 2]]); // the gap
    // A larger score is drawn higher (smaller y).
    for (const a of points)
      for (const b of points)
        if (a.score! > b.score!) expect(a.y, `${a.score} > ${b.score}`).toBeLessThan(b.y);
  });

  it('cumulative: running sums over the rounds, a missing score adding 0', async () => {
    const { rows, items } = await draw(scoreHistorySpec(HISTORY, 'cumulative'));
    expect(rows.map((d) => [d.silo, d.round, d.score])).toEqual([
      [0, 1, 0.5],
      [0, 2, 0.25],
      [0, 4, 1.25],
      [1, 1, 0.125],
      [1, 2, 0.125],
      [1, 4, 0.375],
      [2, 1, 0],
      [2, 2, 0],
      [2, 4, 0.75],
    ]);
    expect(items.filter((d) => d.marktype === 'symbol')).toHaveLength(9);
  });

  it('checks its arguments', () => {
    expect(() => scoreHistorySpec({ rounds: [1, 2], scores: [[1]] }, 'round')).toThrow(
      new RangeError('history.scores[0]: expected 2 scores, one per round'),
    );
    expect(() => scoreHistorySpec(HISTORY, 'total' as never)).toThrow(TypeError);
    expect(() => scoreHistorySpec({ rounds: 1 as never, scores: [] }, 'round')).toThrow(/^history.rounds: /);
    expect(() => scoreHistorySpec({ rounds: [], scores: {} as never }, 'round')).toThrow(/^history.scores: /);
  });

  it('no round yet: an empty chart', async () => {
    const { rows, items } = await draw(scoreHistorySpec({ rounds: [], scores: [[], []] }, 'round'));
    expect(rows).toEqual([]);
    expect(items).toEqual([]);
  });
});

describe('scoreHistorySpec legends', () => {
  it('name the silos (default silo-<index>), in silo order', async () => {
    const legend = async (h: ScoreHistory) => {
      const view = new vega.View(vega.parse(compile(scoreHistorySpec(h, 'round')).spec), {
        renderer: 'none',
      });
      const svg = await view.toSVG();
      view.finalize();
      return [...svg.matchAll(/<g class="mark-text role-legend-label"[^>]*><text[^>]*>([^<]*)<\/text>/g)].map(
        (m) => m[1],
      );
    };
    expect(await legend({ ...HISTORY, names: ['hospital-a', 'lab <b>', 'z'] })).toEqual([
      'hospital-a',
      'lab &lt;b&gt;',
      'z',
    ]);
    expect(await legend(HISTORY)).toEqual(['silo-0', 'silo-1', 'silo-2']);
    expect(() => scoreHistorySpec({ ...HISTORY, names: ['a'] }, 'round')).toThrow(
      new RangeError('history.names: expected 3 names, one per silo'),
    );
  });
});

describe('headlineBarsSpec', () => {
  it('one bar per silo in rank order, flagged bars red with their flags beside them', async () => {
    const rows = [
      { silo: 'late', rank: 3, headline: -0.1, flags: 'free-rider, missing-reports' },
      { silo: 'top', rank: 1, headline: 0.5, flags: '' },
      { silo: 'mid', rank: 2, headline: 0.2, flags: '' },
    ];
    const view = new vega.View(vega.parse(compile(headlineBarsSpec(rows, 'headline')).spec), {
      renderer: 'none',
    });
    await view.runAsync();
    type Node = { marktype?: string; role?: string; items?: Item[] };
    type Item = Node & { datum?: { silo: string }; y: number; fill?: string; text?: string };
    const bars: { silo: string; y: number; fill?: string }[] = [];
    const texts: string[] = [];
    const walk = (node: Node) => {
      for (const item of node.items ?? []) {
        if (node.role === 'mark' && node.marktype === 'rect' && item.datum)
          bars.push({ silo: item.datum.silo, y: item.y, fill: item.fill });
        if (node.role === 'mark' && node.marktype === 'text' && item.text) texts.push(item.text);
        walk(item);
      }
    };
    walk((view.scenegraph() as unknown as { root: Node }).root);
    view.finalize();
    expect([...bars].sort((a, b) => a.y - b.y).map((b) => b.silo)).toEqual(['top', 'mid', 'late']);
    expect(bars.find((b) => b.silo === 'late')!.fill).toBe('#c0392b');
    expect(bars.filter((b) => b.silo !== 'late').every((b) => b.fill === '#2c7fb8')).toBe(true);
    expect(texts).toContain('free-rider, missing-reports');
  });
});

describe('siloScoresSpec', () => {
  it('one panel per method with its own axes; no empty frames in a last row that is not full', async () => {
    const rows = ['loo', 'ioi', 'fp', 'ee', 'eeMedian', 'mrsv'].flatMap((method, k) =>
      ['a', 'b'].map((silo, i) => ({ method, silo, score: k - i })),
    );
    const drawn = await panels(siloScoresSpec(rows));
    expect(drawn.map((p) => p.title)).toEqual(['loo', 'ioi', 'fp', 'ee', 'eeMedian', 'mrsv']);
    // six panels, each an x axis and a y axis (with its grid): no axes without bars
    expect(drawn.axes).toBe(6 * 3);
  });
});

describe('the report’s specifications', () => {
  it('inline the rows they are given', () => {
    const scores = [{ method: 'fp', silo: 'a', score: -1 }];
    const accuracy = [{ seed: '1', round: 1, accuracy: 0.5 }];
    const participation = [{ silo: 'a', rate: 0.5 }];
    expect(siloScoresSpec(scores).data).toEqual({ values: scores });
    expect(accuracySpec(accuracy).data).toEqual({ values: accuracy });
    expect(participationSpec(participation).data).toEqual({ values: participation });
    expect(() => siloScoresSpec(null as never)).toThrow(new TypeError('rows: expected an array of rows'));
  });
});

/** The panels a specification draws: per panel (in drawing order) its title and its points' data and y. */
async function panels(spec: TopLevelSpec) {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  await view.runAsync();
  const out: { title: string; points: { datum: Record<string, unknown>; y: number }[]; axes: number }[] = [];
  let axes = 0;
  type Node = { marktype?: string; role?: string; items?: Item[]; name?: string };
  type Item = Node & { datum?: Record<string, unknown>; y: number; text?: string | string[] };
  const walk = (node: Node, into?: (typeof out)[number]) => {
    for (const item of node.items ?? []) {
      let target = into;
      // a panel: a scope with a title of its own (a line's per-silo groups are scopes too)
      if (node.marktype === 'group' && node.role === 'scope' && item.items?.some((n) => n.role === 'title')) {
        target = { title: '', points: [], axes: 0 };
        out.push(target);
      }
      if (target && node.role === 'title-text')
        target.title = ([] as string[]).concat(item.text ?? []).join(' | ');
      if (node.role === 'axis' && node.marktype === 'group') {
        axes++;
        if (target) target.axes++;
      }
      if (
        target &&
        node.role === 'mark' &&
        (node.marktype === 'symbol' || node.marktype === 'line') &&
        item.datum
      )
        target.points.push({ datum: item.datum, y: item.y });
      walk(item, target);
    }
  };
  walk((view.scenegraph() as unknown as { root: Node }).root);
  view.finalize();
  return Object.assign(
    out.filter((p) => p.points.length > 0 || p.axes > 0),
    { axes },
  );
}

describe('scatterSpec', () => {
  const rows: ScatterRow[] = [
    { panel: 'a — Spearman 1', seed: '1', silo: 's0', reference: 0, score: 0 },
    { panel: 'a — Spearman 1', seed: '1', silo: 's1', reference: 1, score: 1 },
    { panel: 'b — Spearman 1', seed: '1', silo: 's0', reference: 0, score: 0 },
    { panel: 'b — Spearman 1', seed: '1', silo: 's1', reference: 1, score: 2 },
    { panel: 'c', seed: '1', silo: 's0', reference: 0, score: Number.NaN },
    { panel: 'd', seed: '1', silo: 's0', reference: 0, score: 0 },
    { panel: 'd', seed: '1', silo: 's1', reference: 1, score: 5 },
  ];
  const groups = (sharedY: boolean): PanelGroup[] => [
    { title: 'units', panels: ['a — Spearman 1', 'b — Spearman 1', 'c'], sharedY },
    { title: 'nothing', panels: ['e'], sharedY: true },
    { title: 'other', panels: ['d'], sharedY: false },
  ];

  it('one panel per method with points, in the groups’ order, titled by its label; empty panels and groups left out', async () => {
    const drawn = await panels(scatterSpec(rows, groups(true), 'ref'));
    expect(drawn.map((p) => p.title)).toEqual(['a | Spearman 1', 'b | Spearman 1', 'd']);
    expect(drawn.map((p) => p.points.length)).toEqual([2, 2, 2]);
    // no empty axes: each panel has its x and y axis (each drawn as a grid and an axis), and no others exist
    expect(drawn.map((p) => p.axes)).toEqual([4, 4, 4]);
    expect(drawn.axes).toBe(12);
  });

  it('panels of a group share y when it says so, and not otherwise', async () => {
    const y = async (shared: boolean) => {
      const [a, b] = await panels(scatterSpec(rows, groups(shared), 'ref'));
      const at = (p: typeof a, silo: string) => p!.points.find((q) => q.datum.silo === silo)!.y;
      return { a1: at(a, 's1'), b1: at(b, 's1'), a0: at(a, 's0'), b0: at(b, 's0') };
    };
    const shared = await y(true);
    expect(shared.a0).toBe(shared.b0);
    expect(shared.a1).toBeGreaterThan(shared.b1); // 1 is drawn lower than 2 on a common scale
    const own = await y(false);
    expect(own.a1).toBe(own.b1); // each panel's top
  });

  it('a panel spanning under a quarter of its group’s widest span gets its own y scale, after the shared ones', async () => {
    const wide = rows.map((r) => (r.panel.startsWith('b') && r.silo === 's1' ? { ...r, score: 10 } : r));
    const drawn = await panels(scatterSpec(wide, groups(true), 'ref'));
    expect(drawn.map((p) => p.title)).toEqual(['b | Spearman 1', 'a | Spearman 1', 'd']);
    const at = (k: number, silo: string) => drawn[k]!.points.find((q) => q.datum.silo === silo)!.y;
    expect(at(0, 's1')).toBe(at(1, 's1')); // a's 1 and b's 10 both at their panel's top: two scales
    expect(at(0, 's0')).toBe(at(1, 's0'));
    // the same units: the split-off panel's axis says so
    const spec = JSON.stringify(scatterSpec(wide, groups(true), 'ref'));
    expect(spec).toContain('"title":"units (own scale)"');
  });

  it('labels each point with its silo’s name', async () => {
    const view = new vega.View(vega.parse(compile(scatterSpec(rows, groups(true), 'ref')).spec), {
      renderer: 'none',
    });
    const svg = await view.toSVG();
    view.finalize();
    // panels a, b, d: two labelled points each
    expect((svg.match(/>s0<\/text>/g) ?? []).length).toBe(3);
    expect((svg.match(/>s1<\/text>/g) ?? []).length).toBe(3);
  });

  it('colors by seed only with several seeds', () => {
    const one = JSON.stringify(scatterSpec(rows, groups(true), 'ref'));
    expect(one).not.toContain('"field":"seed"');
    const two = JSON.stringify(scatterSpec([...rows, { ...rows[0]!, seed: '2' }], groups(true), 'ref'));
    expect(two).toContain('"field":"seed"');
  });

  it('no rows: nothing drawn', async () => {
    const none = await panels(scatterSpec([], groups(true), 'ref'));
    expect([none.length, none.axes]).toEqual([0, 0]);
    expect(() => scatterSpec(null as never, [], 'ref')).toThrow(TypeError);
  });
});

describe('trajectoriesSpec', () => {
  it('the reference’s panel first, one line per silo, gaps where a score is null, a shared y within a group', async () => {
    const rows: TrajectoryRow[] = [
      ...[1, 2, 3].flatMap((round) => [
        { panel: 'ref', silo: 's0', round, score: round / 10 },
        { panel: 'ref', silo: 's1', round, score: -round / 10 },
        { panel: 'est', silo: 's0', round, score: round / 5 },
        { panel: 'fp — round 2 left out', silo: 's0', round, score: round === 2 ? null : round },
        { panel: 'loo', silo: 's0', round, score: null },
      ]),
    ];
    const groups: PanelGroup[] = [
      { title: 'Shapley value', panels: ['ref', 'est'], sharedY: true },
      { title: 'share of v(M)', panels: ['fp — round 2 left out'], sharedY: true },
      { title: 'difference', panels: ['loo'], sharedY: true },
    ];
    const drawn = await panels(trajectoriesSpec(rows, groups));
    expect(drawn.map((p) => p.title)).toEqual(['ref', 'est', 'fp | round 2 left out']); // loo: no score, no panel
    const ref = drawn[0]!.points.filter((p) => p.datum.score !== undefined);
    expect(new Set(ref.map((p) => p.datum.silo))).toEqual(new Set(['s0', 's1']));
    const est = drawn[1]!.points;
    const y = (pts: typeof est, silo: string, round: number) =>
      pts.find((p) => p.datum.silo === silo && p.datum.round === round)!.y;
    expect(y(est, 's0', 1)).toBe(y(drawn[0]!.points, 's0', 2)); // 0.2 in both panels: one y scale
    expect(drawn[2]!.points.filter((p) => p.datum.round === 2 && p.datum.score !== null)).toEqual([]);
  });
});

describe('agreement charts (issue 37)', () => {
  it('points closer than a label apart get one label, not overprinted names', async () => {
    const close: ScatterRow[] = [
      { panel: 'a', seed: '1', silo: 'silo-8', reference: 0.1, score: 0.5 },
      { panel: 'a', seed: '1', silo: 'silo-4', reference: 0.1005, score: 0.5004 },
      { panel: 'a', seed: '1', silo: 'silo-1', reference: 0.9, score: 0.1 },
    ];
    const view = new vega.View(
      vega.parse(compile(scatterSpec(close, [{ title: 'score', panels: ['a'], sharedY: true }], 'ref')).spec),
      { renderer: 'none' },
    );
    const svg = await view.toSVG();
    view.finalize();
    expect((svg.match(/>silo-8<\/text>/g) ?? []).length).toBe(1);
    expect(svg).not.toMatch(/>silo-4<\/text>/); // beside silo-8: left to the tooltip
    expect(svg).toMatch(/>silo-1<\/text>/);
  });

  it('the reference axis says what its values are: MR-SV at round 5 is the sum of rounds 1–5', () => {
    expect(referenceAxisTitle('mrsv', 5)).toBe('mrsv (Σ rounds 1–5)');
    expect(referenceAxisTitle('roundSv', 5)).toBe('roundSv (round 5)');
    expect(referenceAxisTitle('mrsv', 'cumulative')).toBe('mrsv');
    expect(referenceAxisTitle('trueSv', 5)).toBe('trueSv');
  });
});
