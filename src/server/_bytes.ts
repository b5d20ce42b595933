/** Byte helpers of the service (internal). Vectors travel little-endian, as in protocol/codec.ts. */

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** A Buffer view of a typed array's bytes (no copy). */
export function asBuffer(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** Float32 little-endian bytes → a fresh Float32Array (the input may be unaligned). */
export function readFloat32(bytes: Uint8Array): Float32Array {
  if (bytes.length % 4 !== 0) throw new RangeError(`bytes: length ${bytes.length} is not a multiple of 4`);
  const n = bytes.length / 4;
  if (LITTLE_ENDIAN) return new Float32Array(Uint8Array.from(bytes).buffer, 0, n);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Float32Array.from({ length: n }, (_, i) => dv.getFloat32(4 * i, true));
}

/** A float vector's little-endian bytes. */
export function floatBytes(a: Float32Array | Float64Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(asBuffer(a));
  const w = a.BYTES_PER_ELEMENT;
  const out = Buffer.alloc(a.length * w);
  for (let i = 0; i < a.length; i++)
    if (w === 4) out.writeFloatLE(a[i]!, 4 * i);
    else out.writeDoubleLE(a[i]!, 8 * i);
  return out;
}

/** Lower-case hex → bytes (the caller has checked the pattern). */
export function fromHex(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, 'hex'));
}
