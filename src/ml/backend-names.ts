/**
 * The names of the tfjs backends fedscore can pick, apart from backend.ts so that the command
 * line can check `--backend` without loading TensorFlow.js.
 */

/** The tfjs backends fedscore knows how to pick. */
export type BackendName = 'webgpu' | 'tensorflow' | 'wasm' | 'cpu';

/**
 * Names accepted by `FEDSCORE_BACKEND` and the `backend` option, in the order of the automatic
 * choice (`webgpu` is taken automatically only on a hardware adapter; backend.ts).
 */
export const BACKEND_NAMES: readonly BackendName[] = ['webgpu', 'tensorflow', 'wasm', 'cpu'];

/** Checks a backend name. Throws RangeError naming `field` when it is not one of BACKEND_NAMES. */
export function parseBackendName(value: string, field = 'backend'): BackendName {
  if (!(BACKEND_NAMES as readonly string[]).includes(value))
    throw new RangeError(`${field}: expected one of ${BACKEND_NAMES.join(', ')}, got '${value}'`);
  return value as BackendName;
}
