#!/usr/bin/env bash
# Memory per item, gigakv vs redis-server: a thin wrapper around macro/memory.py so both
# benchmarks are started the same way (benchmarks/<name>.sh). memory.py needs only the Python
# standard library; set PYTHON to choose the interpreter. See benchmarks/README.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR

exec "${PYTHON:-python3}" "$SCRIPT_DIR/macro/memory.py" "$@"
