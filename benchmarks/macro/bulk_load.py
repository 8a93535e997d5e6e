#!/usr/bin/env python3
"""Pipelined bulk load into big collections, gigakv against Debian's redis-server, side by side.

The workload of a data import (`redis-cli --pipe`): 1,000,000 single-member writes (HSET key
field value, SADD key member, ZADD key score member, RPUSH key element) into 1,000 keys of 1,000
members each, with 10-byte fields, members and values, sent over one connection as fast as the
server takes them. By default the writes go round-robin over the keys (member 0 of every key,
then member 1...), so every collection grows through its compact encoding (listpack/intset up
to hash-max-listpack-entries and friends) to its full one while the others grow too, and every
command lands on a different key; `--order sequential` fills one key after the other instead.

Each round starts a fresh server of each kind in turn (alternating who goes first), pinned to
--server-cpu, and pipes the same pre-built file with redis-cli --pipe pinned to --client-cpu.
Reported per workload: load rate (commands per second, wall clock) and server CPU (user +
system, all threads, from /proc/PID/stat) per million commands, as medians and as the median of
the per-round ratios gigakv/redis with their spread (min-max).

Standard library only (server helpers from memory.py). Run with --help for options.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import Connection, Server, cpu_seconds, resp_command, stop_all  # noqa: E402

COMMANDS = {"hash": b"HSET", "set": b"SADD", "zset": b"ZADD", "list": b"RPUSH"}


def write_load_file(path, kind, keys, members, order):
    """Writes keys x members single-member commands of `kind` to `path`; returns the count."""
    command = COMMANDS[kind]
    with open(path, "wb") as out:
        pairs = ((k, m) for m in range(members) for k in range(keys)) if order == "interleaved" \
            else ((k, m) for k in range(keys) for m in range(members))
        chunk = []
        for k, m in pairs:
            key = b"%s:%04d" % (kind.encode(), k)
            member = b"m:%08d" % (k * members + m)  # 10 bytes, unique, not an integer
            if kind == "hash":
                args = [command, key, member, b"v:%08d" % m]
            elif kind == "zset":
                args = [command, key, b"%d" % m, member]
            else:
                args = [command, key, member]
            chunk.append(resp_command(args))
            if len(chunk) == 10000:
                out.write(b"".join(chunk))
                chunk = []
        out.write(b"".join(chunk))
    return keys * members


def measure(server, cli, path, count, client_cpu):
    cmd = [cli, "-p", str(server.port), "--pipe"]
    if client_cpu is not None:
        cmd = ["taskset", "-c", str(client_cpu)] + cmd
    before = cpu_seconds(server.proc.pid)
    start = time.monotonic()
    with open(path, "rb") as payload:
        out = subprocess.run(cmd, stdin=payload, check=True, capture_output=True, text=True,
                             timeout=900).stdout
    seconds = time.monotonic() - start
    cpu = cpu_seconds(server.proc.pid) - before
    server.check_alive()
    if f"replies: {count}" not in out or "errors: 0" not in out:
        raise SystemExit(f"redis-cli --pipe did not get {count} clean replies: {out.strip()}")
    return {"rate": count / seconds, "cpu_per_m": cpu * 1e6 / count}


def parse_args(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(here, "..", "..", "build")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gigakv", default=os.path.join(build, "gigakv-server"))
    p.add_argument("--redis", default="redis-server")
    p.add_argument("--cli", default="redis-cli")
    p.add_argument("--workloads", default="hash,set,zset,list",
                   help="comma-separated: hash, set, zset, list")
    p.add_argument("--keys", type=int, default=1000)
    p.add_argument("--members", type=int, default=1000, help="members per key")
    p.add_argument("--order", choices=["interleaved", "sequential"], default="interleaved")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    p.add_argument("--no-pin", action="store_true", help="pin nothing")
    p.add_argument("--gigakv-args", default="--io-threads 1",
                   help="extra gigakv arguments (default: --io-threads 1, one pinned core)")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    server_cpu = None if args.no_pin else args.server_cpu
    client_cpu = None if args.no_pin else args.client_cpu
    workloads = args.workloads.split(",")
    binaries = {"gigakv": (args.gigakv, ["--save", ""] + args.gigakv_args.split()),
                "redis": (args.redis, ["--save", "", "--appendonly", "no"])}
    scratch = tempfile.mkdtemp(prefix="gigakv-bulk-load.")
    results = {}  # (workload, server) -> list of dicts
    try:
        files = {}
        for kind in workloads:
            path = os.path.join(scratch, f"{kind}.resp")
            files[kind] = (path, write_load_file(path, kind, args.keys, args.members,
                                                 args.order))
        for round_index in range(args.rounds):
            order = ["gigakv", "redis"] if round_index % 2 == 0 else ["redis", "gigakv"]
            for kind in workloads:
                path, count = files[kind]
                for name in order:
                    binary, extra = binaries[name]
                    server = Server(name, binary, extra, server_cpu)
                    try:
                        Connection(server.port).close()
                        figures = measure(server, args.cli, path, count, client_cpu)
                    finally:
                        server.stop()
                    results.setdefault((kind, name), []).append(figures)
                    print(f"round {round_index + 1} {kind:<5} {name:<7} "
                          f"{figures['rate']:>12,.0f} cmd/s  "
                          f"{figures['cpu_per_m']:.3f} cpu-s/Mcmd", flush=True)
    finally:
        stop_all()
        shutil.rmtree(scratch, ignore_errors=True)

    def ratio_text(key, kind):
        # A run too short to take one CPU tick has no ratio.
        ratios = [ours[key] / theirs[key]
                  for ours, theirs in zip(results[(kind, "gigakv")], results[(kind, "redis")])
                  if theirs[key] > 0]
        if not ratios:
            return "n/a"
        return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"

    print()
    print(f"{args.keys} keys x {args.members} members, {args.order}, {args.rounds} rounds")
    print(f"{'workload':<8} {'gigakv cmd/s':>13} {'redis cmd/s':>12} {'ratio (spread)':>17} "
          f"{'gk cpu/M':>9} {'rd cpu/M':>9} {'cpu ratio (spread)':>19}")
    for kind in workloads:
        ours, theirs = results[(kind, "gigakv")], results[(kind, "redis")]
        med = lambda rows, key: statistics.median(r[key] for r in rows)  # noqa: E731
        print(f"{kind:<8} {med(ours, 'rate'):>13,.0f} {med(theirs, 'rate'):>12,.0f} "
              f"{ratio_text('rate', kind):>17} {med(ours, 'cpu_per_m'):>9.3f} "
              f"{med(theirs, 'cpu_per_m'):>9.3f} {ratio_text('cpu_per_m', kind):>19}")
    print("\ncmd/s: commands loaded per second (wall clock); cpu/M: server CPU seconds per "
          "million commands.\nratio = gigakv/redis per round: above 1 is better for cmd/s, below "
          "1 for CPU.")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
