/**
 * Which private schemes the outputs show: the console of `experiment`, `score` and `audit`,
 * report.md/report.html (agreement tables, charts) and the leaderboard's columns. results.json and
 * scores.json record every scheme whatever is shown.
 *
 * FP is left out unless asked for (`--schemes` on `experiment` and `score`, recorded as `schemes`
 * in results.json and scores.json: an option of the reports, not of the run): under FedAvg
 * coalitions and v(∅) = v(M0) its normalizer Σα is often ≤ 0, and there FP(i) = α(i)/Σα·v(M) ranks the silos backwards (papers/003 Eq. 2;
 * docs/findings.md, "FP inverts when Σα < 0"). Asked for, it is shown with its † analysis.
 */
import { SCHEMES, type Scheme } from '../../scoring/private.js';

/** The schemes shown when none are asked for: every private scheme but FP. */
export const DEFAULT_SHOWN_SCHEMES: readonly Scheme[] = SCHEMES.filter((s) => s !== 'fp');

/**
 * A list of schemes as a user gives it (`loo,ee,fp` on the command line, or an array), checked.
 * @param what the flag or key it came from, named in the error.
 * @throws RangeError naming `what` when a name is not a private scheme, is repeated, or the list is empty.
 */
export function parseSchemes(list: string | readonly string[], what: string): Scheme[] {
  const names = typeof list === 'string' ? list.split(',').map((s) => s.trim()) : [...list];
  if (names.length === 0 || names.every((s) => s === ''))
    throw new RangeError(`${what}: expected one or more of ${SCHEMES.join(', ')}`);
  const seen = new Set<string>();
  for (const s of names) {
    if (!(SCHEMES as readonly string[]).includes(s))
      throw new RangeError(`${what}: '${s}' is not a private scheme (expected ${SCHEMES.join(', ')})`);
    if (seen.has(s)) throw new RangeError(`${what}: '${s}' is listed twice`);
    seen.add(s);
  }
  return names as Scheme[];
}

/**
 * The private schemes hidden from the outputs, given the ones asked for (undefined: the default).
 * A method that is not a private scheme (a reference, a raw score) is never hidden.
 */
export function hiddenSchemes(asked: readonly string[] | undefined): Set<string> {
  const shown = asked ?? DEFAULT_SHOWN_SCHEMES;
  return new Set(SCHEMES.filter((s) => !shown.includes(s)));
}
