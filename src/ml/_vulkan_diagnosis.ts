/**
 * Why Dawn finds no Vulkan adapter, in one line (issue 36, "GPU machines as they come"): the
 * same checks as scripts/_gpu_vulkan.sh, for `experiment --backend webgpu` when no adapter is
 * found. On a stock NVIDIA container the driver is mounted (/usr/local/nvidia) but the Vulkan
 * loader (libvulkan.so.1) and glvnd are not installed, or NVIDIA_DRIVER_CAPABILITIES lacks
 * `graphics` (no Vulkan ICD is mounted then).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const LIB_DIRS = ['usr/lib/x86_64-linux-gnu', 'lib/x86_64-linux-gnu', 'usr/lib64', 'usr/lib', 'lib64', 'lib'];
const ICDS = [
  'usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json',
  'usr/local/nvidia/etc/vulkan/icd.d/nvidia_icd.json',
  'usr/share/vulkan/icd.d/nvidia_icd.json',
  'usr/share/vulkan/icd.d/nvidia_icd.x86_64.json',
  'etc/vulkan/icd.d/nvidia_icd.json',
  'etc/vulkan/icd.d/nvidia_icd.x86_64.json',
];

/**
 * What is missing for Vulkan on an NVIDIA machine, or undefined when nothing found is missing.
 * `root`: the filesystem root (a fake one in tests).
 */
export function vulkanDiagnosis(root = '/', env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = [
    ...(env.LD_LIBRARY_PATH ?? '').split(':').filter((d) => d !== ''),
    ...LIB_DIRS.map((d) => join(root, d)),
  ];
  if (!dirs.some((d) => existsSync(join(d, 'libvulkan.so.1'))))
    return 'no Vulkan loader (libvulkan.so.1): apt-get install libvulkan1 libglvnd0 libegl1 libgl1 libglx0 libopengl0 libgles2, or run scripts/gpu-check.sh from a --pack bundle (it unpacks them)';
  const caps = env.NVIDIA_DRIVER_CAPABILITIES;
  if (caps !== undefined && !caps.split(',').some((c) => c === 'graphics' || c === 'all'))
    return `NVIDIA_DRIVER_CAPABILITIES=${caps} lacks graphics (the container gets no Vulkan driver: run it with NVIDIA_DRIVER_CAPABILITIES=compute,graphics,utility)`;
  const nvidia =
    existsSync(join(root, 'dev/nvidiactl')) ||
    existsSync(join(root, 'usr/local/nvidia')) ||
    caps !== undefined;
  const named = env.VK_DRIVER_FILES ?? env.VK_ICD_FILENAMES;
  if (nvidia && named === undefined) {
    const icd = ICDS.map((p) => join(root, p)).find((p) => existsSync(p));
    return icd === undefined
      ? 'no NVIDIA Vulkan ICD (nvidia_icd.json in /usr/local/nvidia/share/vulkan/icd.d, /usr/share/vulkan/icd.d or /etc/vulkan/icd.d)'
      : `the NVIDIA ICD ${icd} is not named: export VK_DRIVER_FILES=${icd} (and put the driver's lib64 on LD_LIBRARY_PATH)`;
  }
  return undefined;
}
