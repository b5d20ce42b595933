/**
 * Running round audits off the event loop: one worker thread (./_audit-thread.ts), started when
 * the first round is audited and kept for the next; a round's audit runs there while the service
 * keeps answering every consortium. The thread does not keep the process alive; `close` ends it.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { EmptyCoalition } from '../../../scoring/empty-coalition.js';
import type { AuditOptions, RecordedRound } from '../../audit/manipulation-audit.js';

/** One round to audit, with the options and v(∅) of its consortium. */
export interface AuditTask {
  readonly round: RecordedRound;
  readonly options: AuditOptions;
  readonly emptyCoalition: EmptyCoalition;
}

/** A round's audit entry and the part of it the summary reads, both as JSON. */
export interface AuditedRoundJson {
  readonly json: string;
  readonly summary: string;
}

interface Reply {
  id: number;
  ok: boolean;
  json?: string;
  summary?: string;
  error?: string;
}

/**
 * The worker to start. From compiled JavaScript it is `_audit-thread.js`; from TypeScript sources
 * (tsx, vitest) a bootstrap that registers tsx's loader in the worker first (as src/ml/parallel.ts).
 */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./_audit-thread.js', import.meta.url));
  const tsxRoot = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  const tsxApi = pathToFileURL(join(tsxRoot, 'dist/esm/api/index.mjs')).href;
  const target = new URL('./_audit-thread.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); });`;
  return new Worker(boot, { eval: true });
}

/** The audit thread: `run` audits one round there and resolves with its entry's JSON. */
export class AuditWorker {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (a: AuditedRoundJson) => void; reject: (e: Error) => void }
  >();

  /** The round's audit entry as JSON. @throws Error with the audit's message, or when the thread died. */
  run(task: AuditTask): Promise<AuditedRoundJson> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ ...task, id });
    });
  }

  /** Ends the thread; audits under way are refused. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.failAll(new Error('the audit thread was closed'));
  }

  private start(): Worker {
    const worker = startWorker();
    worker.unref();
    worker.on('message', (m: Reply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve({ json: m.json!, summary: m.summary! });
      else p.reject(new Error(m.error));
    });
    const died = (e: Error) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(e);
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`the audit thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  private failAll(e: Error): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}
