#!/usr/bin/env bash
# Side-by-side comparison with the Go reference server: builds both release binaries, runs
# every scenario A B / B A for the given rounds, and writes the table to bench-results.md.
# Usage: scripts/bench.sh [--rounds N] [--messages N] [--seconds S] [--only NAME]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-go-server.sh
cargo build --release -p nats-server -p natrium-bench
# Idle-connection rows open 10,000 sockets.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
target/release/natrium-bench --go .tools/go/bin/nats-server --ours target/release/nats-server \
  --out bench-results.md "$@"
