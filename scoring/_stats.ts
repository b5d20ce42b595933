/** Internal: per-player running mean and variance (Welford 1962). Never re-exported. */

/** Running moments of one sample stream per player. */
export class RunningMoments {
  readonly count: Float64Array;
  readonly mean: Float64Array;
  private readonly m2: Float64Array;

  constructor(n: number) {
    this.count = new Float64Array(n);
    this.mean = new Float64Array(n);
    this.m2 = new Float64Array(n);
  }

  /** Adds one observation x for player i. */
  add(i: number, x: number): void {
    const k = this.count[i]! + 1;
    this.count[i] = k;
    const d = x - this.mean[i]!;
    this.mean[i]! += d / k;
    this.m2[i]! += d * (x - this.mean[i]!);
  }

  /** Adds one observation per player (x[i] for player i). */
  addAll(x: Float64Array): void {
    for (let i = 0; i < x.length; i++) this.add(i, x[i]!);
  }

  /** Unbiased sample variance of player i's observations (NaN with fewer than 2). */
  variance(i: number): number {
    const k = this.count[i]!;
    return k < 2 ? Number.NaN : this.m2[i]! / (k - 1);
  }

  /** Standard error of each player's mean: sqrt(s²/k) (NaN with fewer than 2 observations). */
  stderr(): Float64Array {
    const out = new Float64Array(this.count.length);
    for (let i = 0; i < out.length; i++) out[i] = Math.sqrt(this.variance(i) / this.count[i]!);
    return out;
  }
}
