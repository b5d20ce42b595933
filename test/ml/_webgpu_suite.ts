/**
 * The hooks of a describe block whose tests run on the webgpu backend: webgpu before its first
 * test, the environment variables named (the GPU paths' switches, FEDSCORE_GPU_*) cleared after
 * each test, and wasm again after its last test. Call it inside the describe block.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { initBackend } from '../../src/ml/backend.js';

export function webgpuSuite(...clearAfterEach: string[]): void {
  beforeAll(async () => {
    await initBackend({ backend: 'webgpu' });
  });
  afterEach(() => {
    for (const name of clearAfterEach) delete process.env[name];
  });
  afterAll(async () => {
    await initBackend({ backend: 'wasm' });
  });
}
