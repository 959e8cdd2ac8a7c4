#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (default 60 s each). Needs the nightly toolchain
# and cargo-fuzz (`cargo install cargo-fuzz`). Built without AddressSanitizer (`-s none`):
# planlog forbids unsafe code, so the sanitizer checks nothing of ours, and without it the
# transcript target runs about five times as many inputs a second (BENCHMARKS.md § Fuzzing). A finding fails the run; the failing input is
# saved under fuzz/artifacts/<target>/ (turn it into a regression test, then fix).
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
cargo +nightly fuzz build -s none
for target in plan_write event_decode transcript_import; do
  echo "fuzz: $target for ${seconds}s"
  log="$(mktemp)"
  # The import fixtures seed the transcript fuzzer (read only; new inputs go to corpus/).
  seeds=()
  if [ "$target" = transcript_import ]; then
    mkdir -p "corpus/$target"
    seeds=("corpus/$target" ../fixtures/imports)
  fi
  # Inputs up to 8 KiB: a few transcript lines, enough to pair calls with their results.
  limits=()
  [ "$target" = transcript_import ] && limits=(-max_len=8192)
  if cargo +nightly fuzz run -s none "$target" "${seeds[@]}" -- "${limits[@]}" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    grep -E "^(stat::number_of_executed_units|Done)" "$log" || true
  else
    echo "fuzz: $target FAILED:"
    # The finding itself (a sanitizer report starts with ERROR), then the end of the log.
    grep -m1 -A30 "ERROR:" "$log" || true
    tail -40 "$log"
    exit 1
  fi
done
echo "fuzz: all targets ran ${seconds}s without a finding"
