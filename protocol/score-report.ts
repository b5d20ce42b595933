/**
 * Signed score reports: after round r, silo i evaluates its two private coalitions on the common
 * test set — its singleton, v(M0 + U_i), and the grand coalition without it, v(M − U_i) — and
 * sends them signed (docs/architecture.md, "One round, private mode", step 5; papers/003 Def. 2–4 use
 * these values for LOO, IOI, FP and EE). Per-class vectors are optional (Maverick-aware scores).
 * The scores themselves are computed in scoring/.
 *
 * Encoding: "FSR" ‖ version u8 ‖ session (u8 length + UTF-8) ‖ round u32 ‖ silo u8 ‖ singleton f64 ‖
 * complement f64 ‖ classes u32 ‖ classes × f64 singleton ‖ classes × f64 complement ‖ signature.
 * The signature covers "fedscore/score-report/v1" ‖ everything before it, so a report cannot be
 * moved to another session, round or silo; a replay within the round is the same report
 * (the store keeps one report per (session, round, silo)).
 */
import { checkBytes, checkInt, checkString } from '../crypto/check.js';
import { ED25519_SIGNATURE_LENGTH, sign, verify } from '../crypto/signature.js';
import { SecAggError } from './errors.js';

/** Version of the score-report encoding. */
export const SCORE_REPORT_VERSION = 1;
const MAGIC = [0x46, 0x53, 0x52]; // "FSR"
const TAG = new TextEncoder().encode('fedscore/score-report/v1');

/** What a silo reports for a round. */
export interface ScoreReport {
  readonly session: string;
  readonly round: number;
  readonly silo: number;
  /** v(M0 + U_i): utility of the model with only this silo's update. */
  readonly singleton: number;
  /** v(M − U_i): utility of the aggregate without this silo's update. */
  readonly complement: number;
  /** Optional per-class utilities, same length for both. */
  readonly perClass?: { readonly singleton: Float64Array; readonly complement: Float64Array };
}

function checkReport(r: ScoreReport): void {
  if (typeof r !== 'object' || r === null) throw new TypeError('report: expected an object');
  checkString('report.session', r.session, 255);
  checkInt('report.round', r.round, 0, 0xffffffff);
  checkInt('report.silo', r.silo, 0, 254);
  for (const f of ['singleton', 'complement'] as const)
    if (typeof r[f] !== 'number' || !Number.isFinite(r[f]))
      throw new RangeError(`report.${f}: expected a finite number`);
  if (r.perClass !== undefined) {
    const { singleton, complement } = r.perClass;
    if (!(singleton instanceof Float64Array) || !(complement instanceof Float64Array))
      throw new TypeError('report.perClass: expected two Float64Array');
    if (singleton.length !== complement.length)
      throw new RangeError('report.perClass.complement: length differs from report.perClass.singleton');
    for (const v of [...singleton, ...complement])
      if (!Number.isFinite(v)) throw new RangeError('report.perClass: values must be finite');
  }
}

function body(r: ScoreReport): Uint8Array {
  const session = new TextEncoder().encode(r.session);
  const k = r.perClass?.singleton.length ?? 0;
  const out = new Uint8Array(3 + 1 + 1 + session.length + 4 + 1 + 16 + 4 + 16 * k);
  const dv = new DataView(out.buffer);
  out.set(MAGIC, 0);
  let o = 3;
  out[o++] = SCORE_REPORT_VERSION;
  out[o++] = session.length;
  out.set(session, o);
  o += session.length;
  dv.setUint32(o, r.round, false);
  o += 4;
  out[o++] = r.silo;
  dv.setFloat64(o, r.singleton, false);
  dv.setFloat64(o + 8, r.complement, false);
  dv.setUint32(o + 16, k, false);
  o += 20;
  for (const arr of [r.perClass?.singleton, r.perClass?.complement])
    for (let i = 0; i < k; i++, o += 8) dv.setFloat64(o, arr![i]!, false);
  return out;
}

function tagged(b: Uint8Array): Uint8Array {
  const m = new Uint8Array(TAG.length + b.length);
  m.set(TAG, 0);
  m.set(b, TAG.length);
  return m;
}

/**
 * Encodes and signs a score report with the silo's registered Ed25519 key.
 *
 * @returns the signed encoding (owned by the caller).
 * @throws TypeError / RangeError naming the bad field.
 */
export function signScoreReport(report: ScoreReport, signingKey: Uint8Array): Uint8Array {
  checkReport(report);
  checkBytes('signingKey', signingKey, 32);
  const b = body(report);
  const out = new Uint8Array(b.length + ED25519_SIGNATURE_LENGTH);
  out.set(b, 0);
  out.set(sign(signingKey, tagged(b)), b.length);
  return out;
}

/**
 * Decodes a signed report without verifying it.
 *
 * @throws SecAggError MALFORMED (truncated, trailing bytes, bad magic, non-finite values) or
 *   UNSUPPORTED_VERSION.
 */
export function decodeScoreReport(bytes: Uint8Array): {
  report: ScoreReport;
  signature: Uint8Array;
  body: Uint8Array;
} {
  checkBytes('bytes', bytes);
  const fail = (d: string) => new SecAggError('MALFORMED', d);
  if (bytes.length < 3 + 2 + 1 + 4 + 1 + 20 + ED25519_SIGNATURE_LENGTH) throw fail('truncated report');
  if (bytes[0] !== MAGIC[0] || bytes[1] !== MAGIC[1] || bytes[2] !== MAGIC[2]) throw fail('bad magic');
  if (bytes[3] !== SCORE_REPORT_VERSION) throw new SecAggError('UNSUPPORTED_VERSION', `version ${bytes[3]}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sl = bytes[4]!;
  let o = 5;
  if (sl === 0 || o + sl + 4 + 1 + 20 > bytes.length) throw fail('truncated report');
  let session: string;
  try {
    session = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(o, o + sl));
  } catch {
    throw fail('session is not UTF-8');
  }
  o += sl;
  const round = dv.getUint32(o, false);
  const silo = bytes[o + 4]!;
  o += 5;
  const singleton = dv.getFloat64(o, false);
  const complement = dv.getFloat64(o + 8, false);
  const k = dv.getUint32(o + 16, false);
  o += 20;
  if (o + 16 * k + ED25519_SIGNATURE_LENGTH !== bytes.length)
    throw fail('length does not match the class count');
  const read = () => {
    const a = new Float64Array(k);
    for (let i = 0; i < k; i++, o += 8) a[i] = dv.getFloat64(o, false);
    return a;
  };
  const pcS = read();
  const pcC = read();
  const report: ScoreReport = {
    session,
    round,
    silo,
    singleton,
    complement,
    ...(k > 0 ? { perClass: { singleton: pcS, complement: pcC } } : {}),
  };
  try {
    checkReport(report);
  } catch (e) {
    throw fail((e as Error).message);
  }
  return { report, signature: bytes.slice(o), body: bytes.slice(0, o) };
}

/**
 * Verifies a signed report: decodes it, checks session and round against the expected ones, the
 * silo against the roster, and the signature against the silo's registered key.
 *
 * @returns the report.
 * @throws SecAggError MALFORMED, UNSUPPORTED_VERSION, WRONG_SESSION, WRONG_ROUND, UNKNOWN_SENDER or
 *   BAD_SIGNATURE.
 */
export function verifyScoreReport(
  bytes: Uint8Array,
  expected: { readonly session: string; readonly round: number; readonly roster: readonly Uint8Array[] },
): ScoreReport {
  const { report, signature, body: b } = decodeScoreReport(bytes);
  if (report.session !== expected.session)
    throw new SecAggError('WRONG_SESSION', `session ${report.session}`);
  if (report.round !== expected.round) throw new SecAggError('WRONG_ROUND', `round ${report.round}`);
  const key = expected.roster[report.silo];
  if (key === undefined) throw new SecAggError('UNKNOWN_SENDER', `silo ${report.silo}`);
  if (!verify(key, tagged(b), signature))
    throw new SecAggError('BAD_SIGNATURE', `report is not signed by silo ${report.silo}`);
  return report;
}
