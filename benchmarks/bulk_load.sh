#!/usr/bin/env bash
# Pipelined bulk load into big collections (HSET/SADD/ZADD/RPUSH, 1M members into 1,000 keys,
# like redis-cli --pipe), gigakv vs redis-server side by side: a thin wrapper around
# macro/bulk_load.py. Standard library only; set PYTHON to choose the interpreter. See
# benchmarks/README.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR

exec "${PYTHON:-python3}" "$SCRIPT_DIR/macro/bulk_load.py" "$@"
