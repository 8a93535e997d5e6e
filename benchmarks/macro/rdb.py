#!/usr/bin/env python3
"""RDB snapshots, gigakv against Debian's redis-server, side by side in one run.

For each workload (1M strings of 10-byte keys and values; 1M hash fields in 1,000 hashes) and
each round, a fresh server of each kind (pinned to --server-cpu, no save points) is loaded, then:

- SAVE: the time of the SAVE round trip and the file's size;
- BGSAVE under load: a probe process on --client-cpu sends SET and GET of random keys of the
  dataset in a loop while the BGSAVE runs, recording every round trip (p50, p99, max), and the
  server's memory is sampled every 10 ms: gigakv's RSS growth over its RSS before the BGSAVE;
  for Redis, its parent's growth plus its child's private dirty memory (copy-on-write), the
  parent's own figure rdb_last_cow_size too;
- load at start: the server is stopped and started again on the file; the load time is what
  both servers log ("DB loaded from disk: N seconds").

Rounds alternate between the servers. Reported: per-round figures, medians, and the median of the
per-round ratios gigakv/redis with their spread (min-max). Standard library only (server helpers
from memory.py). Run with --help for options.
"""

import argparse
import array
import multiprocessing
import os
import random
import re
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import (Connection, Server, SEND_CHUNK_BYTES, stop_all,  # noqa: E402
                    workload_plan)

WORKLOADS = ("strings", "hash")


def load(conn, workload, n):
    commands, items, keys = workload_plan(workload, n)
    chunk, count, size = [], 0, 0
    for cmd in commands:
        chunk.append(cmd)
        count += 1
        size += len(cmd)
        if size >= SEND_CHUNK_BYTES:
            if conn.pipeline(b"".join(chunk), count) is not None:
                raise SystemExit("load failed")
            chunk, count, size = [], 0, 0
    if count and conn.pipeline(b"".join(chunk), count) is not None:
        raise SystemExit("load failed")
    return items, keys


def private_dirty_bytes(pid):
    """Private_Dirty of a process (its copy-on-write pages after a fork), from smaps_rollup."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return sum(int(line.split()[1]) * 1024 for line in f
                       if line.startswith("Private_Dirty:"))
    except OSError:
        return 0


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def probe(port, keys, workload, cpu, stop_event, results):
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    conn = Connection(port)
    rng = random.Random(7)
    samples = array.array("d")
    while not stop_event.is_set():
        i = rng.randrange(keys)
        if workload == "strings":
            key = b"key:%06d" % i
            args = ("SET", key, b"new:%06d" % i) if i % 2 else ("GET", key)
        else:
            key = b"hash:%06d" % i
            args = ("HSET", key, b"f:x", b"v") if i % 2 else ("HGET", key, b"f:x")
        start = time.perf_counter()
        conn.call(*args)
        samples.append(time.perf_counter() - start)
    conn.close()
    results.put(samples.tobytes())


def percentile(sorted_values, p):
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p))]


def info_field(conn, name):
    text = conn.call("INFO", "persistence").decode()
    match = re.search(rf"^{name}:(\S+)", text, re.M)
    return match.group(1) if match else None


def measure(label, binary, workload, n, server_cpu, client_cpu):
    server = Server(label, binary, ["--save", "", "--appendonly", "no"], server_cpu)
    try:
        conn = Connection(server.port)
        items, keys = load(conn, workload, n)
        time.sleep(1.0)
        result = {"items": items}
        start = time.monotonic()
        conn.call("SAVE")
        result["save_s"] = time.monotonic() - start
        path = os.path.join(server.dir, "dump.rdb")
        result["file_bytes"] = os.path.getsize(path)

        rss_before = server.rss()
        stop_event = multiprocessing.Event()
        results = multiprocessing.Queue()
        prober = multiprocessing.Process(
            target=probe, args=(server.port, keys, workload, client_cpu, stop_event, results))
        prober.start()
        time.sleep(0.3)
        peak = 0
        start = time.monotonic()
        conn.call("BGSAVE")
        while True:
            extra = server.rss() - rss_before
            for child in children(server.proc.pid):
                extra += private_dirty_bytes(child)
            peak = max(peak, extra)
            if info_field(conn, "rdb_bgsave_in_progress") == "0":
                break
            time.sleep(0.01)
        result["bgsave_s"] = time.monotonic() - start
        time.sleep(0.2)
        stop_event.set()
        samples = sorted(array.array("d", results.get(timeout=60)))
        prober.join(timeout=60)
        result["bgsave_extra_bytes"] = peak
        result["dataset_rss"] = rss_before
        result["cow_size"] = int(info_field(conn, "rdb_last_cow_size") or 0)
        result["probe_count"] = len(samples)
        result["probe_p50_ms"] = percentile(samples, 0.5) * 1000
        result["probe_p99_ms"] = percentile(samples, 0.99) * 1000
        result["probe_max_ms"] = (samples[-1] if samples else 0) * 1000
        conn.call("SAVE")  # The file as loaded below: the dataset after the probe's writes.
        conn.close()

        saved = server.dir + ".rdb"
        shutil.copy(path, saved)
        server.stop()  # (removes its directory: the copy lives beside it)
        try:
            reloaded = Server(label, binary, ["--save", "", "--appendonly", "no"], server_cpu,
                              prepare_dir=lambda d: shutil.copy(saved, os.path.join(d, "dump.rdb")))
            with open(reloaded.log_path, errors="replace") as f:
                match = re.findall(r"DB loaded from disk: ([0-9.]+) seconds", f.read())
            result["load_s"] = float(match[-1]) if match else float("nan")
            reloaded.stop()
        finally:
            os.unlink(saved)
        return result
    finally:
        server.stop()


def side_by_side_parser(doc, workloads):
    """The options of the side-by-side persistence benchmarks (rdb.py, aof.py)."""
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="build/gigakv-server")
    parser.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    parser.add_argument("--keys", type=int, default=1_000_000, help="strings / hash fields")
    parser.add_argument("--workloads", default=workloads)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--client-cpu", type=int, default=1)
    return parser


def print_medians(title, fields, runs):
    """Medians of each figure for gigakv and redis, and the median and spread of the per-round
    ratios gigakv/redis."""
    print(f"\n== {title}, medians ==")
    print(f"{'figure':22} {'gigakv':>12} {'redis':>12} {'ratio':>8} {'spread':>15}")
    for k in fields:
        ours = [r[k] for r in runs["gigakv"]]
        theirs = [r[k] for r in runs["redis"]]
        ratios = [a / b for a, b in zip(ours, theirs) if b]
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
        ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
        print(f"{k:22} {statistics.median(ours):12.4g} {statistics.median(theirs):12.4g} "
              f"{ratio:>8} {spread:>15}")


def main(argv):
    args = side_by_side_parser(__doc__, ",".join(WORKLOADS)).parse_args(argv)
    fields = ["save_s", "file_bytes", "load_s", "bgsave_s", "bgsave_extra_bytes", "probe_p99_ms",
              "probe_max_ms"]
    try:
        for workload in args.workloads.split(","):
            runs = {"gigakv": [], "redis": []}
            for round_index in range(args.rounds):
                for label, binary in (("gigakv", args.server), ("redis", args.redis)):
                    result = measure(label, binary, workload, args.keys, args.server_cpu,
                                     args.client_cpu)
                    runs[label].append(result)
                    print(f"{workload} round {round_index + 1} {label}: " + ", ".join(
                        f"{k}={result[k]:.4g}" for k in fields + ["dataset_rss", "cow_size",
                                                                    "probe_count"]), flush=True)
            print_medians(f"{workload} ({runs['gigakv'][0]['items']} items)", fields, runs)
            for label in ("gigakv", "redis"):
                extra = statistics.median(r["bgsave_extra_bytes"] for r in runs[label])
                rss = statistics.median(r["dataset_rss"] for r in runs[label])
                print(f"{label}: memory during BGSAVE +{extra / 2**20:.1f} MiB = "
                      f"{100 * extra / rss:.1f}% of its RSS before ({rss / 2**20:.1f} MiB)")
            print()
    finally:
        stop_all()


if __name__ == "__main__":
    main(sys.argv[1:])
