#!/usr/bin/env python3
"""Append-only log restart, gigakv against Debian's redis-server, side by side in one run.

For each round and each server (pinned to --server-cpu): a fresh server with `appendonly yes`
(appendfsync everysec, no save points, no automatic rewrite) is loaded with the workload's
commands (1M SETs of 10-byte keys and values by default), given a moment to write them, and
stopped; a new server then starts on a copy of its appendonlydir. Reported: the log's size on
disk, and the load time both servers log ("DB loaded from append only file: N seconds"), with
the wall time from exec to the first PONG as a cross-check. The restarted server then runs a
BGREWRITEAOF of the dataset while a probe on --client-cpu sends SET and GET of random
keys in a loop (rdb.py's probe): the rewrite's time and the probe's p50/p99/max round trips.
Rounds alternate between the servers; medians and the per-round ratios gigakv/redis with their
spread. Standard library only (server helpers from memory.py). Run with --help for options.
"""

import array
import multiprocessing
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import Connection, Server, stop_all, stop_server  # noqa: E402
from rdb import (info_field, load, percentile, print_medians, probe,  # noqa: E402
                 side_by_side_parser)

AOF_ARGS = ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
            "--auto-aof-rewrite-percentage", "0"]


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(path, name)) for name in os.listdir(path))


def rewrite_under_load(conn, port, keys, workload, client_cpu, result):
    stop_event = multiprocessing.Event()
    results = multiprocessing.Queue()
    prober = multiprocessing.Process(
        target=probe, args=(port, keys, workload, client_cpu, stop_event, results))
    prober.start()
    time.sleep(0.3)
    start = time.monotonic()
    conn.call("BGREWRITEAOF")
    time.sleep(0.05)
    while info_field(conn, "aof_rewrite_in_progress") != "0" or \
            info_field(conn, "aof_rewrite_scheduled") != "0":
        time.sleep(0.01)
    result["rewrite_s"] = time.monotonic() - start
    time.sleep(0.2)
    stop_event.set()
    samples = sorted(array.array("d", results.get(timeout=60)))
    prober.join(timeout=60)
    result["probe_p50_ms"] = percentile(samples, 0.5) * 1000
    result["probe_p99_ms"] = percentile(samples, 0.99) * 1000
    result["probe_max_ms"] = (samples[-1] if samples else 0) * 1000


def measure(label, binary, workload, n, server_cpu, client_cpu):
    server = Server(label, binary, AOF_ARGS, server_cpu)
    result = {}
    try:
        conn = Connection(server.port)
        _, keys = load(conn, workload, n)
        conn.close()
        time.sleep(1.5)  # Written and fsynced (everysec).
        stop_server(server.proc)
        log_dir = os.path.join(server.dir, "appendonlydir")
        result["log_bytes"] = dir_bytes(log_dir)
        saved = server.dir + ".appendonlydir"
        shutil.copytree(log_dir, saved)
    finally:
        server.stop()
    try:
        start = time.monotonic()
        reloaded = Server(label, binary, AOF_ARGS, server_cpu,
                          prepare_dir=lambda d: shutil.copytree(
                              saved, os.path.join(d, "appendonlydir")))
        result["ready_s"] = time.monotonic() - start
        conn = Connection(reloaded.port)
        result["keys"] = int(conn.call("DBSIZE"))
        # The replayed dataset is then rewritten while a client keeps reading and writing.
        rewrite_under_load(conn, reloaded.port, keys, workload, client_cpu, result)
        conn.close()
        with open(reloaded.log_path, errors="replace") as f:
            match = re.findall(r"DB loaded from append only file: ([0-9.]+) seconds", f.read())
        result["load_s"] = float(match[-1]) if match else float("nan")
        reloaded.stop()
    finally:
        shutil.rmtree(saved, ignore_errors=True)
    return result


def main(argv):
    args = side_by_side_parser(__doc__, "strings").parse_args(argv)
    fields = ["log_bytes", "load_s", "ready_s", "rewrite_s", "probe_p50_ms", "probe_p99_ms",
              "probe_max_ms"]
    try:
        for workload in args.workloads.split(","):
            rows = {"gigakv": [], "redis": []}
            for round_number in range(args.rounds):
                order = [("gigakv", args.server), ("redis", args.redis)]
                if round_number % 2:
                    order.reverse()
                for label, binary in order:
                    result = measure(label, binary, workload, args.keys, args.server_cpu,
                                     args.client_cpu)
                    rows[label].append(result)
                    print(f"{workload} round {round_number + 1} {label}: " +
                          ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                    for k, v in result.items()), flush=True)
            print_medians(f"{workload} ({args.keys} keys)", fields, rows)
    finally:
        stop_all()


if __name__ == "__main__":
    main(sys.argv[1:])
