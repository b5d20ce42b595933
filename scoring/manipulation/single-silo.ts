/**
 * What one misreporting silo can do alone (papers/003 §3.2: honest training, selfish reports),
 * under each private scheme: its largest self-gain, the largest damage to every other silo, and
 * its largest self-gain with reports the detector does not flag.
 */
import {
  checkScheme,
  checkUtilities,
  type PrivateUtilities,
  type RegisteredScheme as Scheme,
} from '../private.js';
import { fullBox } from './_checks.js';
import { maximize, type Objective, scoreChange } from './_optimizer.js';
import { resolveBoundOptions } from './_options.js';
import type { BoundOptions, Extremum } from './bounds.js';
import { undetectedBox } from './detection.js';
import type { ReportBox } from './reports.js';

/** What one silo can do alone. */
export interface SingleSiloBounds {
  /** Largest increase of its own score (reports anywhere in [lo, hi]²). */
  selfGain: Extremum;
  /** Largest decrease it can cause to each other silo's score; null at its own index. */
  damage: (Extremum | null)[];
  /** Largest own gain with reports the detector does not flag (see `undetectedBox`). */
  selfGainUndetected: Extremum;
  /** The box of undetected reports. */
  undetectedBox: ReportBox;
}

/**
 * For every silo i alone (the others honest): its largest self-gain, the largest damage to each
 * other silo, and the largest self-gain the detector would not flag. LOO, IOI, FP, EE: the score
 * is a ratio of affine functions of (withOnly_i, without_i) with a common denominator D (papers/003
 * Eq. 2 and 4), so unless D can reach zero the extremes are at the 4 corners (exact). EE-median:
 * on each cell of the grid of box ends and the other silos' values the medians are affine, so the
 * grid is exact too. Collusion: see `collusionBounds`.
 * @param scheme one of `SCHEMES` (scoring/private.ts).
 * @param utilities the round's honest utilities.
 * @param options range, detector threshold, exact budget and precomputed undetected boxes.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function singleSiloBounds(
  scheme: Scheme,
  utilities: PrivateUtilities,
  options: BoundOptions = {},
): SingleSiloBounds[] {
  checkScheme(scheme);
  const u = checkUtilities(utilities, 'utilities');
  const { range, threshold, exactBudget } = resolveBoundOptions(options);
  const { n } = u;
  if (options.undetectedBoxes !== undefined && options.undetectedBoxes.length !== n)
    throw new RangeError(
      `options.undetectedBoxes: expected ${n} boxes, got ${options.undetectedBoxes.length}`,
    );
  const out: SingleSiloBounds[] = [];
  for (let i = 0; i < n; i++) {
    const objectives: Objective[] = [scoreChange(n, i, 1)];
    for (let v = 0; v < n; v++) if (v !== i) objectives.push(scoreChange(n, v, -1));
    const results = maximize(scheme, u, [i], [fullBox(range)], objectives, exactBudget);
    const damage: (Extremum | null)[] = [];
    for (let v = 0, k = 1; v < n; v++) damage.push(v === i ? null : results[k++]!);
    const box = options.undetectedBoxes?.[i] ?? undetectedBox(u, i, range, threshold);
    const [selfGainUndetected] = maximize(scheme, u, [i], [box], [scoreChange(n, i, 1)], exactBudget);
    out.push({ selfGain: results[0]!, damage, selfGainUndetected: selfGainUndetected!, undetectedBox: box });
  }
  return out;
}
