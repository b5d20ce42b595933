// docs/api.md's `fedscore/scoring` example in plain JavaScript (ESM): in a project that installed
// fedscore (docs/api.md, "Installing from a checkout"), `node scoring.mjs`. test/package/package.test.ts
// runs it from the packed tarball and checks it prints what the TypeScript example prints.

import {
  createRng,
  eeSelfGain,
  everybodyElse,
  exactShapley,
  fairPrivate,
  gameFromTable,
  includeOneIn,
  leaveOneOut,
  looSelfGain,
  memoize,
  monteCarloShapley,
  spearman,
  utilitiesOfTable,
} from 'fedscore/scoring';

// papers/003 Example 2: silos A, B, C; v(S) by bitmask (bit i = silo i): ∅, A, B, AB, C, AC, BC, ABC
const table = Float64Array.from([0, 0, 1, 1, 2, 2, 3, 3]);
const example = utilitiesOfTable(3, table); // { full: 3, empty: 0, withOnly: [0, 1, 2], without: [3, 2, 1] }
console.log('EE', everybodyElse(example).join(' ')); // A adds nothing, yet EE(A) = 3/4
console.log('FP', fairPrivate(example).join(' '), '| Shapley', exactShapley(3, table).join(' '));
// Utilities from your own stack: v(M), v(M0), and per silo v(M0 + U_i) and v(M − U_i)
const round = { full: 0.82, empty: 0.61, withOnly: [0.7, 0.66, 0.63], without: [0.75, 0.79, 0.81] };
const show = (x) => Array.from(x, (v) => v.toFixed(3)).join(' ');
console.log('LOO', show(leaveOneOut(round)), '| IOI', show(includeOneIn(round)));
console.log('EE-median', show(everybodyElse(round, { reduce: 'median' })));
// How far silo 0 can raise its own score by misreporting its two utilities within [0, 1]
const range = { lo: 0, hi: 1 };
const bound = (g) => (g.unbounded ? 'unbounded' : g.value.toFixed(3));
console.log(
  'self-gain of silo 0: LOO',
  bound(looSelfGain(round, 0, range)),
  '| EE',
  bound(eeSelfGain(round, 0, range)),
);
// A sampled estimator against the exact value, with an explicit budget and seed
const estimate = await monteCarloShapley(memoize(gameFromTable(3, table)), { budget: 8, rng: createRng(1) });
console.log(
  'Monte Carlo',
  show(estimate.values),
  '| Spearman vs exact',
  spearman(estimate.values, exactShapley(3, table)).toFixed(3),
);
