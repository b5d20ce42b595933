/**
 * Per-silo request limits (docs/threat-model.md Part 2, "Endpoint costs"): fixed windows of
 * `windowMs`, counted per consortium and silo, checked once a request's signature is verified and
 * before its nonce is stored (access.ts), so a refused request costs one signature check and no
 * row. A silo has
 * - per write route (secure-aggregation messages, score reports): `max` requests per window;
 * - over all its reads (inbox, consortium, rounds, scores, models, aggregates): `max` per window;
 * - of those, reads of vectors (a model version, the aggregate sum: 4·d and 8·d bytes):
 *   `maxVectorReads` per window, which bounds the bytes one silo draws per window at
 *   maxVectorReads · 8·(d + 1).
 * A refused request is answered 429 FEDSCORE_ERR_RATE_LIMITED with `retry-after` (seconds until
 * the window ends). Counters live in the process (one replica's share of the window).
 */
import { ServiceError } from './errors.js';

/** The limits (app.ts `Settings.rateLimit`). */
export interface RateLimits {
  /** Requests per silo and window, per write route and over all reads. */
  readonly max: number;
  /** Vector reads (models, aggregate sums) per silo and window. */
  readonly maxVectorReads: number;
  readonly windowMs: number;
}

/** A 429 that says when to retry (app.ts sets `retry-after` from it). */
export class RateLimited extends ServiceError {
  constructor(readonly retryAfterS: number) {
    super('FEDSCORE_ERR_RATE_LIMITED', `retry in ${retryAfterS} s`);
  }
}

/** The kind of a signed request, for its counters. */
export type Bucket = { kind: 'write'; route: string } | { kind: 'read'; vector: boolean };

/** Fixed-window counters per key. */
export class SiloLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly limits: RateLimits,
    private readonly now: () => number,
  ) {}

  /**
   * Counts a request of `silo` in consortium `cid`.
   * @throws RateLimited when a counter of the request is already full (nothing is counted then).
   */
  take(cid: string, silo: number, bucket: Bucket): void {
    const now = this.now();
    this.sweep(now);
    const keys: [string, number][] =
      bucket.kind === 'write'
        ? [[`${cid}/${silo}/write ${bucket.route}`, this.limits.max]]
        : [
            [`${cid}/${silo}/read`, this.limits.max],
            ...(bucket.vector
              ? [[`${cid}/${silo}/vector`, this.limits.maxVectorReads] as [string, number]]
              : []),
          ];
    const windows = keys.map(([key, max]) => {
      let w = this.windows.get(key);
      if (w === undefined || now - w.start >= this.limits.windowMs) {
        w = { start: now, count: 0 };
        this.windows.set(key, w);
      }
      return { w, max };
    });
    const full = windows.find(({ w, max }) => w.count >= max);
    if (full)
      throw new RateLimited(Math.max(1, Math.ceil((full.w.start + this.limits.windowMs - now) / 1000)));
    for (const { w } of windows) w.count++;
  }

  /** Drops ended windows, at most once per window (the map holds the silos of one window). */
  private sweep(now: number): void {
    if (now - this.sweptAt < this.limits.windowMs) return;
    this.sweptAt = now;
    for (const [key, w] of this.windows) if (now - w.start >= this.limits.windowMs) this.windows.delete(key);
  }
}
