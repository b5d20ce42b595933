"""A PyTorch model as a fedscore trainer process (docs/trainer.md, protocol version 1).

Write three functions and call :func:`serve`::

    import torch
    from fedscore_client.trainer import serve, utilities

    def model():                        # a fresh torch.nn.Module
        return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 10))

    def train(model, data, seed):       # one round of local training, in place
        x, y = data                     # x float32 [n, h, w, c] in [0, 1], y int64 [n], on the device
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    def evaluate(model, data):          # logits [n, classes], or a dict (see below)
        x, _ = data
        return model(x)

    serve(model, train, evaluate)

``fedscore client --trainer "python3 model.py"`` starts the script once and speaks JSON lines over
its stdin and stdout; parameter vectors and data are ``.npy`` files in the silo's private folder.
The helper flattens and restores the model's floating-point ``state_dict`` entries in their order
(parameters and buffers such as batch-norm statistics), runs on CUDA when
``torch.cuda.is_available()`` (``FEDSCORE_TRAINER_DEVICE`` overrides), seeds torch, numpy and
``random`` from the round's seed before ``train``, and answers each request; anything the user's
code prints goes to stderr, never into the protocol. No network; only torch and numpy.

``train`` may return the number of examples it trained on (default: all of them) and may take a
``steps`` keyword (an exact number of optimizer steps, for the server's validation update).
``evaluate`` runs under ``torch.no_grad()`` in eval mode and returns the logits of every example
(the helper computes accuracy, mean cross-entropy and per-class accuracy) or a dict
``{"accuracy": a, "loss": l, "perClass": [...]}`` (None for a class absent from the data).
"""

from __future__ import annotations

import inspect
import json
import os
import random
import sys
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

try:
    import numpy as np
    import torch
except ImportError as _missing:  # one line, then exit: the silo quotes it
    sys.stderr.write(
        f"fedscore_client.trainer: {sys.executable} lacks {_missing.name or 'torch'} "
        "(Debian: apt-get install python3-torch python3-numpy; elsewhere: pip install torch numpy)\n"
    )
    sys.exit(3)

PROTOCOL = 1

__all__ = ["PROTOCOL", "flatten", "layout", "restore", "serve", "utilities"]


def _entries(m: "torch.nn.Module") -> List[Tuple[str, "torch.Tensor"]]:
    """The floating-point state_dict entries of ``m``, in state_dict order (the flat vector's)."""
    return [(k, v) for k, v in m.state_dict().items() if torch.is_floating_point(v)]


def layout(m: "torch.nn.Module") -> List[Dict[str, Any]]:
    """Names and shapes of the flat vector's tensors, in order (a scalar has shape [1])."""
    return [{"name": k, "shape": list(v.shape) or [1]} for k, v in _entries(m)]


def flatten(m: "torch.nn.Module") -> "np.ndarray":
    """The model's parameters as one float32 vector, in :func:`layout` order."""
    parts = [v.detach().reshape(-1).to("cpu", torch.float32) for _, v in _entries(m)]
    return torch.cat(parts).numpy().astype("<f4", copy=False)


def restore(m: "torch.nn.Module", flat: "np.ndarray") -> None:
    """Writes a flat float32 vector (``layout`` order) into the model's tensors, in place."""
    entries = _entries(m)
    total = sum(v.numel() for _, v in entries)
    if flat.shape != (total,):
        raise ValueError(f"parameters: expected {total} values, got shape {flat.shape}")
    at = 0
    src = torch.from_numpy(np.ascontiguousarray(flat, dtype=np.float32))
    with torch.no_grad():
        for _, v in entries:
            n = v.numel()
            v.copy_(src[at : at + n].reshape(v.shape).to(v.device, v.dtype))
            at += n


def utilities(logits: "torch.Tensor", y: "torch.Tensor", classes: int) -> Dict[str, Any]:
    """Accuracy, mean cross-entropy and per-class accuracy (None for an absent class) of logits."""
    logits = logits.detach().to(torch.float32)
    loss = float(torch.nn.functional.cross_entropy(logits, y, reduction="mean")) if len(y) else 0.0
    hit = (logits.argmax(dim=1) == y).to(torch.float64)
    per: List[Optional[float]] = []
    for c in range(classes):
        mask = y == c
        per.append(float(hit[mask].mean()) if bool(mask.any()) else None)
    return {"accuracy": float(hit.mean()) if len(y) else 0.0, "loss": loss, "perClass": per}


def _seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


class _Server:
    def __init__(self, model_fn: Callable[[], "torch.nn.Module"], train_fn: Callable, evaluate_fn: Callable):
        dev = os.environ.get("FEDSCORE_TRAINER_DEVICE")
        self.device = torch.device(dev or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model_fn = model_fn
        self.train_fn = train_fn
        self.evaluate_fn = evaluate_fn
        self.model = model_fn().to(self.device)
        self.layout = layout(self.model)
        self.d = sum(int(np.prod(t["shape"])) for t in self.layout)
        self.data: Dict[str, Any] = {}
        self.train_takes_steps = "steps" in inspect.signature(train_fn).parameters

    def _data(self, files: Dict[str, str]) -> Tuple["torch.Tensor", "torch.Tensor"]:
        key = files["x"] + "\0" + files["y"]
        if key not in self.data:
            x = torch.from_numpy(np.load(files["x"]).astype(np.float32)).to(self.device)
            y = torch.from_numpy(np.load(files["y"]).astype(np.int64)).to(self.device)
            self.data[key] = (x, y)
        return self.data[key]

    def _vectors(self, path: str) -> "np.ndarray":
        a = np.load(path)
        if a.ndim == 1:
            a = a.reshape(1, -1)
        if a.dtype != np.float32 or a.ndim != 2 or a.shape[1] != self.d:
            raise ValueError(f"{path}: expected float32 [k, {self.d}], got {a.dtype} {a.shape}")
        return a

    def handle(self, req: Dict[str, Any]) -> Dict[str, Any]:
        op = req.get("op")
        if op == "layout":
            return {
                "protocol": PROTOCOL,
                "layout": self.layout,
                "device": str(self.device),
                "library": f"torch {torch.__version__}",
            }
        if op == "init":
            _seed(int(req["seed"]))
            fresh = self.model_fn()
            if layout(fresh) != self.layout:
                raise ValueError("model() returned a model of another layout")
            np.save(req["out"], flatten(fresh))
            return {}
        if op == "train":
            base = self._vectors(req["params"])[0]
            restore(self.model, base)
            x, y = self._data(req["data"])
            kwargs = {}
            if "steps" in req:
                if not self.train_takes_steps:
                    raise ValueError("train(model, data, seed) takes no 'steps' keyword; this run needs it")
                kwargs["steps"] = int(req["steps"])
            _seed(int(req["seed"]))
            self.model.train()
            examples = self.train_fn(self.model, (x, y), int(req["seed"]), **kwargs)
            update = flatten(self.model) - base
            np.save(req["out"], update.astype("<f4"))
            return {"examples": int(examples) if examples is not None else int(len(y))}
        if op == "evaluate":
            vs = self._vectors(req["params"])
            x, y = self._data(req["data"])
            classes = int(req.get("classes") or 0) or int(y.max().item()) + 1
            results = []
            self.model.eval()
            for v in vs:
                restore(self.model, v)
                with torch.no_grad():
                    got = self.evaluate_fn(self.model, (x, y))
                if isinstance(got, torch.Tensor):
                    got = utilities(got, y, classes)
                results.append(
                    {
                        "accuracy": float(got["accuracy"]),
                        "loss": float(got["loss"]),
                        "perClass": [None if p is None else float(p) for p in got["perClass"]],
                    }
                )
            return {"results": results}
        raise ValueError(f"op: unknown operation {op!r}")


def serve(
    model: Callable[[], "torch.nn.Module"],
    train: Callable,
    evaluate: Callable,
    stdin: Any = None,
    stdout: Any = None,
) -> None:
    """Answers protocol requests from stdin until it ends. Never returns an error: each is an answer."""
    if stdout is None:
        # The protocol keeps the real stdout; everything else printed (the user's code, libraries,
        # C extensions) goes to stderr.
        stdout = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    stdin = stdin if stdin is not None else sys.stdin
    server = _Server(model, train, evaluate)
    for line in stdin:
        if not line.strip():
            continue
        rid: Any = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            text = json.dumps({"id": rid, "ok": True, **server.handle(req)}, allow_nan=False)
        except Exception as e:  # noqa: BLE001 - every failure is an answer
            traceback.print_exc(file=sys.stderr)
            text = json.dumps({"id": rid, "ok": False, "error": f"{type(e).__name__}: {e}"})
        stdout.write(text + "\n")
        stdout.flush()
