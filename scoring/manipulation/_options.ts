/** Internal: the defaults of `BoundOptions`, filled in and checked. Never re-exported. */
import { checkOptions, checkRange, checkThreshold } from './_checks.js';
import type { BoundOptions } from './bounds.js';
import { DEFAULT_THRESHOLD } from './detection.js';

/** Range, detector threshold and exact budget (messages start with `options.` or the field). */
export function resolveBoundOptions(options: BoundOptions) {
  checkOptions(options);
  const range = checkRange(options.range ?? { lo: 0, hi: 1 });
  const threshold = checkThreshold(options.threshold ?? DEFAULT_THRESHOLD);
  const exactBudget = options.exactBudget ?? 200_000;
  if (!Number.isInteger(exactBudget) || exactBudget < 1)
    throw new RangeError(`options.exactBudget: expected a positive integer, got ${exactBudget}`);
  return { range, threshold, exactBudget };
}
