/**
 * The server's Unmasking (Bonawitz et al. 2017, round 4), made verifiable: reconstruct each
 * survivor's self-mask seed b_v and each dropped silo's s_u^SK from the revealed shares, check
 * every share and every secret, remove the masks, check the aggregate.
 *
 * Commitments (signed by each dealer u in ShareKeys, before any masked input exists; see
 * protocol/messages.ts): a digest of every share it deals, per holder, and a commitment to b_u.
 * s_u^SK needs none: its public key s_u^PK was signed in AdvertiseKeys.
 *
 * Verified reconstruction of a secret of owner u from the shares the responders U_5 revealed:
 *  1. every revealed share is checked against the digest u signed for its holder (one SHA-256
 *     each). Holders verified their digests when they opened their boxes (protocol/client.ts), so
 *     a mismatch now means the holder sent a wrong share: it is discarded and the holder named
 *     (Fault BAD_SHARE); the round goes on.
 *  2. the secret is interpolated from the first t shares that passed, and checked: b_u against
 *     its commitment, s_u^SK against s_u^PK. Shares that match the dealer's own signed digests
 *     but do not reconstruct its committed secret were dealt inconsistently (not on one
 *     polynomial, or for another secret): the dealer is named (BAD_DEALING) and, since its mask
 *     cannot be removed, the round aborts.
 *  3. fewer than t shares passing step 1: the round aborts (RECONSTRUCTION_FAILED) naming the
 *     holders of the bad shares.
 * Cost per secret: one SHA-256 per revealed share, one interpolation of t shares, one check (a
 * SHA-256, or an X25519 base-point multiplication). No subset search is needed: the digests
 * identify the bad shares directly.
 *
 * Corrections (UnmaskResponse.correction) are then used as RoundConfig.corrections says
 * (protocol/config.ts `CorrectionMode`), and with RoundConfig.encoding the decoded aggregate is
 * checked (protocol/weighted.ts `checkWeightedSum`).
 */
import { agree, agreementPublicKey } from '../crypto/key-agreement.js';
import { applyMask } from '../crypto/prg.js';
import { combineShares } from '../crypto/shamir.js';
import { pairLabel, pairSign, sameBytes, seedCommitment, selfLabel, shareDigest } from './_keys.js';
import type { RoundConfig } from './config.js';
import type { Fault, SecAggErrorCode } from './errors.js';
import type { AdvertiseKeys, MaskedInput, ShareKeys, UnmaskResponse } from './messages.js';
import { checkWeightedSum } from './weighted.js';

/** What Unmasking reads: the round's sets and the messages the server accepted. */
export interface UnmaskInputs {
  readonly config: RoundConfig;
  /** U_3, ascending. */
  readonly survivors: readonly number[];
  /** U_2 ∖ U_3, ascending. */
  readonly dropped: readonly number[];
  /** U_5: the silos whose Unmasking response was accepted, ascending. */
  readonly responders: readonly number[];
  readonly adverts: ReadonlyMap<number, AdvertiseKeys>;
  readonly shares: ReadonlyMap<number, ShareKeys>;
  readonly masked: ReadonlyMap<number, MaskedInput>;
  readonly unmasks: ReadonlyMap<number, UnmaskResponse>;
}

/** The outcome: the sum, or an abort naming culprits; the faults found either way. */
export type UnmaskOutcome =
  | { readonly ok: true; readonly sum: Uint32Array; readonly faults: readonly Fault[] }
  | {
      readonly ok: false;
      readonly code: SecAggErrorCode;
      readonly detail: string;
      readonly culprits: readonly number[];
      readonly faults: readonly Fault[];
    };

type Kind = 'key' | 'seed';

interface Reconstructed {
  readonly secret?: Uint8Array;
  /** Holders whose share of this secret failed its digest. */
  readonly bad: readonly number[];
  readonly failure?: { readonly code: SecAggErrorCode; readonly detail: string; readonly culprits: number[] };
}

/** Steps 1–3 of the module comment for one secret of `owner`. */
async function reconstructVerified(
  i: UnmaskInputs,
  kind: Kind,
  owner: number,
  revealed: readonly { readonly holder: number; readonly share: Uint8Array }[],
  verify: (secret: Uint8Array) => boolean,
): Promise<Reconstructed> {
  const { session, round, threshold: t } = i.config;
  const digests = new Map(i.shares.get(owner)!.digests.map((d) => [d.holder, d]));
  const good: Uint8Array[] = [];
  const bad: number[] = [];
  for (const { holder, share } of revealed) {
    const signed = digests.get(holder)?.[kind];
    if (signed !== undefined && sameBytes(shareDigest(kind, session, round, owner, holder, share), signed))
      good.push(share);
    else bad.push(holder);
  }
  const what = kind === 'key' ? `s^SK of ${owner}` : `b of ${owner}`;
  if (good.length < t)
    return {
      bad,
      failure: {
        code: 'RECONSTRUCTION_FAILED',
        detail: `${what}: ${good.length} verified shares < t = ${t}; bad shares from ${bad.join(', ')}`,
        culprits: bad,
      },
    };
  const secret = await combineShares(good.slice(0, t));
  if (verify(secret)) return { secret, bad };
  secret.fill(0);
  return {
    bad,
    failure: {
      code: 'BAD_DEALING',
      detail: `${what}: t shares matching its signed digests do not reconstruct its committed ${kind === 'key' ? 's^PK' : 'seed'}`,
      culprits: [owner],
    },
  };
}

/** acc ← acc + sign·x over Z_(2^32), element-wise (a Uint32Array store wraps mod 2^32). */
export function addInto(acc: Uint32Array, x: Uint32Array, sign: 1 | -1): void {
  if (sign === 1) for (let i = 0; i < acc.length; i++) acc[i]! += x[i]!;
  else for (let i = 0; i < acc.length; i++) acc[i]! -= x[i]!;
}

/** Survivor v's pairwise masks with the dropped silos, as its y_v carries them (its correction). */
function masksWithDropped(i: UnmaskInputs, keys: ReadonlyMap<number, Uint8Array>, v: number): Uint32Array {
  const { session, round } = i.config;
  const acc = new Uint32Array(i.config.length);
  for (const u of i.dropped) {
    const seed = agree(keys.get(u)!, i.adverts.get(v)!.sPK);
    applyMask(acc, seed, pairLabel(session, round, v, u), pairSign(v, u));
    seed.fill(0);
  }
  return acc;
}

/**
 * Removes the survivors' pairwise masks with the dropped from `sum`, each recomputed from the
 * reconstructed keys and compared with the survivor's correction when it sent one.
 */
function subtractRecomputed(
  i: UnmaskInputs,
  keys: ReadonlyMap<number, Uint8Array>,
  sum: Uint32Array,
  faults: Fault[],
): void {
  for (const v of i.survivors) {
    const expected = masksWithDropped(i, keys, v);
    const sent = i.unmasks.get(v)?.correction;
    if (sent !== undefined && !sameWords(sent, expected))
      faults.push({
        silo: v,
        code: 'BAD_CORRECTION',
        detail: `the correction of ${v} differs from its masks with ${i.dropped.join(', ')}; the recomputed one is used`,
      });
    addInto(sum, expected, -1);
  }
}

function sameWords(a: Uint32Array, b: Uint32Array): boolean {
  if (a.length !== b.length) return false;
  for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) return false;
  return true;
}

/** The aggregate check of RoundConfig.encoding (null when there is no encoding or it passes). */
function aggregateProblem(i: UnmaskInputs, sum: Uint32Array): string | null {
  const e = i.config.encoding;
  return e === undefined ? null : checkWeightedSum(sum, e, i.survivors.length);
}

/**
 * Σ_{v ∈ U_3} x_v = Σ y_v − Σ PRG(b_v) − Σ_{u ∈ D, v ∈ U_3} Δ_{v,u}·PRG(s_{u,v}), with every
 * share, secret and (as configured) correction verified and the aggregate checked.
 */
export async function unmaskSum(i: UnmaskInputs): Promise<UnmaskOutcome> {
  const { config } = i;
  const faults: Fault[] = [];
  const badShares = new Map<number, string[]>();
  const failures: { code: SecAggErrorCode; detail: string; culprits: number[] }[] = [];
  const seeds = new Map<number, Uint8Array>();
  const keys = new Map<number, Uint8Array>();
  const wipe = () => {
    for (const s of [...seeds.values(), ...keys.values()]) s.fill(0);
  };
  const collect = (r: Reconstructed, what: string, into: Map<number, Uint8Array>, owner: number) => {
    for (const h of r.bad) badShares.set(h, [...(badShares.get(h) ?? []), what]);
    if (r.failure) failures.push(r.failure);
    else into.set(owner, r.secret!);
  };
  // Seed shares of the survivors (UnmaskResponse.seedShares lists U_3 in order, key shares D).
  for (const [k, v] of i.survivors.entries()) {
    const revealed = i.responders.map((h) => ({ holder: h, share: i.unmasks.get(h)!.seedShares[k]!.share }));
    const commitment = i.shares.get(v)!.seedCommitment;
    const r = await reconstructVerified(i, 'seed', v, revealed, (b) =>
      sameBytes(seedCommitment(config.session, config.round, v, b), commitment),
    );
    collect(r, `seed share of ${v}`, seeds, v);
  }
  for (const [k, u] of i.dropped.entries()) {
    const revealed = i.responders.map((h) => ({ holder: h, share: i.unmasks.get(h)!.keyShares[k]!.share }));
    const spk = i.adverts.get(u)!.sPK;
    const r = await reconstructVerified(i, 'key', u, revealed, (sk) =>
      sameBytes(agreementPublicKey(sk), spk),
    );
    collect(r, `key share of ${u}`, keys, u);
  }
  for (const [h, what] of [...badShares].sort((a, b) => a[0] - b[0]))
    faults.push({ silo: h, code: 'BAD_SHARE', detail: `${h} revealed a wrong ${what.join(', a wrong ')}` });
  for (const f of failures)
    if (f.code === 'BAD_DEALING')
      faults.push({ silo: f.culprits[0]!, code: 'BAD_DEALING', detail: f.detail });
  if (failures.length > 0) {
    wipe();
    const culprits = [...new Set(failures.flatMap((f) => f.culprits))].sort((a, b) => a - b);
    return {
      ok: false,
      code: failures[0]!.code,
      detail: failures.map((f) => f.detail).join('; '),
      culprits,
      faults,
    };
  }

  const sum = new Uint32Array(config.length);
  for (const v of i.survivors) addInto(sum, i.masked.get(v)!.masked, 1);
  for (const v of i.survivors) applyMask(sum, seeds.get(v)!, selfLabel(config.session, config.round, v), -1);
  const mode = config.corrections ?? 'off';
  if (i.dropped.length > 0) {
    if (mode === 'fallback') {
      // Trust the corrections (rebuild only for survivors that sent none); fall back to
      // recomputing every survivor's masks when the aggregate fails its check.
      const base = sum.slice();
      for (const v of i.survivors) {
        const c = i.unmasks.get(v)?.correction;
        addInto(sum, c ?? masksWithDropped(i, keys, v), -1);
      }
      if (aggregateProblem(i, sum) !== null) {
        sum.set(base);
        subtractRecomputed(i, keys, sum, faults);
      }
    } else if (mode === 'recompute') {
      subtractRecomputed(i, keys, sum, faults);
    } else {
      // 'off': Bonawitz et al. 2017, round 4 — rebuild Δ_{v,u}·PRG(s_{u,v}) from s_u^SK.
      for (const u of i.dropped)
        for (const v of i.survivors) {
          const seed = agree(keys.get(u)!, i.adverts.get(v)!.sPK);
          applyMask(sum, seed, pairLabel(config.session, config.round, u, v), pairSign(v, u) === 1 ? -1 : 1);
          seed.fill(0);
        }
    }
  }
  wipe();
  const problem = aggregateProblem(i, sum);
  if (problem !== null)
    return { ok: false, code: 'AGGREGATE_OUT_OF_RANGE', detail: problem, culprits: [], faults };
  return { ok: true, sum, faults };
}
