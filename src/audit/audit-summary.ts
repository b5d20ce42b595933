/**
 * The summary of an audit (`AuditResult.summary`, `detectionRates`; docs/audit.md) over its
 * audited rounds, and the part of a round's audit it reads (`auditSummaryPart`): a few numbers per
 * silo, so that a service keeping each round's audit as JSON computes the summary without
 * parsing the rounds' N × N matrices again.
 */
import { ATTACK_KINDS, type AttackKind } from '../../scoring/manipulation/misreports.js';
import { SCHEMES, type Scheme } from '../../scoring/private.js';
import type { AttackSummaryJson, BoundJson, RoundAudit, SchemeSummary } from '../records/audit-json.js';

/** Mean of the finite values, null when none. */
export const mean = (xs: number[]): number | null => {
  const f = xs.filter(Number.isFinite);
  return f.length === 0 ? null : f.reduce((s, x) => s + x, 0) / f.length;
};
export const max = (xs: number[]): number | null => {
  const f = xs.filter(Number.isFinite);
  return f.length === 0 ? null : Math.max(...f);
};
export const min = (xs: number[]): number | null => {
  const f = xs.filter(Number.isFinite);
  return f.length === 0 ? null : Math.min(...f);
};

/**
 * What the summary reads of a round's audit (`auditSummaryPart`): per scheme the self-gain bounds'
 * share and unboundedness and the attacks' means, and the detection rates.
 */
export interface RoundAuditSummaryPart {
  round: number;
  schemes: Record<
    Scheme,
    {
      selfGain: Pick<BoundJson, 'share' | 'unbounded'>[];
      selfGainUndetected: Pick<BoundJson, 'share' | 'unbounded'>[];
      attacks: Record<AttackKind, Pick<AttackSummaryJson, 'meanSpearman' | 'meanAttackerShareChange'>>;
    }
  >;
  detection: { rates: Record<AttackKind, number | null> };
}

/** The part of a round's audit its summary needs (a few numbers per silo, no N × N matrix). */
export function auditSummaryPart(
  entry: RoundAudit | { round: number; skipped: string },
): RoundAuditSummaryPart | { round: number; skipped: string } {
  if (!('schemes' in entry)) return entry;
  const bound = (b: BoundJson) => ({ share: b.share, unbounded: b.unbounded });
  return {
    round: entry.round,
    schemes: Object.fromEntries(
      SCHEMES.map((s) => {
        const a = entry.schemes[s];
        const attacks = Object.fromEntries(
          ATTACK_KINDS.map((k) => [
            k,
            {
              meanSpearman: a.attacks[k].meanSpearman,
              meanAttackerShareChange: a.attacks[k].meanAttackerShareChange,
            },
          ]),
        );
        return [
          s,
          { selfGain: a.selfGain.map(bound), selfGainUndetected: a.selfGainUndetected.map(bound), attacks },
        ];
      }),
    ) as RoundAuditSummaryPart['schemes'],
    detection: { rates: entry.detection.rates },
  };
}

/** The per-scheme summary and the detection rates over the audited rounds among `parts`. */
export function summaryOf(
  parts: readonly (RoundAuditSummaryPart | RoundAudit | { round: number; skipped: string })[],
): { summary: Record<Scheme, SchemeSummary>; detectionRates: Record<AttackKind, number | null> } {
  const audited = parts.filter((x): x is RoundAuditSummaryPart => 'schemes' in x);
  const summary = Object.fromEntries(
    SCHEMES.map((s) => {
      const per = audited.map((a) => a.schemes[s]);
      const gains = per.flatMap((p) => p.selfGain);
      const undetected = per.flatMap((p) => p.selfGainUndetected);
      const attacks = Object.fromEntries(
        ATTACK_KINDS.map((k) => [
          k,
          {
            meanSpearman: mean(per.map((p) => p.attacks[k].meanSpearman ?? Number.NaN)),
            meanAttackerShareChange: mean(per.map((p) => p.attacks[k].meanAttackerShareChange ?? Number.NaN)),
          },
        ]),
      ) as SchemeSummary['attacks'];
      const summaryOf: SchemeSummary = {
        unboundedSelfGain: gains.filter((g) => g.unbounded).length,
        siloRounds: gains.length,
        maxFiniteSelfGainShare: max(gains.map((g) => g.share ?? Number.NaN)),
        meanUndetectedSelfGainShare: mean(undetected.map((g) => g.share ?? Number.NaN)),
        maxUndetectedSelfGainShare: max(undetected.map((g) => g.share ?? Number.NaN)),
        unboundedUndetectedSelfGain: undetected.filter((g) => g.unbounded).length,
        attacks,
      };
      return [s, summaryOf];
    }),
  ) as Record<Scheme, SchemeSummary>;
  const detectionRates = Object.fromEntries(
    ATTACK_KINDS.map((k) => [k, mean(audited.map((a) => a.detection.rates[k] ?? Number.NaN))]),
  ) as Record<AttackKind, number | null>;
  return { summary, detectionRates };
}
