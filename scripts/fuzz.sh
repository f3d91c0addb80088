#!/usr/bin/env bash
# Runs every cargo-fuzz target for the given number of seconds each (default 60).
# Needs the nightly toolchain; installs cargo-fuzz if missing.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-60}"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --locked cargo-fuzz
for target in $(cargo +nightly fuzz list); do
  echo "fuzzing $target for ${seconds}s"
  cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=2048
done
