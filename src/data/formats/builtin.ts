/**
 * The built-in data formats, one line each: a new format is its own file in this folder and one
 * line here. ./registry.ts collects every export of this file, in each format's `detectionRank`
 * (test/arch/registries.test.ts checks that each line is `export { x } from './file.js'` and names one
 * format).
 */
export { csvFormat } from './csv.js';
export { idxFormat } from './idx.js';
export { imageFolderFormat } from './image-folder.js';
export { npyFormat } from './npy.js';
