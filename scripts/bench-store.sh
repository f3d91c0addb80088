#!/usr/bin/env bash
# JetStream store micro-benchmarks: natrium-store's criterion rows (`cargo bench -p
# natrium-store`), then the Go server's comparable upstream Benchmark_FileStore*/MemStore*
# benchmarks, then a summary of both (median ns/op; Go's B/op and allocs/op). Everything runs
# under `nice -n 19`. Results and logs go to $OUT (default target/bench-store).
#
# Usage: scripts/bench-store.sh [--ours-only | --go-only] [-- <criterion args>]
# Environment:
#   NATRIUM_BENCH_BIG=1      adds recovery of 10 M messages (about 1.7 GB of blocks).
#   GO=/path/to/go           the Go toolchain (default: `go` on PATH, else /usr/local/go/bin/go).
#   GO_BENCHTIME=1s          Go's -benchtime.
#   GO_STORE_ANCHORS=<file>  an extra Go *_test.go file (package server) copied into the Go
#                            tree before building, e.g. scratch benchmarks with our rows' shapes.
set -euo pipefail
cd "$(dirname "$0")/.."

run_ours=1
run_go=1
criterion_args=()
while (($#)); do
  case "$1" in
    --ours-only) run_go=0 ;;
    --go-only) run_ours=0 ;;
    --) shift; criterion_args=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

target=${CARGO_TARGET_DIR:-target}
out=${OUT:-$target/bench-store}
mkdir -p "$out"
go_bin=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
go_version=v2.15.2

# Upstream Go benchmarks comparable to our rows (BENCHMARKS.md says how), one -bench pattern each.
go_patterns=(
  'Benchmark_MemStoreStoreMsg$/payload=(64|256)$'
  'Benchmark_FileStoreLoadNextMsgVerySparseMsgsInBetween$'
  'Benchmark_FileStoreLoadNextMsgVerySparseMsgsInBetweenWithWildcard$'
  'Benchmark_MemStoreNumPendingWithLargeInteriorDeletes(Scan|Exclude)$'
  'BenchmarkFileStoreSubjectAccesses$/LoadMsg$'
)
if [[ -n "${GO_STORE_ANCHORS:-}" ]]; then
  go_patterns+=('BenchmarkAnchorStore_')
fi

ours() {
  touch "$out/ours.start"
  nice -n 19 cargo bench -p natrium-store --bench store -- "${criterion_args[@]}" 2>&1 \
    | tee "$out/ours.log"
}

go_anchors() {
  local dir src
  dir=$(cd /tmp && "$go_bin" mod download -json "github.com/nats-io/nats-server/v2@$go_version" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  src="$out/go-src"
  rm -rf "$src"
  cp -r "$dir" "$src"
  chmod -R u+w "$src"
  if [[ -n "${GO_STORE_ANCHORS:-}" ]]; then
    cp "$GO_STORE_ANCHORS" "$src/server/"
  fi
  (cd "$src" && nice -n 19 "$go_bin" test -c -o ../server.test ./server/)
  : >"$out/go.log"
  for pattern in "${go_patterns[@]}"; do
    (cd "$src/server" && nice -n 19 ../../server.test -test.run '^$' -test.bench "$pattern" \
      -test.benchmem -test.benchtime "${GO_BENCHTIME:-1s}" -test.count 1) 2>&1 \
      | tee -a "$out/go.log" || echo "Go benchmark pattern failed: $pattern" >&2
  done
}

summary() {
  echo
  echo "== natrium-store (median ns/op) =="
  if [[ -f "$out/ours.start" ]]; then
    find "$target/criterion" -path '*/new/benchmark.json' -newer "$out/ours.start" | sort \
      | while read -r bench; do
          est="${bench%benchmark.json}estimates.json"
          printf '%-60s %14.1f\n' "$(jq -r .full_id "$bench")" \
            "$(jq .median.point_estimate "$est")"
        done
    grep '^allocations per op:' "$out/ours.log" || true
  fi
  echo
  echo "== Go $go_version (ns/op, B/op, allocs/op) =="
  if [[ -f "$out/go.log" ]]; then
    # Value/unit pairs follow the iteration count; MB/s appears only where bytes are set.
    awk '/^Benchmark/ {
      delete v; for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
      printf "%-90s %14s %10s %10s\n", $1, v["ns/op"], v["B/op"], v["allocs/op"] }' "$out/go.log"
  fi
}

if ((run_ours)); then ours; fi
if ((run_go)); then go_anchors; fi
summary | tee "$out/summary.txt"
