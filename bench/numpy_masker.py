"""A Flower-style masker in numpy, the anchor of bench/secagg.ts's mask-generation comparison.

Flower's SecAgg+ client (flwr.common.secure_aggregation) expands every mask with
numpy's legacy RandomState seeded by the 32-byte key folded to 32 bits, draws
randint(0, 2**32 - 1) as int64 per element, adds the self mask and adds or
subtracts each pairwise mask with a fresh array per step, and reduces mod 2**32
at the end. This script does the same for one client with `masks` masks over a
d-vector and prints {"ms": best time, "bytes": mask bytes as 32-bit words}.

Usage: python3 bench/numpy_masker.py MASKS D REPS
"""

import json
import os
import sys
import time

import numpy as np

MOD = 1 << 32


def expand(seed: bytes, d: int) -> np.ndarray:
    """One mask: the seed folded to 32 bits by XOR of its little-endian words, as Flower does."""
    folded = 0
    for i in range(0, len(seed), 4):
        folded ^= int.from_bytes(seed[i : i + 4], "little")
    return np.random.RandomState(folded).randint(0, MOD - 1, (d,))


def mask(x: np.ndarray, seeds: list) -> np.ndarray:
    y = x + expand(seeds[0], x.size)  # self mask
    for k, seed in enumerate(seeds[1:]):
        m = expand(seed, x.size)
        y = y + m if k % 2 == 0 else y - m
    return np.mod(y, MOD)


def main() -> None:
    masks, d, reps = (int(a) for a in sys.argv[1:4])
    seeds = [os.urandom(32) for _ in range(masks)]
    x = np.zeros(d, dtype=np.int64)
    mask(x[: min(d, 10_000)], seeds)  # warm-up
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        mask(x, seeds)
        best = min(best, time.perf_counter() - t0)
    print(json.dumps({"ms": best * 1000, "bytes": 4 * masks * d}))


if __name__ == "__main__":
    main()
