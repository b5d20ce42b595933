/**
 * A loopback HTTP proxy between the silo processes and the service, for the end-to-end tests
 * (test/e2e/consortium.test.ts, test/client/e2e.test.ts): it forwards every request once the
 * service's address is known and records each answer, except the first request the test picks,
 * which it holds (never forwarded, connection left open) so that the test can kill its sender
 * mid-request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the service answered, with the silo that sent it (x-fedscore-silo). */
export interface Forwarded {
  readonly silo: string;
  readonly method: string;
  readonly url: string;
  readonly status: number;
}

/** Which request to hold: its method, URL and sending silo. */
export type HoldWhen = (method: string, url: string, silo: string) => boolean;

export class SiloProxy {
  readonly accepted: Forwarded[] = [];
  /** The held request's response, once one was held. */
  held: ServerResponse | undefined;
  private target = '';
  private resolveReady!: () => void;
  private readonly ready = new Promise<void>((r) => (this.resolveReady = r));
  private readonly server: Server;

  /** `onHold` runs when the request is held (e.g. SIGKILL its sender). */
  constructor(holdWhen: HoldWhen, onHold: () => void) {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const silo = String(req.headers['x-fedscore-silo'] ?? '');
      if (this.held === undefined && holdWhen(req.method!, req.url!, silo)) {
        this.held = res;
        onHold();
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void this.forward(req, res, silo, chunks));
    });
  }

  /** Listens on a free loopback port; the proxy's URL. */
  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The service's URL: requests wait for it. */
  forwardTo(url: string): void {
    this.target = url;
    this.resolveReady();
  }

  close(): Promise<void> {
    return new Promise<void>((r) => this.server.close(() => r()));
  }

  private async forward(req: IncomingMessage, res: ServerResponse, silo: string, chunks: Buffer[]) {
    await this.ready;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === 'string' && k !== 'host' && k !== 'connection') headers[k] = v;
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    try {
      const r = await fetch(`${this.target}${req.url}`, {
        method: req.method!,
        headers,
        ...(body ? { body } : {}),
      });
      const bytes = Buffer.from(await r.arrayBuffer());
      this.accepted.push({ silo, method: req.method!, url: req.url!, status: r.status });
      const out: Record<string, string> = {};
      r.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
      });
      res.writeHead(r.status, out).end(bytes);
    } catch {
      res.destroy();
    }
  }
}
