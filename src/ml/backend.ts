/**
 * Tensor backend choice (docs/architecture.md, "Compute backends").
 *
 * Order: `webgpu` (Dawn's WebGPU, `_webgpu.ts`, only on a hardware adapter: a software one such
 * as Mesa's lavapipe is used only when asked for by name) → `tensorflow` (native libtensorflow
 * from the optional `@tensorflow/tfjs-node-gpu`, then `@tensorflow/tfjs-node`, when installed and
 * loadable) → `wasm` → `cpu`. `FEDSCORE_BACKEND`
 * (or the `backend` option, which wins) forces one. tfjs's start-up banner and warnings are
 * silenced with `PROD`. The chosen backend is returned so every run can record it.
 *
 * On wasm this module also registers fedscore's convolution gradient kernels (`_wasm_kernels.ts`):
 * tfjs-backend-wasm 4.22 has no `Conv2DBackpropFilter`, so CNNs could not train there otherwise.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { registerBlasKernels } from './_blas_kernels.js';
import { loadNativeAt } from './_native.js';
import { registerWasmKernels } from './_wasm_kernels.js';
import { type AdapterInfo, describeAdapter, loadWebGpu } from './_webgpu.js';
import { gpuDeviceNodes } from './adapter.js';
import { BACKEND_NAMES, type BackendName, parseBackendName } from './backend-names.js';
import * as tf from './tf.js';

export type { AdapterInfo } from './_webgpu.js';
export { BACKEND_NAMES, type BackendName, parseBackendName } from './backend-names.js';

/** What `initBackend` chose, for logs and result records. */
export interface BackendInfo {
  /** The active tfjs backend. */
  readonly name: BackendName;
  /** For `tensorflow`: which package provided it (`@tensorflow/tfjs-node-gpu` or `-node`). */
  readonly provider: string;
  /** Why it was chosen: `option`, `env` (FEDSCORE_BACKEND) or `auto`. */
  readonly reason: 'option' | 'env' | 'auto';
  /** Backends tried before it and why each was skipped. */
  readonly skipped: readonly { name: string; why: string }[];
  /** The tfjs version. */
  readonly tfjsVersion: string;
  /**
   * Who runs the products and convolutions: `OpenBLAS 0.3.21 (2 threads)` when fedscore's
   * native kernels are active on wasm (`_blas_kernels.ts`), else the backend's own kernels with
   * the reason the native ones are not used.
   */
  readonly kernels: string;
  /** For `webgpu`: the adapter (vendor, architecture, device, description, software or not). */
  readonly adapter?: AdapterInfo;
}

/** Options for `initBackend`. */
export interface BackendOptions {
  /** Force a backend (overrides FEDSCORE_BACKEND). */
  backend?: BackendName;
  /** Receives one human-readable line naming the backend chosen (default: nothing is printed). */
  log?: (line: string) => void;
  /** Environment to read FEDSCORE_BACKEND from (default process.env). */
  env?: Record<string, string | undefined>;
}

const require = createRequire(import.meta.url);
let current: BackendInfo | undefined;
let pending: Promise<BackendInfo> | undefined;

/** The backend chosen by the last `initBackend`, or undefined before the first call. */
export function currentBackend(): BackendInfo | undefined {
  return current;
}

/**
 * Chooses and activates the tensor backend (see the module comment for the order). Calls after
 * the first return the same choice unless another backend is forced.
 *
 * @throws RangeError when `backend` or FEDSCORE_BACKEND is not a known name.
 * @throws Error when a forced backend cannot be loaded (the message says why).
 */
export async function initBackend(options: BackendOptions = {}): Promise<BackendInfo> {
  if (options.backend !== undefined) parseBackendName(options.backend);
  const envValue = (options.env ?? process.env).FEDSCORE_BACKEND;
  const fromEnv =
    envValue !== undefined && envValue !== '' ? parseBackendName(envValue, 'FEDSCORE_BACKEND') : undefined;
  const forced = options.backend ?? fromEnv;
  const reason = options.backend !== undefined ? 'option' : fromEnv !== undefined ? 'env' : 'auto';
  while (pending) await pending.catch(() => undefined);
  if (current && (forced === undefined || forced === current.name)) return current;
  pending = choose(forced, reason);
  try {
    current = await pending;
  } finally {
    pending = undefined;
  }
  options.log?.(describeBackend(current));
  return current;
}

/** One line for logs: `backend: wasm (auto; skipped tensorflow: not installed)`. */
export function describeBackend(info: BackendInfo): string {
  const provider =
    info.name === 'tensorflow'
      ? ` via ${info.provider}`
      : info.adapter
        ? ` on ${describeAdapter(info.adapter)}`
        : '';
  const skipped = info.skipped.length
    ? `; skipped ${info.skipped.map((s) => `${s.name}: ${s.why}`).join('; ')}`
    : '';
  return `backend: ${info.name}${provider} (${info.reason}${skipped}), tfjs ${info.tfjsVersion}, ${info.kernels}`;
}

async function choose(forced: BackendName | undefined, reason: BackendInfo['reason']): Promise<BackendInfo> {
  tf.env().set('PROD', true);
  const order: BackendName[] = forced ? [forced] : [...BACKEND_NAMES];
  const skipped: { name: string; why: string }[] = [];
  for (const name of order) {
    const attempt = await tryBackend(name, forced === undefined);
    if (attempt.ok) {
      return {
        name,
        provider: attempt.provider,
        reason,
        skipped,
        tfjsVersion: tf.version.tfjs,
        kernels: attempt.kernels,
        ...(attempt.adapter ? { adapter: attempt.adapter } : {}),
      };
    }
    skipped.push({ name, why: attempt.why });
  }
  throw new Error(
    `backend: could not load ${order.join(' or ')} (${skipped.map((s) => `${s.name}: ${s.why}`).join('; ')})`,
  );
}

type Attempt =
  | { ok: true; provider: string; kernels: string; adapter?: AdapterInfo }
  | { ok: false; why: string };

async function tryBackend(name: BackendName, auto: boolean): Promise<Attempt> {
  if (name === 'webgpu') {
    if (auto && process.platform === 'linux' && gpuDeviceNodes().length === 0)
      return {
        ok: false,
        why: 'no GPU device node (/dev/nvidia*, /dev/dri/renderD*, /dev/dxg): no hardware adapter here (--backend webgpu uses a software one)',
      };
    const gpu = await loadWebGpu();
    if (!gpu.ok) return { ok: false, why: gpu.why };
    if (auto && gpu.adapter.software)
      return {
        ok: false,
        why: `software adapter ${describeAdapter(gpu.adapter)} (used only with --backend webgpu)`,
      };
    if (!(await activate('webgpu')))
      return { ok: false, why: `the webgpu backend did not initialize on ${describeAdapter(gpu.adapter)}` };
    return {
      ok: true,
      provider: '@tensorflow/tfjs-backend-webgpu',
      kernels: 'WebGPU compute shaders',
      adapter: gpu.adapter,
    };
  }
  if (name === 'tensorflow') {
    const whyNot: string[] = [];
    for (const pkg of ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node']) {
      const why = loadNative(pkg);
      if (why === undefined && (await activate('tensorflow')))
        return { ok: true, provider: pkg, kernels: 'libtensorflow kernels' };
      whyNot.push(`${pkg} ${why ?? 'loaded but the backend did not initialize'}`);
    }
    return { ok: false, why: whyNot.join(', ') };
  }
  if (name === 'wasm') {
    try {
      setWasmPaths(
        `${join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist')}/`,
      );
    } catch (e) {
      return { ok: false, why: `wasm files not found (${(e as Error).message})` };
    }
    // The emscripten module installs process-wide uncaughtException/unhandledRejection handlers
    // that rethrow from inside its minified source, printing megabytes of it with any later
    // error of the program. Take them out again.
    const before = {
      uncaughtException: new Set(process.listeners('uncaughtException')),
      unhandledRejection: new Set(process.listeners('unhandledRejection')),
    };
    const ok = await activate('wasm');
    for (const l of process.listeners('uncaughtException'))
      if (!before.uncaughtException.has(l)) process.removeListener('uncaughtException', l);
    for (const l of process.listeners('unhandledRejection'))
      if (!before.unhandledRejection.has(l)) process.removeListener('unhandledRejection', l);
    if (!ok) return { ok: false, why: 'the wasm backend did not initialize' };
    registerWasmKernels();
    const blas = registerBlasKernels();
    return { ok: true, provider: '@tensorflow/tfjs-backend-wasm', kernels: blas.description };
  }
  return (await activate('cpu'))
    ? { ok: true, provider: '@tensorflow/tfjs', kernels: 'JavaScript kernels' }
    : { ok: false, why: 'failed' };
}

/** Loads a native tfjs package by name, or says why not (see _native.ts). */
function loadNative(pkg: string): string | undefined {
  let root: string | undefined;
  try {
    root = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    root = undefined;
  }
  return loadNativeAt(root);
}

async function activate(name: string): Promise<boolean> {
  if (tf.findBackendFactory(name) == null && tf.findBackend(name) == null) return false;
  try {
    return (await tf.setBackend(name)) && tf.getBackend() === name;
  } catch {
    return false;
  }
}
