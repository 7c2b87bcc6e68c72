#!/usr/bin/env bash
# gpumeter beside nvtop, all-smi, nvitop and gpustat on one fake 8-GPU machine, in tmux.
# Usage: bench/overhead/run.sh [overhead.py options]   e.g. --rounds 3 --seconds 30 --scale
# Builds gpumeter (release) and the fake NVML library, installs the peers it can
# (nvitop + gpustat from PyPI in a venv; all-smi with cargo install), then runs overhead.py.
# Results: target/bench-overhead/results/results.{md,json}. See bench/overhead/README.md.
# Environment: NVTOP=path to an nvtop binary (build-nvtop.sh builds one), ALL_SMI=path to all-smi,
#   GPUMETER_OVERHEAD_NO_INSTALL=1 (use only what is already there).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/target/bench-overhead"
mkdir -p "$work"
command -v tmux >/dev/null || { echo "overhead: tmux is needed" >&2; exit 2; }

echo "== building gpumeter (release) and the fake NVML library"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p gpumeter
lib="$("$root/scripts/fake-nvml.sh" "$work/fake-nvml")"
gpumeter="$root/target/release/gpumeter"

install="${GPUMETER_OVERHEAD_NO_INSTALL:-0}"
# With --only, install only the peers it names (a pip or cargo install is minutes on 2 cores).
only=""
prev=""
for a in "$@"; do
  case "$a" in --only=*) only="${a#--only=}" ;; esac
  [ "$prev" = "--only" ] && only="$a"
  prev="$a"
done
wants() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
venv="$work/venv"
if [ ! -x "$venv/bin/nvitop" ] && [ "$install" != 1 ] && { wants nvitop || wants gpustat; }; then
  echo "== nvitop, gpustat: pip install into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet nvitop gpustat
fi
[ -x "$venv/bin/nvitop" ] || venv=""

all_smi="${ALL_SMI:-}"
if [ -z "$all_smi" ]; then
  all_smi="$work/peers/bin/all-smi"
  if [ ! -x "$all_smi" ] && [ "$install" != 1 ] && wants all-smi; then
    echo "== all-smi: cargo install (slow: one job, lowest priority; needs protoc: protobuf-compiler)"
    # all-smi 0.24+ wants a newer rustc than some stable toolchains; a nightly one does.
    nice -n 19 cargo install --locked -j 1 --root "$work/peers" all-smi ||
      nice -n 19 cargo +nightly install --locked -j 1 --root "$work/peers" all-smi || true
  fi
fi
[ -x "$all_smi" ] || all_smi=""

args=(--gpumeter "$gpumeter" --lib-dir "$(dirname "$lib")" --stand-in-bin "$here/stand-in"
      --out "$work/results")
[ -n "${NVTOP:-}" ] && args+=(--nvtop "$NVTOP")
[ -n "$all_smi" ] && args+=(--all-smi "$all_smi")
[ -n "$venv" ] && args+=(--venv "$venv")
exec python3 "$here/overhead.py" "${args[@]}" "$@"
