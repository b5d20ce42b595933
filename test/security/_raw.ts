/**
 * Raw HTTP/1.1 over a `node:net` socket for the attack tests: what an attacker's client sends
 * (headers without a body, a body that stalls, malformed framing) and what comes back — the
 * response, when it arrived, and whether the server closed the connection.
 */
import net from 'node:net';

/** What came back on one connection. */
export interface RawAnswer {
  /** HTTP status of the first response, or 0 if none arrived. */
  status: number;
  headers: Record<string, string>;
  /** The response body (after the blank line), as text. */
  body: string;
  /** ms from connecting to the first response byte (Infinity if none). */
  firstByteMs: number;
  /** ms from connecting until the server closed the connection (Infinity if it stayed open). */
  closedMs: number;
}

/**
 * Connects to `url`'s host and port, writes `chunks` (a number = pause that many ms), and
 * collects what the server sends for at most `waitMs` after the last write.
 */
export async function raw(
  url: string,
  chunks: (string | Buffer | number)[],
  waitMs = 3000,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  const t0 = performance.now();
  let firstByteMs = Number.POSITIVE_INFINITY;
  let closedMs = Number.POSITIVE_INFINITY;
  const received: Buffer[] = [];
  let closed = false;
  const done = new Promise<void>((resolve) => {
    socket.on('data', (d: Buffer) => {
      if (received.length === 0) firstByteMs = performance.now() - t0;
      received.push(d);
    });
    socket.on('close', () => {
      closed = true;
      closedMs = performance.now() - t0;
      resolve();
    });
    socket.on('error', () => {}); // EPIPE / ECONNRESET when the server hangs up mid-upload
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  for (const c of chunks) {
    if (closed) break;
    if (typeof c === 'number') await new Promise((r) => setTimeout(r, c));
    else socket.write(c);
  }
  await Promise.race([done, new Promise((r) => setTimeout(r, waitMs))]);
  socket.destroy();
  const text = Buffer.concat(received).toString('latin1');
  const headEnd = text.indexOf('\r\n\r\n');
  const head = headEnd < 0 ? text : text.slice(0, headEnd);
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const k = l.indexOf(':');
    if (k > 0) headers[l.slice(0, k).trim().toLowerCase()] = l.slice(k + 1).trim();
  }
  let body = headEnd < 0 ? '' : text.slice(headEnd + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return {
    status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0),
    headers,
    body,
    firstByteMs,
    closedMs,
  };
}

function unchunk(s: string): string {
  let out = '';
  let o = 0;
  for (;;) {
    const eol = s.indexOf('\r\n', o);
    if (eol < 0) return out;
    const size = Number.parseInt(s.slice(o, eol), 16);
    if (!(size > 0)) return out;
    out += s.slice(eol + 2, eol + 2 + size);
    o = eol + 2 + size + 2;
  }
}

/** A request head: request line, `Host`, the given headers, blank line. */
export function head(method: string, path: string, headers: Record<string, string | number> = {}): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
}
