#!/usr/bin/env bash
# The project's test command: Rust unit, property and integration tests (with differential
# runs against the Go reference server), then the Python client tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-go-server.sh
export NATS_GO_SERVER="$PWD/.tools/go/bin/nats-server"
cargo build --workspace --bins
cargo test --workspace
if [ -d tests/python ]; then
  python3 -m pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
  NATRIUM_BIN="$PWD/target/debug/nats-server" python3 -m pytest -q tests/python
fi
