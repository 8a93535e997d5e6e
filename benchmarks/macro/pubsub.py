#!/usr/bin/env python3
"""Pub/Sub throughput, gigakv against Debian's redis-server, side by side in one run.

Both servers run for the whole run, each pinned to --server-cpu (one core each in turn: they
never run a workload at the same time). For each round and each workload (subscribers x payload
size), gigakv-pubsub-load, pinned to --client-cpu, subscribes S connections to one channel and
publishes from one connection (a window of 64 PUBLISH in flight) until every subscriber has every
message; the servers take turns, alternating which goes first. Reported per workload:

- delivered messages per second (published x subscribers / time);
- server CPU (user + system, all threads, from /proc/PID/stat) per delivered message, and per
  PUBLISH;

with medians over the rounds and the median of the per-round ratios gigakv/redis with their
spread (min-max). With the client on its own core, its CPU may cap both servers' rates (1,000
subscribers means 1,000 sockets to read); the CPU per message is the server's alone.

Standard library only (server helpers from memory.py). Run with --help for options.
"""

import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import Connection, Server, cpu_seconds, stop_all  # noqa: E402


def run_load(tool, port, subscribers, payload, messages, client_cpu):
    cmd = [tool, "-p", str(port), "-s", str(subscribers), "-n", str(messages), "-d",
           str(payload), "--csv"]
    if client_cpu is not None:
        cmd = ["taskset", "-c", str(client_cpu)] + cmd
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout
    header, row = out.strip().splitlines()[-2:]
    values = dict(zip(header.split(","), row.split(",")))
    return float(values["seconds"])


def measure(server, tool, subscribers, payload, deliveries, client_cpu):
    messages = max(1, deliveries // subscribers)
    before = cpu_seconds(server.proc.pid)
    seconds = run_load(tool, server.port, subscribers, payload, messages, client_cpu)
    cpu = cpu_seconds(server.proc.pid) - before
    server.check_alive()
    delivered = messages * subscribers
    return {"delivered_per_s": delivered / seconds, "us_per_delivery": cpu * 1e6 / delivered,
            "us_per_publish": cpu * 1e6 / messages}


def parse_args(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(here, "..", "..", "build")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gigakv", default=os.path.join(build, "gigakv-server"))
    p.add_argument("--redis", default="redis-server")
    p.add_argument("--tool", default=os.path.join(build, "benchmarks", "load",
                                                  "gigakv-pubsub-load"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--subscribers", default="1,100,1000", help="comma-separated counts")
    p.add_argument("--payloads", default="16,1024", help="comma-separated payload bytes")
    p.add_argument("--deliveries", type=int, default=2_000_000,
                   help="messages delivered per run with 16-byte payloads (1/4 for larger)")
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    p.add_argument("--no-pin", action="store_true", help="pin nothing")
    p.add_argument("--gigakv-args", default="", help="extra gigakv arguments (--io-threads 1)")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    server_cpu = None if args.no_pin else args.server_cpu
    client_cpu = None if args.no_pin else args.client_cpu
    servers = {
        "gigakv": Server("gigakv", args.gigakv, ["--save", ""] + args.gigakv_args.split(),
                         server_cpu),
        "redis": Server("redis", args.redis, ["--save", "", "--appendonly", "no"], server_cpu),
    }
    for server in servers.values():
        conn = Connection(server.port)
        # The default pubsub class limit (32mb) never applies here: subscribers keep reading.
        conn.close()
    workloads = [(int(s), int(d)) for d in args.payloads.split(",")
                 for s in args.subscribers.split(",")]
    results = {}  # (workload, server) -> list of dicts
    try:
        for round_index in range(args.rounds):
            order = ["gigakv", "redis"] if round_index % 2 == 0 else ["redis", "gigakv"]
            for subscribers, payload in workloads:
                deliveries = args.deliveries if payload <= 64 else args.deliveries // 4
                for name in order:
                    figures = measure(servers[name], args.tool, subscribers, payload, deliveries,
                                      client_cpu)
                    results.setdefault(((subscribers, payload), name), []).append(figures)
                    print(f"round {round_index + 1} {subscribers:>5} subs {payload:>5} B "
                          f"{name:<7} {figures['delivered_per_s']:>12,.0f} msg/s  "
                          f"{figures['us_per_delivery']:.3f} us/delivery  "
                          f"{figures['us_per_publish']:.2f} us/publish", flush=True)
    finally:
        for server in servers.values():
            server.stop()
        stop_all()

    def ratio_text(key, workload, invert=False):
        ratios = []
        for ours, theirs in zip(results[(workload, "gigakv")], results[(workload, "redis")]):
            ratios.append(ours[key] / theirs[key])
        return (f"{statistics.median(ratios):.2f} "
                f"({min(ratios):.2f}-{max(ratios):.2f})")

    print()
    print(f"{'subs':>5} {'payload':>7} {'gigakv msg/s':>13} {'redis msg/s':>12} "
          f"{'ratio (spread)':>18} {'gk us/del':>9} {'rd us/del':>9} {'cpu ratio (spread)':>19}"
          f" {'gk us/pub':>9} {'rd us/pub':>9}")
    for workload in workloads:
        ours, theirs = results[(workload, "gigakv")], results[(workload, "redis")]
        med = lambda rows, key: statistics.median(r[key] for r in rows)  # noqa: E731
        print(f"{workload[0]:>5} {workload[1]:>7} {med(ours, 'delivered_per_s'):>13,.0f} "
              f"{med(theirs, 'delivered_per_s'):>12,.0f} "
              f"{ratio_text('delivered_per_s', workload):>18} "
              f"{med(ours, 'us_per_delivery'):>9.3f} {med(theirs, 'us_per_delivery'):>9.3f} "
              f"{ratio_text('us_per_delivery', workload):>19} "
              f"{med(ours, 'us_per_publish'):>9.2f} {med(theirs, 'us_per_publish'):>9.2f}")
    print("\nmsg/s: messages delivered per second; us/del, us/pub: server CPU per delivered "
          "message and per PUBLISH.\nratio = gigakv/redis per round: above 1 is better for msg/s, "
          "below 1 for CPU.")


if __name__ == "__main__":
    main(sys.argv[1:])
