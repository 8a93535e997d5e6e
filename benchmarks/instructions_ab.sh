#!/usr/bin/env bash
# Deterministic A/B of two gigakv binaries: user-space instructions the server executes per
# request, counted by valgrind's callgrind over a redis-benchmark run (all server threads),
# minus a run with no requests (start-up and shutdown). Unlike CPU time this hardly varies
# between runs (well under 0.5%), so it can tell a 1% change from noise, which compare.sh's
# CPU figures (about +-10% per round on a shared 2-core machine) cannot. It does not see the
# kernel's socket work, nor cache misses: confirm a real difference with compare.sh.
#
# Usage: benchmarks/instructions_ab.sh OLD_BINARY NEW_BINARY [--tests set,get] [--pipeline "1 16"]
#                                      [--requests 100000] [--watch]
#   --watch   keep one client connected that WATCHes a key the benchmark does not write
set -euo pipefail

OLD=$1
NEW=$2
shift 2
TESTS="set,get,incr,mset,lpush,hset"
PIPELINES="1 16"
REQUESTS=100000
WATCH=0
while (($#)); do
  case "$1" in
    --tests) TESTS=$2; shift ;;
    --pipeline) PIPELINES=$2; shift ;;
    --requests) REQUESTS=$2; shift ;;
    --watch) WATCH=1 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 1; }

# Prints the instructions the server ran for `requests` requests of `test` at pipeline `p`.
count() {
  local binary=$1 test=$2 p=$3 requests=$4 watch=$5
  local port dir out pid watcher=""
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  dir=$(mktemp -d "${TMPDIR:-/tmp}/gigakv-ir.XXXXXX")
  out="$dir/callgrind.out"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$binary" --port "$port" \
    --bind 127.0.0.1 --io-threads 1 --save '' --appendonly no --dir "$dir" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 300); do
    redis-cli -p "$port" PING >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ((watch)); then
    python3 - "$port" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"*2\r\n$5\r\nWATCH\r\n$17\r\nwatched:elsewhere\r\n")
assert s.recv(16).startswith(b"+OK")
time.sleep(3600)
EOF
    watcher=$!
    for _ in $(seq 100); do
      redis-cli -p "$port" CLIENT LIST | grep -q 'cmd=watch' && break
      sleep 0.1
    done
  fi
  if ((requests > 0)); then
    redis-benchmark -p "$port" -t "$test" -P "$p" -n "$requests" -c 10 -q >/dev/null
  fi
  [[ -n "$watcher" ]] && kill "$watcher" 2>/dev/null
  redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  wait "$pid" || true
  # KEEP_CALLGRIND=prefix keeps the profiles (prefix.0 / prefix.1 = without / with watcher).
  if [[ -n "${KEEP_CALLGRIND:-}" ]]; then cp "$out" "$KEEP_CALLGRIND.$watch"; fi
  awk '/^(summary|totals):/ {print $2; exit}' "$out"
  rm -rf "$dir"
}

old_base=$(count "$OLD" get 1 0 0)
new_base=$(count "$NEW" get 1 0 "$WATCH")
printf '%-8s %3s %12s %12s %8s\n' test P old_ir/req new_ir/req new/old
for test in ${TESTS//,/ }; do
  for p in $PIPELINES; do
    old=$(count "$OLD" "$test" "$p" "$REQUESTS" 0)
    new=$(count "$NEW" "$test" "$p" "$REQUESTS" "$WATCH")
    python3 -c "
o = ($old - $old_base) / $REQUESTS
n = ($new - $new_base) / $REQUESTS
print(f'{\"$test\":8} {$p:3} {o:12.0f} {n:12.0f} {n / o:8.3f}')"
  done
done
