/**
 * Known-answer vectors of the manipulation audit: every public function on fixed rounds, recorded
 * as plain JSON (±Infinity and NaN as strings). `recordVectors` takes the functions as arguments so
 * the same recording ran on the pre-split scoring/manipulation.ts (test/vectors/manipulation/pre-split.json) and
 * runs on the current modules (regression.test.ts, generate-vectors.ts).
 */

import type { Extremum } from '../../../scoring/manipulation/bounds.js';
import {
  eeMedianDamageBound,
  eeSelfGain,
  fpSelfGain,
  ioiSelfGain,
  looSelfGain,
} from '../../../scoring/manipulation/closed-form.js';
import { collusionBounds } from '../../../scoring/manipulation/collusion.js';
import { detectReports, undetectedBox } from '../../../scoring/manipulation/detection.js';
import { influenceMatrix, sensitivityMatrix } from '../../../scoring/manipulation/influence.js';
import { simulateAttacks } from '../../../scoring/manipulation/misreports.js';
import { singleSiloBounds } from '../../../scoring/manipulation/single-silo.js';
import {
  type PrivateUtilities,
  SCHEMES,
  schemeNormalizer,
  schemeScores,
  schemeWeights,
} from '../../../scoring/private.js';
import { createRng } from '../../../scoring/seeded-rng.js';

/** The functions recorded (the current modules' names and shapes). */
export const currentApi = {
  schemeWeights,
  schemeScores,
  schemeNormalizer,
  influenceMatrix,
  sensitivityMatrix,
  singleSiloBounds,
  collusionBounds,
  looSelfGain,
  ioiSelfGain,
  fpSelfGain,
  eeSelfGain,
  eeMedianDamageBound,
  detectReports,
  undetectedBox,
  simulateAttacks,
};
export type ManipulationApi = typeof currentApi;

/** The rounds recorded: early and late, 2 to 6 silos, Remark 1's zero normalizer, all-zero marginals. */
export function vectorRounds(): PrivateUtilities[] {
  const rng = createRng(20250101);
  const r = () => rng.next();
  const round = (full: number, empty: number, withOnly: number[], without: number[]) => ({
    full,
    empty,
    withOnly,
    without,
  });
  const empty = 0.6 + 0.1 * r();
  const gain = 0.02 + 0.05 * r();
  return [
    // early round (FP/EE normalizers far from 0)
    round(0.7, 0.1, [0.52, 0.47, 0.55, 0.5, 0.45], [0.63, 0.61, 0.64, 0.6, 0.62]),
    // late tight round (test/audit/manipulation-audit.test.ts round 2): three silos tie under EE
    round(0.85, 0.8, [0.81, 0.805, 0.812, 0.808, 0.803, 0.809], [0.84, 0.845, 0.842, 0.838, 0.846, 0.841]),
    // late round with four silos (FP/EE unbounded)
    round(0.85, 0.8, [0.81, 0.78, 0.83, 0.8], [0.84, 0.845, 0.83, 0.845]),
    // five silos, random late-round marginals
    round(
      empty + gain,
      empty,
      Array.from({ length: 5 }, () => empty - gain + 1.9 * gain * r()),
      Array.from({ length: 5 }, () => empty + gain / 10 + 0.9 * gain * r()),
    ),
    // five silos, arbitrary values (mixed signs of the marginals)
    round(
      0.4 + r(),
      0.3 * r(),
      Array.from({ length: 5 }, () => r()),
      Array.from({ length: 5 }, () => r()),
    ),
    // two silos; Remark 1 case (Σα = 0, ΣLOO ≠ 0)
    round(1, 0, [-1, -2], [-2, 1]),
    // three silos, every marginal zero (equal shares)
    round(3, 0, [0, 0, 0], [3, 3, 3]),
  ];
}

const range = { lo: 0, hi: 1 };
/** An extremum's value and how it was found; with the attaining reports when asked. */
const bound = (e: Extremum, withReports = false) => ({
  value: e.value,
  unbounded: e.unbounded,
  exact: e.exact,
  method: e.method,
  evaluations: e.evaluations,
  ...(withReports ? { reports: e.reports } : {}),
});

/** Every public function on every round of `vectorRounds`. */
export function recordVectors(api: ManipulationApi) {
  return vectorRounds().map((u) => {
    const n = u.withOnly.length;
    const silos = [...Array(n).keys()];
    const attacks = api.simulateAttacks(u, { seed: 1, randomTrials: 1 });
    const schemes = Object.fromEntries(
      SCHEMES.map((s) => {
        const single = api.singleSiloBounds(s, u, { range });
        return [
          s,
          {
            weights: Array.from(api.schemeWeights(s, u)),
            scores: Array.from(api.schemeScores(s, u)),
            normalizer: api.schemeNormalizer(s, u),
            influence: api.influenceMatrix(s, u).map((row) => Array.from(row)),
            sensitivity: api.sensitivityMatrix(s, u).map((row) => Array.from(row)),
            selfGain: single.map((b) => bound(b.selfGain, true)),
            selfGainUndetected: single.map((b) => b.selfGainUndetected.value),
            damage: single.map((b) => b.damage.map((e) => (e === null ? null : e.value))),
            collusion2: api
              .collusionBounds(s, u, 2)
              .map((c) => [c.totalGain.value, ...c.memberGain.map((e) => e.value)]),
            collusion3: n >= 3 && n <= 6 ? api.collusionBounds(s, u, 3).map((c) => c.totalGain.value) : null,
            collusion3Search:
              s === 'eeMedian' && n >= 5 && n <= 6
                ? api.collusionBounds(s, u, 3, { exactBudget: 1 }).map((c) => bound(c.totalGain))
                : null,
            attackSpearman: attacks.map((o) => o.effects[s]!.spearman),
            attackerShareChange: attacks.map((o) => o.effects[s]!.shareChange[o.attacker]!),
          },
        ];
      }),
    );
    const detection = api.detectReports(u);
    return {
      utilities: u,
      schemes,
      closedForm: {
        loo: silos.map((i) => api.looSelfGain(u, i, range)),
        ioi: silos.map((i) => api.ioiSelfGain(u, i, range)),
        fp: silos.map((i) => api.fpSelfGain(u, i, range)),
        ee: silos.map((i) => api.eeSelfGain(u, i, range)),
      },
      eeMedianDamageBound: silos.map((i) =>
        silos.map((v) => (i === v ? null : api.eeMedianDamageBound(u, i, v))),
      ),
      detection: {
        ...detection,
        zWithOnly: Array.from(detection.zWithOnly),
        zWithout: Array.from(detection.zWithout),
      },
      undetectedBoxes: silos.map((i) => api.undetectedBox(u, i, range)),
      attacks: attacks.map((o) => ({
        kind: o.kind,
        attacker: o.attacker,
        trial: o.trial,
        reports: o.reports,
        detected: o.detected,
        honestSilosFlagged: o.honestSilosFlagged,
      })),
    };
  });
}

/** JSON.stringify replacer: ±Infinity and NaN as strings. */
export const encodeNonFinite = (_key: string, v: unknown) =>
  typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;

/** JSON.parse reviver: the strings of `encodeNonFinite` back to numbers. */
export const decodeNonFinite = (_key: string, v: unknown) =>
  v === 'Infinity' || v === '-Infinity' || v === 'NaN' ? Number(v) : v;
