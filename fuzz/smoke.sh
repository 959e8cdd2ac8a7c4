#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (default 60 s each). Needs the nightly toolchain
# and cargo-fuzz (`cargo install cargo-fuzz`). Crashes are saved under fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
for target in plan_write event_decode transcript_import; do
  echo "fuzz: $target for ${seconds}s"
  cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 2>&1 | grep -E "^(stat::number_of_executed_units|==|SUMMARY|Done)" || true
  # cargo fuzz exits non-zero on a finding; re-run the check on the status explicitly.
  if ls artifacts/"$target"/crash-* artifacts/"$target"/oom-* artifacts/"$target"/timeout-* >/dev/null 2>&1; then
    echo "fuzz: $target found a failing input:"; ls artifacts/"$target"
    exit 1
  fi
done
echo "fuzz: all targets ran ${seconds}s without a finding"
