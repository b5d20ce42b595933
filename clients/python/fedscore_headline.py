"""The headline score and `share` of the published rounds, as the service's leaderboard computes them.

The service publishes per round the utilities each silo reported (GET …/scores: ``utilities``,
``withOnly``, ``without``, ``silos`` scored, ``selected``) but no leaderboard; the dashboard and
``fedscore client`` compute it from those rounds (src/records/leaderboard.ts
``leaderboardOfPublished``). This module is the same computation for the headline and its share
(scoring/payout.ts, scoring/leaderboard.ts; docs/findings.md, "The headline score"); the bootstrap
``interval`` and ``rankRange`` are not computed here. test/clients/python-tables.test.ts checks
it against the TypeScript leaderboard.

Per round, over the silos scored and reporting (at least 2), with α(i) = (LOO_i + IOI_i)/2
(papers/003 Def. 2, Eq. 3), β_j = v(M) − v(M0 + U_j), γ_j = v(M − U_j) − v(M0):

    w_i = base_i · g_i · (1 + λ · clip(z_i, −1, 1)),  τ = 0.5, λ = 0.1
    base_i = (median_{j≠i} β_j + median_{j≠i} γ_j) / (2(N − 1))        (EE-median, Eq. 4, §5.3)
    g_i = 0 if α_i ≤ 0; 1 if m_i ≤ 0; else min(1, α_i / (τ m_i)), m_i = median_{j≠i} α_j
    z_i = (α_i − m_i) / s_i, s_i = 1.2533 · mean_{j≠i} |α_j − m_i| (no tie-break when s_i = 0)

headline_i = Σ_rounds w_i; share_i = max(0, h_i) / Σ_j max(0, h_j) over the silos ever selected
(equal shares when none is positive; None for a silo never selected).
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence

TAU = 0.5
TIE = 0.1
MEAN_AD_TO_SD = 1.2533141373155


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 == 1 else (s[m - 1] + s[m]) / 2


def _median_of_others(xs: Sequence[float]) -> List[float]:
    return [_median([x for j, x in enumerate(xs) if j != i]) for i in range(len(xs))]


def payout_weights(full: float, empty: float, with_only: Sequence[float], without: Sequence[float]) -> List[float]:
    """The headline weights of one round's reporting silos (scoring/payout.ts, the default variant)."""
    n = len(with_only)
    beta = [full - x for x in with_only]
    gamma = [x - empty for x in without]
    mb, mg = _median_of_others(beta), _median_of_others(gamma)
    base = [(mb[i] + mg[i]) / 2 / (n - 1) for i in range(n)]
    a = [((full - without[i]) + (with_only[i] - empty)) / 2 for i in range(n)]
    m = _median_of_others(a)
    out = []
    for i in range(n):
        ai, mi = a[i], m[i]
        gate = 0.0 if ai <= 0 else 1.0 if mi <= 0 else min(1.0, ai / (TAU * mi))
        dev = sum(abs(a[j] - mi) for j in range(n) if j != i)
        s = MEAN_AD_TO_SD * dev / (n - 1)
        tie = max(-1.0, min(1.0, (ai - mi) / s)) if s > 0 else 0.0
        out.append(base[i] * gate * (1 + TIE * tie))
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
