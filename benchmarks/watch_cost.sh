#!/usr/bin/env bash
# What one WATCHing client costs every write: server CPU per request of a redis-benchmark run
# with no client WATCHing, and with one client connected that WATCHes a key (another key than
# the benchmark writes, or the same key with --same-key), in alternating rounds against one
# gigakv server pinned to a core. Prints the medians and the ratio watched/unwatched.
#
# Usage: benchmarks/watch_cost.sh [--server PATH] [--test set] [--pipeline 16] [--rounds 5]
#                                 [--requests 1000000] [--same-key]
set -euo pipefail

SERVER="build/gigakv-server"
TEST="set"
PIPELINE=16
ROUNDS=5
REQUESTS=1000000
WATCHED_KEY="watched:elsewhere"
BENCH="$(command -v redis-benchmark)"
CLI="$(command -v redis-cli)"

while (($#)); do
  case "$1" in
    --server) SERVER=$2; shift ;;
    --test) TEST=$2; shift ;;
    --pipeline) PIPELINE=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --requests) REQUESTS=$2; shift ;;
    --same-key) WATCHED_KEY="key:__rand_int__" ;;  # redis-benchmark's key without -r.
    -h | --help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
WORK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gigakv-watch-cost.XXXXXX")
SERVER_PID=""
WATCHER_PID=""
cleanup() {
  [[ -n "$WATCHER_PID" ]] && kill "$WATCHER_PID" 2>/dev/null || true
  [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK_DIR"
}
trap cleanup EXIT

taskset -c 0 "$SERVER" --port "$PORT" --bind 127.0.0.1 --dir "$WORK_DIR" --io-threads 1 \
  --save '' --appendonly no >"$WORK_DIR/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do
  "$CLI" -p "$PORT" PING >/dev/null 2>&1 && break
  sleep 0.1
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }

# Prints the server's CPU seconds per million requests of one benchmark run.
run_once() {
  local before after
  before=$(cpu_ticks)
  taskset -c 1 "$BENCH" -p "$PORT" -t "$TEST" -P "$PIPELINE" -n "$REQUESTS" -c 50 -q >/dev/null
  after=$(cpu_ticks)
  python3 -c "print(($after - $before) / $(getconf CLK_TCK) / ($REQUESTS / 1e6))"
}

start_watcher() {
  python3 - "$PORT" "$WATCHED_KEY" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
key = sys.argv[2].encode()
s.sendall(b"*2\r\n$5\r\nWATCH\r\n$%d\r\n%s\r\n" % (len(key), key))
assert s.recv(16).startswith(b"+OK")
time.sleep(3600)
EOF
  WATCHER_PID=$!
  for _ in $(seq 50); do
    "$CLI" -p "$PORT" CLIENT LIST | grep -q 'cmd=watch' && return
    sleep 0.1
  done
  echo "watcher did not connect" >&2
  exit 1
}
stop_watcher() {
  kill "$WATCHER_PID"
  wait "$WATCHER_PID" 2>/dev/null || true
  WATCHER_PID=""
}

run_once >/dev/null  # Warm-up.
none=()
watched=()
for round in $(seq "$ROUNDS"); do
  none+=("$(run_once)")
  start_watcher
  watched+=("$(run_once)")
  stop_watcher
  echo "round $round: no watcher ${none[-1]} cpu-s/Mreq, one watcher ${watched[-1]} cpu-s/Mreq" >&2
done

python3 - "${none[*]}" "${watched[*]}" "$TEST" "$PIPELINE" "$WATCHED_KEY" <<'EOF'
import statistics, sys
none = [float(x) for x in sys.argv[1].split()]
watched = [float(x) for x in sys.argv[2].split()]
ratios = sorted(w / n for w, n in zip(watched, none))
print(f"{sys.argv[3]} -P {sys.argv[4]}, watched key {sys.argv[5]}: "
      f"no watcher {statistics.median(none):.3f} cpu-s/Mreq, "
      f"one watcher {statistics.median(watched):.3f} cpu-s/Mreq, "
      f"ratio median {statistics.median(ratios):.3f} (per round {ratios[0]:.3f}..{ratios[-1]:.3f})")
EOF
