"""A trainer process without torch or numpy, for the protocol tests (test/learner/trainer-*.test.ts).

    python3 _fake_trainer.py MODE

d = 10 parameters (one tensor "w" of shape [2, 5]). `train` returns the update 0.01·(1 … 10)
and 7 examples; `evaluate` answers accuracy 0.5 + mean(params)/100 so that different vectors
get different utilities. MODE breaks the `train` answer: ok, exit, garbage, short, nan, huge,
big (a 2 GiB sparse file), sleep, error, wrongid, print (user prints to stdout: breaks it).
"""

import json
import math
import os
import struct
import sys
import time

D = 10
mode = sys.argv[1] if len(sys.argv) > 1 else "ok"


def write_npy(path, values, shape=None):
    shape = shape or (len(values),)
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "")
    )
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))


def read_npy(path):
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<H", b[8:10])[0]
    body = b[10 + n :]
    return list(struct.unpack("<%df" % (len(body) // 4), body))


for line in sys.stdin:
    req = json.loads(line)
    rid, op = req["id"], req["op"]
    out = {"id": rid, "ok": True}
    if op == "layout":
        out.update(protocol=1, layout=[{"name": "w", "shape": [2, 5]}], device="cpu", library="fake 1")
    elif op == "init":
        write_npy(req["out"], [0.1 * (i + 1) + req["seed"] % 7 for i in range(D)])
    elif op == "train":
        upd = [0.01 * (i + 1) for i in range(D)]
        if mode == "exit":
            sys.stderr.write("fake trainer: out of memory\n")
            sys.exit(7)
        if mode == "garbage":
            print("loss 0.42 epoch 1", flush=True)
            continue
        if mode == "print":
            print("training silo data ...", flush=True)
        if mode == "sleep":
            time.sleep(60)
        if mode == "error":
            print(json.dumps({"id": rid, "ok": False, "error": "CUDA out of memory"}), flush=True)
            continue
        if mode == "wrongid":
            out["id"] = rid + 1
        if mode == "short":
            upd = upd[:-1]
        if mode == "nan":
            upd[3] = math.nan
        if mode == "huge":
            upd[5] = 1e30
        if mode == "big":
            with open(req["out"], "wb") as f:
                f.truncate(2 * 1024**3)
        else:
            write_npy(req["out"], upd)
        out["examples"] = 7
    elif op == "evaluate":
        vs = read_npy(req["params"])
        k = len(vs) // D
        res = []
        for j in range(k):
            m = sum(vs[j * D : (j + 1) * D]) / D
            acc = min(1.0, max(0.0, 0.5 + m / 100))
            res.append({"accuracy": acc, "loss": 1 - acc, "perClass": [acc] * req["classes"]})
        out["results"] = res
    print(json.dumps(out), flush=True)
