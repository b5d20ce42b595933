/**
 * Internal: which variant of the headline's weight (./payout.ts) the `payout` scheme computes.
 * Always `DEFAULT_PAYOUT_VARIANT` in the product; scripts/headline-candidates.ts switches it to
 * measure the candidates of docs/findings.md with the audit's own optimizer (which evaluates
 * schemes by name). Never re-exported.
 */
import { DEFAULT_PAYOUT_VARIANT, type PayoutVariant } from './payout.js';

let current: PayoutVariant = DEFAULT_PAYOUT_VARIANT;

/** The variant `payout` computes now. */
export function currentPayoutVariant(): PayoutVariant {
  return current;
}

/** Runs `f` with `payout` computing `variant` (measurement scripts only); restores the default. */
export function withPayoutVariant<T>(variant: PayoutVariant, f: () => T): T {
  const before = current;
  current = variant;
  try {
    return f();
  } finally {
    current = before;
  }
}
