/**
 * The silo's model chain (issue 27, against model inconsistency: Pasquini et al., CCS 2022,
 * "Eluding Secure Aggregation in Federated Learning via Model Inconsistency").
 *
 * A server that serves the target silo the true model and the other silos a model on which
 * their updates vanish reads the target's update off the aggregate. The silo therefore trains
 * only on a model it derives itself from public, signed-for facts:
 *
 *  - M_0 is the consortium file's `model.initialWeightsDigest` (pinned silos; an unpinned silo
 *    takes the first M_0 it is served, and relies on the in-round check below);
 *  - the service numbers models by round: version v ≥ 1 is the result of round v, written when
 *    round v's sum is known (its `resultModel`), and a round opens from the latest version. So
 *    the base model of round r is version b(r) = max({0} ∪ {v < r : round v has a result}):
 *    aborted rounds leave the model unchanged;
 *  - M_v = M_{b(v)} + Σ w_iΔ_i / Σ w_i of round v, from the published `GET …/rounds/v/aggregate`
 *    (Σ w_i) and `…/aggregate/sum` (Σ w_iΔ_i, Float64), through protocol/weighted.ts
 *    `stepModel`, the very function the service stores version v with — bit for bit.
 *
 * A round whose `baseModel` is not b(r), or an earlier round with a result whose `baseModel` is
 * not b(v), is refused (BASE_MODEL_RENUMBERED), and so is a served model whose bytes differ from
 * the derived one (MODEL_NOT_IN_CHAIN); both name the round. The silo keeps the latest derived
 * model across rounds; a silo that starts late (`--first-round k`) or restarts rebuilds it from
 * M_0 through the published aggregates of the rounds before k.
 *
 * History only grows (issue 32, R1 b): a round result the silo accepted (it reported on it; the
 * silo's journal keeps the round and the digest of M_r across restarts, ./journal.ts) that is
 * no longer listed with a result, or is listed with another aggregate, and a base version below
 * one the chain already reached, are refused (HISTORY_REGRESSION) — never a silent reset to M_0,
 * which would let the server replay a base model.
 *
 * What is left — two silos pinned to the same M_0 cannot be served different M_r without one of
 * them refusing; an unpinned silo can be given another M_0 — is caught inside the round: the
 * digest of the model each silo trained on is part of its signed round context
 * (protocol/round-context.ts), and a silo aborts on a peer whose digest differs.
 */
import { stepModel } from '../../protocol/weighted.js';
import { paramsDigest } from '../ml/layers-model.js';
import type { SiloHttp } from './http.js';
import { SiloSetupError } from './silo-errors.js';

/** How the chain refuses: a renumbered base model, or served bytes that are not the chain's. */
export type ModelChainCode =
  | 'BASE_MODEL_RENUMBERED'
  | 'MODEL_NOT_IN_CHAIN'
  | 'MODEL_CHAIN_BROKEN'
  | 'HISTORY_REGRESSION';

/** The served model or numbering differs from the silo's model chain (the silo stops). */
export class ModelChainError extends Error {
  constructor(
    readonly code: ModelChainCode,
    /** The round whose model was refused. */
    readonly round: number,
    detail: string,
  ) {
    super(`${code}: round ${round}: ${detail}`);
    this.name = 'ModelChainError';
  }
}

/** A round as `GET …/rounds` lists it (the fields the chain reads). */
export interface ChainRoundView {
  readonly round: number;
  readonly baseModel: number;
  /** The version the round's sum produced (= round), or null before its sum is known. */
  readonly resultModel?: number | null;
}

const hexDigest = paramsDigest;

/** The model chain of one silo (kept across its rounds). */
export class ModelChain {
  /** The latest derived model and its version. */
  private model: Float32Array | undefined;
  private version = -1;

  /** The round results this silo accepted: round → digest of M_r (from its journal, and each report). */
  private readonly accepted: Map<number, string>;

  constructor(
    private readonly http: SiloHttp,
    /** d. */
    private readonly parameters: number,
    /** The pinned `model.initialWeightsDigest`, or undefined for an unpinned silo. */
    private readonly initialDigest: string | undefined,
    /** The round results accepted before this process started: round → digest of M_r. */
    accepted: ReadonlyMap<number, string> = new Map(),
  ) {
    this.accepted = new Map(accepted);
  }

  /**
   * Accepts round `r`'s result M_r = `base` + Σ w_iΔ_i / Σ w_i (protocol/weighted.ts `stepModel`, as
   * {@link ModelChain.baseOf} derives it): the chain moves to version r and will refuse a history
   * without it.
   * @returns the digest of M_r.
   */
  accept(r: number, base: Float32Array, weightedSum: Float64Array, totalWeight: number): string {
    const m = stepModel(base, weightedSum, totalWeight);
    const digest = hexDigest(m);
    this.model = m;
    this.version = r;
    this.accepted.set(r, digest);
    return digest;
  }

  /**
   * The base model of round `r` (whose view says `baseModel`): derived from M_0 through the
   * published aggregates, and equal to the served version's bytes.
   *
   * @throws ModelChainError BASE_MODEL_RENUMBERED / MODEL_NOT_IN_CHAIN / MODEL_CHAIN_BROKEN naming
   *   the round; SiloSetupError `model.initialWeightsDigest` when M_0 is not the pinned one,
   *   `model` when a served model has the wrong size.
   */
  async baseOf(r: number, baseModel: number): Promise<Float32Array> {
    // Round 1 has no earlier round: its base is M_0, without reading the list.
    const earlier = r <= 1 ? [] : await this.resultsBefore(r);
    const expected = earlier.length === 0 ? 0 : earlier[earlier.length - 1]!.round;
    if (baseModel !== expected)
      throw new ModelChainError(
        'BASE_MODEL_RENUMBERED',
        r,
        `the service says the base model is version ${baseModel}; the published rounds make it version ${expected} (the latest round before ${r} with a sum, or 0)`,
      );
    // History only grows: a result this silo applied or accepted is still listed, and the base is
    // not older than the chain (issue 32, R1 b).
    const listed = new Set(earlier.map((v) => v.round));
    for (const v of [...this.accepted.keys()].sort((a, b) => a - b))
      if (v < r && !listed.has(v))
        throw new ModelChainError(
          'HISTORY_REGRESSION',
          r,
          `round ${v}'s result, which this silo accepted, is no longer listed with a result; refusing a rewritten history (it would let the server replay an earlier base model)`,
        );
    if (this.version > expected)
      throw new ModelChainError(
        'HISTORY_REGRESSION',
        r,
        `the base model would go back to version ${expected}; this silo's chain is at version ${this.version}; refusing a rewritten history (it would let the server replay an earlier base model)`,
      );
    if (this.model === undefined) {
      this.model = await this.initial(r);
      this.version = 0;
    }
    for (const v of earlier) {
      if (v.round <= this.version) continue;
      this.model = await this.step(r, v.round, this.model);
      this.version = v.round;
      const was = this.accepted.get(v.round);
      if (was !== undefined && was !== hexDigest(this.model))
        throw new ModelChainError(
          'HISTORY_REGRESSION',
          r,
          `round ${v.round}'s published aggregate gives M_${v.round} digest ${hexDigest(this.model)}; this silo accepted ${was}; refusing a rewritten history`,
        );
    }
    const served = await this.served(r, expected);
    if (!sameFloats(served, this.model))
      throw new ModelChainError(
        'MODEL_NOT_IN_CHAIN',
        r,
        `the served model version ${expected} (digest ${hexDigest(served)}) is not the one derived from M_0 and the published aggregates (digest ${hexDigest(this.model)}); refusing to train on it`,
      );
    return this.model.slice();
  }

  /**
   * The rounds before `r` with a result, ascending; each must start from the chain's previous
   * version (the service's numbering).
   */
  private async resultsBefore(r: number): Promise<ChainRoundView[]> {
    const { rounds } = await this.http.getJson<{ rounds: ChainRoundView[] }>(this.http.path('/rounds'));
    const before = rounds.filter((x) => x.round < r).sort((a, b) => a.round - b.round);
    const out: ChainRoundView[] = [];
    let base = 0;
    for (const x of before) {
      const hasResult = x.resultModel !== null && x.resultModel !== undefined;
      if (!hasResult) continue;
      if (x.resultModel !== x.round)
        throw new ModelChainError(
          'BASE_MODEL_RENUMBERED',
          r,
          `round ${x.round}'s result is said to be version ${x.resultModel}; the service numbers a round's result by the round`,
        );
      if (x.baseModel !== base)
        throw new ModelChainError(
          'BASE_MODEL_RENUMBERED',
          r,
          `earlier round ${x.round} is said to start from version ${x.baseModel}; the published rounds make it version ${base}`,
        );
      out.push(x);
      base = x.round;
    }
    return out;
  }

  /** M_0, checked against the pinned digest. */
  private async initial(r: number): Promise<Float32Array> {
    const m0 = await this.served(r, 0);
    if (this.initialDigest !== undefined && paramsDigest(m0) !== this.initialDigest)
      throw new SiloSetupError(
        'model.initialWeightsDigest',
        `the server's initial model has digest ${paramsDigest(m0)}, the consortium file's is ${this.initialDigest}`,
      );
    return m0;
  }

  /** M_v from M_{b(v)} and round v's published aggregate. */
  private async step(r: number, v: number, base: Float32Array): Promise<Float32Array> {
    const path = this.http.path(`/rounds/${v}/aggregate`);
    const { totalWeight } = await this.http.getJson<{ totalWeight: number }>(path);
    const sum = await this.http.expect('GET', `${path}/sum`, [200]);
    if (sum.bytes.length !== 8 * this.parameters || !Number.isFinite(totalWeight) || totalWeight < 0)
      throw new ModelChainError(
        'MODEL_CHAIN_BROKEN',
        r,
        `round ${v}'s published aggregate has ${sum.bytes.length} bytes and Σ w_i = ${totalWeight}; expected ${8 * this.parameters} bytes and a finite Σ w_i ≥ 0`,
      );
    const weightedSum = new Float64Array(Uint8Array.from(sum.bytes).buffer);
    if (!weightedSum.every(Number.isFinite))
      throw new ModelChainError('MODEL_CHAIN_BROKEN', r, `round ${v}'s published Σ w_iΔ_i is not finite`);
    return stepModel(base, weightedSum, totalWeight);
  }

  /** The served bytes of model `version`, of the consortium's size. */
  private async served(r: number, version: number): Promise<Float32Array> {
    const got = await this.http.expect('GET', this.http.path(`/models/${version}`), [200]);
    if (got.bytes.length !== 4 * this.parameters)
      throw new SiloSetupError(
        'model',
        `round ${r}: model version ${version} has ${got.bytes.length / 4} parameters, expected ${this.parameters}`,
      );
    return new Float32Array(Uint8Array.from(got.bytes).buffer);
  }
}

/** Bit-for-bit equality of two Float32 vectors (NaN payloads and −0 included). */
function sameFloats(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return false;
  return true;
}
