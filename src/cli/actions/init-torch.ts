/**
 * `fedscore init --trainer torch`: the PyTorch variant of a consortium project (init.ts), like
 * `flwr new`: `model.py` (a small CNN for the project's data with `model()`, `train(model, data,
 * seed)` and `evaluate(model, data)`, served by `fedscore_client.trainer`), and the initial model
 * M0 made by the trainer's own `init` for the project's seed (`initial.npy`), which the
 * consortium file pins by digest, with the layout's digest as the model's topology digest.
 *
 * The interpreter is `$FEDSCORE_PYTHON`, else `python3`; one without torch is refused in one line.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeNpy } from '../../data/npy.js';
import { deriveSeed, SEED_STREAMS } from '../../data/seed.js';
import { createTrainerLearner } from '../../fl/learner/trainer-learner.js';
import { EXTERNAL_MODEL } from '../../ml/external-model.js';

/** The trainers `fedscore init --trainer` writes. */
export const INIT_TRAINERS = ['torch'] as const;
export type InitTrainer = (typeof INIT_TRAINERS)[number];

/** The files of a PyTorch project, relative to it. */
export const TORCH_FILES = { model: 'model.py', initial: 'initial.npy', layout: 'layout.json' } as const;

/**
 * The Python interpreter of the trainer (`$FEDSCORE_PYTHON`, else `python3`), checked to import
 * torch and numpy.
 * @throws RangeError naming `--trainer` in one line when it cannot.
 */
export function torchPython(env: NodeJS.ProcessEnv = process.env): string {
  const python = env.FEDSCORE_PYTHON?.trim() || 'python3';
  const r = spawnSync(python, ['-c', 'import torch, numpy'], { encoding: 'utf8', timeout: 120_000 });
  if (r.error)
    throw new RangeError(
      `--trainer torch: cannot run ${python} (${(r.error as NodeJS.ErrnoException).code}); install Python 3 or set FEDSCORE_PYTHON`,
    );
  if (r.status !== 0) {
    const missing = /No module named '?(\w+)/.exec(r.stderr)?.[1] ?? 'torch';
    throw new RangeError(
      `--trainer torch: ${python} lacks ${missing} (Debian: apt-get install python3-torch python3-numpy; or set FEDSCORE_PYTHON to an interpreter that has them)`,
    );
  }
  return python;
}

/** The trainer command line of a project (run in its folder). */
export function torchCommand(python: string): string {
  const q = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return `${q(python)} ${TORCH_FILES.model}`;
}

/** The configuration's model of a PyTorch project. */
export function torchModelChoice(command: string): { kind: string; command: string; initialWeights: string } {
  return { kind: EXTERNAL_MODEL.kind, command, initialWeights: TORCH_FILES.initial };
}

/**
 * Writes `model.py` for the data's shape and classes into `dir`, then starts it as a trainer to
 * make M0 with the run's seed stream (initial.npy) and write its layout (layout.json).
 * @returns the number of parameters.
 */
export async function writeTorchModel(
  dir: string,
  inputShape: readonly [number, number, number],
  classes: number,
  seed: number,
  command: string,
): Promise<{ parameters: number }> {
  writeFileSync(join(dir, TORCH_FILES.model), torchModelPy(inputShape, classes));
  const learner = await createTrainerLearner({
    command,
    cwd: dir,
    inputShape,
    numClasses: classes,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  try {
    const m0 = await learner.initialize(deriveSeed(seed, SEED_STREAMS.run.initialModel));
    writeFileSync(join(dir, TORCH_FILES.initial), encodeNpy(m0, [m0.length]));
    writeFileSync(join(dir, TORCH_FILES.layout), `${JSON.stringify(learner.layout.layout, null, 2)}\n`);
    return { parameters: learner.parameterCount };
  } finally {
    await learner.close();
  }
}

/** model.py: a small CNN (two 3×3 convolutions with 2×2 max pooling, one linear layer). */
export function torchModelPy(inputShape: readonly [number, number, number], classes: number): string {
  const [h, w, c] = inputShape;
  const pooled = Math.floor(Math.floor(h / 2) / 2) * Math.floor(Math.floor(w / 2) / 2);
  return `"""The consortium's model, trained and evaluated by this silo's PyTorch (docs/trainer.md).

fedscore starts this script as the silo's trainer process (\`fedscore client --trainer "python3 model.py"\`)
and talks to it through fedscore_client.trainer: it never sees the data leave this machine's
private folder, and only the masked sum of the updates leaves the silo. Change model(), train()
and evaluate() to your own; every silo must run the same model() (its layout is pinned by digest
in consortium.json), and the initial model is initial.npy.
"""

from fedscore_client.trainer import serve  # first: it says in one line when torch is missing

import torch
from torch import nn

INPUT_SHAPE = (${h}, ${w}, ${c})  # height, width, channels of one example
CLASSES = ${classes}


def model():
    """A small CNN: two 3x3 convolutions with 2x2 max pooling, then one linear layer."""
    return nn.Sequential(
        nn.Conv2d(${c}, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * ${pooled}, CLASSES),
    )


def train(model, data, seed):
    """One round of local training: one epoch of Adam, minibatches of 32 in a seeded order."""
    x, y = data  # x: float32 [n, h, w, c] in [0, 1]; y: int64 [n]; on the trainer's device
    x = x.permute(0, 3, 1, 2)  # NHWC -> NCHW
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed)).to(y.device)
    for start in range(0, len(y), 32):
        batch = order[start : start + 32]
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
        opt.step()
    return len(y)


def evaluate(model, data):
    """The logits of every example (the helper computes accuracy, loss and per-class accuracy)."""
    x, _ = data
    return model(x.permute(0, 3, 1, 2))


if __name__ == "__main__":
    serve(model, train, evaluate)
`;
}
