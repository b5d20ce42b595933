/**
 * The public surface of `fedscore/scoring` (and of the package root, `fedscore`): private scores,
 * games, estimators, rank metrics and manipulation bounds — pure functions of numbers, usable with
 * utilities computed by any federated-learning stack. An explicit list, not a barrel: whatever is
 * not named here is internal, however it is exported inside the repository (docs/api.md lists
 * this surface; test/package/package.test.ts checks that the built declarations export nothing
 * `_`-prefixed). Sorted by file: private scores in private.ts (papers/003 §4); games in coalition.ts,
 * game.ts, games.ts; estimators in shapley.ts, monte-carlo.ts, gtg.ts, owen.ts, banzhaf-msr.ts,
 * multi-round.ts (with random.ts, stopping.ts, permutation-sampler.ts to configure them); rank
 * metrics in metrics.ts (papers/003 §5); manipulation bounds in manipulation/ (papers/003 §3.2);
 * the leaderboard's numbers (headline, share, interval, rank range) in leaderboard.ts, the headline's
 * weight in payout.ts (issue 37).
 */

export { type MsrBanzhafOptions, msrBanzhaf } from './banzhaf-msr.js';
export { type Coalition, coalitionOf, maskToCoalition, members } from './coalition.js';
export type { Estimate } from './estimate.js';
export {
  coalitionTable,
  type Game,
  gameFromFunction,
  gameFromTable,
  type MemoGame,
  memoize,
  type TableOptions,
} from './game.js';
export {
  additiveGame,
  airportGame,
  gloveGame,
  type KnownGame,
  paper003Example2,
  symmetricVotingGame,
  unanimityGame,
} from './games.js';
export { type GtgOptions, gtgShapley } from './gtg.js';
export {
  competitionRanks,
  HEADLINE_SCHEME,
  type HeadlineEntry,
  type HeadlineOptions,
  type HeadlineRound,
  headlineLeaderboard,
  headlineOfRound,
  rankLabel,
  sharesOf,
} from './leaderboard.js';
export type { BoundOptions, Extremum, ExtremumMethod } from './manipulation/bounds.js';
export {
  type ClosedForm,
  eeMedianDamageBound,
  eeSelfGain,
  fpSelfGain,
  ioiSelfGain,
  looSelfGain,
} from './manipulation/closed-form.js';
export { type CoalitionBounds, collusionBounds } from './manipulation/collusion.js';
export { DEFAULT_THRESHOLD, type Detection, detectReports, undetectedBox } from './manipulation/detection.js';
export { influenceMatrix, sensitivityMatrix } from './manipulation/influence.js';
export type { ReportBox, SiloReports, UtilityRange } from './manipulation/reports.js';
export { type SingleSiloBounds, singleSiloBounds } from './manipulation/single-silo.js';
export { kendallTau, normalizedL2, pearson, spearman } from './metrics.js';
export {
  type MonteCarloOptions,
  monteCarloShapley,
  type TruncatedMonteCarloOptions,
  truncatedMonteCarloShapley,
} from './monte-carlo.js';
export {
  type MultiRoundEstimate,
  type MultiRoundOptions,
  multiRoundShapley,
  type Round,
  type RoundGame,
  type RoundTable,
  type TruncatedMultiRoundOptions,
  truncatedMultiRoundShapley,
} from './multi-round.js';
export { type OwenEstimate, type OwenOptions, owenShapley } from './owen.js';
export { DEFAULT_PAYOUT_VARIANT, type PayoutVariant, payoutWeights } from './payout.js';
export type { PermutationSampler } from './permutation-sampler.js';
export {
  ALL_SCHEMES,
  type CheckedUtilities,
  checkUtilities,
  type EverybodyElseOptions,
  type EverybodyElseTerms,
  everybodyElse,
  everybodyElseTerms,
  fairPrivate,
  includeOneIn,
  isRatioScheme,
  leaveOneOut,
  NORMALIZER_MARGIN,
  type PrivateUtilities,
  type RegisteredScheme,
  ratioScoreBound,
  SCHEMES,
  type Scheme,
  type SchemeScores,
  schemeNormalizer,
  schemeScores,
  schemeWeights,
  scoreScheme,
  utilitiesOfTable,
} from './private.js';
export type { SampledEstimate } from './sampled-estimate.js';
export { createRng, type Rng } from './seeded-rng.js';
export { exactBanzhaf, exactBanzhafOfGame, exactShapley, exactShapleyOfGame } from './shapley.js';
export { afterSamples, gtgConvergence, type StoppingRule } from './stopping.js';
