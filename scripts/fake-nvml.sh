#!/usr/bin/env bash
# Builds the fake NVML library (crates/fake-nvml) and installs it as both names programs load:
# libnvidia-ml.so.1 (nvml-wrapper, nvidia-ml-py) and libnvidia-ml.so (nvtop tries it first).
# Usage: scripts/fake-nvml.sh [OUTDIR]   (default: target/fake-nvml/); prints the .so.1 path.
# Then: gpumeter --nvml-lib "$(scripts/fake-nvml.sh)"  or  LD_LIBRARY_PATH=OUTDIR nvitop
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/target/fake-nvml}"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p gpumeter-fake-nvml
target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
mkdir -p "$out"
# Copies, not links: the build output may be rebuilt or cleaned while the copy is in use. Each
# copy is written beside its name and renamed over it: `cp` onto the name would rewrite, in place,
# the file a running program has mapped (a second bench run crashed the first's monitor so).
for name in libnvidia-ml.so.1 libnvidia-ml.so; do
  cp "$target_dir/release/libgpumeter_fake_nvml.so" "$out/.$name.$$"
  mv -f "$out/.$name.$$" "$out/$name"
done
echo "$(cd "$out" && pwd)/libnvidia-ml.so.1"
