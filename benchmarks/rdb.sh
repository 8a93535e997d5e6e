#!/usr/bin/env bash
# RDB snapshots, gigakv vs redis-server: SAVE time and file size, BGSAVE memory and client
# latency under load, load time at start (benchmarks/macro/rdb.py; see benchmarks/README.md).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR

exec "${PYTHON:-python3}" "$SCRIPT_DIR/macro/rdb.py" "$@"
