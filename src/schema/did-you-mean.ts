/**
 * The nearest valid name to a misspelt one, for error messages: `trainig: unknown key (did you
 * mean 'training'?)`. Optimal string alignment distance (Levenshtein with adjacent swaps), case
 * ignored; a candidate is offered only when it is close for its length (at most a third of the
 * longer name's characters differ, and one may in a name of three or more), so `bogus` gets no suggestion.
 */

/** Edit distance with adjacent transpositions (optimal string alignment), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => [
    i,
    ...new Array<number>(t.length).fill(0),
  ]);
  for (let j = 1; j <= t.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= s.length; i++) {
    const row = d[i] as number[];
    const prev = d[i - 1] as number[];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = best;
    }
  }
  return (d[s.length] as number[])[t.length] as number;
}

/** The closest candidate to `name`, or undefined when none is close enough to be a typo of it. */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const c of candidates) {
    if (c === name) continue;
    const distance = editDistance(name, c);
    const longer = Math.max(name.length, c.length);
    const allowed = Math.max(longer >= 3 ? 1 : 0, Math.floor(longer / 3));
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { name: c, distance };
  }
  return best?.name;
}

/** `" (did you mean 'training'?)"`, or `''` when no candidate is near `name`. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const near = nearestName(name, candidates);
  return near === undefined ? '' : ` (did you mean '${near}'?)`;
}
