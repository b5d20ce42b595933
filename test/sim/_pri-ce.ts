/**
 * Test oracle, deliberately independent of fedscore: a line-by-line TypeScript transcription of
 * the authors' `pri_ce` and `shapley` (repository Delio090418/Fair-privacy-Preserving-Contribution-
 * Scoring-, `utils.py` at commit 428d561, lines 76–105 and 109–170), on their inputs: the coalition
 * dictionary of `games_local.py` `local_coalicional_value_at_round` turned into `groups` (binary
 * membership lists) and `acc` by `transform_dict_to_lists`, with `d[()] = 0`. Source: the
 * repository itself (fetched read-only; nothing of it is committed). Not a test file.
 *
 * Nothing here imports from fedscore; it works on plain arrays.
 */

/** `transform_dict_to_lists` of a table indexed by mask (bit i = client i), `d[()]` set to 0. */
export function groupsOf(clients: number, table: ArrayLike<number>): { groups: number[][]; acc: number[] } {
  const groups: number[][] = [];
  const acc: number[] = [];
  for (let mask = 0; mask < 2 ** clients; mask++) {
    const binary: number[] = [];
    for (let i = 0; i < clients; i++) binary.push((mask >> i) & 1);
    groups.push(binary);
    acc.push(mask === 0 ? 0 : table[mask]!); // d[()] = 0 (games_local.py line 70)
  }
  return { groups, acc };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const factorial = (k: number): number => (k <= 1 ? 1 : k * factorial(k - 1));

/** `shapley(clients, groups, acc)` (utils.py 76–105). */
export function shapley(clients: number, groups: number[][], acc: number[]): number[] {
  const scores = new Array<number>(clients).fill(0);
  for (let i = 0; i < clients; i++) {
    let tmp = 0;
    groups.forEach((subset, j) => {
      if (subset[i] === 0) return;
      const without = [...subset];
      without[i] = 0;
      const idx = groups.findIndex((l) => l.every((x, k) => x === without[k]));
      const marginal = acc[j]! - acc[idx]!;
      const size = sum(subset) - 1;
      const weight = (factorial(size) * factorial(clients - size - 1)) / factorial(clients);
      tmp += weight * marginal;
    });
    scores[i] = tmp;
  }
  return scores;
}

/** What `pri_ce` returns (utils.py 109–170), by its variable names. */
export interface PriCe {
  i1i: number[];
  l1o: number[];
  ieei: number[];
  leeo: number[];
  se: number[];
  ee: number[];
  ppce: number[];
  f_i1i: number[];
  f_l1o: number[];
}

/** `pri_ce(clients, groups, acc)` (utils.py 109–170). */
export function priCe(clients: number, groups: number[][], acc: number[]): PriCe {
  const z = () => new Array<number>(clients).fill(0);
  const i1i = z();
  const l1o = z();
  const f_l1o = z();
  const f_i1i = z();
  let ieei = z();
  let leeo = z();
  const include = z();
  const leave = z();
  let nul = Number.NaN;
  let grand = Number.NaN;
  groups.forEach((subset, i) => {
    const s = sum(subset);
    if (s === 0) nul = acc[i]!;
    if (s === clients) grand = acc[i]!;
    if (s === 1) include[subset.indexOf(1)] = acc[i]!;
    if (s === clients - 1) leave[subset.indexOf(0)] = acc[i]!;
  });
  for (let i = 0; i < clients; i++) {
    i1i[i] = include[i]! - nul;
    l1o[i] = grand - leave[i]!;
    for (let j = 0; j < clients; j++) {
      ieei[i]! += leave[j]! - nul;
      leeo[i]! += grand - include[j]!;
    }
    ieei[i]! -= leave[i]! - nul;
    leeo[i]! -= grand - include[i]!;
  }
  ieei = ieei.map((x) => x / (clients - 1) ** 2);
  leeo = leeo.map((x) => x / (clients - 1) ** 2);
  // (the Eq. 2/4 normalisation of ieei and leeo is commented out in the authors' code)
  const se = i1i.map((x, k) => (x + l1o[k]!) / 2);
  const ee = ieei.map((x, k) => (x + leeo[k]!) / 2);
  const ppce = se.map((x, k) => (x + ee[k]!) / 2);
  const betaL1o = sum(l1o);
  const betaI1i = sum(i1i);
  for (let i = 0; i < clients; i++) {
    f_l1o[i] = (l1o[i]! * grand) / betaL1o;
    f_i1i[i] = (i1i[i]! * grand) / betaI1i;
  }
  return { i1i, l1o, ieei, leeo, se, ee, ppce, f_i1i, f_l1o };
}
