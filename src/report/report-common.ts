/**
 * What the report modules share: the input (an experiment's results.json or a scores.json) and
 * the small formatting helpers of its tables (mean ± std only with several seeds).
 */
import type { EmptyCoalition } from '../../scoring/empty-coalition.js';
import type { ExperimentResults, MeanStd } from '../records/results.js';
import { hiddenSchemes } from '../records/shown-schemes.js';
import type { UtilityScores } from '../records/utility-scores.js';

/** What a report is rendered from: an experiment's results.json, or a scores.json. */
export type Reportable = ExperimentResults | UtilityScores;

/** Whether `r` is a scores.json (scores of a utilities file) rather than an experiment. */
export const isUtilityScores = (r: Reportable): r is UtilityScores => 'scoresSchemaVersion' in r;

export const fmt = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
export const pm = (m: { mean: number; std: number }) => `${fmt(m.mean)} ± ${fmt(m.std)}`;
/** A signed number with its sign always shown (`+0.004`, `−0.012`). */
export const signed = (x: number, d = 3) => (x < 0 ? `−${fmt(-x, d)}` : `+${fmt(x, d)}`);

/** Seeds behind the report's numbers (1 for a scores.json). */
export const seedCount = (r: Reportable) => (isUtilityScores(r) ? 1 : r.seeds.length);

/** `mean ± std` over seeds when there are several, the value alone for one seed. */
export const meanCell = (r: Reportable) => (m: MeanStd) => (seedCount(r) > 1 ? pm(m) : fmt(m.mean));

/** How the numbers of a table or chart were summarized over seeds, in words. */
export const seedWords = (r: Reportable) =>
  isUtilityScores(r)
    ? 'one set of scores'
    : r.seeds.length > 1
      ? `mean ± std over ${r.seeds.length} seeds`
      : `seed ${r.seeds[0] ?? '-'}`;

/** v(∅) as the report's scores used it. */
export const emptyCoalitionOf = (r: Reportable): EmptyCoalition =>
  isUtilityScores(r) ? 'initialModel' : (r.scoring?.emptyCoalition ?? 'initialModel');

/** The compared round, or 'cumulative'. */
export const atOf = (r: Reportable): 'cumulative' | number =>
  isUtilityScores(r) ? 'cumulative' : r.comparison.at;

/**
 * The private schemes a report leaves out (src/records/shown-schemes.ts): those not asked for with
 * `--schemes` (recorded as `schemes` in results.json and scores.json); by default FP.
 */
export const hiddenOf = (r: Reportable): Set<string> => hiddenSchemes(r.schemes);
