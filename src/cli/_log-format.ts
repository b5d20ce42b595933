/**
 * The service's log on a terminal: pino writes one JSON object per line; `pretty` turns each into
 * `HH:MM:SS LEVEL message key=value …` for a person reading it, `json` leaves the lines for
 * machines (log shippers, `jq`). `fedscore serve --log-format` (or FEDSCORE_LOG_FORMAT) picks one;
 * without either, pretty on a terminal and JSON otherwise.
 */

/** The log formats `fedscore serve` writes. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** pino's numeric levels and their names. */
const LEVELS: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields a pretty line leaves out: pino's own, and those the round lines already say. */
const QUIET = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'msg',
  'reqId',
  'consortium',
  'round',
  'event',
  'late',
]);

/**
 * The format to write: `asked` (the flag or FEDSCORE_LOG_FORMAT) when given, else pretty on a
 * terminal and JSON otherwise.
 */
export function chooseLogFormat(asked: LogFormat | undefined, isTTY: boolean): LogFormat {
  return asked ?? (isTTY ? 'pretty' : 'json');
}

/**
 * One pino JSON line as a person reads it: local time, level, message, then the other fields as
 * `key=value` (an error as its message). A line that is not a JSON object is returned unchanged.
 */
export function prettyLogLine(line: string): string {
  let o: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return line;
    o = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof o.time === 'number' ? new Date(o.time).toTimeString().slice(0, 8) : '--:--:--';
  const level = (typeof o.level === 'number' ? LEVELS[o.level] : undefined) ?? String(o.level ?? '');
  const parts = [time, level.padEnd(5), typeof o.msg === 'string' ? o.msg : ''];
  for (const [k, v] of Object.entries(o)) {
    if (QUIET.has(k) || v === undefined) continue;
    if (k === 'err' && typeof v === 'object' && v !== null) {
      const e = v as { type?: string; message?: string };
      parts.push(`error=${JSON.stringify(`${e.type ?? 'Error'}: ${e.message ?? ''}`)}`);
    } else parts.push(`${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`);
  }
  return parts.join(' ').trimEnd();
}

/**
 * A pino destination that writes each JSON line to `out` in the pretty form (pino hands it whole
 * lines, one `write` each).
 */
export function prettyLogStream(out: { write(s: string): unknown }): { write(chunk: string): void } {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line !== '') out.write(`${prettyLogLine(line)}\n`);
    },
  };
}
