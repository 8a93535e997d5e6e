#!/usr/bin/env python3
"""Side-by-side memory comparison of gigakv against Debian's redis-server.

For each workload and each implementation a fresh server is started (no persistence, its own
temporary --dir, a free 127.0.0.1 port), its VmRSS is read from /proc/PID/status, the data set is
loaded, and VmRSS is read again. The growth divided by the number of items is the memory cost per
item; the ratio gigakv/redis is what DESIGN.md section 6 states its targets in (strings <= 0.45x,
collections <= 0.8x).

Loading is done over one raw socket with RESP built in memory and sent in large pipelined chunks
(replies are read back and checked after every chunk), so a million items take seconds and the
client never waits one round trip per command. Only the standard library is used, so any python3
runs it.

Run `benchmarks/memory.sh --help` (or this file with --help). See benchmarks/README.md.
"""

import argparse
import atexit
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

# Elements added per collection command (HSET/SADD/ZADD/RPUSH with several members): large enough
# to keep the load fast, small enough that a command never exceeds the small-collection size.
ELEMENTS_PER_COMMAND = 10
SEND_CHUNK_BYTES = 256 * 1024  # small next to the data set, so buffers barely show in RSS
BIG_COLLECTION = 1000  # "1M elements in 1,000 collections": hashtable/skiplist encodings in Redis
SMALL_COLLECTION = 10  # "100,000 collections of 10": listpack-style compact encodings in Redis

# name -> (description, DESIGN.md target ratio)
WORKLOADS = {
    "strings": ("SET k v, 10-byte keys and values", 0.45),
    "strings-ttl": ("SET k v EX 100000, 10-byte keys and values", 0.45),
    "hash": (f"HSET, collections of {BIG_COLLECTION} fields", 0.8),
    "set": (f"SADD, collections of {BIG_COLLECTION} members", 0.8),
    "zset": (f"ZADD, collections of {BIG_COLLECTION} members", 0.8),
    "list": (f"RPUSH, collections of {BIG_COLLECTION} elements", 0.8),
    "hash-small": (f"HSET, collections of {SMALL_COLLECTION} fields", 0.8),
    "set-small": (f"SADD, collections of {SMALL_COLLECTION} members", 0.8),
    "zset-small": (f"ZADD, collections of {SMALL_COLLECTION} members", 0.8),
    "list-small": (f"RPUSH, collections of {SMALL_COLLECTION} elements", 0.8),
    "stream": ("XADD, one stream of entries of 2 fields (10-byte values)", 1.0),
}
DEFAULT_WORKLOADS = "strings,strings-ttl"

_started = []  # Popen objects of servers we started; the only processes we ever signal


# ---- RESP -------------------------------------------------------------------------------------


def resp_command(args):
    """Encodes one command (a list of bytes) as a RESP array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RespError(Exception):
    pass


class Connection:
    """A minimal pipelining RESP2 client over a raw socket."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0

    def close(self):
        self.sock.close()

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("server closed the connection")
        self.buf = self.buf[self.pos:] + data
        self.pos = 0

    def _line(self):
        while True:
            end = self.buf.find(b"\r\n", self.pos)
            if end >= 0:
                line = self.buf[self.pos:end]
                self.pos = end + 2
                return line
            self._fill()

    def read_reply(self):
        """Reads one reply; error replies are returned as RespError instances, not raised."""
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return rest
        if kind == b"-":
            return RespError(rest.decode(errors="replace"))
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._fill()
            value = self.buf[self.pos:self.pos + n]
            self.pos += n + 2
            return value
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read_reply() for _ in range(n)]
        raise ConnectionError(f"unexpected reply line {line[:80]!r}")

    def call(self, *args):
        self.sock.sendall(resp_command([a if isinstance(a, bytes) else str(a).encode()
                                        for a in args]))
        return self.read_reply()

    def pipeline(self, payload, count):
        """Sends pre-encoded commands and reads their `count` replies; returns the first error."""
        self.sock.sendall(payload)
        first_error = None
        for _ in range(count):
            reply = self.read_reply()
            if first_error is None and isinstance(reply, RespError):
                first_error = reply
        return first_error


# ---- workloads --------------------------------------------------------------------------------


def string_commands(n, ttl):
    """Yields SET commands for n keys. Keys and values are exactly 10 bytes for n <= 1,000,000
    ("key:000000", "val:000000"); wider if more keys are asked for."""
    width = max(6, len(str(n - 1)))
    extra = [b"EX", b"100000"] if ttl else []
    for i in range(n):
        digits = b"%0*d" % (width, i)
        yield resp_command([b"SET", b"key:" + digits, b"val:" + digits] + extra)


def stream_commands(n):
    """Yields XADDs of n entries to one stream: IDs one millisecond apart (as a steady producer
    makes them), fields "name" and "value" in every entry (so both servers store them once per
    node), 10-byte values."""
    width = max(8, len(str(n - 1)))
    for i in range(n):
        digits = b"%0*d" % (width, i)
        yield resp_command([b"XADD", b"stream", b"%d-0" % (1700000000000 + i),
                            b"name", b"n:" + digits, b"value", b"v:" + digits])


def collection_commands(kind, n, size):
    """Yields commands adding n elements to n/size collections of `size` elements each.
    Members/fields/values are 10 bytes and globally unique (non-numeric, so Redis cannot use an
    intset for sets: both servers store the same strings)."""
    collections = n // size
    key_width = max(6, len(str(collections - 1)))
    width = max(8, len(str(n - 1)))
    element = 0
    for c in range(collections):
        key = b"%s:%0*d" % (kind.encode(), key_width, c)
        left = size
        while left > 0:
            batch = min(left, ELEMENTS_PER_COMMAND)
            args = []
            for _ in range(batch):
                digits = b"%0*d" % (width, element)
                if kind == "hash":
                    args += [b"f:" + digits, b"v:" + digits]
                elif kind == "zset":
                    args += [b"%d" % element, b"m:" + digits]
                else:
                    args.append(b"m:" + digits)
                element += 1
            cmd = {"hash": b"HSET", "set": b"SADD", "zset": b"ZADD", "list": b"RPUSH"}[kind]
            yield resp_command([cmd, key] + args)
            left -= batch


def workload_plan(name, n):
    """Returns (command generator, number of items, number of keys) for a workload."""
    if name in ("strings", "strings-ttl"):
        return string_commands(n, name == "strings-ttl"), n, n
    if name == "stream":
        return stream_commands(n), n, 1
    kind, _, small = name.partition("-")
    size = SMALL_COLLECTION if small else BIG_COLLECTION
    if n < size:
        raise SystemExit(f"--keys {n} is smaller than one {name} collection ({size})")
    items = (n // size) * size
    return collection_commands(kind, n, size), items, n // size


# ---- server processes -------------------------------------------------------------------------


def free_port():
    """A port nobody listens on: binding port 0 lets the kernel choose one. The short race until
    the server binds it is acceptable for a benchmark."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` (all its threads) so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def vm_rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def stop_server(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc in _started:
        _started.remove(proc)


def stop_all():
    for proc in list(_started):
        stop_server(proc)


class Server:
    """One fresh server process in its own temporary directory."""

    def __init__(self, label, binary, extra_args, server_cpu, prepare_dir=None):
        """`prepare_dir(dir)`, when given, runs in the fresh directory before the server starts
        (to place a dump.rdb there)."""
        self.label = label
        self.dir = tempfile.mkdtemp(prefix=f"gigakv-memory-{label}.")
        if prepare_dir is not None:
            prepare_dir(self.dir)
        self.port = free_port()
        cmd = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
               self.dir] + extra_args
        if server_cpu is not None:
            cmd = ["taskset", "-c", str(server_cpu)] + cmd  # taskset execs: same PID
        self.log_path = os.path.join(self.dir, "server.log")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)
        _started.append(self.proc)
        self._wait_ready(cmd)

    def _wait_ready(self, cmd):
        deadline = time.monotonic() + 120  # (a server loading a snapshot answers -LOADING)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.fail(f"exited during startup (status {self.proc.returncode}): "
                          f"{shlex.join(cmd)}")
            try:
                conn = Connection(self.port)
                try:
                    if conn.call("PING") == b"PONG":
                        return
                finally:
                    conn.close()
            except OSError:
                pass
            time.sleep(0.1)
        self.fail(f"did not answer PING on port {self.port} within 120s")

    def log_tail(self, lines=100):
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def fail(self, message):
        sys.stderr.write(f"memory.py: {self.label} {message}; its log:\n{self.log_tail()}\n")
        self.stop()
        sys.exit(1)

    def disable_persistence(self, conn):
        """AOF off and no RDB save points, so only the in-memory representation is measured.
        Done with CONFIG at runtime rather than start-up flags so that a gigakv build lacking one
        of these directives (so with nothing to turn off) still starts: CONFIG GET of an unknown
        directive answers an empty array."""
        def get(name):
            reply = conn.call("CONFIG", "GET", name)
            return reply[1] if isinstance(reply, list) and len(reply) == 2 else None

        for name, off in (("appendonly", b"no"), ("save", b"")):
            value = get(name)
            if value is not None and value != off:
                conn.call("CONFIG", "SET", name, off)
                if get(name) != off:
                    print(f"WARNING: could not set {name} to {off!r} on {self.label}",
                          file=sys.stderr)

    def check_alive(self):
        if self.proc.poll() is not None:
            self.fail(f"died (status {self.proc.returncode})")

    def rss(self):
        return vm_rss_bytes(self.proc.pid)

    def settled_rss(self, min_wait, stable_for=2.0, max_extra=15.0):
        """VmRSS once it has stopped moving: wait min_wait seconds, then until it has been
        unchanged for stable_for seconds (at most max_extra more). Why: allocators hand memory
        freed after the load burst (query buffers, rehash tables) back to the OS only after a
        delay; jemalloc, Redis's allocator, does so over ~10 s (dirty_decay_ms=10000). Reading
        RSS right after loading 1M strings into Redis gives ~99 B/key, after 10 s ~91 B/key."""
        time.sleep(min_wait)
        deadline = time.monotonic() + max_extra
        last, since = self.rss(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.5)
            now = self.rss()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= stable_for:
                break
        return last

    def stop(self):
        stop_server(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


def measure(label, binary, extra_args, workload, n, server_cpu, settle):
    """Loads one workload into a fresh server. Returns a dict with bytes/item etc., or with an
    'error' entry if the server rejected the workload's command."""
    server = Server(label, binary, extra_args, server_cpu)
    try:
        conn = Connection(server.port)
        server.disable_persistence(conn)
        # Measure the baseline with the loading connection already open, so the connection's own
        # buffers are on both sides of the difference.
        conn.call("PING")
        before = server.settled_rss(min_wait=0.5)

        commands, items, keys = workload_plan(workload, n)
        started = time.monotonic()
        # Send the first command alone: an unsupported command is reported without 1M errors.
        first = next(commands)
        error = conn.pipeline(first, 1)
        chunk, count, size = [], 0, 0
        while error is None:
            cmd = next(commands, None)
            if cmd is not None:
                chunk.append(cmd)
                count += 1
                size += len(cmd)
            if size >= SEND_CHUNK_BYTES or (cmd is None and count):
                error = conn.pipeline(b"".join(chunk), count)
                chunk, count, size = [], 0, 0
            if cmd is None:
                break
        load_seconds = time.monotonic() - started
        server.check_alive()
        if error is not None:
            return {"error": str(error)}

        after = server.settled_rss(min_wait=settle)
        dbsize = conn.call("DBSIZE")
        conn.close()
        result = {"items": items, "before": before, "after": after,
                  "per_item": (after - before) / items, "load_seconds": load_seconds}
        if isinstance(dbsize, bytes) and int(dbsize) != keys:
            result["warning"] = f"DBSIZE is {int(dbsize)}, expected {keys}"
        return result
    finally:
        server.stop()


# ---- main -------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="memory.sh",
        description="RSS per item: gigakv (A) vs redis-server (B), a fresh server per workload.")
    p.add_argument("--server", default="build/gigakv-server",
                   help="gigakv server binary (default: %(default)s)")
    p.add_argument("--redis", default=shutil.which("redis-server"),
                   help="reference server binary (default: redis-server on PATH)")
    p.add_argument("--workloads", default=DEFAULT_WORKLOADS,
                   help="comma-separated list, or 'all' (default: %(default)s; available: "
                        + ", ".join(WORKLOADS) + ")")
    p.add_argument("--keys", type=int, default=1_000_000,
                   help="items per workload: keys for strings, elements for collections "
                        "(default: %(default)s)")
    p.add_argument("--server-args", default="",
                   help="extra gigakv arguments, shell-quoted (e.g. \"--io-threads 1\")")
    p.add_argument("--redis-args", default="", help="extra redis-server arguments")
    p.add_argument("--server-cpu", type=int, default=None,
                   help="pin servers to this core with taskset (default: no pinning)")
    p.add_argument("--settle", type=float, default=11.0,
                   help="seconds to wait after loading before reading RSS (then until it is "
                        "stable); covers jemalloc's 10 s dirty-page decay (default: %(default)s)")
    args = p.parse_args(argv)

    names = list(WORKLOADS) if args.workloads == "all" else args.workloads.split(",")
    for name in names:
        if name not in WORKLOADS:
            p.error(f"unknown workload {name!r}; available: {', '.join(WORKLOADS)}")
    args.workload_list = names
    if args.keys <= 0:
        p.error("--keys must be positive")

    # A relative --server may be given from the repo root (like the Makefile does) or from cwd.
    if not os.path.isabs(args.server) and not os.access(args.server, os.X_OK):
        repo_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        candidate = os.path.join(repo_root, args.server)
        if os.access(candidate, os.X_OK):
            args.server = candidate
    for opt, path in (("--server", args.server), ("--redis", args.redis)):
        if not path or not os.access(path, os.X_OK):
            p.error(f"{opt}: server binary {path!r} not found or not executable")
    if args.server_cpu is not None and not shutil.which("taskset"):
        p.error("--server-cpu needs taskset (util-linux)")
    return args


def fmt_bytes_per_item(result):
    return f"{result['per_item']:.1f}" if "per_item" in result else "-"


def main(argv):
    args = parse_args(argv)
    atexit.register(stop_all)
    # Turn SIGTERM/SIGHUP into a normal exit so atexit stops the servers we started.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))

    # Redis is known to take the persistence-off flags at start-up; for gigakv
    # Server.disable_persistence does the same at runtime.
    sides = [("gigakv", args.server, shlex.split(args.server_args)),
             ("redis", args.redis, ["--save", "", "--appendonly", "no"]
              + shlex.split(args.redis_args))]
    print(f"A gigakv: {args.server}", file=sys.stderr)
    print(f"B redis:  {args.redis}", file=sys.stderr)

    rows = []
    for workload in args.workload_list:
        results = {}
        for label, binary, extra in sides:
            print(f"  {workload:<12} {label:<7} loading {args.keys} items ...", end="",
                  file=sys.stderr, flush=True)
            r = measure(label, binary, extra, workload, args.keys, args.server_cpu, args.settle)
            results[label] = r
            if "error" in r:
                print(f" unsupported: {r['error'][:100]}", file=sys.stderr)
            else:
                print(f" {r['per_item']:.1f} B/item (RSS {r['before'] / 2**20:.1f} -> "
                      f"{r['after'] / 2**20:.1f} MiB, load {r['load_seconds']:.1f}s)"
                      + (f"  WARNING: {r['warning']}" if "warning" in r else ""),
                      file=sys.stderr)
        rows.append((workload, results))

    header = (f"{'workload':<12} {'items':>9} {'gigakv B/item':>14} {'redis B/item':>13} "
              f"{'ratio':>6} {'target':>7}  verdict")
    print()
    print(header)
    print("-" * len(header))
    for workload, results in rows:
        g, r = results["gigakv"], results["redis"]
        target = WORKLOADS[workload][1]
        items = g.get("items", r.get("items", 0))
        if "error" in g or "error" in r:
            ratio, verdict = "-", "unsupported by " + ",".join(
                side for side in ("gigakv", "redis") if "error" in results[side])
        elif r["per_item"] <= 0:
            ratio, verdict = "-", "no RSS growth measured on redis (too few --keys?)"
        else:
            value = g["per_item"] / r["per_item"]
            ratio = f"{value:.2f}"
            verdict = "ok" if value <= target else "MISS"
        print(f"{workload:<12} {items:>9} {fmt_bytes_per_item(g):>14} {fmt_bytes_per_item(r):>13} "
              f"{ratio:>6} {'<=' + str(target):>7}  {verdict}")
    print()
    print("B/item = (VmRSS after load - VmRSS before load) / items, each on a fresh server; "
          "ratio = gigakv/redis (lower is better).")
    if args.keys < 1_000_000:
        print(f"Note: only {args.keys} items per workload; fixed per-process overheads weigh more "
              "than at the 1M items DESIGN.md's targets refer to.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
