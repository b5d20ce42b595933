#!/usr/bin/python3
"""The PyTorch anchor of `bench gpu` (issue 36): the same work as bench/gpu.ts, in PyTorch.

Rows, each timed after a warm-up, on `--device` (default: cuda when torch sees one, else cpu):
  - training samples/s of the MLP 784-200-10, cnn003 and LeNet-5 (src/ml/model-registry.ts:
    the same layers, valid/zero padding and pooling), Adam (lr 1e-3, PyTorch's update rule),
    batch 64, one pass over `samples` synthetic 28x28 images; eager mode;
  - exact per-round Shapley values at n players: the 2^n-coalition accuracy table of FedAvg
    coalition models M_S = M0 + sum_{i in S} w_i U_i / sum_{i in S} w_i of the MLP on `test`
    images, with the combined first layer (X.(W0 + sum c_i U_i) = X.W0 + sum c_i (X.U_i): the
    T x H products X.U_i once per player, then one n-term combination per coalition), batched
    over coalitions; then the Shapley values from the table (papers/003 Eq. 1).
Prints a table, and with --json one JSON object on the last line (bench/gpu.ts reads it).
Threads: `--threads k` (default: torch's own choice); bench/gpu.ts (bench/_torch_anchor.ts) runs
the CPU anchor at 1 thread and at all cores and keeps each row's faster run, saying which.
Sizes: `--quick`, or bench/gpu.ts's own sizes with `--samples mlp=N,cnn003=N,lenet5=N --test T
--players a,b` (the same work as the bench's rows).
"""
import argparse
import itertools
import json
import math
import sys
import time

try:
    import torch
    from torch import nn
except ImportError:  # one line, as the CLI says it
    print("bench torch_anchor: python3 cannot import torch (Debian: apt-get install python3-torch)", file=sys.stderr)
    sys.exit(3)


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 200), nn.ReLU(), nn.Linear(200, 10))


def cnn003():
    # papers/003's CNN without pooling (CNN003_DEFAULTS.pool = false): 28 -> 26 -> 24.
    return nn.Sequential(
        nn.Conv2d(1, 16, 3), nn.ReLU(), nn.Conv2d(16, 32, 3), nn.ReLU(),
        nn.Flatten(), nn.Linear(24 * 24 * 32, 128), nn.ReLU(), nn.Linear(128, 10),
    )


def lenet5():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.AvgPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10),
    )


MODELS = {"mlp": mlp, "cnn003": cnn003, "lenet5": lenet5}


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def training_rate(make, samples, device, batch=64):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(samples, 1, 28, 28, generator=gen).to(device)
    y = torch.randint(0, 10, (samples,), generator=gen).to(device)
    model = make().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def epoch(n):
        order = torch.randperm(n, device=device)
        for i in range(0, n, batch):
            idx = order[i : i + batch]
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x[idx]), y[idx]).backward()
            opt.step()

    epoch(min(samples, 256))  # warm-up
    sync(device)
    t = time.perf_counter()
    epoch(samples)
    sync(device)
    return samples / (time.perf_counter() - t)


def shapley_table(n, test, device, dtype=torch.float32, chunk=4096):
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(test, 784, generator=gen).to(device, dtype)
    labels = torch.randint(0, 10, (test,), generator=gen).to(device)
    w1 = (torch.randn(784, 200, generator=gen) * 0.05).to(device, dtype)
    b1 = torch.zeros(200, device=device, dtype=dtype)
    w2 = (torch.randn(200, 10, generator=gen) * 0.1).to(device, dtype)
    b2 = torch.zeros(10, device=device, dtype=dtype)
    u1 = (torch.randn(n, 784, 200, generator=gen) * 0.0025).to(device, dtype)
    ub1 = (torch.randn(n, 200, generator=gen) * 0.0025).to(device, dtype)
    u2 = (torch.randn(n, 200, 10, generator=gen) * 0.005).to(device, dtype)
    ub2 = (torch.randn(n, 10, generator=gen) * 0.005).to(device, dtype)
    weights = torch.tensor([100.0 + 10 * i for i in range(n)], device=device, dtype=dtype)
    sync(device)
    t = time.perf_counter()
    base = x @ w1 + b1  # T x H
    per_player = torch.einsum("td,ndh->nth", x, u1)  # n x T x H: X.U_i once per player
    masks = torch.tensor(list(itertools.product([0, 1], repeat=n))[::1], device=device, dtype=dtype).flip(1)
    table = torch.empty(2**n, device=device, dtype=torch.float64)
    for lo in range(0, 2**n, chunk):
        m = masks[lo : lo + chunk]  # K x n, coalition lo + k has player i iff bit i
        total = (m * weights).sum(1, keepdim=True)
        coef = torch.where(total > 0, m * weights / total.clamp_min(1e-30), torch.zeros_like(m))  # FedAvg
        hidden = torch.relu(base + torch.einsum("kn,nth->kth", coef, per_player) + (coef @ ub1)[:, None, :])
        w2s = w2 + torch.einsum("kn,nhc->khc", coef, u2)
        logits = torch.einsum("kth,khc->ktc", hidden, w2s) + (b2 + coef @ ub2)[:, None, :]
        table[lo : lo + chunk] = (logits.argmax(2) == labels).to(torch.float64).mean(1)
    sync(device)
    seconds = time.perf_counter() - t
    return table.cpu(), seconds


def shapley_values(table, n):
    """papers/003 Eq. 1 from the table: phi_i = sum_S |S|!(n-|S|-1)!/n! (v(S+i) - v(S)), log-space weights."""
    size = torch.tensor([bin(s).count("1") for s in range(2**n)])
    logw = [math.lgamma(k + 1) + math.lgamma(n - k) - math.lgamma(n + 1) for k in range(n)]
    phi = []
    for i in range(n):
        without = torch.tensor([s for s in range(2**n) if not s >> i & 1])
        w = torch.exp(torch.tensor([logw[k] for k in size[without].tolist()], dtype=torch.float64))
        phi.append(float((w * (table[without | (1 << i)] - table[without])).sum()))
    return phi


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes (n = 4 and 6, 200 test images)")
    p.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (default: torch's)")
    p.add_argument("--json", action="store_true", help="one JSON object on the last line")
    p.add_argument("--samples", help="training samples per model, e.g. mlp=256,cnn003=16,lenet5=64")
    p.add_argument("--test", type=int, help="test images of the Shapley table")
    p.add_argument("--players", help="n of the Shapley tables, e.g. 4,6")
    p.add_argument(
        "--chunk",
        type=int,
        default=0,
        help="coalitions per batch of the Shapley table (default: 4096 on CUDA, 256 on the CPU, where 4096 "
        "needs about 19 GB at 2,000 test images)",
    )
    a = p.parse_args()
    device = torch.device("cuda" if a.device == "auto" and torch.cuda.is_available() else ("cpu" if a.device == "auto" else a.device))
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    sizes = (
        {"samples": {"mlp": 512, "cnn003": 64, "lenet5": 256}, "test": 200, "players": [4, 6]}
        if a.quick
        else {"samples": {"mlp": 8192, "cnn003": 1024, "lenet5": 4096}, "test": 2000, "players": [15, 20]}
    )
    if a.samples:
        for item in a.samples.split(","):
            name, _, count = item.partition("=")
            if name not in MODELS or not count.isdigit() or int(count) < 1:
                p.error(f"--samples: expected model=positive integer with model in {sorted(MODELS)}, got '{item}'")
            sizes["samples"][name] = int(count)
    if a.test is not None:
        if a.test < 1:
            p.error(f"--test: expected a positive integer, got {a.test}")
        sizes["test"] = a.test
    if a.players:
        if not all(k.isdigit() and 1 <= int(k) <= 24 for k in a.players.split(",")):
            p.error(f"--players: expected integers in [1, 24] separated by commas, got '{a.players}'")
        sizes["players"] = [int(k) for k in a.players.split(",")]
    out = {"torch": torch.__version__, "device": str(device), "threads": torch.get_num_threads(), "training": [], "shapley": []}
    if device.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(device)
    for name, make in MODELS.items():
        rate = training_rate(make, sizes["samples"][name], device)
        out["training"].append({"model": name, "samplesPerSecond": rate})
        print(f"training {name:7s} Adam, batch 64: {rate:12,.0f} samples/s", file=sys.stderr)
    if a.chunk < 0:
        p.error(f"--chunk: expected a positive integer, got {a.chunk}")
    chunk = a.chunk or (4096 if device.type == "cuda" else 256)
    out["chunk"] = chunk
    for n in sizes["players"]:
        table, seconds = shapley_table(n, sizes["test"], device, chunk=chunk)
        phi = shapley_values(table, n) if n <= 15 else []
        out["shapley"].append({"n": n, "coalitions": 2**n, "seconds": seconds, "valuesSum": sum(phi) if phi else None})
        print(f"exact Shapley table n = {n:2d} ({2**n:,} coalitions, {sizes['test']} images): {seconds:8.3f} s", file=sys.stderr)
    print(f"torch {out['torch']} on {out.get('gpu', 'cpu')}, {out['threads']} threads", file=sys.stderr)
    if a.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
