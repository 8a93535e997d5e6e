#!/usr/bin/env bash
# Pub/Sub throughput side by side: gigakv and Debian's redis-server pinned to one core each in
# turn, gigakv-pubsub-load on the other; 1, 100 and 1,000 subscribers, 16-byte and 1 KiB
# payloads; delivered messages per second and server CPU per message, as ratios with spreads
# (benchmarks/macro/pubsub.py; see benchmarks/README.md). Options: pubsub.py --help.
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "${PYTHON:-python3}" "$SCRIPT_DIR/macro/pubsub.py" "$@"
