#!/usr/bin/env bash
# gpumeter's performance figures, reproducibly: the per-tick cost (criterion) and the memory a
# long run holds (peak private memory and RSS of a fast-forwarded week, which fills every
# history tier; once a steady job, once a sweep whose GPU processes churn).
# Usage: bench/run.sh            (writes bench/results.txt)
set -euo pipefail
cd "$(dirname "$0")/.."

out=bench/results.txt

# Peak private memory (Pss_Anon from smaps_rollup, polled every 50 ms) and peak RSS (exact,
# from /usr/bin/time) of a command, in KiB: "anon rss". Private memory is the figure that
# counts (shared pages of the binary and libraries are the same for every process using
# them); RSS is kept for comparison. A run too short to be polled, or a kernel without
# Pss_Anon, gives N/A, never 0.
peak_mem() {
  local rss_file
  rss_file=$(mktemp)
  /usr/bin/time -o "$rss_file" -f "%M" "$@" >/dev/null 2>&1 &
  local pid=$! anon="" a child
  while kill -0 "$pid" 2>/dev/null; do
    # The command is time's child.
    child=$(pgrep -P "$pid" | head -n 1 || true)
    if [[ -n "$child" ]]; then
      a=$(awk '/^Pss_Anon:/ {print $2}' "/proc/$child/smaps_rollup" 2>/dev/null || true)
      if [[ -n "$a" ]] && { [[ -z "$anon" ]] || [[ "$a" -gt "$anon" ]]; }; then anon=$a; fi
    fi
    sleep 0.05
  done
  wait "$pid"
  echo "${anon:-N/A} $(tail -n 1 "$rss_file")"
  rm -f "$rss_file"
}

{
  echo "# gpumeter bench, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(rustc --version)"
  echo
  echo "## tick (criterion, benches/tick.rs)"
  cargo bench --bench tick -- --warm-up-time 2 --measurement-time 6 2>&1 \
    | grep -E "^(tick|draw|sample)|time:|bench machine" || true
  echo
  echo "## memory: peak private memory (and RSS) after simulated time (history tiers fill up,"
  echo "## then stay bounded; sweep-churn: thousands of GPU processes come and go)"
  cargo build --release --quiet
  for run in training:1h training:1d training:7d bench/sweep-churn.toml:1h bench/sweep-churn.toml:1d; do
    demo=${run%:*} span=${run##*:}
    read -r anon rss < <(peak_mem ./target/release/gpumeter --demo "$demo" --no-ledger \
      watch --for "$span" --fast)
    echo "watch --demo $demo --for $span --fast: peak private ${anon} KiB, peak RSS ${rss} KiB"
  done
} | tee "$out"
