/**
 * The `files` data set: a user's own examples in one file or pair — x.npy + y.npy, an IDX
 * images/labels pair, or a CSV file with a `label` column (local-data.ts detects which; image
 * folders are not read here, their decoder is asynchronous). The configuration names the path
 * (relative to the working directory, as `model.path`), the shape of one example and the number of
 * classes, so that `shape` needs no file; `inferFilesOptions` reads them off the data once
 * (`fedscore init --data <file>` writes them). The common test set and the silos' splits are drawn
 * from the file as from any pool.
 */
import Type from 'typebox';
import type { Dataset } from './dataset.js';
import { DATA_FORMATS, dataFormat } from './formats/registry.js';
import { detectLocalFormat } from './local-data.js';
import type { DatasetDefinition } from './registry.js';

/** The formats the `files` data set reads: the registry's synchronous ones. */
export const FILES_FORMATS: readonly string[] = DATA_FORMATS.filter((f) => f.synchronous).map((f) => f.name);

/** Options of the `files` data set (`data.files`). */
export interface FilesOptions {
  path: string;
  format?: string;
  shape: [number, number, number];
  classes: number;
  labelColumn?: string;
}

/** Labels above this are refused while inferring the classes (a regression target, not classes). */
const MAX_CLASSES = 1000;

function read(
  o: Omit<FilesOptions, 'shape' | 'classes'>,
  shape: readonly [number, number, number],
  classes: number,
): Dataset {
  const src = detectLocalFormat(o.path, o.format);
  const format = dataFormat(src.format);
  if (!format.synchronous)
    throw new Error(
      `data.files.path: ${o.path} is ${src.format} data; the files data set reads ${FILES_FORMATS.join(', ')}`,
    );
  const name = `files:${o.path}`;
  return format.read(src, {
    inputShape: shape,
    numClasses: classes,
    name,
    ...(o.labelColumn !== undefined ? { labelColumn: o.labelColumn } : {}),
  }) as Dataset;
}

/**
 * The `files` options of the data at `path`: its format, the shape of one example (from the
 * array's header; a CSV file's feature columns) and the number of classes (the largest label + 1).
 * Also returns the number of examples.
 * @throws Error naming the file when it cannot be read or holds fewer than two classes.
 */
export function inferFilesOptions(
  path: string,
  format?: FilesOptions['format'],
): { options: FilesOptions; examples: number } {
  const src = detectLocalFormat(path, format);
  const entry = dataFormat(src.format);
  if (!entry.synchronous || !entry.exampleShape)
    throw new Error(`${path}: ${src.format} data; --data takes ${FILES_FORMATS.join(', ')} data`);
  const shape = entry.exampleShape(src);
  const ds = read({ path, format: src.format }, shape, MAX_CLASSES);
  let classes = 1;
  for (const label of ds.y) classes = Math.max(classes, label + 1);
  if (classes < 2) throw new Error(`${path}: every label is 0; a classification needs two classes or more`);
  return { options: { path, format: src.format, shape, classes }, examples: ds.n };
}

/**
 * The entry of a user's own examples (see the module comment), without its name: the registry
 * names it (src/data/registry.ts, FILES_DATASET).
 */
export const FILES_ENTRY: Omit<DatasetDefinition<FilesOptions>, 'name'> = {
  description:
    "a user's own examples: x.npy + y.npy, an IDX images/labels pair or a CSV file with a label column",
  options: Type.Object(
    {
      path: Type.String({
        minLength: 1,
        description:
          'the features file (x.npy; an IDX images file; a .csv file) or the folder of x.npy and y.npy, relative to the working directory',
      }),
      format: Type.Optional(
        Type.Union(
          FILES_FORMATS.map((f) => Type.Literal(f)),
          { description: `${FILES_FORMATS.join(', ')}. Default: detected from the path.` },
        ),
      ),
      shape: Type.Array(Type.Integer({ minimum: 1 }), {
        minItems: 3,
        maxItems: 3,
        description: 'shape of one example [h, w, c]; tabular data [1, features, 1]',
      }),
      classes: Type.Integer({ minimum: 2, description: 'number of classes (labels 0 … classes − 1)' }),
      labelColumn: Type.Optional(
        Type.String({ minLength: 1, default: 'label', description: 'CSV: the label column' }),
      ),
    },
    { additionalProperties: false },
  ),
  shape: (o) => ({ inputShape: [...o.shape], numClasses: o.classes }),
  load(o) {
    const pool = read(o, o.shape, o.classes);
    return { pool, source: `${pool.n} examples from ${o.path}` };
  },
};
