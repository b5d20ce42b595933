import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gpuDeviceNodes } from '../../src/ml/adapter.js';

describe('gpuDeviceNodes', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const dev = (files: string[]) => {
    const d = mkdtempSync(join(tmpdir(), 'fedscore-dev-'));
    dirs.push(d);
    for (const f of files) {
      mkdirSync(join(d, f, '..'), { recursive: true });
      writeFileSync(join(d, f), '');
    }
    return d;
  };

  it('finds NVIDIA, DRI render and WSL nodes, and nothing else', () => {
    const d = dev([
      'nvidia0',
      'nvidiactl',
      'nvidia-uvm',
      'dri/renderD128',
      'dri/card0',
      'dxg',
      'null',
      'tty0',
    ]);
    expect(gpuDeviceNodes(d).sort()).toEqual(
      [join(d, 'dri', 'renderD128'), join(d, 'dxg'), join(d, 'nvidia0')].sort(),
    );
  });

  it('is empty on a machine without GPU nodes (no dri folder at all)', () => {
    expect(gpuDeviceNodes(dev(['null', 'zero']))).toEqual([]);
    expect(gpuDeviceNodes(join(tmpdir(), 'fedscore-no-such-dev'))).toEqual([]);
  });
});
