#!/usr/bin/env bash
# gpumeter's performance figures, reproducibly: the per-tick cost (criterion) and the memory a
# long run holds (peak RSS of a fast-forwarded week, which fills every history tier).
# Usage: bench/run.sh            (writes bench/results.txt)
set -euo pipefail
cd "$(dirname "$0")/.."

out=bench/results.txt
{
  echo "# gpumeter bench, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(rustc --version)"
  echo
  echo "## tick (criterion, benches/tick.rs)"
  cargo bench --bench tick -- --warm-up-time 2 --measurement-time 6 2>&1 \
    | grep -E "^(tick|draw|sample)|time:|bench machine" || true
  echo
  echo "## memory: peak RSS after simulated time (history tiers fill up, then stay bounded)"
  cargo build --release --quiet
  for span in 1h 1d 7d; do
    rss=$( { /usr/bin/time -f "%M" ./target/release/gpumeter --demo training --no-ledger \
      watch --for "$span" --fast >/dev/null; } 2>&1 | tail -n 1)
    echo "watch --demo training --for $span --fast: peak RSS ${rss} KiB"
  done
} | tee "$out"
