#!/usr/bin/env bash
# Big string values (a 512 MB SETRANGE, a 100 MB SET/GET/APPEND, DEL of 512 MB), gigakv vs
# redis-server side by side: each command's time and the worst PING another client saw meanwhile.
# A thin wrapper around macro/big_values.py. Standard library only; set PYTHON to choose the
# interpreter. See benchmarks/README.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR

exec "${PYTHON:-python3}" "$SCRIPT_DIR/macro/big_values.py" "$@"
