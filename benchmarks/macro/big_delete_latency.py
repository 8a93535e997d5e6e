#!/usr/bin/env python3
"""Does deleting a huge collection stall other clients? gigakv vs redis-server, side by side.

For each type (list, set, hash, zset) it loads one key with N elements (pipelined), then a second
connection sends PING in a tight loop while the first sends DEL (or UNLINK) of the key. Reported
per server: the DEL reply time and the worst PING round trip seen during it (ms). Redis frees a
DEL'd collection synchronously (lazyfree-lazy-user-del no), so its worst PING shows the stall;
gigakv hands large collections to its lazy-free thread on both DEL and UNLINK.

Standard library only (server helpers from memory.py). Run with --help for options.
"""

import argparse
import atexit
import os
import shutil
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import Connection, Server, resp_command, stop_all  # noqa: E402

LOADERS = {
    "list": lambda i: [b"RPUSH", b"big", b"element:%d" % i],
    "set": lambda i: [b"SADD", b"big", b"member:%d" % i],
    "hash": lambda i: [b"HSET", b"big", b"field:%d" % i, b"v"],
    "zset": lambda i: [b"ZADD", b"big", b"%d" % i, b"member:%d" % i],
}


def load(conn, kind, n):
    batch = 10000
    for start in range(0, n, batch):
        payload = b"".join(resp_command(LOADERS[kind](i)) for i in range(start, min(n, start + batch)))
        error = conn.pipeline(payload, min(n, start + batch) - start)
        if error is not None:
            raise SystemExit(f"load failed: {error}")


def measure(port, kind, n, command):
    loader = Connection(port)
    load(loader, kind, n)
    pinger = Connection(port)
    worst = [0.0]
    stop = threading.Event()

    def ping_loop():
        while not stop.is_set():
            start = time.monotonic()
            pinger.call("PING")
            worst[0] = max(worst[0], time.monotonic() - start)

    thread = threading.Thread(target=ping_loop)
    thread.start()
    time.sleep(0.2)
    worst[0] = 0.0
    start = time.monotonic()
    reply = loader.call(command, "big")
    took = time.monotonic() - start
    time.sleep(0.2)
    stop.set()
    thread.join()
    loader.close()
    pinger.close()
    if reply != b"1":
        raise SystemExit(f"{command} replied {reply!r}")
    return took * 1000, worst[0] * 1000


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default="build/gigakv-server")
    p.add_argument("--redis", default=shutil.which("redis-server"))
    p.add_argument("--elements", type=int, default=2_000_000)
    p.add_argument("--types", default="list,set,hash,zset")
    p.add_argument("--command", default="DEL", choices=["DEL", "UNLINK"])
    args = p.parse_args(argv)
    atexit.register(stop_all)
    print(f"{args.command} of one key with {args.elements} elements; times in ms")
    print(f"{'type':6} {'server':8} {'reply':>8} {'worst PING':>11}")
    for kind in args.types.split(","):
        for label, binary, extra in (("gigakv", args.server, []),
                                     ("redis", args.redis, ["--save", "", "--appendonly", "no"])):
            server = Server(label, binary, extra, None)
            try:
                took, worst = measure(server.port, kind, args.elements, args.command)
            finally:
                server.stop()
            print(f"{kind:6} {label:8} {took:8.1f} {worst:11.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
