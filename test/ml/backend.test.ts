import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { currentBackend, describeBackend, initBackend, parseBackendName } from '../../src/ml/backend.js';

describe('initBackend', () => {
  afterEach(() => vi.restoreAllMocks());

  it('picks webgpu on a hardware adapter, else tensorflow when loadable, else wasm, and records what it skipped', async () => {
    const info = await initBackend({ env: {} });
    expect(info.reason).toBe('auto');
    expect(currentBackend()).toBe(info);
    expect(tf.getBackend()).toBe(info.name);
    if (info.name === 'wasm') {
      // This machine has no hardware GPU (at most lavapipe, software) and cannot install
      // @tensorflow/tfjs-node: the skips must say why.
      expect(info.skipped.map((s) => s.name)).toEqual(['webgpu', 'tensorflow']);
      expect(info.skipped[0]!.why).toMatch(
        /^(no GPU device node|software adapter |no WebGPU adapter|the webgpu package)/,
      );
      expect(info.skipped[1]!.why).toMatch(/tfjs-node-gpu .*tfjs-node /);
    } else if (info.name === 'tensorflow') expect(info.skipped.map((s) => s.name)).toEqual(['webgpu']);
    else expect(info).toMatchObject({ name: 'webgpu', adapter: { software: false } });
    expect(describeBackend(info)).toMatch(new RegExp(`^backend: ${info.name}`));
  });

  it('FEDSCORE_BACKEND overrides the order and the option overrides the variable', async () => {
    const lines: string[] = [];
    const cpu = await initBackend({ env: { FEDSCORE_BACKEND: 'cpu' }, log: (l) => lines.push(l) });
    expect(cpu).toMatchObject({ name: 'cpu', reason: 'env' });
    expect(lines).toEqual([describeBackend(cpu)]);
    const wasm = await initBackend({ backend: 'wasm', env: { FEDSCORE_BACKEND: 'cpu' } });
    expect(wasm).toMatchObject({ name: 'wasm', reason: 'option' });
    expect(tf.getBackend()).toBe('wasm');
  });

  it('rejects unknown names, naming the field', async () => {
    await expect(initBackend({ env: { FEDSCORE_BACKEND: 'gpu' } })).rejects.toThrow(
      /^FEDSCORE_BACKEND: expected/,
    );
    await expect(initBackend({ backend: 'webgl' as never })).rejects.toThrow(RangeError);
    expect(() => parseBackendName('x')).toThrow(/^backend: expected one of webgpu, tensorflow, wasm, cpu/);
  });

  it('a forced backend that cannot load is an error that says why', async () => {
    const native = await initBackend({ backend: 'tensorflow' }).catch((e: Error) => e);
    if (native instanceof Error)
      expect(native.message).toMatch(/tensorflow: .*not installed|native binding|failed to load/);
    else expect(native.name).toBe('tensorflow');
  });

  it('prints nothing: no tfjs banner or warnings on first use of a backend', async () => {
    const warn = vi.spyOn(console, 'warn');
    const log = vi.spyOn(console, 'log');
    const err = vi.spyOn(process.stderr, 'write');
    await initBackend({ backend: 'cpu' });
    tf.tidy(() => tf.add(tf.tensor([1, 2]), tf.tensor([3, 4])).dataSync());
    await initBackend({ backend: 'wasm' });
    tf.tidy(() => tf.matMul(tf.ones([2, 3]), tf.ones([3, 2])).dataSync());
    expect(warn).not.toHaveBeenCalled();
    expect(log).not.toHaveBeenCalled();
    expect(err).not.toHaveBeenCalled();
  });

  it('leaves no process-wide exception handlers behind from the wasm module', async () => {
    await initBackend({ backend: 'wasm' });
    const src = process.listeners('uncaughtException').map((l) => String(l));
    expect(src.some((s) => s.includes('ExitStatus'))).toBe(false);
  });
});
