"""The headline score and `share` of the published rounds, as the service's leaderboard computes them.

The service publishes per round the utilities each silo reported (GET …/scores: ``utilities``,
``withOnly``, ``without``, ``silos`` scored, ``selected``) but no leaderboard; the dashboard and
``fedscore client`` compute it from those rounds (src/records/leaderboard.ts
``leaderboardOfPublished``). This module is the same computation for the headline and its share
(scoring/payout.ts, scoring/leaderboard.ts; docs/findings.md, "The headline score"), with the
bootstrap ``interval`` and ``rankRange`` (``leaderboard_numbers``: the same seeded resampling of the
rounds, xoshiro128** as in scoring/seeded-rng.ts, so the numbers are the service's).
test/clients/python-tables.test.ts checks it against the TypeScript leaderboard.

Per round, over the silos scored and reporting (at least 2), with α(i) = (LOO_i + IOI_i)/2
(papers/003 Def. 2, Eq. 3), β_j = v(M) − v(M0 + U_j), γ_j = v(M − U_j) − v(M0):

    w_i = G_i · (c_i · r_i + 1 − c_i) · (1 + λ · clip(z_i, −1, 1)),  τ = 0.5, λ = 0.05, κ = 1
    G_i = min(max(0, base_i), even)
    base_i = (median_{j≠i} β_j + median_{j≠i} γ_j) / (2(N − 1))        (EE-median, Eq. 4, §5.3)
    r_i = 0 if α_i ≤ 0; 1 if m_i ≤ 0; else min(1, α_i / (τ m_i)), m_i = median_{j≠i} α_j
    c_i = 0 if m⁺ ≤ 0; else min(1, m⁺ / (κ σ_i)): m⁺ the others' median α with their 2 lowest left
          out, σ_i = 1.4826 · their MAD about m⁺ with the 2 largest deviations left out (else
          1.2533 · MeanAD of those; c_i = 1 when both are 0); at least 3 values stay
    even = max(0, v(M) − v(M0)) / (N − 1)    (a round whose others show no signal pays it in equal parts)
    z_i = (α_i − m_i) / s_i, s_i = 1.2533 · mean_{j≠i} |α_j − m_i| (no tie-break when s_i = 0)

headline_i = Σ_rounds w_i; share_i = max(0, h_i) / Σ_j max(0, h_j) over the silos ever selected
(equal shares when none is positive; None for a silo never selected).
"""

from __future__ import annotations

import bisect
import math
from typing import List, Optional, Sequence

TAU = 0.5
TIE = 0.05
SIGNAL = 1.0
QUIET = 1.0
TRIM = 2
MEAN_AD_TO_SD = 1.2533141373155
MAD_TO_SD = 1.482602218505602


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 == 1 else (s[m - 1] + s[m]) / 2


def _median_of_others(xs: Sequence[float]) -> List[float]:
    return [_median([x for j, x in enumerate(xs) if j != i]) for i in range(len(xs))]


def _signal(a: Sequence[float], i: int) -> float:
    """c_i: how clearly the others' α exceed a zero update's, trimmed against colluders
    (scoring/payout.ts ``signalOfOthers``)."""
    others = sorted(x for j, x in enumerate(a) if j != i)
    k = max(0, min(TRIM, len(a) - 1 - 3))
    mi = _median(others[k:])
    if mi <= 0:
        return 0.0
    dev = sorted(abs(x - mi) for x in others)[: len(others) - k]
    sd = MAD_TO_SD * _median(dev)
    if sd == 0:
        sd = MEAN_AD_TO_SD * sum(dev) / len(dev)
    return 1.0 if sd == 0 else min(1.0, mi / (SIGNAL * sd))


def payout_weights(full: float, empty: float, with_only: Sequence[float], without: Sequence[float]) -> List[float]:
    """The headline weights of one round's reporting silos (scoring/payout.ts, the default variant)."""
    n = len(with_only)
    beta = [full - x for x in with_only]
    gamma = [x - empty for x in without]
    mb, mg = _median_of_others(beta), _median_of_others(gamma)
    base = [(mb[i] + mg[i]) / 2 / (n - 1) for i in range(n)]
    a = [((full - without[i]) + (with_only[i] - empty)) / 2 for i in range(n)]
    even = max(0.0, full - empty) / (n - 1)
    m = _median_of_others(a)
    out = []
    for i in range(n):
        ai, mi = a[i], m[i]
        ramp = 0.0 if ai <= 0 else 1.0 if mi <= 0 else min(1.0, ai / (TAU * mi))
        c = _signal(a, i)
        capped = min(max(0.0, base[i]), even)
        paid = c * capped * ramp + (1 - c) * QUIET * capped
        dev = sum(abs(a[j] - mi) for j in range(n) if j != i)
        s = MEAN_AD_TO_SD * dev / (n - 1)
        tie = max(-1.0, min(1.0, (ai - mi) / s)) if s > 0 else 0.0
        out.append(paid * (1 + TIE * tie))
    return out


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def round_headline(r: dict, n: int, empty_coalition: str = "initialModel") -> List[Optional[float]]:
    """One published round's headline weights (None for a silo not scored or not reporting)."""
    out: List[Optional[float]] = [None] * n
    wo, wi = r.get("withOnly", []), r.get("without", [])
    silos = [i for i in r.get("silos", []) if i < n and i < len(wo) and i < len(wi) and _finite(wo[i]) and _finite(wi[i])]
    if len(silos) < 2:
        return out
    u = r["utilities"]
    empty = 0.0 if empty_coalition == "zero" else u["empty"]
    w = payout_weights(u["full"], empty, [wo[i] for i in silos], [wi[i] for i in silos])
    for g, x in zip(silos, w):
        out[g] = x
    return out


def headline_and_shares(rounds: Sequence[dict], n: int, empty_coalition: str = "initialModel"):
    """(headline, share) per silo over the published rounds: the leaderboard's two numbers."""
    headline = [0.0] * n
    for r in rounds:
        for i, x in enumerate(round_headline(r, n, empty_coalition)):
            headline[i] += x or 0.0
    every = list(range(n))
    # ever selected (a round's `selected` None or absent: every silo); none with no round yet
    eligible = [any(i in (every if r.get("selected") is None else r["selected"]) for r in rounds) for i in every]
    pos = [max(0.0, h) if eligible[i] else 0.0 for i, h in enumerate(headline)]
    total, count = sum(pos), sum(eligible)
    share: List[Optional[float]] = [
        None if not eligible[i] else (pos[i] / total if total > 0 else 1 / count) for i in every
    ]
    return headline, share


# --- the bootstrap over rounds (scoring/leaderboard.ts `headlineLeaderboard`) -----------------

_M32 = 0xFFFFFFFF


def _imul(a: int, b: int) -> int:
    return (a * b) & _M32


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


def xoshiro128ss(seed: int, salt: int):
    """The raw xoshiro128** stream of 32-bit words (Blackman & Vigna 2018), state seeded by splitmix32
    from ``seed ^ salt``: scoring/seeded-rng.ts ``xoshiro128ss``, word for word."""
    x = (int(seed) ^ salt) & _M32

    def splitmix32() -> int:
        nonlocal x
        x = (x + 0x9E3779B9) & _M32
        z = x
        z = _imul(z ^ (z >> 16), 0x85EBCA6B)
        z = _imul(z ^ (z >> 13), 0xC2B2AE35)
        return (z ^ (z >> 16)) & _M32

    a, b, c, d = splitmix32(), splitmix32(), splitmix32(), splitmix32()
    if (a | b | c | d) == 0:
        a = 1
    state = [a, b, c, d]

    def nxt() -> int:
        a, b, c, d = state
        result = _imul(_rotl(_imul(b, 5), 7), 9)
        t = (b << 9) & _M32
        c ^= a
        d ^= b
        b ^= c
        a ^= d
        c ^= t
        d = _rotl(d, 11)
        state[:] = [a, b, c, d]
        return result

    return nxt


def _quantile(sorted_xs: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values with linear interpolation (scoring/leaderboard.ts)."""
    if not sorted_xs:
        return math.nan
    p = q * (len(sorted_xs) - 1)
    lo, hi = math.floor(p), math.ceil(p)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (p - lo)


def _ranks(values: Sequence[float]) -> List[int]:
    """Competition ranks (1, 2, 2, 4), highest first: 1 + the number of values above each."""
    ordered = sorted(values)
    return [1 + len(ordered) - bisect.bisect_right(ordered, v) for v in values]


def rank_label(rank_range: Sequence[int]) -> str:
    """"2–3" for a near-tie (a rank the bootstrap moves), "2" for a rank no resampling changes."""
    best, worst = rank_range
    return f"{best}–{worst}" if best != worst else str(best)


def leaderboard_numbers(
    rounds: Sequence[dict], n: int, empty_coalition: str = "initialModel", resamples: int = 1000, seed: int = 0
) -> List[dict]:
    """Per silo (in silo order) the leaderboard's numbers: ``headline``, ``share``, ``interval`` (the 95 %
    percentile bootstrap of the headline over the scored rounds, resampled with replacement),
    ``rank`` and ``rankRange`` ([best, worst] rank over the middle 95 % of the replicates, widened
    to contain ``rank``) — scoring/leaderboard.ts ``headlineLeaderboard`` for one run."""
    headline, share = headline_and_shares(rounds, n, empty_coalition)
    per_round = [h for h in (round_headline(r, n, empty_coalition) for r in rounds) if any(v is not None for v in h)]
    rank = _ranks(headline)
    nxt = xoshiro128ss(seed, 0x9E3779B9)
    reps: List[List[float]] = []
    rep_ranks: List[List[int]] = []
    k = len(per_round)
    for _ in range(resamples):
        total = [0.0] * n
        for _ in range(k):
            h = per_round[math.floor(nxt() / 4294967296 * k)]
            for i in range(n):
                total[i] += h[i] if h[i] is not None else 0.0
        # the mean over one run: TypeScript divides the sum over runs by their number (1)
        total = [t / 1 for t in total]
        reps.append(total)
        rep_ranks.append(_ranks(total))
    out = []
    for i in range(n):
        hs = sorted(r[i] for r in reps)
        rs = sorted(r[i] for r in rep_ranks)
        best = min(rank[i], math.floor(_quantile(rs, 0.025) + 0.5))
        worst = max(rank[i], math.floor(_quantile(rs, 0.975) + 0.5))
        out.append(
            {
                "silo": i,
                "headline": headline[i],
                "share": share[i],
                "interval": [_quantile(hs, 0.025), _quantile(hs, 0.975)],
                "rank": rank[i],
                "rankRange": [best, worst],
            }
        )
    return out
