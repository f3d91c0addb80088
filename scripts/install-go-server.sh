#!/usr/bin/env bash
# Installs the Go reference nats-server (v2.15.2) into .tools/go/bin, once. Differential tests
# and the benchmark harness run it side by side with ours.
set -euo pipefail
cd "$(dirname "$0")/.."
version="v2.15.2"
bin=".tools/go/bin/nats-server"
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "${version#v}"; then
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-go-server: go toolchain not found; differential tests will be skipped" >&2
  exit 0
fi
mkdir -p .tools/go/bin
GOBIN="$PWD/.tools/go/bin" go install "github.com/nats-io/nats-server/v2@${version}"
"$bin" --version
