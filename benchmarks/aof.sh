#!/usr/bin/env bash
# Append-only log, gigakv vs redis-server: the log's size and the restart (replay) time of 1M
# writes (benchmarks/macro/aof.py; see benchmarks/README.md). Throughput with the log on both
# sides: benchmarks/compare.sh --keep-persistence (README).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR

exec "${PYTHON:-python3}" "$SCRIPT_DIR/macro/aof.py" "$@"
