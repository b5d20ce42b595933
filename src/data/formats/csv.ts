/** A CSV file (or .csv.gz): one column per feature and a `label` column. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readCsvDataset } from '../csv.js';
import type { DataFormat } from './format.js';

export const csvFormat: DataFormat = {
  name: 'csv',
  detectionRank: 30,
  path: 'a `.csv` (or `.csv.gz`) file',
  writes: 'silo.csv (one column per feature, then `label`)',
  synchronous: true,
  inDirectory(dir, _names, forced) {
    if (forced) throw new Error(`${dir}: is a directory; pass the .csv file itself`);
    return undefined;
  },
  inFile(file, forced) {
    return forced || /\.csv(\.gz)?$/i.test(basename(file)) ? { format: 'csv', path: file } : undefined;
  },
  read: (src, o) =>
    readCsvDataset(src.path, {
      inputShape: o.inputShape,
      numClasses: o.numClasses,
      name: o.name,
      ...(o.labelColumn !== undefined ? { labelColumn: o.labelColumn } : {}),
      ...(o.delimiter !== undefined ? { delimiter: o.delimiter } : {}),
      ...(o.classNames ? { classNames: o.classNames } : {}),
      ...(o.maxBytes !== undefined ? { maxBytes: o.maxBytes } : {}),
    }),
  exampleShape(src) {
    if (/\.gz$/i.test(src.path)) throw new Error(`${src.path}: a gzipped CSV file; pass it uncompressed`);
    const header = readFileSync(src.path, 'utf8').split(/\r?\n/, 1)[0] ?? '';
    return [1, header.split(',').length - 1, 1];
  },
  async write(dir, ds) {
    mkdirSync(dir, { recursive: true });
    const [h, w, c] = ds.shape;
    const f = h * w * c;
    const header = [...Array.from({ length: f }, (_, k) => `f${k}`), 'label'].join(',');
    const rows = Array.from({ length: ds.n }, (_, i) =>
      [...Array.from(ds.x.subarray(i * f, (i + 1) * f), (v) => String(v)), String(ds.y[i])].join(','),
    );
    const path = join(dir, 'silo.csv');
    writeFileSync(path, `${header}\n${rows.join('\n')}\n`);
    return path;
  },
};
