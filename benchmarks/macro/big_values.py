#!/usr/bin/env python3
"""Big string values: how long one big command takes and how long other clients wait behind it,
gigakv against Debian's redis-server, side by side.

Steps, on one connection, each timed from sending the command to its whole reply read:
  setrange  SETRANGE big 536870911 x      (makes a 512 MB string of zero bytes and an x)
  strlen    STRLEN big                    (a small command on the big key)
  set       SET v <100 MB>                (the client sends 100 MB)
  get       GET v                         (the client reads 100 MB)
  append    APPEND v <1 MB>               (grows the 100 MB value)
  del       DEL big                       (frees 512 MB)
Meanwhile a second connection sends PING in a loop; the worst PING round trip seen during each
step is what another client waited (goal: at most 100 ms).

The pinger is a thread of this client, on the same --client-cpu: while the client itself sends
or reads 100 MB, a PING round trip also includes the client's own work (equal for both servers).

Each round starts a fresh server of each kind in turn (alternating who goes first), pinned to
--server-cpu, with this client on --client-cpu. Reported per step: median time and worst PING
per server, and the median of the per-round time ratios gigakv/redis with their spread.

The client's own costs stay out of the timings as far as they can: commands are encoded before
the clock starts, and bulk replies are read (recv_into) into one buffer allocated and touched
before the first step, so a 100 MB GET is one pass over warm memory on the client side.

Standard library only (server helpers from memory.py). Run with --help for options.
"""

import argparse
import os
import shutil
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import Connection, Server, resp_command, stop_all  # noqa: E402

MB = 1 << 20


class BulkConnection:
    """A RESP2 client for one command at a time whose replies may be huge."""

    def __init__(self, port, max_bulk):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=300)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending = bytearray()
        self.body = memoryview(bytearray(max_bulk + 2))  # zero-filled: its pages are mapped

    def close(self):
        self.sock.close()

    def _line(self):
        while b"\r\n" not in self.pending:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.pending += chunk
        line, _, rest = bytes(self.pending).partition(b"\r\n")
        self.pending = bytearray(rest)
        return line

    def call(self, payload):
        """Sends one encoded command. Returns the reply: bytes for simple, integer and bulk
        replies (its length for a bulk longer than 1 MB); raises on errors."""
        self.sock.sendall(payload)
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise RuntimeError(rest.decode(errors="replace"))
        if kind != b"$":
            return rest
        n = int(rest)
        if n < 0:
            return None
        if n + 2 > len(self.body):
            raise ConnectionError(f"bulk reply of {n} bytes exceeds the buffer")
        body = self.body[:n + 2]
        have = min(len(self.pending), n + 2)
        body[:have] = self.pending[:have]
        del self.pending[:have]
        while have < n + 2:
            got = self.sock.recv_into(body[have:])
            if got == 0:
                raise ConnectionError("server closed the connection")
            have += got
        if body[n:] != b"\r\n":
            raise ConnectionError("bulk reply not terminated by CRLF")
        return bytes(body[:n]) if n <= MB else n


class Pinger:
    """PING in a loop on its own connection; worst() is the longest round trip since reset()."""

    def __init__(self, port):
        self.conn = Connection(port)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.worst_s = 0.0
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            start = time.monotonic()
            try:
                reply = self.conn.call("PING")
            except (OSError, ConnectionError) as error:
                reply = error
            if reply != b"PONG":
                self.error = f"PING answered {reply!r}"
                return
            took = time.monotonic() - start
            with self.lock:
                self.worst_s = max(self.worst_s, took)
            time.sleep(0.001)

    def reset(self):
        with self.lock:
            self.worst_s = 0.0

    def worst_ms(self):
        if self.error is not None:
            raise SystemExit(self.error)
        with self.lock:
            return self.worst_s * 1000

    def close(self):
        self.stop.set()
        self.thread.join()
        self.conn.close()


def steps(value_mb):
    """(name, encoded command, expected reply) for each step, in order."""
    value = b"v" * (value_mb * MB)
    chunk = b"a" * MB
    plan = [
        ("setrange", ["SETRANGE", "big", str(512 * MB - 1), "x"], b"%d" % (512 * MB)),
        ("strlen", ["STRLEN", "big"], b"%d" % (512 * MB)),
        ("set", ["SET", "v", value], b"OK"),
        ("get", ["GET", "v"], value if len(value) <= MB else len(value)),
        ("append", ["APPEND", "v", chunk], b"%d" % (len(value) + len(chunk))),
        ("del", ["DEL", "big"], b"1"),
    ]
    return [(name, resp_command([a if isinstance(a, bytes) else a.encode() for a in command]),
             expected) for name, command, expected in plan]


def measure(port, plan, max_bulk):
    conn = BulkConnection(port, max_bulk)
    pinger = Pinger(port)
    results = {}
    try:
        time.sleep(0.1)
        for name, command, expected in plan:
            pinger.reset()
            start = time.monotonic()
            reply = conn.call(command)
            took = time.monotonic() - start
            time.sleep(0.05)  # a PING that was stuck behind the command has come back
            if reply != expected:
                raise SystemExit(f"{name}: expected {expected!r}, got {reply!r}")
            results[name] = {"time_ms": took * 1000, "ping_ms": pinger.worst_ms()}
    finally:
        pinger.close()
        conn.close()
    return results


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gigakv", default="build/gigakv-server")
    p.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    p.add_argument("--gigakv-args", default="", help="extra gigakv-server arguments")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--value-mb", type=int, default=100, help="size of the SET/GET value")
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    p.add_argument("--no-pin", action="store_true", help="pin neither server nor client")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    server_cpu = None if args.no_pin else args.server_cpu
    if not args.no_pin:
        os.sched_setaffinity(0, {args.client_cpu})
    binaries = {"gigakv": (args.gigakv, ["--save", ""] + args.gigakv_args.split()),
                "redis": (args.redis, ["--save", "", "--appendonly", "no"])}
    plan = steps(args.value_mb)
    results = {}  # server -> list of per-round dicts
    try:
        for round_index in range(args.rounds):
            order = ["gigakv", "redis"] if round_index % 2 == 0 else ["redis", "gigakv"]
            for name in order:
                binary, extra = binaries[name]
                server = Server(name, binary, extra, server_cpu)
                try:
                    figures = measure(server.port, plan, (args.value_mb + 1) * MB)
                finally:
                    server.stop()
                results.setdefault(name, []).append(figures)
                print(f"round {round_index + 1} {name:<7} " + "  ".join(
                    f"{step} {f['time_ms']:.0f}/{f['ping_ms']:.0f}" for step, f in
                    figures.items()) + "  (ms: command/worst PING)", flush=True)
    finally:
        stop_all()

    print()
    print(f"{'step':<9} {'gigakv ms':>10} {'redis ms':>10} {'ratio (spread)':>20} "
          f"{'gigakv PING':>12} {'redis PING':>11}")
    for step, _, _ in plan:
        ours = [r[step] for r in results["gigakv"]]
        theirs = [r[step] for r in results["redis"]]
        ratios = [o["time_ms"] / t["time_ms"] for o, t in zip(ours, theirs) if t["time_ms"] > 0]
        ratio = (f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
                 if ratios else "n/a")
        print(f"{step:<9} {statistics.median(o['time_ms'] for o in ours):>10.1f} "
              f"{statistics.median(t['time_ms'] for t in theirs):>10.1f} {ratio:>20} "
              f"{max(o['ping_ms'] for o in ours):>12.1f} "
              f"{max(t['ping_ms'] for t in theirs):>11.1f}")
    print("(PING columns: the worst round trip over all rounds, ms)")


if __name__ == "__main__":
    main(sys.argv[1:])
