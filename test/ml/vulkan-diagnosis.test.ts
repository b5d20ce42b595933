/** src/ml/_vulkan_diagnosis.ts: the one-line diagnosis of `--backend webgpu` without an adapter, on fake roots. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { vulkanDiagnosis } from '../../src/ml/_vulkan_diagnosis.js';

const dir = mkdtempSync(join(tmpdir(), 'vk-diag-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function root(name: string, { loader = false, icd = false } = {}): string {
  const r = join(dir, name);
  mkdirSync(join(r, 'usr/local/nvidia/lib64'), { recursive: true });
  mkdirSync(join(r, 'usr/lib/x86_64-linux-gnu'), { recursive: true });
  if (loader) writeFileSync(join(r, 'usr/lib/x86_64-linux-gnu/libvulkan.so.1'), '');
  if (icd) {
    mkdirSync(join(r, 'usr/local/nvidia/share/vulkan/icd.d'), { recursive: true });
    writeFileSync(join(r, 'usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json'), '{}');
  }
  return r;
}

describe('vulkanDiagnosis', () => {
  it('names the missing loader and the packages', () => {
    expect(vulkanDiagnosis(root('a'), {})).toMatch(
      /^no Vulkan loader \(libvulkan\.so\.1\): apt-get install libvulkan1/,
    );
  });
  it('finds a loader on LD_LIBRARY_PATH', () => {
    const r = root('b', { icd: true });
    const lib = join(dir, 'b-lib');
    mkdirSync(lib);
    writeFileSync(join(lib, 'libvulkan.so.1'), '');
    expect(vulkanDiagnosis(r, { LD_LIBRARY_PATH: lib, VK_DRIVER_FILES: 'x.json' })).toBeUndefined();
  });
  it('says the container lacks graphics', () => {
    expect(
      vulkanDiagnosis(root('c', { loader: true }), { NVIDIA_DRIVER_CAPABILITIES: 'compute,utility' }),
    ).toContain('NVIDIA_DRIVER_CAPABILITIES=compute,utility lacks graphics');
  });
  it('says there is no ICD, or names the one to export', () => {
    expect(vulkanDiagnosis(root('d', { loader: true }), {})).toMatch(/^no NVIDIA Vulkan ICD/);
    const r = root('e', { loader: true, icd: true });
    expect(vulkanDiagnosis(r, { NVIDIA_DRIVER_CAPABILITIES: 'all' })).toBe(
      `the NVIDIA ICD ${r}/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json is not named: export VK_DRIVER_FILES=${r}/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json (and put the driver's lib64 on LD_LIBRARY_PATH)`,
    );
  });
});
