/**
 * `fedscore init <dir>`: writes a consortium project a user can read and run (project.ts): the
 * experiment configuration, a TF.js Layers model (model/), one folder per silo under silos/ with
 * its split of the data in its format and its secret key, the silos' public keys (keys.txt), the
 * common test set (test-set/), the operator's token files (tokens/), the consortium file and its
 * digest, and a README saying what each file is and which command each machine runs.
 *
 * The data are the configuration's partition of a built-in data set (src/data/registry.ts; by
 * default Fashion-MNIST's bundled test split), exactly what the engine would give each silo; each
 * silo's split is written in its format (src/data/write-local-data.ts) and read back by `fedscore
 * client --data`. The consortium file is the one `fedscore consortium create` writes from the same
 * configuration, keys and example counts, so registering it later (`up`, or `consortium create
 * --server` on the operator's machine) gives the same digest.
 */

import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { signingKeyPairFromSeed } from '../../../crypto/signature.js';
import { minimumThreshold } from '../../../protocol/config.js';
import { consortiumFileDigest } from '../../consortium/consortium-file.js';
import { MIN_SELECTED_SILOS } from '../../consortium/weight-floor.js';
import { inferFilesOptions } from '../../data/files-dataset.js';
import { dataFormat } from '../../data/formats/registry.js';
import { detectLocalFormat, type LocalFormat } from '../../data/local-data.js';
import { privateDir, privateTree, writePrivateFile } from '../../data/private-files.js';
import { datasetNames, FILES_DATASET } from '../../data/registry.js';
import { writeLocalData, writeNpyDataset } from '../../data/write-local-data.js';
import { buildConsortium, type Consortium } from '../../fl/consortium-data.js';
import { consortiumFileOf } from '../../fl/consortium-of-run.js';
import { networkedLearner, networkedRun } from '../../fl/networked.js';
import { LAYERS_MODEL } from '../../ml/model-registry.js';
import { STARTER_MODEL, writeStarterMlp } from '../../ml/starter-model.js';
import type { ExperimentConfig } from '../../records/config.js';
import { parseConfig } from '../../records/config.js';
import { checkLocalPlans, checkRoundSize, projectStrategy } from './init-strategy.js';
import {
  type InitTrainer,
  TORCH_FILES,
  torchCommand,
  torchModelChoice,
  torchPython,
  writeTorchModel,
} from './init-torch.js';
import { PROJECT_FILE, type Project } from './project.js';
import { projectReadme } from './readme.js';

/** What `fedscore init` takes (src/cli/commands/init.ts). */
export interface InitArgs {
  /** The project folder (absolute, or relative to the user's directory). */
  dir: string;
  silos: number;
  /**
   * A built-in data set (`fedscore init --help` lists them), or the path of the user's own data:
   * x.npy (y.npy beside it) or their folder, an IDX images file (labels beside it), a .csv file.
   */
  data: string;
  /** The silos' formats, assigned in turn (silo i gets formats[i mod length]). */
  formats: LocalFormat[];
  /** `mlp` (a small Layers MLP written here) or the path of a Layers model.json to copy. */
  model: string;
  /** Training examples per silo (on average), and the common test set's size. */
  examplesPerSilo: number;
  testSize: number;
  rounds: number;
  /**
   * n_C, how many silos may collude with the server (`secureAggregation.corruptSilos`); t is the
   * smallest safe threshold for it, and a round survives n − t dropouts.
   */
  corruptSilos: number;
  /** The consortium id (default: from the folder's name). */
  id?: string;
  seed: number;
  backend?: string;
  /** A networked strategy (`fedscore init --strategy`; ./init-strategy.ts); absent: FedAvg over every silo. */
  strategy?: string;
  /** Its silos per round k (`--clients-per-round`; only with `strategy`). */
  clientsPerRound?: number;
  /** `torch`: a PyTorch project, the model in the silos' trainer processes (./init-torch.ts). */
  trainer?: InitTrainer;
}

/**
 * The `data` block of a project on the user's own data at `path` (the `files` data set,
 * src/data/files-dataset.ts): every example available for training, a test set of at most a
 * quarter of them, and the files to copy into `source-data/` (the path the block names,
 * relative to the project, as the processes `fedscore up` starts run there).
 */
function describeOwnData(path: string, o: InitArgs) {
  const { options, examples } = inferFilesOptions(path);
  const src = detectLocalFormat(path, options.format);
  const copies: [string, string][] = [src.path, ...(src.labels ? [src.labels] : [])].map((f) => [
    f,
    join('source-data', basename(f)),
  ]);
  const testSize = Math.max(options.classes, Math.min(o.testSize, Math.floor(examples / 4)));
  const relative = join('source-data', basename(src.path));
  // The options block is named after the data set (`data.<name>`).
  const block = (path: string) => ({
    dataset: FILES_DATASET.name,
    testSize,
    [FILES_DATASET.name]: { ...options, path },
  });
  return { copies, examples, data: block(relative), absolute: (dir: string) => block(join(dir, relative)) };
}

/**
 * Where a user's examples went, and why (the default data split, src/data/split-registry.ts):
 * `600 examples in source-data/data.csv: 99 to the common test set (…), 60 to the validation set
 * (…), 441 shared among the 3 silos`.
 */
function ownDataAccount(examples: number, o: InitArgs, data: Consortium): string {
  const shared = data.silos.reduce((n, s) => n + s.n, 0);
  const left = examples - data.test.n - data.validation.n - shared;
  return (
    `data: ${examples} examples in ${o.data}: ${data.test.n} to the common test set every silo evaluates on ` +
    `(a quarter of the examples, at most --test-size ${o.testSize}, the same number of each class), ` +
    `${data.validation.n} to the server's validation set (a tenth of the examples, at most 500; ` +
    `FedTSV's reference), ${shared} shared among the ${o.silos} silos` +
    (left > 0 ? `, ${left} left out (the split keeps silos of equal size)` : '')
  );
}

/** The built-in models `--model` takes besides a model.json. */
export const BUILTIN_MODELS = [STARTER_MODEL] as const;

/** A consortium id from a folder name: lower-case letters, digits and dashes. */
export function idOfFolder(dir: string): string {
  const id = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return /^[a-z0-9]/.test(id) ? id : 'consortium';
}

/** Copies a Layers model.json and the weight files its manifest names into `dir`. */
function copyLayersModel(modelJson: string, dir: string): void {
  let manifest: { weightsManifest?: { paths?: string[] }[] };
  try {
    manifest = JSON.parse(readFileSync(modelJson, 'utf8')) as typeof manifest;
  } catch (e) {
    throw new RangeError(
      `--model: cannot read ${modelJson}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  if (!Array.isArray(manifest.weightsManifest))
    throw new RangeError(`--model: ${modelJson} has no weightsManifest (not a TF.js Layers model.json)`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(modelJson, join(dir, 'model.json'));
  for (const group of manifest.weightsManifest)
    for (const p of group.paths ?? []) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      copyFileSync(join(dirname(modelJson), p), join(dir, p));
    }
}

const token = () => randomBytes(24).toString('hex');

/**
 * Writes the project. @returns the project file's content.
 * @throws RangeError naming the flag when the folder is not empty or a value cannot be used.
 */
export async function initProject(
  o: InitArgs,
  out: (s: string) => void = (s) => process.stdout.write(s),
): Promise<Project> {
  const dir = resolve(o.dir);
  // Issue 32 W1: every silo refuses a round of fewer than 3 (FEDSCORE_ERR_TOO_FEW_SILOS).
  if (!(Number.isInteger(o.silos) && o.silos >= MIN_SELECTED_SILOS))
    throw new RangeError(
      `--silos: a consortium needs at least ${MIN_SELECTED_SILOS} silos, got ${o.silos}: in a round of 2 each silo would read the other's update off the published sum by subtracting its own, so every silo refuses such a round`,
    );
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new RangeError(`<dir>: ${dir} exists and is not empty; fedscore init writes a new project`);
  for (const f of o.formats) dataFormat(f, '--format'); // the format registry's names
  const builtIns = datasetNames().filter((n) => n !== FILES_DATASET.name);
  const userData = builtIns.includes(o.data) ? undefined : resolve(o.data);
  if (userData !== undefined && !existsSync(userData))
    throw new RangeError(
      `--data: '${o.data}' is not a built-in data set (${builtIns.join(', ')}), and as a data file (x.npy with y.npy beside it, an IDX images file, a .csv file with a label column) ${userData} was not found`,
    );
  const isBuiltinModel = (BUILTIN_MODELS as readonly string[]).includes(o.model);
  if (!o.trainer && !isBuiltinModel && !o.model.endsWith('.json'))
    throw new RangeError(
      `--model: expected ${BUILTIN_MODELS.join(', ')} or the path of a Layers model.json, got '${o.model}'`,
    );
  if (o.clientsPerRound !== undefined && o.strategy === undefined)
    throw new RangeError('--clients-per-round: only with --strategy (the strategy that selects them)');
  const strategy =
    o.strategy === undefined ? undefined : projectStrategy(o.strategy, o.clientsPerRound, o.silos);
  // A PyTorch project: the interpreter checked before anything is written.
  const trainer = o.trainer ? torchCommand(torchPython()) : undefined;
  const id = o.id ?? idOfFolder(dir);
  // A user's own data: its shape and classes read off it, copied into the project (source-data/).
  const ownData = userData === undefined ? undefined : describeOwnData(userData, o);
  const config: ExperimentConfig = parseConfig(
    {
      name: id,
      seed: o.seed,
      silos: o.silos,
      rounds: o.rounds,
      data:
        userData === undefined
          ? { dataset: o.data, trainSize: o.silos * o.examplesPerSilo, testSize: o.testSize }
          : ownData!.data,
      model: trainer ? torchModelChoice(trainer) : { kind: LAYERS_MODEL.kind, path: 'model/model.json' },
      training: { optimizer: 'adam', learningRate: 0.01, epochs: 1, batchSize: 32 },
      ...(strategy ? { strategy } : {}),
      // n_C: the silos that may collude with the server; the threshold t follows (its minimum).
      secureAggregation: {
        corruptSilos: o.corruptSilos,
        threshold: minimumThreshold(o.silos, o.corruptSilos),
      },
    },
    'the configuration fedscore init writes',
  );
  // Written into a temporary folder beside <dir> and renamed at the end (issue 34): a failed init
  // leaves nothing that blocks the retry.
  const work = join(dirname(dir), `.${basename(dir)}.init-${process.pid}-${Date.now()}`);
  let project: Project;
  let digest: string;
  let learnerParameters: number;
  let testN: number;
  let silos: Project['silos'];
  let account = '';
  try {
    mkdirSync(work, { recursive: true });
    if (ownData) {
      // The user's whole data set: private, as the silos' shares of it are (issue 32, P1).
      privateDir(join(work, 'source-data'));
      for (const [from, to] of ownData.copies) copyFileSync(from, join(work, to));
      privateTree(join(work, 'source-data'));
    }
    // The model first: the run's data shape decides the MLP's input.
    const absolute: ExperimentConfig = {
      ...config,
      ...(trainer ? {} : { model: { kind: LAYERS_MODEL.kind, path: join(work, 'model/model.json') } }),
      ...(ownData ? { data: ownData.absolute(work) } : {}),
    };
    const data = buildConsortium(absolute, o.seed);
    // Before anything else is written: a strategy whose rounds the silos would refuse is a usage error.
    await checkRoundSize(networkedRun(absolute, o.seed, data), minimumThreshold(o.silos, o.corruptSilos));
    if (trainer) await writeTorchModel(work, data.test.shape, data.numClasses, o.seed, trainer);
    else if (isBuiltinModel)
      await writeStarterMlp(join(work, 'model'), data.test.shape, data.numClasses, o.seed);
    else copyLayersModel(resolve(o.model), join(work, 'model'));
    writeFileSync(join(work, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);

    const run = networkedRun(absolute, o.seed, data);
    const secrets = Array.from({ length: o.silos }, () => new Uint8Array(randomBytes(32)));
    const publicKeys = secrets.map((s) => Buffer.from(signingKeyPairFromSeed(s).publicKey).toString('hex'));
    silos = await Promise.all(
      run.data.silos.map(async (ds, i) => {
        const name = `silo-${i}`;
        const folder = join('silos', name);
        // Issue 32, P1: the silo's folder 0700 before anything is written in it; key and data 0600.
        privateDir(join(work, folder));
        const key = join(folder, 'silo.key');
        writePrivateFile(join(work, key), `${Buffer.from(secrets[i]!).toString('hex')}\n`);
        secrets[i]!.fill(0);
        const format = o.formats[i % o.formats.length]!;
        const written = await writeLocalData(join(work, folder, 'data'), ds, format);
        privateTree(join(work, folder));
        const data = written.slice(work.length + 1);
        return { name, id: i, key, data, format, examples: ds.n };
      }),
    );
    writeFileSync(join(work, 'keys.txt'), `${publicKeys.join('\n')}\n`);
    privateDir(join(work, 'tokens'));
    writePrivateFile(join(work, 'tokens/admin.token'), `${token()}\n`);
    writePrivateFile(join(work, 'tokens/viewer.token'), `${token()}\n`);

    const learner = await networkedLearner(absolute, {
      ...(o.backend ? { backend: o.backend } : {}),
      cwd: work,
    });
    learnerParameters = learner.parameterCount;
    testN = run.data.test.n;
    if (ownData) account = `${ownDataAccount(ownData.examples, o, data)}\n`;
    try {
      const file = consortiumFileOf(run, id, publicKeys, learner, { examples: silos.map((s) => s.examples) });
      await checkLocalPlans(run, file);
      digest = consortiumFileDigest(file);
      writeFileSync(join(work, 'consortium.json'), `${JSON.stringify(file, null, 2)}\n`);
    } finally {
      await learner.close();
    }
    writeNpyDataset(join(work, 'test-set'), run.data.test);
    project = {
      format: 'fedscore-project',
      version: 1,
      id,
      config: 'config.json',
      model: trainer ? TORCH_FILES.model : 'model/model.json',
      ...(trainer ? { trainer } : {}),
      keys: 'keys.txt',
      consortiumFile: 'consortium.json',
      digest,
      testSet: 'test-set',
      tokens: { admin: 'tokens/admin.token', viewer: 'tokens/viewer.token' },
      db: 'fedscore.db',
      silos,
    };
    writeFileSync(join(work, PROJECT_FILE), `${JSON.stringify(project, null, 2)}\n`);
    writeFileSync(join(work, 'README.md'), projectReadme(project));
    if (existsSync(dir)) rmdirSync(dir);
    renameSync(work, dir);
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    throw e;
  }
  out(
    `consortium project ${id} in ${dir}: ${o.silos} silos (${silos.map((s) => `${s.name} ${s.examples} examples, ${s.format}`).join('; ')}), ${testN} test examples, ${learnerParameters} parameters\n` +
      account +
      `consortium file digest ${digest}\n` +
      `run it on this machine: fedscore up ${o.dir}   (what each file is, and the commands for separate machines: ${join(o.dir, 'README.md')})\n`,
  );
  return project;
}
