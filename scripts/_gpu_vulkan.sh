# Sourced by scripts/gpu-check.sh (and test/scripts/gpu-vulkan.test.ts): makes Vulkan usable for
# Dawn on a GPU machine as it comes (issue 36, "GPU machines as they come").
#
#   gpu_vulkan_setup ROOT BUNDLE
#     ROOT: the filesystem root to look in ("/" on a machine; a fake root in the test);
#     BUNDLE: the folder made by `gpu-check.sh --pack` (its debs/ holds Debian's libvulkan1 and
#     the glvnd libraries, downloaded at pack time).
#   1. the Vulkan loader: libvulkan.so.1 in LD_LIBRARY_PATH, the system's library folders (and
#      `ldconfig -p` when ROOT is /); when missing, BUNDLE/debs/*.deb are unpacked (`dpkg -x`, else
#      `ar` + tar) into BUNDLE/vulkan-libs and its library folder is put on LD_LIBRARY_PATH;
#   2. the driver's own library folders (/usr/local/nvidia/lib64, …: the ICD's libGLX_nvidia.so.0)
#      go on LD_LIBRARY_PATH;
#   3. the NVIDIA ICD (nvidia_icd.json) in the driver's folder (/usr/local/nvidia/share/vulkan/icd.d)
#      or the system's (/usr/share/vulkan/icd.d, /etc/vulkan/icd.d) is exported as VK_DRIVER_FILES
#      unless VK_DRIVER_FILES or VK_ICD_FILENAMES is set.
#   It prints `vulkan loader: …`, `vulkan ICD: …`, and, when something is missing, one line
#   `vulkan missing: …` saying what (also left in GPU_VULKAN_MISSING). Returns 0 either way.

_gpu_lib_dirs="usr/lib/x86_64-linux-gnu lib/x86_64-linux-gnu usr/lib64 usr/lib lib64 lib"
_gpu_driver_dirs="usr/local/nvidia/lib64 usr/local/nvidia/lib"
_gpu_icds="usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json usr/local/nvidia/etc/vulkan/icd.d/nvidia_icd.json
usr/share/vulkan/icd.d/nvidia_icd.json usr/share/vulkan/icd.d/nvidia_icd.x86_64.json
etc/vulkan/icd.d/nvidia_icd.json etc/vulkan/icd.d/nvidia_icd.x86_64.json"

# Prints the path of libvulkan.so.1 under ROOT (or on LD_LIBRARY_PATH), or nothing.
gpu_find_loader() {
  local root=${1%/} d
  local IFS=:
  for d in ${LD_LIBRARY_PATH:-}; do
    [ -n "$d" ] && [ -e "$d/libvulkan.so.1" ] && { echo "$d/libvulkan.so.1"; return; }
  done
  unset IFS
  for d in $_gpu_lib_dirs; do
    [ -e "$root/$d/libvulkan.so.1" ] && { echo "$root/$d/libvulkan.so.1"; return; }
  done
  if [ -z "$root" ]; then
    ldconfig -p 2>/dev/null | grep -o '/[^ ]*libvulkan\.so\.1$' | head -1
  fi
}

# Unpacks BUNDLE/debs/*.deb into BUNDLE/vulkan-libs (once); prints its library folder or nothing.
gpu_unpack_debs() {
  local bundle=$1 out=$1/vulkan-libs deb
  compgen -G "$bundle/debs/*.deb" >/dev/null || return 0
  if [ ! -e "$out/.unpacked" ]; then
    mkdir -p "$out" || return 0
    for deb in "$bundle"/debs/*.deb; do
      if command -v dpkg >/dev/null 2>&1; then
        dpkg -x "$deb" "$out" || return 0
      elif command -v ar >/dev/null 2>&1; then
        local member z
        member=$(ar t "$deb" | grep '^data\.tar')
        case "$member" in *.xz) z=-J ;; *.gz) z=-z ;; *.zst) z=--zstd ;; *) z= ;; esac
        ar p "$deb" "$member" | tar -x $z -C "$out" -f - || return 0
      else
        return 0
      fi
    done
    touch "$out/.unpacked"
  fi
  [ -e "$out/usr/lib/x86_64-linux-gnu/libvulkan.so.1" ] && echo "$out/usr/lib/x86_64-linux-gnu"
}

# Whether an NVIDIA driver is there (its device node, its mounted folder, or the container's variable).
gpu_nvidia_present() {
  local root=${1%/}
  [ -e "$root/dev/nvidiactl" ] || [ -d "$root/usr/local/nvidia" ] || [ -e "$root/proc/driver/nvidia/version" ] ||
    [ -n "${NVIDIA_DRIVER_CAPABILITIES:-}" ]
}

gpu_vulkan_setup() {
  local root=${1%/} bundle=$2 loader libdir d icd caps
  GPU_VULKAN_MISSING=""
  loader=$(gpu_find_loader "$root")
  if [ -z "$loader" ]; then
    libdir=$(gpu_unpack_debs "$bundle")
    if [ -n "$libdir" ]; then
      export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      loader="$libdir/libvulkan.so.1"
      echo "vulkan loader: $loader (unpacked from the bundle's Debian packages)"
    else
      echo "vulkan loader: libvulkan.so.1 not found"
      GPU_VULKAN_MISSING="no Vulkan loader (libvulkan.so.1) and no packed debs/ (pack with gpu-check.sh --pack on Debian, or apt-get install libvulkan1)"
    fi
  else
    echo "vulkan loader: $loader"
  fi
  for d in $_gpu_driver_dirs; do
    if [ -d "$root/$d" ] && [[ ":${LD_LIBRARY_PATH:-}:" != *":$root/$d:"* ]]; then
      export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$root/$d"
    fi
  done
  if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
    for icd in $_gpu_icds; do
      if [ -f "$root/$icd" ]; then export VK_DRIVER_FILES="$root/$icd"; break; fi
    done
  fi
  echo "vulkan ICD: ${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-none named (the loader searches its default folders)}}"
  caps=${NVIDIA_DRIVER_CAPABILITIES-unset}
  if [ -z "$GPU_VULKAN_MISSING" ] && [ "$caps" != unset ] && [[ ",$caps," != *",graphics,"* ]] && [[ ",$caps," != *",all,"* ]]; then
    GPU_VULKAN_MISSING="NVIDIA_DRIVER_CAPABILITIES=$caps lacks graphics (the container gets no Vulkan driver: run it with NVIDIA_DRIVER_CAPABILITIES=compute,graphics,utility)"
  elif [ -z "$GPU_VULKAN_MISSING" ] && [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && gpu_nvidia_present "$root"; then
    GPU_VULKAN_MISSING="no NVIDIA Vulkan ICD (nvidia_icd.json in /usr/local/nvidia/share/vulkan/icd.d, /usr/share/vulkan/icd.d or /etc/vulkan/icd.d)"
  fi
  [ -n "$GPU_VULKAN_MISSING" ] && echo "vulkan missing: $GPU_VULKAN_MISSING"
  return 0
}
