#!/usr/bin/env python3
"""How late blocking commands time out, and how fast a push wakes a waiter: gigakv vs
redis-server, side by side in one run.

Timeouts: N clients send BLPOP on distinct missing keys with timeouts spread over 50-500 ms; for
each, lateness = (reply arrival) - (send time + timeout). Reported: median, p99 and max lateness
in ms per server (the acceptance target is "within 50 ms of the deadline").

Wake-up: one client blocks in BLPOP, another pushes; the time from the push's send to the
waiter's reply, median and p99 over R rounds.

Standard library only (server start/stop helpers come from memory.py). Run
`python3 benchmarks/macro/blocking_latency.py --help`.
"""

import argparse
import atexit
import os
import select
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import Connection, Server, resp_command, stop_all  # noqa: E402


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def timeout_lateness(port, clients):
    conns = [Connection(port) for _ in range(clients)]
    sent = {}
    for i, conn in enumerate(conns):
        timeout = 0.05 + 0.45 * i / max(1, clients - 1)
        conn.sock.sendall(resp_command([b"BLPOP", b"missing:%d" % i, b"%.3f" % timeout]))
        sent[conn.sock.fileno()] = (time.monotonic() + timeout, conn)
    lateness = []
    pending = dict(sent)
    deadline = time.monotonic() + 5
    while pending and time.monotonic() < deadline:
        ready, _, _ = select.select(list(pending), [], [], 0.5)
        now = time.monotonic()
        for fd in ready:
            due, conn = pending.pop(fd)
            reply = conn.read_reply()
            if reply is not None:
                raise SystemExit(f"unexpected BLPOP reply {reply!r}")
            lateness.append((now - due) * 1000)
    for conn in conns:
        conn.close()
    if pending:
        raise SystemExit(f"{len(pending)} clients never timed out")
    return lateness


def wakeup_latency(port, rounds):
    waiter, pusher = Connection(port), Connection(port)
    latencies = []
    for r in range(rounds):
        waiter.sock.sendall(resp_command([b"BLPOP", b"wake", b"5"]))
        # Wait until the server reports the client blocked, so the push finds it waiting.
        for _ in range(1000):
            info = pusher.call("INFO", "clients")
            if b"blocked_clients:1" in info:
                break
        start = time.monotonic()
        pusher.call("RPUSH", "wake", "x%d" % r)
        reply = waiter.read_reply()
        latencies.append((time.monotonic() - start) * 1000)
        if not reply or reply[0] != b"wake":
            raise SystemExit(f"unexpected BLPOP reply {reply!r}")
    waiter.close()
    pusher.close()
    return latencies


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default="build/gigakv-server")
    p.add_argument("--redis", default=shutil.which("redis-server"))
    p.add_argument("--clients", type=int, default=200)
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--server-args", default="")
    args = p.parse_args(argv)
    atexit.register(stop_all)
    print(f"{'server':8} {'timeout late p50':>16} {'p99':>8} {'max':>8}   "
          f"{'wake-up p50':>11} {'p99':>8}  (ms)")
    for label, binary, extra in (("gigakv", args.server, args.server_args.split()),
                                 ("redis", args.redis, ["--save", "", "--appendonly", "no"])):
        server = Server(label, binary, extra, None)
        try:
            late = timeout_lateness(server.port, args.clients)
            wake = wakeup_latency(server.port, args.rounds)
        finally:
            server.stop()
        print(f"{label:8} {statistics.median(late):16.2f} {percentile(late, 0.99):8.2f} "
              f"{max(late):8.2f}   {statistics.median(wake):11.3f} {percentile(wake, 0.99):8.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
