/**
 * The WebGPU adapter as runs record it (results.json `adapter`, the backend log line), and the
 * software/hardware classification automatic backend choice uses (_webgpu.ts loads the adapter).
 * No TensorFlow.js here, so that the command line can print it without loading tfjs.
 */

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
