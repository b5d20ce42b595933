/**
 * A content digest of a dataset: what a consortium publishes as `testSetDigest` so that every
 * silo can check it evaluates its coalitions on the same common test set as the server.
 *
 * SHA-256 over a canonical encoding: the ASCII header
 * `fedscore/dataset/v1 n=<n> shape=<h>x<w>x<c> classes=<k>` and LF, then the features as Float32
 * little-endian, then the labels as Int32 little-endian. Names and sources are not hashed.
 */
import { createHash } from 'node:crypto';
import { checkDataset, type Dataset } from './dataset.js';

/** Little-endian bytes of a typed array (copies only on a big-endian host). */
function littleEndian(a: Float32Array | Int32Array): Uint8Array {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  if (new Uint8Array(Uint16Array.of(1).buffer)[0] === 1) return bytes;
  const out = new Uint8Array(a.byteLength);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < a.length; i++)
    a instanceof Float32Array ? dv.setFloat32(4 * i, a[i]!, true) : dv.setInt32(4 * i, a[i]!, true);
  return out;
}

/**
 * Hex SHA-256 of `ds` (see the module comment).
 *
 * @throws TypeError / RangeError from checkDataset when `ds` is not a consistent dataset.
 */
export function datasetDigest(ds: Dataset): string {
  checkDataset(ds);
  const [h, w, c] = ds.shape;
  const header = `fedscore/dataset/v1 n=${ds.n} shape=${h}x${w}x${c} classes=${ds.numClasses}\n`;
  return createHash('sha256')
    .update(header)
    .update(littleEndian(ds.x))
    .update(littleEndian(Int32Array.from(ds.y)))
    .digest('hex');
}
