/**
 * The WebGPU backend's set-up (internal; docs/performance.md, "GPU: WebGPU"): Dawn's Node
 * bindings (`webgpu`, a prebuilt `dawn.node`, nothing downloaded at install) provide
 * `navigator.gpu` for `@tensorflow/tfjs-backend-webgpu`. On Linux Dawn runs on the Vulkan loader
 * (`libvulkan1`) and whatever ICD it finds: the NVIDIA driver's on a GPU machine
 * (`VK_DRIVER_FILES` may have to name its `nvidia_icd.json`), Mesa's lavapipe (software) in CI.
 *
 * The adapter is described (vendor, architecture, device, description) so that runs can record
 * it, and classified as software or hardware: automatic backend choice takes only a hardware
 * adapter; a software one (lavapipe/llvmpipe, SwiftShader, Microsoft Basic Render, or one Dawn
 * marks `isFallbackAdapter`) is used only when `webgpu` is asked for by name.
 *
 * Reads from the GPU must be asynchronous there (`dataSync`/`arraySync` throw
 * `OffscreenCanvas is not defined` in Node): `onWebGpu()` tells the training and evaluation
 * paths to use `.data()`.
 */

import { vulkanDiagnosis } from './_vulkan_diagnosis.js';
import { type AdapterInfo, isSoftwareAdapter } from './adapter.js';
import * as tf from './tf.js';

export { type AdapterInfo, describeAdapter, isSoftwareAdapter } from './adapter.js';

/** The outcome of `loadWebGpu`. */
export type WebGpuLoad = { ok: true; adapter: AdapterInfo } | { ok: false; why: string };

let loaded: Promise<WebGpuLoad> | undefined;

/**
 * Installs `navigator.gpu` from Dawn (Vulkan on Linux), asks for an adapter, describes it and
 * registers tfjs's `webgpu` backend. Done once per process; later calls return the first result.
 * Never throws: a missing `dawn.node`, Vulkan loader or adapter is returned as `why`.
 */
export function loadWebGpu(): Promise<WebGpuLoad> {
  loaded ??= load().then((r) => {
    softwareAdapter = r.ok && r.adapter.software;
    return r;
  });
  return loaded;
}

let softwareAdapter = false;

/** Whether the adapter `loadWebGpu` found is a software one (lavapipe, SwiftShader); false before. */
export function onSoftwareAdapter(): boolean {
  return softwareAdapter;
}

async function load(): Promise<WebGpuLoad> {
  let gpu: GpuLike;
  try {
    const dawn = (await import('webgpu')) as unknown as {
      create(flags: string[]): GpuLike;
      globals: Record<string, unknown>;
    };
    const g = globalThis as Record<string, unknown>;
    for (const [k, v] of Object.entries(dawn.globals)) if (!(k in g)) g[k] = v;
    const flags = process.platform === 'linux' ? ['backend=vulkan'] : [];
    gpu = dawn.create(flags);
    const nav = (g.navigator ?? {}) as Record<string, unknown>;
    if (g.navigator === undefined) g.navigator = nav;
    Object.defineProperty(nav, 'gpu', { value: gpu, configurable: true, writable: true });
  } catch (e) {
    return { ok: false, why: `the webgpu package (dawn.node) could not be loaded: ${(e as Error).message}` };
  }
  let adapter: { info?: Record<string, unknown>; isFallbackAdapter?: boolean } | null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (e) {
    const more = vulkanDiagnosis();
    return { ok: false, why: `no WebGPU adapter (${(e as Error).message})${more ? `; ${more}` : ''}` };
  }
  if (!adapter)
    return {
      ok: false,
      why: `no WebGPU adapter: Dawn found no Vulkan device (${vulkanDiagnosis() ?? 'is libvulkan1 installed, and an ICD: the GPU driver, or mesa-vulkan-drivers; VK_DRIVER_FILES may name it'})`,
    };
  const info = adapter.info ?? {};
  const str = (k: string) => (typeof info[k] === 'string' ? (info[k] as string) : '');
  const raw = {
    vendor: str('vendor'),
    architecture: str('architecture'),
    device: str('device'),
    description: str('description'),
    isFallbackAdapter: info.isFallbackAdapter === true || adapter.isFallbackAdapter === true,
  };
  try {
    await import('@tensorflow/tfjs-backend-webgpu');
  } catch (e) {
    return { ok: false, why: `@tensorflow/tfjs-backend-webgpu could not be loaded: ${(e as Error).message}` };
  }
  return {
    ok: true,
    adapter: {
      vendor: raw.vendor,
      architecture: raw.architecture,
      device: raw.device,
      description: raw.description,
      software: isSoftwareAdapter(raw),
    },
  };
}

interface GpuLike {
  requestAdapter(options?: {
    powerPreference?: string;
  }): Promise<{ info?: Record<string, unknown>; isFallbackAdapter?: boolean } | null>;
}

/** Whether the active tfjs backend is `webgpu` (synchronous reads are not available there). */
export function onWebGpu(): boolean {
  return tf.getBackend() === 'webgpu';
}
