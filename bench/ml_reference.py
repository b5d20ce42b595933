"""PyTorch reference for bench/ml.ts (not a dependency of fedscore).

Runs the same architectures and optimizer as src/ml on the same synthetic data and prints one
JSON object. Debian's python3-torch:
`/usr/bin/python3 bench/ml_reference.py DATA.bin [FMNIST_TRAIN.bin FMNIST_TEST.bin]`.

bench/ml.ts runs it once per BLAS found on the machine (LD_LIBRARY_PATH picks Debian's reference
BLAS or OpenBLAS); the JSON says which library was mapped.

Training is timed in three thread settings, REPEATS times each in alternation (median): 2 threads
(torch.set_num_threads(2)), 1 thread (torch.set_num_threads(1): PyTorch's own operators on one
thread, but OpenBLAS keeps its own pool of threads for the linear layers, so such a run uses both
cores in its products) and, when the BLAS is OpenBLAS, 1 thread with OpenBLAS set to one thread
too (openblas_set_num_threads through ctypes). Each setting records its CPU time per wall second.

DATA.bin and the Fashion-MNIST files (written by bench/ml.ts, so both sides train and test on
the same examples, whichever source fedscore's loader used): u32 LE n, u32 LE features, then
n*features float32 LE pixels (HWC order, [0, 1]), then n int32 LE labels.

Layouts differ from fedscore's flat vector (PyTorch uses CHW and [out, in]); only speed and
accuracy are compared, not parameters.
"""
import ctypes
import json
import resource
import statistics
import struct
import sys
import time

import numpy as np
import torch
from torch import nn

torch.set_num_threads(2)
torch.manual_seed(0)


def load(path):
    with open(path, "rb") as f:
        n, feat = struct.unpack("<II", f.read(8))
        x = np.frombuffer(f.read(n * feat * 4), dtype="<f4").reshape(n, feat)
        y = np.frombuffer(f.read(n * 4), dtype="<i4")
    return torch.from_numpy(x.copy()), torch.from_numpy(y.astype(np.int64))


def mlp(hidden=200):
    return nn.Sequential(nn.Flatten(), nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, 10))


def cnn003():
    # papers/003: Conv(1,16,3) -> Conv(16,32,3) -> Linear(24*24*32,128) -> Linear(128,10), ReLU.
    return nn.Sequential(
        nn.Unflatten(1, (1, 28, 28)),
        nn.Conv2d(1, 16, 3), nn.ReLU(),
        nn.Conv2d(16, 32, 3), nn.ReLU(),
        nn.Flatten(), nn.Linear(24 * 24 * 32, 128), nn.ReLU(), nn.Linear(128, 10),
    )


def lenet5():
    # src/ml/models.ts lenet5 for 28x28x1: zero padding 2, ReLU, average pooling.
    return nn.Sequential(
        nn.Unflatten(1, (1, 28, 28)),
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.AvgPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10),
    )


def train(model, x, y, epochs, batch=64, seed=1):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(seed)
    n = x.shape[0]
    for _ in range(epochs):
        perm = torch.randperm(n, generator=g)
        for s in range(0, n, batch):
            idx = perm[s:s + batch]
            opt.zero_grad()
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            opt.step()


REPEATS = 3


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def train_rate(make, x, y, n):
    """Samples/s of one epoch over x[:n], and the process's CPU seconds per wall second."""
    model = make()
    train(model, x[:128], y[:128], 1)  # warm-up
    c, t = cpu_seconds(), time.perf_counter()
    train(model, x[:n], y[:n], 1)
    wall = time.perf_counter() - t
    return n / wall, (cpu_seconds() - c) / wall


def openblas():
    """The mapped OpenBLAS (ctypes handle), or None when the BLAS is another library."""
    for path in loaded_blas().split(", "):
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_set_num_threads
            lib.openblas_get_num_threads
            return lib
        except (OSError, AttributeError):
            continue
    return None


def thread_settings():
    """(name, torch threads, OpenBLAS threads or None = leave as it is)."""
    out = [("2", 2, None), ("1", 1, None)]
    if openblas() is not None:
        out.append(("1blas1", 1, 1))
    return out


def training_rates(x, y):
    """{model: {setting: median samples/s, setting_cpu: CPU per wall}} over REPEATS alternations."""
    blas = openblas()
    blas_default = blas.openblas_get_num_threads() if blas is not None else None
    runs = {}
    for _ in range(REPEATS):
        for name, threads, blas_threads in thread_settings():
            torch.set_num_threads(threads)
            if blas is not None:
                blas.openblas_set_num_threads(blas_threads or blas_default)
            for key, make, n in (("mlp", mlp, min(8192, x.shape[0])), ("cnn", cnn003, 1024), ("lenet", lenet5, 4096)):
                runs.setdefault(key, {}).setdefault(name, []).append(train_rate(make, x, y, n))
    if blas is not None:
        blas.openblas_set_num_threads(blas_default)
    torch.set_num_threads(2)
    out = {}
    for key, settings in runs.items():
        out[key] = {}
        for name, results in settings.items():
            out[key][name] = statistics.median(r for r, _ in results)
            out[key][name + "_cpu"] = statistics.median(c for _, c in results)
    return out, blas_default


def infer_ms(make, x):
    model = make().eval()
    with torch.no_grad():
        model(x[:2000])
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            model(x[:2000]).argmax(1)
            best = min(best, time.perf_counter() - t)
    return best * 1000


def fmnist_accuracy(train_path, test_path):
    xtr, ytr = load(train_path)
    xte, yte = load(test_path)
    model = mlp()
    t = time.perf_counter()
    train(model, xtr, ytr, 3)
    secs = time.perf_counter() - t
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    return acc, secs


def loaded_blas():
    """The BLAS library this process actually mapped (Debian switches it with alternatives or
    LD_LIBRARY_PATH: reference BLAS from libblas3 by default, OpenBLAS when installed)."""
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    return ", ".join(sorted(libs)) or "unknown"


def main():
    x, y = load(sys.argv[1])
    training, blas_threads = training_rates(x, y)
    out = {
        "torch": torch.__version__,
        "blas": loaded_blas(),
        "blas_threads": blas_threads,
        "threads": torch.get_num_threads(),
        "training": training,
        "mlp_infer_2000_ms": infer_ms(mlp, x),
        "cnn_infer_2000_ms": infer_ms(cnn003, x),
        "lenet_infer_2000_ms": infer_ms(lenet5, x),
    }
    # The flat keys of earlier versions: 2 threads, and one thread as "_1t".
    for key, rates in training.items():
        out[key + "_train_samples_per_s"] = rates["2"]
        out[key + "_train_samples_per_s_1t"] = rates["1"]
    if len(sys.argv) > 3:
        out["fmnist_mlp_acc_3ep"], out["fmnist_mlp_train_s"] = fmnist_accuracy(sys.argv[2], sys.argv[3])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
