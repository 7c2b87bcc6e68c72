#!/usr/bin/env bash
# Builds nvtop (NVIDIA support only) from a source checkout, for bench/overhead/run.sh.
# Usage: bench/overhead/build-nvtop.sh SRC_DIR [OUT_DIR]
#   SRC_DIR: a checkout of https://github.com/Syllo/nvtop (any 3.x tag); nothing of it is copied
#            into this repository. Needs cmake, a C compiler and ncurses headers (libncurses-dev).
#   OUT_DIR: where the build goes (default target/bench-overhead/nvtop-build); prints the binary.
# Then: NVTOP=<printed path> bench/overhead/run.sh
set -euo pipefail
src="${1:?usage: build-nvtop.sh SRC_DIR [OUT_DIR]}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${2:-$root/target/bench-overhead/nvtop-build}"
[ -f "$src/CMakeLists.txt" ] || { echo "build-nvtop: $src has no CMakeLists.txt" >&2; exit 2; }
command -v cmake >/dev/null || { echo "build-nvtop: cmake is not installed (apt-get install cmake)" >&2; exit 2; }
mkdir -p "$out"
# Only the NVML backend: the others need libdrm/udev and would only add start-up work here.
nice -n 19 cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release -DNVIDIA_SUPPORT=ON \
  -DAMDGPU_SUPPORT=OFF -DINTEL_SUPPORT=OFF -DMSM_SUPPORT=OFF -DPANFROST_SUPPORT=OFF \
  -DPANTHOR_SUPPORT=OFF -DASCEND_SUPPORT=OFF -DV3D_SUPPORT=OFF -DTPU_SUPPORT=OFF \
  -DROCKCHIP_SUPPORT=OFF -DMETAX_SUPPORT=OFF -DENFLAME_SUPPORT=OFF -DTENSTORRENT_SUPPORT=OFF \
  -DIXML_SUPPORT=OFF -DRADEON_SUPPORT=OFF -DAPPLE_SUPPORT=OFF -DBUILD_TESTING=OFF >"$out/cmake.log"
nice -n 19 cmake --build "$out" -j 1 >>"$out/cmake.log"
bin="$out/src/nvtop"
[ -x "$bin" ] || { echo "build-nvtop: no binary at $bin (see $out/cmake.log)" >&2; exit 1; }
echo "$bin"
