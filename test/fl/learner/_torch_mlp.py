"""fedscore's `mlp` model in PyTorch, in fedscore's flat layout (src/ml/models.ts: per dense layer
W [in, out] row-major, then b [out]), trained by one full-batch SGD step (lr 0.1, mean
cross-entropy): the trainer of test/learner/trainer-torch.test.ts, which compares its update with
the TF.js learner's from the same initial parameters.

    python3 _torch_mlp.py FEATURES HIDDEN CLASSES
"""

import sys

import torch
from torch import nn

from fedscore_client.trainer import serve

F, H, C = (int(a) for a in sys.argv[1:4])


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.zeros(F, H))
        self.b1 = nn.Parameter(torch.zeros(H))
        self.w2 = nn.Parameter(torch.zeros(H, C))
        self.b2 = nn.Parameter(torch.zeros(C))

    def forward(self, x):
        x = x.reshape(len(x), -1)
        return torch.relu(x @ self.w1 + self.b1) @ self.w2 + self.b2


def train(model, data, seed):
    x, y = data
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()


def evaluate(model, data):
    return model(data[0])


if __name__ == "__main__":
    torch.set_default_dtype(torch.float32)
    serve(Mlp, train, evaluate)
