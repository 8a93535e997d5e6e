#!/usr/bin/env bash
# Write throughput with the append-only log, gigakv against Debian's redis-server, and the ceiling
# that the request path itself sets on it.
#
# Every round runs benchmarks/compare.sh --rounds 1 three times, interleaved: both servers without
# persistence ("none"), then with "--appendonly yes --appendfsync everysec" and with "... always"
# on both (compare.sh --keep-persistence; each server logs into its own temporary directory under
# ${TMPDIR:-/tmp}). The order of the three configurations rotates every round, so that drift of
# the machine hits all three alike. benchmarks/macro/aof_throughput.py then reads the runs' --raw
# CSVs and prints medians per configuration, test and pipeline depth, and per test the ceiling:
# gigakv's rps without persistence over redis's rps with the log, in the same round. That is the
# best logged ratio gigakv could reach if its log cost nothing.
#
# Run `benchmarks/aof_throughput.sh --help` for options. See benchmarks/README.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR

# ---- defaults (overridable by options) -------------------------------------------------------
CLIENT=load
TESTS="set"
PIPELINES="1 16"
ROUNDS=3
REQUESTS=200000
IO_THREADS=0         # 0 = don't pass --io-threads, so compare.sh's default applies
SERVER_ARGS=""
KEEP_DIR=""
COMPARE_EXTRA=()
readonly CONFIGS=(none everysec always)

usage() {
  cat <<EOF
Usage: $(basename "$0") [options] [-- compare.sh options...]

Write throughput of gigakv and redis-server without persistence, with appendfsync everysec and
with appendfsync always, interleaved round by round, and the ceiling the request path sets.

  --client NAME        redis-benchmark or load = gigakv-load (default: $CLIENT)
  --tests LIST         comma-separated compare.sh tests (default: $TESTS)
  --pipeline "LIST"    space-separated pipeline depths (default: "$PIPELINES")
  --rounds N           rounds of the three configurations; medians are reported (default: $ROUNDS)
  -n, --requests N     requests per run at -P 1, as in compare.sh (default: $REQUESTS)
  --io-threads N       passed to compare.sh; 0 = don't pass (compare.sh's default) (default: 0)
  --server-args "ARGS" extra gigakv arguments in every configuration (e.g. "--io-threads 2")
  --keep DIR           keep every run's CSV (CONFIG-rROUND.csv) and compare.sh table in DIR
  -h, --help           this text

Options after -- go to every compare.sh call unchanged (e.g. -- --no-pin -c 20).
The servers write their logs under \${TMPDIR:-/tmp}; set TMPDIR to measure another disk.
EOF
}

die() {
  echo "aof_throughput.sh: $*" >&2
  exit 1
}

parse_args() {
  while (($#)); do
    case $1 in
      --client) CLIENT=$2; shift ;;
      --tests) TESTS=$2; shift ;;
      --pipeline | --pipelines) PIPELINES=$2; shift ;;
      --rounds) ROUNDS=$2; shift ;;
      -n | --requests) REQUESTS=$2; shift ;;
      --io-threads) IO_THREADS=$2; shift ;;
      --server-args) SERVER_ARGS=$2; shift ;;
      --keep) KEEP_DIR=$2; shift ;;
      -h | --help) usage; exit 0 ;;
      --) shift; COMPARE_EXTRA=("$@"); break ;;
      *) usage >&2; die "unknown option: $1" ;;
    esac
    shift
  done
  [[ "$CLIENT" == load || "$CLIENT" == redis-benchmark ]] ||
    die "--client must be redis-benchmark or load"
  local v
  for v in ROUNDS REQUESTS IO_THREADS; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer"
  done
  ((ROUNDS > 0)) || die "--rounds must be > 0"
}

# ---- process bookkeeping: the only process we start is compare.sh, which stops its servers ----
CHILD=""
OUT_DIR=""
TEMP_OUT=0

cleanup() {
  if [[ -n "$CHILD" ]] && kill -0 "$CHILD" 2>/dev/null; then
    # compare.sh traps TERM and stops exactly the servers it started before exiting.
    kill -TERM "$CHILD" 2>/dev/null || true
    wait "$CHILD" 2>/dev/null || true
  fi
  if ((TEMP_OUT)) && [[ -n "$OUT_DIR" ]]; then
    rm -rf "$OUT_DIR"
  fi
}

# run_config CONFIG ROUND -- one compare.sh --rounds 1 run; writes CONFIG-rROUND.csv to OUT_DIR.
run_config() {
  local config=$1 round=$2
  local base="$OUT_DIR/$config-r$round"
  local -a args=(--rounds 1 --client "$CLIENT" --tests "$TESTS" --pipeline "$PIPELINES"
    --requests "$REQUESTS" --raw "$base.csv")
  ((IO_THREADS > 0)) && args+=(--io-threads "$IO_THREADS")
  local server_args=$SERVER_ARGS
  if [[ "$config" != none ]]; then
    # compare.sh starts redis with --save '' and then these; gigakv gets --save '' as well, so
    # that neither side takes an RDB snapshot during the run (gigakv's default has save points).
    local log_args="--appendonly yes --appendfsync $config"
    args+=(--keep-persistence --redis-args "$log_args")
    server_args="$log_args --save '' $SERVER_ARGS"
  fi
  [[ -n "$server_args" ]] && args+=(--server-args "$server_args")
  echo "== round $round/$ROUNDS: $config ==" >&2
  # In the background so that an interrupt can forward TERM to it (see cleanup).
  "$SCRIPT_DIR/compare.sh" "${args[@]}" "${COMPARE_EXTRA[@]}" >"$base.txt" &
  CHILD=$!
  local rc=0
  wait "$CHILD" || rc=$?
  CHILD=""
  ((rc == 0)) || die "compare.sh failed ($config, round $round; exit $rc)"
}

main() {
  parse_args "$@"
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  if [[ -n "$KEEP_DIR" ]]; then
    mkdir -p "$KEEP_DIR"
    OUT_DIR=$(cd "$KEEP_DIR" && pwd)
    rm -f "$OUT_DIR"/{none,everysec,always}-r*.csv
  else
    OUT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gigakv-aof-throughput.XXXXXX")
    TEMP_OUT=1
  fi

  local round i
  for ((round = 1; round <= ROUNDS; round++)); do
    # Round 1: none, everysec, always; round 2: everysec, always, none; ...
    for ((i = 0; i < ${#CONFIGS[@]}; i++)); do
      run_config "${CONFIGS[(i + round - 1) % ${#CONFIGS[@]}]}" "$round"
    done
  done

  "${PYTHON:-python3}" "$SCRIPT_DIR/macro/aof_throughput.py" "$OUT_DIR"
}

main "$@"
