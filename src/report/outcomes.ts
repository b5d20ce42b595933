/**
 * Outcomes of a selection or aggregation strategy, summarized over seeds: final test accuracy
 * (papers/000 Table 1, papers/004 Tables 1–2, papers/002 Fig. 1) and, per silo role, how often the
 * role's silos were selected (papers/000 Table 2: participation rates of Mavericks, adversaries and
 * free riders) and how much weight their updates got when aggregated (papers/002 Fig. 2: the
 * weights of IID, non-IID and malicious clients).
 */
import { meanStd } from '../records/compare.js';
import type { Outcomes, RoleOutcome, RunRecord } from '../records/results.js';

/** Mean of the finite entries; NaN when there are none. */
function mean(xs: readonly number[]): number {
  const v = xs.filter((x) => Number.isFinite(x));
  return v.length === 0 ? Number.NaN : v.reduce((s, x) => s + x, 0) / v.length;
}

/**
 * Per silo, the mean over the rounds it was aggregated in of w_i / (mean weight of that round's
 * aggregated silos): 1 under equal FedAvg weights, 0 for a silo always left out of the aggregate
 * (FedTSV's max(0, φ), FedMS outside its coreset), NaN for a silo never aggregated. Rounds whose
 * weights are all 0 (nothing aggregated) are skipped; dropped silos are not aggregated.
 */
export function aggregationShares(run: RunRecord, numSilos: number): number[] {
  const shares: number[][] = Array.from({ length: numSilos }, () => []);
  for (const rd of run.rounds) {
    const members = rd.selected.filter((s) => !rd.dropped.includes(s) && rd.aggregationWeights[s] != null);
    const total = members.reduce((s, i) => s + (rd.aggregationWeights[i] ?? 0), 0);
    if (members.length === 0 || !(total > 0)) continue;
    const avg = total / members.length;
    for (const i of members) shares[i]!.push((rd.aggregationWeights[i] ?? 0) / avg);
  }
  return shares.map(mean);
}

/**
 * Final accuracy and per-role participation and aggregation share, `{ mean, std }` over seeds.
 * A role's participation in one seed is the mean over its silos of (rounds selected / rounds).
 * @throws RangeError when `roles` is empty or a run has a different number of silos.
 */
export function outcomesOf(runs: readonly RunRecord[], roles: readonly string[]): Outcomes {
  const n = roles.length;
  if (n === 0) throw new RangeError('roles: expected one role per silo, got none');
  for (const run of runs)
    if (run.participation.length !== n)
      throw new RangeError(`runs: seed ${run.seed} has ${run.participation.length} silos, roles name ${n}`);
  const byRole: Record<string, RoleOutcome> = {};
  const names = [...new Set(roles)];
  const shares = runs.map((run) => aggregationShares(run, n));
  for (const role of names) {
    const silos = roles.flatMap((r, i) => (r === role ? [i] : []));
    const participation = runs.map((run) =>
      mean(silos.map((i) => run.participation[i]! / Math.max(1, run.rounds.length))),
    );
    const share = shares.map((s) => mean(silos.map((i) => s[i]!)));
    byRole[role] = { silos, participation: meanStd(participation), aggregationShare: meanStd(share) };
  }
  return { finalAccuracy: meanStd(runs.map((r) => r.finalAccuracy)), byRole };
}
