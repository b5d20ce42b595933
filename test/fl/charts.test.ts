/**
 * The Vega-Lite specifications of src/fl/charts.ts: their data, and what vega draws from them
 * (compiled by vega-lite, run headlessly by vega, read back from the scenegraph).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { describe, expect, it } from 'vitest';
import {
  accuracySpec,
  participationSpec,
  type ScoreHistory,
  scoreHistorySpec,
  siloScoresSpec,
} from '../../src/fl/charts.js';

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
