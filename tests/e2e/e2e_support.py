"""Helpers for gigakv's end-to-end tests: server processes and a raw RESP connection.

`ServerProcess` starts a server binary (gigakv-server or Debian's redis-server) bound to
127.0.0.1 on a free port inside a scratch directory, waits (bounded) until it answers PING, and
stops it by PID: SIGTERM first, SIGKILL after a bounded wait.  It never touches processes it did
not start.

`RespConnection` is a small blocking RESP2/RESP3 client over a plain socket.  Tests use it where
the exact bytes on the wire matter (protocol errors, inline commands, RESP3 types, error texts)
and where redis-py would hide them.  Every socket operation has a timeout and every loop here has
a deadline.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Sequence

import redis

LOCALHOST = "127.0.0.1"
SOCKET_TIMEOUT = 10.0
READY_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0

# redis-py 5.0 added RESP3 (`protocol=3`); Debian 12 ships 4.3.4, so RESP3 tests use raw sockets.
REDIS_PY_VERSION = tuple(int(part) for part in redis.__version__.split(".")[:2])
REDIS_PY_HAS_RESP3 = REDIS_PY_VERSION >= (5, 0)


# --------------------------------------------------------------------------------------------
# RESP values
# --------------------------------------------------------------------------------------------


class SimpleString(str):
    """A RESP `+` reply."""


class ErrorReply(str):
    """A RESP `-` (or RESP3 `!` blob error) reply; the text without the leading '-'."""


class Verbatim(bytes):
    """A RESP3 `=` verbatim string; `fmt` holds the three-letter format (e.g. 'txt')."""

    fmt: str = ""


class RespMap(dict):
    """A RESP3 `%` map reply."""


class RespSet(list):
    """A RESP3 `~` set reply (kept as a list: order and duplicates are visible)."""


class Push(list):
    """A RESP3 `>` push message."""


class ConnectionClosed(Exception):
    """The peer closed the connection while a reply was expected."""


class _Incomplete(Exception):
    """The buffer does not hold a full reply yet."""


def encode_command(*args: bytes | str | int) -> bytes:
    """Encodes one command as a RESP multibulk request."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, int):
            arg = str(arg)
        if isinstance(arg, str):
            arg = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


def _parse(buf: bytearray, pos: int):
    """Parses one RESP value from buf[pos:]; returns (value, new_pos) or raises _Incomplete."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise _Incomplete
    kind = buf[pos : pos + 1]
    line = bytes(buf[pos + 1 : end])
    pos = end + 2
    if kind == b"+":
        return SimpleString(line.decode("utf-8", "replace")), pos
    if kind == b"-":
        return ErrorReply(line.decode("utf-8", "replace")), pos
    if kind == b":":
        return int(line), pos
    if kind == b"(":
        return int(line), pos
    if kind == b",":
        return float(line.decode()), pos
    if kind == b"#":
        return line == b"t", pos
    if kind == b"_":
        return None, pos
    if kind in (b"$", b"=", b"!"):
        length = int(line)
        if length < 0:
            return None, pos
        if len(buf) < pos + length + 2:
            raise _Incomplete
        data = bytes(buf[pos : pos + length])
        if buf[pos + length : pos + length + 2] != b"\r\n":
            raise AssertionError(f"bulk of length {length} not terminated by CRLF")
        pos += length + 2
        if kind == b"!":
            return ErrorReply(data.decode("utf-8", "replace")), pos
        if kind == b"=":
            verbatim = Verbatim(data[4:])
            verbatim.fmt = data[:3].decode()
            return verbatim, pos
        return data, pos
    if kind in (b"*", b"~", b">", b"%", b"|"):
        count = int(line)
        if count < 0:
            return None, pos
        items = []
        for _ in range(count * 2 if kind in (b"%", b"|") else count):
            item, pos = _parse(buf, pos)
            items.append(item)
        if kind == b"%":
            return RespMap(zip(items[0::2], items[1::2])), pos
        if kind == b"|":  # an attribute precedes the real reply: skip it
            return _parse(buf, pos)
        if kind == b"~":
            return RespSet(items), pos
        if kind == b">":
            return Push(items), pos
        return items, pos
    raise AssertionError(f"unknown RESP type byte {kind!r} in {bytes(buf[pos - 20 : pos + 20])!r}")


class RespConnection:
    """A blocking raw-socket RESP client with timeouts on every operation."""

    def __init__(self, port: int, timeout: float = SOCKET_TIMEOUT):
        self.sock = socket.create_connection((LOCALHOST, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self._buf = bytearray()
        self._pos = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "RespConnection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_command(self, *args) -> None:
        self.sock.sendall(encode_command(*args))

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionClosed("connection closed by the server")
        if self._pos and self._pos == len(self._buf):
            self._buf = bytearray(chunk)
            self._pos = 0
        else:
            self._buf += chunk

    def read_reply_raw(self) -> tuple[object, bytes]:
        """Reads one reply; returns (parsed value, its exact bytes)."""
        while True:
            try:
                value, end = _parse(self._buf, self._pos)
            except _Incomplete:
                self._fill()
                continue
            raw = bytes(self._buf[self._pos : end])
            self._pos = end
            if self._pos > (1 << 20):
                del self._buf[: self._pos]
                self._pos = 0
            return value, raw

    def read_reply(self):
        return self.read_reply_raw()[0]

    def call(self, *args):
        """Sends one command and returns its parsed reply (errors are returned, not raised)."""
        self.send_command(*args)
        return self.read_reply()

    def call_raw(self, *args) -> bytes:
        """Sends one command and returns the exact bytes of its reply."""
        self.send_command(*args)
        return self.read_reply_raw()[1]

    def read_exactly(self, size: int) -> bytes:
        """Reads exactly `size` raw bytes (not parsed)."""
        while len(self._buf) - self._pos < size:
            self._fill()
        data = bytes(self._buf[self._pos : self._pos + size])
        self._pos += size
        return data

    def read_until_closed(self, timeout: float = 5.0) -> bytes:
        """Returns everything the server sends until it closes the connection.

        Raises AssertionError if the connection is still open after `timeout` seconds.
        """
        data = bytes(self._buf[self._pos :])
        self._buf, self._pos = bytearray(), 0
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"server did not close the connection within {timeout}s; got {data[:200]!r}"
                )
            self.sock.settimeout(min(remaining, 0.5))
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except (ConnectionResetError, BrokenPipeError):
                break
            finally:
                self.sock.settimeout(self.timeout)
            if not chunk:
                break
            data += chunk
        return data

    def send_ignoring_reset(self, data: bytes) -> int:
        """Sends data in chunks; stops quietly if the server closes. Returns bytes sent."""
        sent = 0
        view = memoryview(data)
        try:
            while sent < len(data):
                sent += self.sock.send(view[sent : sent + (1 << 16)])
        except (ConnectionResetError, BrokenPipeError):
            pass
        return sent


# --------------------------------------------------------------------------------------------
# Server processes
# --------------------------------------------------------------------------------------------


@contextmanager
def config_set(conn: "RespConnection", name: str, value: str):
    """CONFIG SET name value on `conn` for the body of a with statement, then the old value."""
    old = conn.call("CONFIG", "GET", name)[1]
    assert conn.call("CONFIG", "SET", name, value) == "OK"
    try:
        yield
    finally:
        conn.call("CONFIG", "SET", name, old)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOCALHOST, 0))
        return sock.getsockname()[1]


class ServerStartError(RuntimeError):
    pass


class ServerProcess:
    """One server process started by the tests, with its port, directory and log file."""

    def __init__(self, argv: Sequence[str], port: int, workdir: Path, log_path: Path):
        self.argv = list(argv)
        self.port = port
        self.workdir = workdir
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self.expect_exit = False  # set by stop() and by tests that make the server exit
        self._log_file = None
        self._clients: list = []

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, ready_timeout: float = READY_TIMEOUT) -> None:
        self._log_file = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            self.argv,
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerStartError(
                    f"{self.argv[0]} exited with {self.proc.returncode} during start-up:\n"
                    + self.log_tail()
                )
            if self._answers_ping():
                return
            time.sleep(0.02)
        self.stop()
        raise ServerStartError(
            f"{self.argv[0]} did not answer PING within {ready_timeout}s:\n" + self.log_tail()
        )

    def _answers_ping(self) -> bool:
        try:
            with socket.create_connection((LOCALHOST, self.port), timeout=1.0) as sock:
                sock.sendall(b"PING\r\n")
                reply = sock.recv(64)
        except OSError:
            return False
        # -NOAUTH also proves the server is serving (requirepass set).
        return reply.startswith(b"+PONG") or reply.startswith(b"-NOAUTH")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_exit(self, timeout: float) -> int:
        """Waits (bounded) for the process to exit by itself; returns its exit code."""
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stop(self, timeout: float = STOP_TIMEOUT) -> int | None:
        """SIGTERM, then SIGKILL after `timeout` seconds. Returns the exit code."""
        self.expect_exit = True
        for client in self._clients:
            try:
                client.close()
            except Exception:  # closing a client of a dead server may fail; irrelevant here
                pass
        self._clients.clear()
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        return self.proc.returncode

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    # Clients ---------------------------------------------------------------------------------

    def client(self, protocol: int = 2, **kwargs) -> redis.Redis:
        """A redis-py client for this server; closed when the server is stopped."""
        kwargs.setdefault("socket_timeout", SOCKET_TIMEOUT)
        kwargs.setdefault("socket_connect_timeout", SOCKET_TIMEOUT)
        if protocol == 3:
            if not REDIS_PY_HAS_RESP3:
                raise RuntimeError(
                    f"redis-py {redis.__version__} has no RESP3 support; use raw() + HELLO 3"
                )
            kwargs["protocol"] = 3
        client = redis.Redis(host=LOCALHOST, port=self.port, **kwargs)
        self._clients.append(client)
        return client

    def raw(self, timeout: float = SOCKET_TIMEOUT) -> RespConnection:
        """A raw RESP connection; closed when the server is stopped."""
        conn = RespConnection(self.port, timeout=timeout)
        self._clients.append(conn)
        return conn


def build_argv(
    binary: str | os.PathLike,
    port: int | None,
    workdir: Path,
    extra_args: Iterable[str] = (),
    config_file: Path | None = None,
    base_args: Iterable[str] = (),
) -> list[str]:
    """redis-server style command line: [config-file] --directive value ..."""
    argv = [str(binary)]
    if config_file is not None:
        argv.append(str(config_file))
    if port is not None:
        argv += ["--port", str(port), "--bind", LOCALHOST, "--dir", str(workdir)]
    argv += list(base_args)
    argv += [str(arg) for arg in extra_args]
    return argv


def wait_until(predicate, timeout: float, interval: float = 0.02, message: str = "condition"):
    """Polls predicate() until it returns a truthy value or `timeout` passes; returns it."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        time.sleep(interval)


def parse_info(text: str | bytes) -> dict[str, dict[str, str]]:
    """Parses an INFO reply into {section name: {field: value}} (section names as written)."""
    if isinstance(text, bytes):
        text = text.decode()
    sections: dict[str, dict[str, str]] = {}
    current = None
    for line in text.split("\r\n"):
        if not line:
            continue
        if line.startswith("# "):
            current = sections.setdefault(line[2:], {})
            continue
        assert current is not None, f"INFO field before any section header: {line!r}"
        field, sep, value = line.partition(":")
        assert sep, f"INFO line without ':': {line!r}"
        current[field] = value
    return sections


def info_int(conn, section: str, field: str) -> int:
    """One integer field of INFO `section` ("Clients", "Stats"...), read on `conn`."""
    return int(parse_info(conn.call("INFO", section.lower()))[section][field])


def wait_blocked(admin, count: int, timeout: float = 5.0) -> None:
    """Polls INFO on `admin` until exactly `count` clients are blocked."""
    wait_until(lambda: info_int(admin, "Clients", "blocked_clients") == count, timeout,
               interval=0.01, message=f"blocked_clients to reach {count}")


def parse_client_list(text: str | bytes) -> list[dict[str, str]]:
    """Parses CLIENT LIST output into one dict per client line."""
    if isinstance(text, bytes):
        text = text.decode()
    clients = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = {}
        for item in line.split(" "):
            key, _, value = item.partition("=")
            fields[key] = value
        clients.append(fields)
    return clients


# --- Datasets ---------------------------------------------------------------------------------

def fill_every_type(client, scale: int = 1):
    """Every type in both encodings, TTLs, binary and big values, keys in all 16 databases."""
    far = int(time.time() * 1000) + 3_600_000
    for db in range(16):
        client.execute_command("SELECT", db)
        pipe = client.pipeline(transaction=False)
        for i in range(50 * scale):
            pipe.set(f"s{db}:{i}", f"v{i}" * (i % 7 + 1))
        pipe.set(f"int{db}", 12345 + db)
        pipe.set(f"ttl{db}", "x")
        pipe.execute_command("PEXPIREAT", f"ttl{db}", far + db)
        pipe.execute()
    client.execute_command("SELECT", 0)
    client.set("bin", b"\x00\xff\r\n" * 100)
    client.set("big", "b" * 300_000)
    client.set("compressible", "abc" * 1000)
    client.rpush("list", *[str(i) for i in range(10)], "a", "bb")
    client.rpush("biglist", *[("e%d" % i) * 20 for i in range(3000)])
    client.sadd("intset", 1, 2, 3, 70000, -5)
    client.sadd("set", *[("m%d" % i) for i in range(300)])
    client.zadd("zset", {"a": 1, "b": 2.5, "c": -1e20})
    client.zadd("bigzset", {("z%d" % i): i * 0.5 for i in range(300)})
    client.hset("hash", mapping={"f1": "v1", "f2": "2"})
    client.hset("bighash", mapping={("f%d" % i): ("v%d" % i) for i in range(600)})
    client.hset("hashttl", "f", "v")
    client.execute_command("PEXPIREAT", "hashttl", far + 777)


def exercise_every_effect(client) -> None:
    """Writes of every kind whose effects an append-only log must carry faithfully (on top of
    fill_every_type); leaves (0, b"gone-later") expiring 2 s later."""
    fill_every_type(client)
    pipe = client.pipeline(transaction=True)
    pipe.incr("tx:a")
    pipe.incr("tx:b")
    pipe.rpush("tx:list", "1", "2")
    pipe.execute()
    client.sadd("spop", *[str(i) for i in range(50)])
    client.spop("spop", 7)
    client.srandmember("spop", 3)  # No effect.
    client.rpush("q", "job1", "job2")
    client.blpop(["q"], timeout=1)
    client.execute_command("SELECT", 9)
    client.set("flushed", "x")
    client.execute_command("FLUSHDB")
    client.execute_command("SELECT", 0)
    client.execute_command("SWAPDB", 2, 3)
    client.set("mv", "moved")
    client.execute_command("MOVE", "mv", 6)
    client.execute_command("COPY", "hash", "hashcopy", "DB", 4)
    client.rename("list", "renamed")
    client.set("short", "x", px=50)
    client.set("gone-later", "x", px=2000)
    client.append("gone-later", "y")
    client.incrbyfloat("float", "1.5")
    client.zincrby("zset", 2, "a")
    client.hincrby("hash", "n", 5)
    client.setrange("range", 5, "abc")
    client.execute_command("PEXPIRE", "hash2-missing", 100)
    time.sleep(0.1)
    assert client.get("short") is None  # Expired: a DEL in the log.


def key_contents(client, key) -> tuple:
    """(type, value in a canonical form) of one key of the selected database."""
    kind = client.type(key).decode()
    if kind == "string":
        return kind, client.get(key)
    if kind == "list":
        return kind, tuple(client.lrange(key, 0, -1))
    if kind == "set":
        return kind, tuple(sorted(client.smembers(key)))
    if kind == "zset":
        return kind, tuple(client.zrange(key, 0, -1, withscores=True))
    if kind == "hash":
        return kind, tuple(sorted(client.hgetall(key).items()))
    return kind, None


def dump_dataset(client) -> dict:
    """The whole dataset: (db, key) -> (type, value in a canonical form, PEXPIRETIME)."""
    out = {}
    for db in range(16):
        client.execute_command("SELECT", db)
        for key in client.scan_iter(count=1000):
            out[(db, key)] = key_contents(client, key) + (
                client.execute_command("PEXPIRETIME", key),)
    client.execute_command("SELECT", 0)
    return out
