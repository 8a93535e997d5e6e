#!/usr/bin/env bash
# Side-by-side throughput and CPU-cost comparison of gigakv against Debian's redis-server.
#
# Both servers run at the same time on free 127.0.0.1 ports without persistence. The same
# redis-benchmark workload is run against each, alternating A/B (and flipping who goes first every
# round) so that machine noise and drift hit both sides equally. Each server is pinned to one core
# and the client to another, so "requests per second" means "per server core". For every run the
# server's utime+stime is read from /proc/PID/stat before and after, which gives CPU seconds per
# million requests independently of how busy the machine was. Medians over the rounds are printed
# as ratios gigakv/redis, which is what DESIGN.md section 6 states its targets in.
#
# Run `benchmarks/compare.sh --help` for options. See benchmarks/README.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(dirname "$SCRIPT_DIR")"
readonly SCRIPT_DIR REPO_ROOT

# redis-benchmark's full default test list (Debian's 7.0), in its own order. The order matters:
# lpop/rpop pop what lpush/rpush pushed, spop/zpopmin pop what sadd/zadd added.
readonly ALL_TESTS="ping_inline,ping_mbulk,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,\
zpopmin,lrange_100,lrange_300,lrange_500,lrange_600,mset"
# Extra tests of ours, not redis-benchmark defaults (never part of 'all'):
#   lrange_spread  LRANGE list:__rand_int__ 0 9 over 1,000 lists of about 1,000 RPUSHed 14-byte
#                  elements: short reads at the head of many lists, the worst case for gigakv's
#                  list node compression (each read lands on a compressed node not in the cache).
#   evalsha_get    EVALSHA of `return redis.call('get', KEYS[1])` on key:__rand_int__
#   evalsha_incr   EVALSHA of `return redis.call('incr', KEYS[1])`
#   evalsha_10     EVALSHA of a script of 10 calls (5 INCRs of KEYS[1], 5 GETs of it)
#   pfadd          PFADD hll elem:__rand_int__ (one HyperLogLog, dense after its first 1,700 or so)
#   pfcount        PFCOUNT hll (its cached cardinality, refreshed by nothing else)
#   pfcount_union  PFCOUNT hll hll2 (the union of two dense HyperLogLogs: 16,384 registers each)
#   geosearch      GEOSEARCH of the points within 1 km (about 30, WITHDIST) of a fixed center, in a
#                  geo set of 100,000 points spread over 1 x 1 degree (about 10 per km²)
#   geosearch_count  the 10 nearest of the points within 5 km (about 800 examined and sorted)
#   xadd           XADD stream * of 2 fields (10-byte values) onto one stream: a job queue's writes
#   xreadgroup     XREADGROUP GROUP g c COUNT 1 STREAMS jobs >: each request delivers the next of
#                  the entries XADDed before the run (as many as the run's requests), so every one
#                  is a real delivery (a pending entry created, the group's position moved)
readonly EXTRA_TESTS="lrange_spread,evalsha_get,evalsha_incr,evalsha_10,pfadd,pfcount,pfcount_union,\
geosearch,geosearch_count,xadd,xreadgroup"
readonly SCRIPT_GET="return redis.call('get', KEYS[1])"
readonly SCRIPT_INCR="return redis.call('incr', KEYS[1])"
readonly SCRIPT_10="for i = 1, 5 do redis.call('incr', KEYS[1]); redis.call('get', KEYS[1]) end return 1"
# 100,000 points in [13, 14] x [38, 39] from a MINSTD generator (the same points on both servers).
readonly SCRIPT_GEO_FILL="local x = 12345
local function next() x = (x * 48271) % 2147483647; return x / 2147483647 end
for i = 1, 100000 do redis.call('geoadd', KEYS[1], 13 + next(), 38 + next(), 'p' .. i) end
return redis.call('zcard', KEYS[1])"

# The SHA-1 EVALSHA names a script by.
script_sha() { printf '%s' "$1" | sha1sum | cut -d' ' -f1; }

# ---- defaults (overridable by options) -------------------------------------------------------
SERVER="build/gigakv-server"
REDIS="$(command -v redis-server || true)"
BENCH="$(command -v redis-benchmark || true)"
CLI="$(command -v redis-cli || true)"
ROUNDS=3
PIPELINES="1 16"
TESTS="ping_inline,ping_mbulk,set,get,incr"
REQUESTS=200000
PIPELINE_SCALE=5     # pipelined runs finish ~6x faster; more requests keep them long enough to time
CLIENTS=50
IO_THREADS=1         # the server gets one pinned core, so more I/O threads would only contend
SERVER_ARGS=""
REDIS_ARGS=""
BENCH_ARGS=""
SERVER_CPU=0
CLIENT_CPU=1
PIN=1
KEEP_PERSISTENCE=0
WARMUP=10000
RAW_OUT=""

usage() {
  cat <<EOF
Usage: $(basename "$0") [options]

Compares gigakv (A) with redis-server (B) using redis-benchmark, side by side.

  --server PATH        gigakv server binary (default: $SERVER)
  --redis PATH         reference server binary (default: redis-server on PATH)
  --benchmark PATH     redis-benchmark binary (default: on PATH)
  --client NAME        load generator: redis-benchmark (default) or load = gigakv-load
                       (build/benchmarks/load/gigakv-load: same commands and options, a fraction
                       of the client CPU per request, so the servers rather than the client set
                       the pace; see benchmarks/README.md)
  --tests LIST         comma-separated redis-benchmark tests, or 'all' for its full default
                       list (default: $TESTS)
  --pipeline "LIST"    space-separated pipeline depths (-P) (default: "$PIPELINES")
  -n, --requests N     requests per run at -P 1 (default: $REQUESTS)
  --pipeline-scale K   multiply requests by K for pipelined runs (default: $PIPELINE_SCALE)
  -c, --clients N      parallel connections (default: $CLIENTS)
  --rounds N           A/B rounds; medians are reported (default: $ROUNDS)
  --io-threads N       passed to gigakv as --io-threads N; 0 = don't pass (default: $IO_THREADS)
  --server-args "ARGS" extra arguments for gigakv (shell-quoted, e.g. "--hz 10")
  --redis-args "ARGS"  extra arguments for redis-server
  --bench-args "ARGS"  extra arguments for redis-benchmark (e.g. "-r 100000 -d 16")
  --server-cpu N       core to pin both servers to (default: $SERVER_CPU)
  --client-cpu N       core to pin redis-benchmark to (default: $CLIENT_CPU)
  --no-pin             don't pin anything with taskset
  --keep-persistence   leave persistence as --server-args/--redis-args set it (e.g.
                       "--appendonly yes --appendfsync always" on both) instead of turning it off;
                       each server writes in its own temporary directory
  --warmup N           untimed requests per test and server before round 1; 0 = none
                       (default: $WARMUP)
  --raw FILE           also write every individual run to FILE (CSV)
  -h, --help           this text

Self-test without a gigakv build: --server "\$(command -v redis-server)" (ratios should be ~1.0).
EOF
}

die() {
  echo "compare.sh: $*" >&2
  exit 1
}

# ---- process bookkeeping: we only ever signal PIDs we started ourselves ---------------------
STARTED_PIDS=()
WORK_DIR=""
PID_gigakv=""
PID_redis=""

cleanup() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${STARTED_PIDS[@]}"; do
    # Give each server a few seconds to exit cleanly before forcing it.
    local i
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [[ -n "$WORK_DIR" ]]; then
    rm -rf "$WORK_DIR"
  fi
}

# Splits a user-supplied argument string into the named array. eval (not word splitting) so that
# quoted values such as --save '' survive; the string comes from the person running the script.
split_args() {
  local -n _out=$1
  eval "_out=($2)"
}

# Prints a 127.0.0.1 TCP port nobody listens on. Binding port 0 lets the kernel choose; the small
# race until the server binds it is acceptable for a benchmark. Falls back to probing.
free_port() {
  local port
  if port=$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' 2>/dev/null); then
    echo "$port"
    return
  fi
  for ((port = 20000 + RANDOM % 20000; ; port++)); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
}

# Prints "utime stime" (all threads) of PID in clock ticks. Field 2 (comm) may contain spaces, so
# cut everything up to the last ')' first; then utime/stime (fields 14/15) are at index 11/12.
cpu_ticks() {
  local line
  local -a f
  read -r line <"/proc/$1/stat" || return 1
  read -r -a f <<<"${line##*) }"
  echo "${f[11]} ${f[12]}"
}

# Prints the machine's busy CPU ticks summed over all cores (user+nice+system+irq+softirq+steal
# from the first line of /proc/stat). Used to see how much CPU *other* processes took during a run.
system_busy_ticks() {
  local user nice system irq softirq steal rest
  read -r _ user nice system _ _ irq softirq steal rest </proc/stat
  echo $((user + nice + system + irq + softirq + steal))
}

# start_server NAME BINARY PORT DIR [ARGS...] -- starts a server in the background, waits until
# it answers PING, and stores its PID in the global variable PID_<NAME> (PID_gigakv, PID_redis). Prints the server's log
# and exits non-zero if it dies or does not come up.
start_server() {
  local name=$1 bin=$2 port=$3 dir=$4
  shift 4
  local -a cmd=("$bin" --port "$port" --bind 127.0.0.1 --dir "$dir" "$@")
  if ((PIN)); then
    cmd=(taskset -c "$SERVER_CPU" "${cmd[@]}")
  fi
  echo "starting $name: ${cmd[*]@Q}" >&2
  # taskset execs the binary, so $! is the server's own PID (needed for /proc/PID/stat).
  "${cmd[@]}" </dev/null >"$dir/server.log" 2>&1 &
  local pid=$!
  STARTED_PIDS+=("$pid")
  local i reply
  for ((i = 0; i < 100; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "compare.sh: $name exited during startup; its log:" >&2
      tail -n 100 "$dir/server.log" >&2 || true
      exit 1
    fi
    reply=$("$CLI" -h 127.0.0.1 -p "$port" ping 2>/dev/null || true)
    if [[ "$reply" == "PONG" ]]; then
      printf -v "PID_$name" '%s' "$pid"
      return 0
    fi
    sleep 0.1
  done
  echo "compare.sh: $name did not answer PING on port $port within 10s; its log:" >&2
  tail -n 100 "$dir/server.log" >&2 || true
  exit 1
}

# Prints the value of a config directive ("" if the server does not know it: CONFIG GET then
# answers an empty array).
config_get() {
  "$CLI" -h 127.0.0.1 -p "$1" config get "$2" 2>/dev/null | sed -n 2p
}

# Makes sure a server does not persist (AOF off, no RDB save points), so that both sides measure
# the in-memory engine only. Done at runtime with CONFIG rather than with start-up flags so that a
# gigakv build which lacks one of these directives (so has nothing to turn off) still starts.
disable_persistence() {
  local name=$1 port=$2
  if [[ "$(config_get "$port" appendonly)" == "yes" ]]; then
    "$CLI" -h 127.0.0.1 -p "$port" config set appendonly no >/dev/null
    [[ "$(config_get "$port" appendonly)" != "yes" ]] ||
      echo "WARNING: could not turn appendonly off on $name; it will pay for its log" >&2
  fi
  if [[ -n "$(config_get "$port" save)" ]]; then
    "$CLI" -h 127.0.0.1 -p "$port" config set save "" >/dev/null
    [[ -z "$(config_get "$port" save)" ]] ||
      echo "WARNING: could not clear the save points of $name; it may snapshot mid-run" >&2
  fi
}

# Fails early with a clear message if the server we are about to measure has died (e.g. crashed
# under the previous test), printing its log.
check_alive() {
  local name=$1 pid=$2 dir=$3
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "compare.sh: $name (pid $pid) is no longer running; its log:" >&2
    tail -n 100 "$dir/server.log" >&2 || true
    exit 1
  fi
}

# redis-benchmark arguments selecting one test. The LRANGE tests are issued as the very command
# redis-benchmark would send (captured with MONITOR from 7.0.15), because `-t lrange_N` also runs
# an "LPUSH (needed to benchmark LRANGE)" pass whose CPU we could not separate from the LRANGE's.
# The list is filled by prefill_for_test instead, outside the measured window.
test_args() {
  case $1 in
    lrange_100) echo "LRANGE mylist 0 99" ;;
    lrange_300) echo "LRANGE mylist 0 299" ;;
    lrange_500) echo "LRANGE mylist 0 499" ;;
    lrange_600) echo "LRANGE mylist 0 599" ;;
    lrange_spread) echo "-r 1000 LRANGE list:__rand_int__ 0 9" ;;
    evalsha_get) echo "-r 100000 EVALSHA $(script_sha "$SCRIPT_GET") 1 key:__rand_int__" ;;
    evalsha_incr) echo "-r 100000 EVALSHA $(script_sha "$SCRIPT_INCR") 1 key:__rand_int__" ;;
    evalsha_10) echo "-r 100000 EVALSHA $(script_sha "$SCRIPT_10") 1 key:__rand_int__" ;;
    pfadd) echo "-r 10000000 PFADD hll elem:__rand_int__" ;;
    pfcount) echo "PFCOUNT hll" ;;
    pfcount_union) echo "PFCOUNT hll hll2" ;;
    geosearch) echo "GEOSEARCH geo FROMLONLAT 13.5 38.5 BYRADIUS 1 km WITHDIST" ;;
    geosearch_count) echo "GEOSEARCH geo FROMLONLAT 13.5 38.5 BYRADIUS 5 km COUNT 10" ;;
    xadd) echo "-r 100000 XADD stream * name __rand_int__ value 0123456789" ;;
    xreadgroup) echo "XREADGROUP GROUP g c COUNT 1 STREAMS jobs >" ;;
    *) echo "-t $1" ;;
  esac
}

# prefill_for_test PORT TEST ERRFILE REQUESTS -- untimed set-up a test needs before a run of
# REQUESTS requests; returns non-zero (with redis-benchmark's complaint in ERRFILE) if the server
# rejected it.
prefill_for_test() {
  local port=$1 test=$2 err=$3 requests=$4
  case $test in
    xreadgroup)
      # A fresh stream of as many entries as the run reads, and its group at the start.
      "$CLI" -h 127.0.0.1 -p "$port" DEL jobs >/dev/null 2>"$err" &&
        "$CLI" -h 127.0.0.1 -p "$port" XGROUP CREATE jobs g 0 MKSTREAM >/dev/null 2>"$err" &&
        "${CLIENT_PIN[@]}" "$BENCH" -h 127.0.0.1 -p "$port" -c 10 -P 64 -n "$requests" \
          -r 100000 XADD jobs '*' name __rand_int__ value 0123456789 >/dev/null 2>"$err" &&
        ! grep -q "Error from server" "$err"
      ;;
    lrange_*)
      # 1000 elements >= the 600 the largest LRANGE reads (lpop/rpop may have drained the list).
      "${CLIENT_PIN[@]}" "$BENCH" -h 127.0.0.1 -p "$port" -c 1 -n 1000 "${BENCH_ARGV[@]}" \
        -t lpush -q >/dev/null 2>"$err" && ! grep -q "Error from server" "$err"
      ;;
    evalsha_*)
      # The scripts, loaded (a server restart or SCRIPT FLUSH would lose them).
      for script in "$SCRIPT_GET" "$SCRIPT_INCR" "$SCRIPT_10"; do
        "$CLI" -h 127.0.0.1 -p "$port" SCRIPT LOAD "$script" >/dev/null 2>"$err" || return 1
      done
      ;;
    pfcount | pfcount_union)
      # Two dense HyperLogLogs of about 100,000 elements each.
      local key
      for key in hll hll2; do
        "${CLIENT_PIN[@]}" "$BENCH" -h 127.0.0.1 -p "$port" -c 10 -P 64 -n 200000 -r 100000 \
          "${BENCH_ARGV[@]}" PFADD "$key" "e:__rand_int__" >/dev/null 2>"$err" &&
          ! grep -q "Error from server" "$err" || return 1
      done
      ;;
    geosearch*)
      # The geo set, once per server (the searches do not change it).
      local points
      points=$("$CLI" -h 127.0.0.1 -p "$port" ZCARD geo 2>"$err")
      [[ "$points" == 100000 ]] && return 0
      "$CLI" -h 127.0.0.1 -p "$port" EVAL "$SCRIPT_GEO_FILL" 1 geo >/dev/null 2>"$err"
      [[ "$("$CLI" -h 127.0.0.1 -p "$port" ZCARD geo 2>"$err")" == 100000 ]]
      ;;
    lrange_spread)
      # 1M RPUSHes over 1,000 keys, once per server (the reads do not change the lists).
      local length
      length=$("$CLI" -h 127.0.0.1 -p "$port" LLEN list:000000000000 2>"$err")
      [[ "$length" =~ ^[0-9]+$ ]] && ((length >= 500)) && return 0
      "${CLIENT_PIN[@]}" "$BENCH" -h 127.0.0.1 -p "$port" -c 50 -P 64 -n 1000000 -r 1000 \
        "${BENCH_ARGV[@]}" RPUSH list:__rand_int__ m:__rand_int__ >/dev/null 2>"$err" &&
        ! grep -q "Error from server" "$err"
      ;;
  esac
}

# run_one NAME PORT PID TEST PIPELINE REQUESTS ROUND -- one timed redis-benchmark run; appends
# "name,test,pipeline,round,rps,cpu_s_per_Mreq,client_busy_pct,other_busy_pct,error" to $RAW.
run_one() {
  local name=$1 port=$2 pid=$3 test=$4 p=$5 n=$6 round=$7
  local out="$WORK_DIR/bench.out" err="$WORK_DIR/bench.err" tf="$WORK_DIR/bench.time"
  local -a targs
  read -r -a targs <<<"$(test_args "$test")"
  if ! prefill_for_test "$port" "$test" "$err" "$n"; then
    check_alive "$name" "$pid" "$(server_dir "$name")"
    local why
    why=$(grep -m 1 "Error from server" "$err" | tr -d '\r' | tr ',' ';' || true)
    printf '  round %d  -P %-3s %-12s %-7s prefill failed: %s\n' "$round" "$p" "$test" "$name" \
      "$why" >&2
    echo "$name,$test,$p,$round,,,,,prefill (LPUSH mylist) failed: ${why:-see stderr}" >>"$RAW"
    return 0
  fi

  local before after user_before user_after sys_before sys_after stime rc=0
  sys_before=$(system_busy_ticks)
  read -r user_before stime <<<"$(cpu_ticks "$pid")"
  before=$((user_before + stime))
  # `time` (bash keyword) gives the client's own wall/user/sys, to spot a client-bound run.
  { TIMEFORMAT='%R %U %S'; time "${CLIENT_PIN[@]}" "$BENCH" -h 127.0.0.1 -p "$port" \
      -c "$CLIENTS" -n "$n" -P "$p" --csv "${BENCH_ARGV[@]}" "${targs[@]}" >"$out" 2>"$err"; } \
    2>"$tf" || rc=$?
  check_alive "$name" "$pid" "$(server_dir "$name")"
  read -r user_after stime <<<"$(cpu_ticks "$pid")"
  after=$((user_after + stime))
  sys_after=$(system_busy_ticks)

  # An error reply (say, a command the server does not implement yet) makes redis-benchmark 7.0
  # stop with "Error from server: ..." on stderr. Record the test as failed and carry on, so one
  # missing command does not hide the rest of the comparison.
  local error=""
  if grep -q "Error from server" "$err"; then
    error=$(grep -m 1 "Error from server" "$err" | tr -d '\r' | tr ',' ';')
  elif ((rc != 0)); then
    echo "compare.sh: $(basename "$BENCH") failed against $name (test $test, -P $p):" >&2
    cat "$err" >&2 || true
    exit 1
  fi

  # --csv prints a header and one row per test; ours is the last row. Field 2 is rps.
  local rps=""
  if [[ -z "$error" ]]; then
    rps=$(tail -n 1 "$out" | awk -F, '{ gsub(/"/, "", $2); print $2 }')
    [[ "$rps" =~ ^[0-9.]+$ ]] || die "could not parse redis-benchmark output for $test: $(cat "$out")"
  fi

  local cpu_per_m="" user_per_m="" client_busy="" other_busy=""
  if [[ -z "$error" ]]; then
    cpu_per_m=$(awk -v t=$((after - before)) -v hz="$CLK_TCK" -v n="$n" \
      'BEGIN { printf "%.4f", t / hz / n * 1e6 }')
    user_per_m=$(awk -v t=$((user_after - user_before)) -v hz="$CLK_TCK" -v n="$n" \
      'BEGIN { printf "%.4f", t / hz / n * 1e6 }')
    client_busy=$(awk '{ if ($1 > 0) printf "%.0f", ($2 + $3) / $1 * 100; else print 0 }' "$tf")
    # Whatever the machine was busy with besides this server and this client, as % of one core.
    # Anything well above a few % means another job competed and this run's rps is suspect.
    other_busy=$(awk -v sys=$((sys_after - sys_before)) -v srv=$((after - before)) \
      -v hz="$CLK_TCK" '{ other = sys - srv - ($2 + $3) * hz;
        if (other < 0 || $1 <= 0) other = 0; printf "%.0f", other / ($1 * hz) * 100 }' "$tf")
    printf '  round %d  -P %-3s %-12s %-7s %12.0f rps  %7.3f cpu-s/Mreq  other %s%%\n' "$round" \
      "$p" "$test" "$name" "$rps" "$cpu_per_m" "$other_busy" >&2
  else
    printf '  round %d  -P %-3s %-12s %-7s %s\n' "$round" "$p" "$test" "$name" "$error" >&2
  fi
  echo "$name,$test,$p,$round,$rps,$cpu_per_m,$client_busy,$other_busy,$error,$user_per_m" >>"$RAW"
}

server_dir() {
  case $1 in
    gigakv) echo "$WORK_DIR/gigakv" ;;
    redis) echo "$WORK_DIR/redis" ;;
  esac
}

# median NAME TEST PIPELINE COLUMN -- median of one raw CSV column over the rounds ("-" if none).
median() {
  awk -F, -v n="$1" -v t="$2" -v p="$3" -v c="$4" \
    '$1 == n && $2 == t && $3 == p && $c != "" { print $c }' \
    "$RAW" | sort -g | awk '{ v[NR] = $1 }
      END {
        if (NR == 0) { print "-"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2
      }'
}

# fmt VALUE DECIMALS -- a number with fixed decimals, or "-" passed through.
fmt() {
  if [[ "$1" == "-" ]]; then echo "-"; else printf "%.${2}f" "$1"; fi
}

# max_of TEST PIPELINE COLUMN -- largest value of a raw CSV column over both servers and all rounds.
max_of() {
  awk -F, -v t="$1" -v p="$2" -v c="$3" '$2 == t && $3 == p && $c != "" {
      if (!seen || $c + 0 > m) m = $c + 0; seen = 1 }
    END { if (seen) print m; else print "-" }' "$RAW"
}

ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-";
                                   else printf "%.2f", a / b }'
}

# Checks one row against DESIGN.md section 6: >= 1.0x Redis throughput on every default test,
# >= 1.5x on GET/SET with pipelining, server CPU per request <= 0.6x.
verdict() {
  local test=$1 p=$2 rps_ratio=$3 cpu_ratio=$4 errors=$5
  if [[ -n "$errors" ]]; then
    echo "ERRORS"
    return
  fi
  local want=1.0 miss=()
  if ((p > 1)) && [[ "$test" == "get" || "$test" == "set" ]]; then
    want=1.5
  fi
  if [[ "$rps_ratio" == "-" ]] || awk -v r="$rps_ratio" -v w="$want" 'BEGIN { exit !(r < w) }'; then
    miss+=("rps<${want}x")
  fi
  if [[ "$cpu_ratio" == "-" ]] || awk -v r="$cpu_ratio" 'BEGIN { exit !(r > 0.6) }'; then
    miss+=("cpu>0.6x")
  fi
  if ((${#miss[@]} == 0)); then echo "ok"; else (IFS=,; echo "MISS:${miss[*]}"); fi
}

print_table() {
  local header
  header=$(printf '%-12s %4s %12s %12s %7s %11s %11s %7s %6s %5s %6s  %s' test P gigakv_rps \
    redis_rps ratio gk_cpu/M rd_cpu/M cpu_r usr_r cli% other% "vs DESIGN.md targets")
  echo
  echo "$header"
  printf '%s\n' "$(printf '%*s' "${#header}" '' | tr ' ' '-')"
  local p test
  for p in $PIPELINES; do
    for test in "${TEST_LIST[@]}"; do
      local g_rps r_rps g_cpu r_cpu busy other errors
      g_rps=$(median gigakv "$test" "$p" 5)
      r_rps=$(median redis "$test" "$p" 5)
      g_cpu=$(median gigakv "$test" "$p" 6)
      r_cpu=$(median redis "$test" "$p" 6)
      busy=$(median gigakv "$test" "$p" 7)
      other=$(max_of "$test" "$p" 8)
      errors=$(awk -F, -v t="$test" -v p="$p" '$2 == t && $3 == p && $9 != "" { print $1 }' \
        "$RAW" | sort -u | paste -sd, -)
      local rr cr ur
      rr=$(ratio "$g_rps" "$r_rps")
      cr=$(ratio "$g_cpu" "$r_cpu")
      ur=$(ratio "$(median gigakv "$test" "$p" 10)" "$(median redis "$test" "$p" 10)")
      printf '%-12s %4s %12s %12s %7s %11s %11s %7s %6s %5s %6s  %s\n' "$test" "$p" \
        "$(fmt "$g_rps" 0)" "$(fmt "$r_rps" 0)" "$rr" "$(fmt "$g_cpu" 3)" "$(fmt "$r_cpu" 3)" "$cr" \
        "$ur" "$(fmt "$busy" 0)" "$(fmt "$other" 0)" \
        "$(verdict "$test" "$p" "$rr" "$cr" "$errors")${errors:+ (from $errors)}"
    done
  done
  if awk -F, '$9 != "" { found = 1 } END { exit !found }' "$RAW"; then
    echo
    echo "error replies (test skipped for that server):"
    awk -F, '$9 != "" { print "  " $1 " " $2 " -P " $3 ": " substr($9, 1, 100) }' "$RAW" | sort -u
  fi
  local worst
  worst=$(awk -F, '$8 != "" && $8 + 0 > m { m = $8 + 0 } END { print m + 0 }' "$RAW")
  if ((worst > 10)); then
    echo
    echo "WARNING: other processes used up to $worst% of a core during some runs (column other%);"
    echo "         the rps ratios of those rows are unreliable."
  fi
  cat <<EOF

rps = median requests/s over $ROUNDS rounds; ratio = gigakv/redis (higher is better).
*_cpu/M = server CPU seconds (user+sys, all threads) per million requests; cpu_r = gigakv/redis
(lower is better); usr_r = the same ratio for user-space CPU only (the servers' own code, without
the kernel's socket work, which is most of the cost at -P 1). cli% = the client's own CPU use during gigakv's runs: near 100 means the
client, not the server, may be the limit (then the rps ratio is a lower bound). other% = the most
CPU (% of one core) that other processes on the machine used during any run of that row: if it is
more than a few %, something competed with the benchmark and the rps figures are unreliable (the
CPU-per-request figures much less so); rerun on a quiet machine.
EOF
}

parse_args() {
  while (($#)); do
    case $1 in
      --server) SERVER=$2; shift ;;
      --redis) REDIS=$2; shift ;;
      --benchmark) BENCH=$2; shift ;;
      --client)
        case $2 in
          redis-benchmark) BENCH="$(command -v redis-benchmark || true)" ;;
          load) BENCH="$REPO_ROOT/build/benchmarks/load/gigakv-load" ;;
          *) die "--client must be redis-benchmark or load" ;;
        esac
        shift
        ;;
      --tests) TESTS=$2; shift ;;
      --pipeline | --pipelines) PIPELINES=$2; shift ;;
      -n | --requests) REQUESTS=$2; shift ;;
      --pipeline-scale) PIPELINE_SCALE=$2; shift ;;
      -c | --clients) CLIENTS=$2; shift ;;
      --rounds) ROUNDS=$2; shift ;;
      --io-threads) IO_THREADS=$2; shift ;;
      --server-args) SERVER_ARGS=$2; shift ;;
      --redis-args) REDIS_ARGS=$2; shift ;;
      --bench-args) BENCH_ARGS=$2; shift ;;
      --server-cpu) SERVER_CPU=$2; shift ;;
      --client-cpu) CLIENT_CPU=$2; shift ;;
      --no-pin) PIN=0 ;;
      --keep-persistence) KEEP_PERSISTENCE=1 ;;
      --warmup) WARMUP=$2; shift ;;
      --raw) RAW_OUT=$2; shift ;;
      -h | --help) usage; exit 0 ;;
      *) usage >&2; die "unknown option: $1" ;;
    esac
    shift
  done
}

# Expands and validates --tests into the global TEST_LIST array.
resolve_tests() {
  local list=$TESTS t
  [[ "$list" == "all" ]] && list=$ALL_TESTS
  TEST_LIST=()
  IFS=, read -r -a items <<<"${list,,}"
  for t in "${items[@]}"; do
    if [[ "$t" == "lrange" ]]; then  # as in redis-benchmark, 'lrange' selects all four sizes
      TEST_LIST+=(lrange_100 lrange_300 lrange_500 lrange_600)
    elif [[ ",$ALL_TESTS,$EXTRA_TESTS," == *",$t,"* ]]; then
      TEST_LIST+=("$t")
    else
      die "unknown test '$t' (known: $ALL_TESTS,$EXTRA_TESTS)"
    fi
  done
  ((${#TEST_LIST[@]} > 0)) || die "no tests selected"
}

validate() {
  # Relative --server paths may be given from the repo root (as the Makefile does) or from cwd.
  if [[ ! -x "$SERVER" && "$SERVER" != /* && -x "$REPO_ROOT/$SERVER" ]]; then
    SERVER="$REPO_ROOT/$SERVER"
  fi
  [[ -x "$SERVER" ]] || die "gigakv server binary '$SERVER' not found or not executable (--server)"
  [[ -n "$REDIS" && -x "$REDIS" ]] || die "redis-server not found (install redis-server or --redis)"
  [[ -n "$BENCH" && -x "$BENCH" ]] || die "redis-benchmark not found (--benchmark)"
  [[ -n "$CLI" && -x "$CLI" ]] || die "redis-cli not found"
  local v
  for v in ROUNDS REQUESTS PIPELINE_SCALE CLIENTS IO_THREADS WARMUP; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer"
  done
  ((ROUNDS > 0)) || die "--rounds must be > 0"
  for v in $PIPELINES; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "bad pipeline depth '$v'"
  done
  if ((PIN)); then
    command -v taskset >/dev/null || die "taskset not found (util-linux); use --no-pin"
    taskset -c "$SERVER_CPU" true 2>/dev/null || die "cannot pin to CPU $SERVER_CPU; use --no-pin"
    taskset -c "$CLIENT_CPU" true 2>/dev/null || die "cannot pin to CPU $CLIENT_CPU; use --no-pin"
    [[ "$SERVER_CPU" != "$CLIENT_CPU" ]] || echo "warning: server and client share CPU $CLIENT_CPU" >&2
  fi
}

main() {
  parse_args "$@"
  resolve_tests
  validate

  # shellcheck disable=SC2034  # assigned through a nameref
  local -a SERVER_ARGV REDIS_ARGV
  BENCH_ARGV=()
  split_args SERVER_ARGV "$SERVER_ARGS"
  split_args REDIS_ARGV "$REDIS_ARGS"
  split_args BENCH_ARGV "$BENCH_ARGS"
  CLIENT_PIN=()
  ((PIN)) && CLIENT_PIN=(taskset -c "$CLIENT_CPU")
  CLK_TCK=$(getconf CLK_TCK)

  trap cleanup EXIT
  trap 'exit 130' INT TERM
  WORK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gigakv-compare.XXXXXX")
  mkdir -p "$WORK_DIR/gigakv" "$WORK_DIR/redis"
  RAW="$WORK_DIR/raw.csv"
  : >"$RAW"

  local gport rport
  gport=$(free_port)
  rport=$(free_port)
  while [[ "$rport" == "$gport" ]]; do rport=$(free_port); done

  local -a gargs=()
  ((IO_THREADS > 0)) && gargs+=(--io-threads "$IO_THREADS")
  start_server gigakv "$SERVER" "$gport" "$WORK_DIR/gigakv" "${gargs[@]}" "${SERVER_ARGV[@]}"
  # Redis is known to take these; disable_persistence below covers gigakv.
  start_server redis "$REDIS" "$rport" "$WORK_DIR/redis" --save '' --appendonly no \
    "${REDIS_ARGV[@]}"
  if ((KEEP_PERSISTENCE == 0)); then
    disable_persistence gigakv "$gport"
    disable_persistence redis "$rport"
  fi

  echo "A gigakv: $SERVER (port $gport, pid $PID_gigakv)" >&2
  echo "B redis:  $REDIS (port $rport, pid $PID_redis) -- $("$REDIS" --version | head -n 1)" >&2
  if ((PIN)); then
    echo "pinning: servers on CPU $SERVER_CPU, client $(basename "$BENCH") on CPU $CLIENT_CPU" >&2
  fi
  echo "tests: ${TEST_LIST[*]}; -c $CLIENTS; -P $PIPELINES; -n $REQUESTS" \
    "(x$PIPELINE_SCALE when pipelined); $ROUNDS rounds" >&2

  if ((WARMUP > 0)); then
    # Untimed pass so first-touch effects (page faults, allocator growth) hit neither side's
    # measured round 1.
    echo "warming up..." >&2
    local port
    for port in "$gport" "$rport"; do
      # Failures are ignored here: an unsupported command is reported per test below, and a
      # crash is caught by check_alive before the first measured run.
      "${CLIENT_PIN[@]}" "$BENCH" -h 127.0.0.1 -p "$port" -c "$CLIENTS" -n "$WARMUP" \
        "${BENCH_ARGV[@]}" -t "$(IFS=,; echo "${TEST_LIST[*]}")" -q >/dev/null 2>&1 || true
    done
  fi

  local round p test n
  for ((round = 1; round <= ROUNDS; round++)); do
    for p in $PIPELINES; do
      n=$REQUESTS
      ((p > 1)) && n=$((REQUESTS * PIPELINE_SCALE))
      for test in "${TEST_LIST[@]}"; do
        check_alive gigakv "$PID_gigakv" "$WORK_DIR/gigakv"
        check_alive redis "$PID_redis" "$WORK_DIR/redis"
        # Odd rounds run gigakv first, even rounds redis first, to cancel ordering effects.
        if ((round % 2)); then
          run_one gigakv "$gport" "$PID_gigakv" "$test" "$p" "$n" "$round"
          run_one redis "$rport" "$PID_redis" "$test" "$p" "$n" "$round"
        else
          run_one redis "$rport" "$PID_redis" "$test" "$p" "$n" "$round"
          run_one gigakv "$gport" "$PID_gigakv" "$test" "$p" "$n" "$round"
        fi
      done
    done
  done

  if [[ -n "$RAW_OUT" ]]; then
    { echo "server,test,pipeline,round,rps,cpu_s_per_Mreq,client_busy_pct,other_busy_pct,error,user_cpu_s_per_Mreq"
      cat "$RAW"; } \
      >"$RAW_OUT"
  fi
  print_table
}

main "$@"
