/**
 * The worker thread of the service's audit (./audit-worker.ts): audits one recorded round at a
 * time (src/audit/manipulation-audit.ts `auditRecordedRound`) and answers with its JSON, so that neither the
 * audit nor the serialization of its matrices runs on the service's event loop.
 */
import { parentPort } from 'node:worker_threads';
import { auditRecordedRound, auditSummaryPart } from '../../audit/manipulation-audit.js';
import type { AuditTask } from './audit-worker.js';

parentPort!.on('message', (task: AuditTask & { id: number }) => {
  try {
    const entry = auditRecordedRound(task.round, task.options, task.emptyCoalition);
    const summary = JSON.stringify(auditSummaryPart(entry));
    parentPort!.postMessage({ id: task.id, ok: true, json: JSON.stringify(entry), summary });
  } catch (e) {
    parentPort!.postMessage({ id: task.id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
