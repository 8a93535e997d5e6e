#!/usr/bin/env python3
"""Do expiry, compaction or FLUSHALL ASYNC of 1M keys make other clients wait? gigakv vs Redis.

Each scenario loads N keys (10-byte keys and values, pipelined) into a fresh server, then a probe
connection sends GET of random keys in a tight loop while the background work happens, recording
every round trip (GET takes the key's shard lock, so waits on background work holding shard locks
show up). Reported per server: probe round trips (count, p50, p99, p99.9, max in ms) and how long the
work took to finish.

- expiry: all N keys get a TTL of --ttl-ms; the probe runs from just before the deadline until
  DBSIZE reaches 0 (or --max-wait s). "done" is when the last key was gone.
- flushall: FLUSHALL ASYNC of the N keys; "done" is the FLUSHALL reply time.
- compaction: every key is overwritten --rounds times with values of random size (5-200 bytes,
  fixed seed) from a writer connection, then half the keys are deleted; the arena holes this
  leaves are what gigakv compacts incrementally (Redis has no compaction: the allocator keeps
  them). The writer's own per-command latency is reported too (its requests trigger compaction),
  and the RSS growth against the bytes of the keys and values left (the keyspace issue's bound:
  at most 2x the live bytes plus the index).

The probe runs in its own process; with 2 cores it competes with the server and the loader, so
its tail includes scheduling noise that hits both servers alike.

Both servers run one after the other on free 127.0.0.1 ports without persistence. Standard
library only (server helpers from memory.py). Run with --help for options.
"""

import argparse
import array
import atexit
import multiprocessing
import os
import random
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import Connection, Server, resp_command, stop_all  # noqa: E402


def pipelined(conn, commands, batch=10000):
    for start in range(0, len(commands), batch):
        chunk = commands[start:start + batch]
        error = conn.pipeline(b"".join(resp_command(c) for c in chunk), len(chunk))
        if error is not None:
            raise SystemExit(f"pipeline failed: {error}")


def key(i):
    return b"key:%06d" % i  # 10 bytes


class Probe:
    """Sends GET of a random key of the key space (so it takes shard locks, as real clients do)
    in a tight loop on its own connection, in a child process (so the load generator's Python
    work never delays it), until stopped; `samples` holds every round trip (s)."""

    def __init__(self, port, keys):
        self.port = port
        self.keys = keys
        self.samples = []
        self.stop_event = multiprocessing.Event()
        self.results = multiprocessing.Queue()
        self.process = multiprocessing.Process(target=self._run)

    def _run(self):
        conn = Connection(self.port)
        samples = array.array("d")
        rng = random.Random(3)
        while not self.stop_event.is_set():
            request = key(rng.randrange(self.keys))
            start = time.perf_counter()
            conn.call("GET", request)
            samples.append(time.perf_counter() - start)
        conn.close()
        self.results.put(samples.tobytes())

    def __enter__(self):
        self.process.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        data = self.results.get(timeout=60)
        self.process.join()
        self.samples = array.array("d", data).tolist()


def summary(samples):
    if not samples:
        return "no samples"
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return (f"n={len(ordered):7d} p50={pick(0.5):6.3f} p99={pick(0.99):6.3f} "
            f"p99.9={pick(0.999):6.3f} max={ordered[-1] * 1000:7.2f}")


def scenario_expiry(server, n, args):
    port = server.port
    conn = Connection(port)
    deadline = time.time() + args.ttl_ms / 1000
    pxat = b"%d" % int(deadline * 1000)
    pipelined(conn, [[b"SET", key(i), b"value:%04d" % (i % 10000), b"PXAT", pxat]
                     for i in range(n)])
    if int(conn.call("DBSIZE")) != n:
        raise SystemExit("load incomplete")
    wait = deadline - time.time() - 0.2
    if wait > 0:
        time.sleep(wait)
    with Probe(port, n) as probe:
        time.sleep(0.2)
        start = time.time()
        limit = start + args.max_wait
        while int(conn.call("DBSIZE")) > 0 and time.time() < limit:
            time.sleep(0.005)
        done = time.time() - max(start, deadline)
        left = int(conn.call("DBSIZE"))
    conn.close()
    return probe.samples, f"all gone {done * 1000:.0f} ms after the deadline" if left == 0 else \
        f"{left} keys still present after {args.max_wait}s"


def scenario_flushall(server, n, args):
    port = server.port
    conn = Connection(port)
    pipelined(conn, [[b"SET", key(i), b"value:%04d" % (i % 10000)] for i in range(n)])
    with Probe(port, n) as probe:
        time.sleep(0.2)
        start = time.perf_counter()
        conn.call("FLUSHALL", "ASYNC")
        took = time.perf_counter() - start
        time.sleep(0.5)
    conn.close()
    return probe.samples, f"FLUSHALL ASYNC replied in {took * 1000:.2f} ms"


def scenario_compaction(server, n, args):
    port = server.port
    rss_before = server.rss()
    conn = Connection(port)
    pipelined(conn, [[b"SET", key(i), b"value:%04d" % (i % 10000)] for i in range(n)])
    rng = random.Random(7)
    sizes = [10] * n
    writer_samples = []

    def value(i):
        sizes[i] = rng.randint(5, 200)
        return b"x" * sizes[i]

    with Probe(port, n) as probe:
        for _ in range(args.rounds):
            order = list(range(n))
            rng.shuffle(order)
            # One command at a time for the first 20,000 of each round (their latencies are
            # kept), pipelined for the rest.
            for i in order[:20000]:
                start = time.perf_counter()
                conn.call("SET", key(i), value(i))
                writer_samples.append(time.perf_counter() - start)
            pipelined(conn, [[b"SET", key(i), value(i)] for i in order[20000:]])
        pipelined(conn, [[b"DEL", key(i)] for i in range(0, n, 2)])
        time.sleep(0.5)
    conn.close()
    # What is left: the odd keys (10 bytes) and their last values.
    live = sum(10 + sizes[i] for i in range(1, n, 2))
    growth = server.settled_rss(2) - rss_before
    return probe.samples, (f"writer {summary(writer_samples)}; RSS growth {growth / 2**20:.1f} MiB "
                           f"for {live / 2**20:.1f} MiB of live keys and values "
                           f"({growth / live:.2f}x)")


SCENARIOS = {"expiry": scenario_expiry, "flushall": scenario_flushall,
             "compaction": scenario_compaction}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default="build/gigakv-server")
    p.add_argument("--redis", default=shutil.which("redis-server"))
    p.add_argument("--keys", type=int, default=1_000_000)
    p.add_argument("--scenarios", default="expiry,flushall,compaction")
    p.add_argument("--ttl-ms", type=int, default=15000, help="expiry: TTL given at load time")
    p.add_argument("--max-wait", type=float, default=30.0, help="expiry: give up after (s)")
    p.add_argument("--rounds", type=int, default=5, help="compaction: overwrite rounds")
    p.add_argument("--only", choices=["gigakv", "redis"], help="run one server only")
    args = p.parse_args(argv)
    atexit.register(stop_all)
    print(f"{args.keys} keys; probe GET round trips in ms")
    for name in args.scenarios.split(","):
        for label, binary, extra in (("gigakv", args.server, []),
                                     ("redis", args.redis, ["--save", "", "--appendonly", "no"])):
            if args.only and label != args.only:
                continue
            server = Server(label, binary, extra, None)
            try:
                samples, note = SCENARIOS[name](server, args.keys, args)
            finally:
                server.stop()
            print(f"{name:10} {label:7} {summary(samples)}  {note}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
