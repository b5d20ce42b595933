/**
 * The audit section of the experiment report (issue 7): per scheme, how far one misreporting silo
 * can move scores, what the detector catches, and the influence matrix of the last audited round.
 */
import type { AuditResult, RoundAudit } from '../audit/manipulation-audit.js';

const f = (x: number | null | undefined, d = 3) =>
  x === null || x === undefined || !Number.isFinite(x) ? 'unbounded' : x.toFixed(d);

const na = (x: number | null) => (x === null || !Number.isFinite(x) ? 'n/a' : x.toFixed(3));

/** Rows of the per-scheme summary table (header first). */
export function auditSummaryRows(a: AuditResult): string[][] {
  const rows = [
    [
      'scheme',
      'unbounded self-gain (silo-rounds)',
      'max finite self-gain / v(M)',
      'mean undetected self-gain / v(M)',
      'inflate-self: mean Spearman',
    ],
  ];
  for (const s of a.schemes) {
    const m = a.summary[s];
    rows.push([
      s,
      `${m.unboundedSelfGain}/${m.siloRounds}`,
      f(m.maxFiniteSelfGainShare),
      f(m.meanUndetectedSelfGainShare),
      na(m.attacks.inflateSelf.meanSpearman),
    ]);
  }
  return rows;
}

/** The last audited round of the first run, if any. */
export function lastAuditedRound(a: AuditResult): RoundAudit | undefined {
  const rounds = a.runs[0]?.rounds ?? [];
  for (let k = rounds.length - 1; k >= 0; k--) if ('schemes' in rounds[k]!) return rounds[k] as RoundAudit;
  return undefined;
}

/** Silo s's name as the audited file or results.json gives it (`silo-<s>` when it gives none). */
const siloName = (a: AuditResult, s: number) => a.source.silos?.[s] ?? `silo-${s}`;

/** The influence matrix of one round, rows and columns named after the silos. */
function matrixRows(a: AuditResult, rd: RoundAudit, scheme: 'ee' | 'eeMedian'): string[][] {
  const head = ['scored \\ reporting', ...rd.silos.map((s) => siloName(a, s))];
  return [
    head,
    ...rd.schemes[scheme].influence.map((row, i) => [
      siloName(a, rd.silos[i]!),
      ...row.map((x) => x.toFixed(3)),
    ]),
  ];
}

function md(rows: string[][]): string {
  const [head, ...body] = rows;
  return [
    `| ${head!.join(' | ')} |`,
    `|${head!.map(() => '---').join('|')}|`,
    ...body.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

const esc = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

function html(rows: string[][]): string {
  const [head, ...body] = rows;
  return `<table><thead><tr>${head!.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${body
    .map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

function detectionLine(a: AuditResult): string {
  const rates = Object.entries(a.detectionRates ?? {})
    .map(([k, v]) => `${k} ${v === null ? 'n/a' : (v as number).toFixed(2)}`)
    .join(', ');
  return `Detection rate of the robust-z detector (threshold ${a.options.threshold}) on simulated misreports: ${rates}.`;
}

/** The audit section in Markdown. */
export function auditMarkdown(a: AuditResult): string {
  const rd = lastAuditedRound(a);
  return [
    '## Manipulation audit',
    '',
    `Reports range over [${a.options.range.lo}, ${a.options.range.hi}]. Self-gain is the largest increase of a silo's own score it can reach by misreporting its two utilities; shares are of v(M). See docs/audit.md.`,
    '',
    md(auditSummaryRows(a)),
    '',
    detectionLine(a),
    ...(rd
      ? [
          '',
          `### Influence matrix, EE, round ${rd.round} (seed ${a.runs[0]?.seed}; papers/003 Table 9)`,
          '',
          md(matrixRows(a, rd, 'ee')),
        ]
      : []),
    '',
  ].join('\n');
}

/** The audit section as HTML (inserted before </body> of report.html). */
export function auditHtml(a: AuditResult): string {
  const rd = lastAuditedRound(a);
  return `<section id="audit"><h2>Manipulation audit</h2>
<p>Reports range over [${a.options.range.lo}, ${a.options.range.hi}]. Self-gain is the largest increase of a silo's own score it can reach by misreporting its two utilities; shares are of v(M).</p>
${html(auditSummaryRows(a))}
<p>${esc(detectionLine(a))}</p>
${rd ? `<h3>Influence matrix, EE, round ${rd.round} (papers/003 Table 9)</h3>${html(matrixRows(a, rd, 'ee'))}` : ''}
</section>`;
}
