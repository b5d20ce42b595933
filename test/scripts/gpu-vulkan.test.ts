/**
 * scripts/_gpu_vulkan.sh (sourced by scripts/gpu-check.sh): on a fake filesystem root shaped like
 * a stock NVIDIA container (the driver mounted under /usr/local/nvidia, no libvulkan.so.1), the
 * packed Debian packages are unpacked and put on LD_LIBRARY_PATH, the ICD in the driver's folder
 * becomes VK_DRIVER_FILES, and what is missing otherwise is said in one line.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '../../scripts/_gpu_vulkan.sh');
const haveDpkgDeb = spawnSync('dpkg-deb', ['--version'], { stdio: 'ignore' }).status === 0;
let dir: string;

/** A fake root: the NVIDIA driver's folder (lib64, ICD unless `icd` is false), no loader. */
function fakeRoot(name: string, icd = true): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'usr/local/nvidia/lib64'), { recursive: true });
  writeFileSync(join(root, 'usr/local/nvidia/lib64/libGLX_nvidia.so.0'), '');
  mkdirSync(join(root, 'usr/lib/x86_64-linux-gnu'), { recursive: true });
  if (icd) {
    mkdirSync(join(root, 'usr/local/nvidia/share/vulkan/icd.d'), { recursive: true });
    writeFileSync(join(root, 'usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json'), '{}');
  }
  return root;
}

/** A bundle whose debs/ holds one fake libvulkan1 package (built with dpkg-deb). */
function bundle(name: string, withDeb: boolean): string {
  const b = join(dir, name);
  mkdirSync(join(b, 'debs'), { recursive: true });
  if (withDeb) {
    const pkg = join(dir, `${name}-pkg`);
    mkdirSync(join(pkg, 'DEBIAN'), { recursive: true });
    mkdirSync(join(pkg, 'usr/lib/x86_64-linux-gnu'), { recursive: true });
    writeFileSync(join(pkg, 'usr/lib/x86_64-linux-gnu/libvulkan.so.1'), 'fake loader');
    writeFileSync(
      join(pkg, 'DEBIAN/control'),
      'Package: libvulkan1\nVersion: 1.0\nArchitecture: amd64\nMaintainer: test <t@t>\nDescription: fake\n',
    );
    execFileSync('dpkg-deb', ['--build', pkg, join(b, 'debs/libvulkan1_1.0_amd64.deb')], { stdio: 'ignore' });
  }
  return b;
}

/** Runs gpu_vulkan_setup on ROOT/BUNDLE in a clean environment; its output and the variables. */
function setup(root: string, b: string, env: Record<string, string> = {}) {
  const out = execFileSync(
    'bash',
    [
      '-c',
      `. "${script}"; gpu_vulkan_setup "$1" "$2"; echo "LD=\${LD_LIBRARY_PATH:-}"; echo "VK=\${VK_DRIVER_FILES:-}"; echo "MISSING=$GPU_VULKAN_MISSING"`,
      'x',
      root,
      b,
    ],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } },
  );
  const get = (k: string) => out.match(new RegExp(`^${k}=(.*)$`, 'm'))?.[1] ?? '';
  return { out, ld: get('LD'), vk: get('VK'), missing: get('MISSING') };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gpu-vulkan-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('gpu_vulkan_setup', () => {
  it.runIf(haveDpkgDeb)('unpacks the packed loader, adds the driver folder, finds the driver ICD', () => {
    const root = fakeRoot('stock');
    const b = bundle('b1', true);
    const r = setup(root, b, { NVIDIA_DRIVER_CAPABILITIES: 'compute,graphics,utility' });
    expect(r.out).toContain(
      `vulkan loader: ${b}/vulkan-libs/usr/lib/x86_64-linux-gnu/libvulkan.so.1 (unpacked`,
    );
    expect(r.ld.split(':')).toEqual([
      `${b}/vulkan-libs/usr/lib/x86_64-linux-gnu`,
      `${root}/usr/local/nvidia/lib64`,
    ]);
    expect(r.vk).toBe(`${root}/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json`);
    expect(r.missing).toBe('');
    expect(r.out).not.toContain('vulkan missing');
    // A second run reuses the unpacked folder.
    expect(setup(root, b).ld.split(':')[0]).toBe(`${b}/vulkan-libs/usr/lib/x86_64-linux-gnu`);
  });

  it('keeps a loader the machine has and an ICD already named', () => {
    const root = fakeRoot('has-loader');
    writeFileSync(join(root, 'usr/lib/x86_64-linux-gnu/libvulkan.so.1'), '');
    const r = setup(root, bundle('b2', false), { VK_DRIVER_FILES: '/elsewhere/icd.json' });
    expect(r.out).toContain(`vulkan loader: ${root}/usr/lib/x86_64-linux-gnu/libvulkan.so.1\n`);
    expect(r.vk).toBe('/elsewhere/icd.json');
    expect(r.missing).toBe('');
  });

  it('says in one line that the loader is missing when nothing was packed', () => {
    const r = setup(fakeRoot('no-loader'), bundle('b3', false));
    expect(r.missing).toMatch(/^no Vulkan loader \(libvulkan\.so\.1\)/);
    expect(r.out.match(/^vulkan missing: /gm)).toHaveLength(1);
  });

  it('says the container lacks the graphics capability', () => {
    const root = fakeRoot('compute-only', false);
    writeFileSync(join(root, 'usr/lib/x86_64-linux-gnu/libvulkan.so.1'), '');
    const r = setup(root, bundle('b4', false), { NVIDIA_DRIVER_CAPABILITIES: 'compute,utility' });
    expect(r.missing).toContain('NVIDIA_DRIVER_CAPABILITIES=compute,utility lacks graphics');
    expect(setup(root, bundle('b5', false), { NVIDIA_DRIVER_CAPABILITIES: 'all' }).missing).toMatch(
      /^no NVIDIA Vulkan ICD/,
    );
  });

  it('says no ICD was found when the driver is there without one', () => {
    const root = fakeRoot('no-icd', false);
    writeFileSync(join(root, 'usr/lib/x86_64-linux-gnu/libvulkan.so.1'), '');
    const r = setup(root, bundle('b6', false));
    expect(r.vk).toBe('');
    expect(r.missing).toMatch(/^no NVIDIA Vulkan ICD \(nvidia_icd\.json/);
  });
});
