#!/usr/bin/env bash
# firstrun.sh measures `make run` as a new machine meets it: a fresh clone of this repository's
# HEAD, with Go's module and build caches, pip's and npm's caches all empty, timed until the
# stack answers its first request; then it stops the stack. Every line of make's output is
# stamped with the seconds since start, so the log says where the time went. Nothing may listen
# on the stack's ports (3000, 8000, 5001) while it runs.
#
#   infra/local/firstrun.sh [workdir]    (default /tmp/interrupthost-firstrun; removed first)
set -euo pipefail
repo=$(git rev-parse --show-toplevel)
work=${1:-/tmp/interrupthost-firstrun}
rm -rf "$work" && mkdir -p "$work"
git clone -q "$repo" "$work/clone"
cd "$work/clone"
export GOMODCACHE=$work/gomod GOCACHE=$work/gocache PIP_CACHE_DIR=$work/pip npm_config_cache=$work/npm GOFLAGS=-modcacherw
start=$(date +%s.%N)
# The stamping loop ignores the TERM that stops make and the stack, and reads to the end: the
# stack logs while it stops its stores (in process groups of their own), and a closed pipe would
# kill it first, leaving them on their ports. stop waits for it (20 s at most).
setsid bash -c 'make run 2>&1 | { trap "" INT TERM; while IFS= read -r line; do printf "%7.1f %s\n" "$(echo "$(date +%s.%N) - '"$start"'" | bc)" "$line"; done; }' >"$work/run.log" 2>&1 &
pid=$!
stop() {
  kill -- -$pid 2>/dev/null || return 0
  for _ in $(seq 1 200); do
    kill -0 -- -$pid 2>/dev/null || return 0
    sleep 0.1
  done
}
trap stop EXIT
for _ in $(seq 1 1800); do
  grep -q "stack ready" "$work/run.log" && break
  sleep 0.5
done
grep -E "^ *[0-9.]+ (npm ci|python3 -m venv|go build|ln -f|.venv/bin/pip|.local/bin/stack|STACK_FUNCTION_LOGS|touch)|stack ready" "$work/run.log" | grep -v "go: downloading"
echo "log: $work/run.log"
