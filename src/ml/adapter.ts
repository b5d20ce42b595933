/**
 * The WebGPU adapter as runs record it (results.json `adapter`, the backend log line), and the
 * software/hardware classification automatic backend choice uses (_webgpu.ts loads the adapter).
 * No TensorFlow.js here, so that the command line can print it without loading tfjs.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** What the run records of the WebGPU adapter (results.json `adapter`, the backend log line). */
export interface AdapterInfo {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  readonly description: string;
  /** A software rasterizer (see `isSoftwareAdapter`). */
  readonly software: boolean;
}

/** Names in an adapter's strings that mean a software implementation. */
const SOFTWARE_NAMES = /llvmpipe|lavapipe|softpipe|swiftshader|microsoft basic render|\bsoftware\b/i;

/** Whether Dawn's adapter info describes a software adapter (see the module comment). */
export function isSoftwareAdapter(info: {
  vendor?: string;
  architecture?: string;
  device?: string;
  description?: string;
  isFallbackAdapter?: boolean;
}): boolean {
  if (info.isFallbackAdapter === true) return true;
  return [info.vendor, info.architecture, info.device, info.description].some(
    (s) => typeof s === 'string' && SOFTWARE_NAMES.test(s),
  );
}

/** One line: `nvidia ampere (NVIDIA H100 80GB HBM3)` or `mesa software (llvmpipe …), software`. */
export function describeAdapter(a: AdapterInfo): string {
  const what = [a.vendor, a.architecture].filter((s) => s !== '').join(' ') || 'unknown adapter';
  const detail = a.description || a.device;
  return `${what}${detail ? ` (${detail})` : ''}${a.software ? ', software' : ''}`;
}

/**
 * The GPU device nodes a Linux machine exposes (`/dev/nvidia0`…, `/dev/dri/renderD*`, WSL's
 * `/dev/dxg`). A hardware adapter needs one; with none, Dawn can only offer a software one, so
 * the automatic backend choice skips WebGPU without loading Dawn (whose Vulkan start-up also
 * prints warnings to stderr that no run should show).
 */
export function gpuDeviceNodes(dev = '/dev'): string[] {
  const list = (dir: string) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  return [
    ...list(dev)
      .filter((f) => /^nvidia\d+$/.test(f) || f === 'dxg')
      .map((f) => join(dev, f)),
    ...list(join(dev, 'dri'))
      .filter((f) => /^renderD\d+$/.test(f))
      .map((f) => join(dev, 'dri', f)),
  ];
}
