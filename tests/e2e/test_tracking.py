"""Client-side caching (CLIENT TRACKING) end to end: the same scripts run on gigakv and on
Debian's redis-server 7.0 side by side, and every byte each connection receives (replies and
invalidation pushes, interleaved as they come) is compared, in order.

Each script names its connections and their protocol (e.g. T, a RESP3 tracking client; W, a RESP2
writer; R, a RESP2 redirect target that subscribes to __redis__:invalidate; B, a RESP3 client in
BCAST mode); every server gets the same set, opened in the same order. A step sends one command on
one connection and reads its reply (a RESP3 connection's pushes that come before the reply are
kept too). Then every connection that is not inside MULTI gets a `PING <token>` and is read up to
that PING's reply: a step's frames on a connection are exactly what came before its marker. Redis
has written a command's default-mode invalidations to the other clients before it replies, and
its BCAST invalidations before it reads the next command, so the split is deterministic without
waiting for quiet, and a server that sends nothing fails fast instead of timing out. Every wait is
bounded (STEP_TIMEOUT_S for a reply or a marker, SETTLE_TIMEOUT_S for a disconnection or active
expiry to take effect). The marker is a command, so it would use up the flag CLIENT CACHING sets:
CLIENT CACHING steps (and steps marked quiet) get no marker on their own connection.

Compared per step and connection: the raw frames, in order. Exceptions: client ids (REDIRECT
targets, GETREDIR, TRACKINGINFO's redirect, the tracking-redir-broken push) are shown as the
connection's name; INFO replies are reduced to their tracking_* fields (with their section);
CLIENT LIST to each connection's flags, redir and resp; active expiry walks a hash table (compared
as the set of invalidated keys per connection); eviction from a full tracking table picks random
keys (compared by structure). After the last step nothing more may come (QUIET_S).

With GIGAKV_E2E_TARGET=redis the "server under test" is redis-server too: the tests then compare
redis-server with itself, which proves the scripts deterministic where they claim to be.
"""

from __future__ import annotations

import re
import socket
import time
from dataclasses import dataclass, field
from typing import Callable

import pytest

from e2e_support import ConnectionClosed, _parse as _parse_resp, parse_client_list, parse_info

STEP_TIMEOUT_S = 3.0  # for a reply or a marker
SETTLE_TIMEOUT_S = 3.0  # for a closed connection to leave / active expiry to reach a DBSIZE
QUIET_S = 0.05  # after the last step, per connection
EXPIRE_MS = 800  # keys that must outlive a few steps, then expire
EXPIRED_SLEEP_S = EXPIRE_MS / 1000 + 0.05
MAX_PROBLEMS_SHOWN = 25
INVALIDATE = "__redis__:invalidate"
BINARY_KEY = b"bin\r\n\x00\xff key"
BROKEN_PUSH = re.compile(rb">2\r\n\$21\r\ntracking-redir-broken\r\n:(\d+)\r\n")
INTEGER = re.compile(rb"(?<=\n):(\d+)\r\n|^:(\d+)\r\n")


# --------------------------------------------------------------------------------------------
# Script steps
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Id:
    """An argument: the client id of this side's connection `name`."""

    name: str


@dataclass
class Step:
    """One step: a command on one connection of each side (or a special action), then markers.

    The reply is the first frame on RESP2, the first non-push frame on RESP3 (so a RESP3
    SUBSCRIBE, whose confirmation is a push, does not fit a step).
    ids: client ids in this step's frames (integer replies) are shown as connection names.
    view: view(side, raw) -> bytes: the part of the step connection's reply that is compared.
    keys_only: compare, per connection, the multiset of invalidated keys (active expiry).
    check: check(reference frames, candidate frames) -> problem text or None, instead of
      equality; frames are {connection: [raw frame, ...]}.
    quiet: no marker on the step's own connection: a PING there would be a command, and the
      flag CLIENT CACHING sets lasts until the next command that is not CLIENT (Redis resets it
      then). CLIENT CACHING steps are always quiet; so must be a CLIENT step between CLIENT
      CACHING and the read it is for.
    sleep / close / active_expire: special steps (no command); active_expire is the DBSIZE to
      wait for (DBSIZE expires nothing itself).
    """

    conn: str = ""
    args: tuple = ()
    ids: bool = False
    quiet: bool = False
    view: Callable | None = None
    keys_only: bool = False
    check: Callable | None = None
    sleep: float = 0.0
    close: str | None = None
    active_expire: int | None = None
    label: str = ""

    def describe(self) -> str:
        if self.label:
            return self.label
        parts = []
        for arg in self.args:
            if isinstance(arg, Id):
                parts.append(f"<id {arg.name}>")
            elif isinstance(arg, bytes):
                parts.append(repr(arg))
            else:
                parts.append(str(arg))
        return f"[{self.conn}] " + " ".join(parts)


def _step(item) -> Step:
    if isinstance(item, Step):
        return item
    conn, *args = item
    return Step(conn=conn, args=tuple(args))


def with_ids(conn: str, *args, quiet: bool = False) -> Step:
    """A command whose reply holds client ids (GETREDIR, TRACKINGINFO)."""
    return Step(conn=conn, args=args, ids=True, quiet=quiet)


def _is_client_caching(args) -> bool:
    return (len(args) >= 2 and str(args[0]).upper() == "CLIENT"
            and str(args[1]).upper() == "CACHING")


def sleep(seconds: float) -> Step:
    return Step(sleep=seconds, label=f"<sleep {seconds}s>")


def close(conn: str) -> Step:
    return Step(close=conn, label=f"<close {conn}, wait until the server dropped it>")


def active_expire(remaining: int) -> Step:
    return Step(active_expire=remaining, keys_only=True,
                label=f"<DEBUG SET-ACTIVE-EXPIRE 1, wait for DBSIZE {remaining} in db 0, then 0>")


# Views of replies that hold run-dependent data -----------------------------------------------


def _reply_value(raw: bytes):
    return _parse_resp(bytearray(raw), 0)[0]


def info_view(side, raw: bytes) -> bytes:
    """An INFO reply reduced to its tracking_* fields, as 'Section/field:value' lines."""
    value = _reply_value(raw)
    if not isinstance(value, bytes):
        return b"<not a bulk reply> " + raw
    lines = []
    for section, fields in parse_info(value).items():
        for name, text in fields.items():
            if name.startswith("tracking"):
                lines.append(f"{section}/{name}:{text}")
    return "\n".join(lines).encode()


def client_list_view(*names: str):
    """CLIENT LIST (or CLIENT INFO) reduced to flags, redir and resp of the named connections."""

    def view(side, raw: bytes) -> bytes:
        value = _reply_value(raw)
        if not isinstance(value, bytes):
            return b"<not a text reply> " + raw
        rows = {}
        for entry in parse_client_list(value):
            name = side.names.get(int(entry.get("id", "0") or 0))
            if name in names:
                redir = entry.get("redir", "?")
                if redir.lstrip("-").isdigit() and int(redir) > 0:
                    redir = side.names.get(int(redir), "<unknown id>")
                rows[name] = (f"{name}: flags={entry.get('flags')} redir={redir} "
                              f"resp={entry.get('resp')}")
        return "\n".join(rows.get(name, f"{name}: <missing>") for name in names).encode()

    return view


# --------------------------------------------------------------------------------------------
# One server's connections
# --------------------------------------------------------------------------------------------


class StepTimeout(Exception):
    """A reply or marker did not come within STEP_TIMEOUT_S (or the connection closed)."""


def _read(conn, deadline: float):
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise StepTimeout("timed out")
    conn.sock.settimeout(remaining)
    try:
        return conn.read_reply_raw()
    except socket.timeout:
        raise StepTimeout("timed out") from None
    except (ConnectionClosed, OSError) as error:
        raise StepTimeout(f"connection lost: {error}") from None
    finally:
        conn.sock.settimeout(conn.timeout)


def _is_marker(value, token: bytes) -> bool:
    return value == token or (isinstance(value, list) and value == [b"pong", token])


class Side:
    """One server's connections for a script, opened in a fixed order."""

    def __init__(self, server, name: str, conns: dict[str, int]):
        self.server, self.name = server, name
        self.admin = server.raw()
        assert self.admin.call_raw("FLUSHALL") == b"+OK\r\n"
        assert self.admin.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
        self.order = list(conns)
        self.conns, self.ids, self.names = {}, {}, {}
        for cname, protocol in conns.items():
            conn = server.raw()
            if protocol == 3:
                hello = conn.call("HELLO", "3")
                assert isinstance(hello, dict), f"{name}: HELLO 3 on {cname}: {hello!r}"
            client_id = conn.call("CLIENT", "ID")
            assert isinstance(client_id, int), f"{name}: CLIENT ID: {client_id!r}"
            self.conns[cname], self.ids[cname], self.names[client_id] = conn, client_id, cname
        self.in_multi: set[str] = set()
        self.closed: set[str] = set()
        self.markers = 0

    def close_all(self) -> None:
        for conn in list(self.conns.values()) + [self.admin]:
            conn.close()

    def _arg(self, arg):
        return str(self.ids[arg.name]) if isinstance(arg, Id) else arg

    # Steps -------------------------------------------------------------------------------------

    def run(self, step: Step) -> dict[str, list[bytes]]:
        """Runs one step; returns each open connection's frames (raises StepTimeout)."""
        frames = {name: [] for name in self.order if name not in self.closed}
        deadline = time.monotonic() + STEP_TIMEOUT_S
        if step.close is not None:
            self._close(step.close)
            frames.pop(step.close, None)
        elif step.active_expire is not None:
            self._active_expire(step.active_expire)
        elif step.args:
            if step.conn in self.closed:
                raise StepTimeout(f"{step.conn} is closed")
            conn = self.conns[step.conn]
            conn.send_command(*[self._arg(arg) for arg in step.args])
            got = frames[step.conn]
            while True:
                _, raw = _read(conn, deadline)
                got.append(raw)
                if not raw.startswith(b">"):
                    break
            name = str(step.args[0]).upper()
            if name == "MULTI" and got[-1] == b"+OK\r\n":
                self.in_multi.add(step.conn)
            elif name in ("EXEC", "DISCARD"):
                self.in_multi.discard(step.conn)
        self.markers += 1
        token = b"mark-%d" % self.markers
        quiet = step.quiet or _is_client_caching(step.args)
        for name in self.order:
            if name in self.closed or name in self.in_multi or (quiet and name == step.conn):
                continue
            conn = self.conns[name]
            conn.send_command("PING", token)
            while True:
                value, raw = _read(conn, deadline)
                if _is_marker(value, token):
                    break
                frames[name].append(raw)
        return frames

    def _close(self, name: str) -> None:
        client_id = self.ids[name]
        self.conns[name].close()
        self.closed.add(name)
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            listed = [int(entry["id"]) for entry in
                      parse_client_list(self.admin.call("CLIENT", "LIST"))]
            if client_id not in listed:
                return
            if time.monotonic() >= deadline:
                raise StepTimeout(f"{name} (id {client_id}) still in CLIENT LIST")
            time.sleep(0.01)

    def _active_expire(self, remaining: int) -> None:
        admin = self.admin
        assert admin.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "1") == b"+OK\r\n"
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        try:
            while admin.call("DBSIZE") != remaining:
                if time.monotonic() >= deadline:
                    raise StepTimeout(f"active expiry did not bring db 0 to {remaining} keys")
                time.sleep(0.01)
        finally:
            assert admin.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"

    def leftovers(self) -> dict[str, list[bytes]]:
        """Frames that arrive within QUIET_S on any open connection (there should be none)."""
        extra = {}
        for name in self.order:
            if name in self.closed:
                continue
            conn = self.conns[name]
            got = []
            try:
                while True:
                    conn.sock.settimeout(QUIET_S)
                    got.append(conn.read_reply_raw()[1])
            except (socket.timeout, ConnectionClosed, OSError):
                pass
            finally:
                conn.sock.settimeout(conn.timeout)
            if got:
                extra[name] = got
        return extra

    # Normalisation -----------------------------------------------------------------------------

    def _id_text(self, digits: bytes) -> bytes:
        name = self.names.get(int(digits))
        return b"<id %s>" % name.encode() if name else b"<id ?>"

    def normalise(self, step: Step, frames: dict[str, list[bytes]]) -> dict[str, list[bytes]]:
        out = {}
        for name, raws in frames.items():
            shown = []
            for raw in raws:
                raw = BROKEN_PUSH.sub(
                    lambda m: b">2\r\n$21\r\ntracking-redir-broken\r\n:" + self._id_text(m[1])
                    + b"\r\n", raw)
                if step.ids and name == step.conn:
                    raw = INTEGER.sub(lambda m: self._int_or_id(m), raw)
                if step.view is not None and name == step.conn and not raw.startswith(b">"):
                    raw = step.view(self, raw)
                shown.append(raw)
            out[name] = shown
        return out

    def _int_or_id(self, match) -> bytes:
        digits = match[1] or match[2]
        if int(digits) in self.names:
            return b":" + self._id_text(digits) + b"\r\n"
        return match[0]


# --------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------


def _invalidated(raw: bytes):
    """The keys an invalidation frame names: a list, None for a flush (null), or False when the
    frame is not an invalidation."""
    if not raw.startswith((b">", b"*")):
        return False
    try:
        value = _reply_value(raw)
    except Exception:  # a view's text, not RESP
        return False
    if isinstance(value, list) and len(value) == 2 and value[0] == b"invalidate":
        return value[1]
    if isinstance(value, list) and len(value) == 3 and value[:2] == [b"message",
                                                                     INVALIDATE.encode()]:
        return value[2]
    return False


def _keys_only(frames: dict[str, list[bytes]]) -> dict[str, list]:
    out = {}
    for name, raws in frames.items():
        items = []
        for raw in raws:
            keys = _invalidated(raw)
            if isinstance(keys, list):
                items += [("key", key) for key in keys]
            else:
                items.append(("frame", raw))
        out[name] = sorted(items)
    return out


def _show(raws) -> str:
    return "[" + ", ".join(repr(raw) for raw in raws) + "]"


@dataclass
class Outcome:
    problems: list[str] = field(default_factory=list)
    reference_pushes: int = 0  # invalidation frames redis-server sent

    def report(self) -> str:
        shown = self.problems[:MAX_PROBLEMS_SHOWN]
        more = len(self.problems) - len(shown)
        return "\n".join([f"{len(self.problems)} step(s) differ from redis-server 7.0:"] + shown
                         + ([f"... and {more} more"] if more > 0 else []))


def run_script(server, real_redis, conns: dict[str, int], script) -> Outcome:
    """Runs `script` step by step on redis-server (reference) and on the server under test."""
    reference = Side(real_redis, "redis", conns)
    candidate = Side(server, "candidate", conns)
    outcome = Outcome()
    try:
        for index, item in enumerate(script):
            step = _step(item)
            if step.sleep:
                time.sleep(step.sleep)
                continue
            where = f"step {index}: {step.describe()}"
            try:
                expected = reference.normalise(step, reference.run(step))
            except StepTimeout as error:
                raise AssertionError(f"redis-server, {where}: {error} (a harness bug)") from None
            outcome.reference_pushes += sum(
                _invalidated(raw) is not False for raws in expected.values() for raw in raws)
            try:
                got = candidate.normalise(step, candidate.run(step))
            except StepTimeout as error:
                outcome.problems.append(f"{where}\n  candidate: {error} (stopping here)\n"
                                        f"  redis {expected!r}")
                return outcome
            if step.check is not None:
                problem = step.check(expected, got)
                if problem:
                    outcome.problems.append(f"{where}\n  {problem}")
                continue
            if step.keys_only:
                exp_cmp, got_cmp = _keys_only(expected), _keys_only(got)
            else:
                exp_cmp, got_cmp = expected, got
            if exp_cmp != got_cmp:
                lines = [where]
                for name in conns:
                    if exp_cmp.get(name) != got_cmp.get(name):
                        lines.append(f"  {name}: redis  {_show(expected.get(name, ['<closed>']))}")
                        lines.append(f"  {name}: gigakv {_show(got.get(name, ['<closed>']))}")
                outcome.problems.append("\n".join(lines))
        extra_ref, extra_got = reference.leftovers(), candidate.leftovers()
        if extra_ref != extra_got:
            outcome.problems.append(f"after the last step:\n  redis  {extra_ref!r}\n"
                                    f"  gigakv {extra_got!r}")
    finally:
        reference.close_all()
        candidate.close_all()
    return outcome


def assert_same(outcome: Outcome, expect_pushes: bool = True) -> None:
    if outcome.problems:
        pytest.fail(outcome.report(), pytrace=False)
    if expect_pushes:  # so that the comparison cannot pass vacuously
        assert outcome.reference_pushes, "redis-server sent no invalidation at all"


# --------------------------------------------------------------------------------------------
# Default mode (RESP3)
# --------------------------------------------------------------------------------------------

DEFAULT_MODE = [
    ("T", "CLIENT", "TRACKING", "ON"),
    ("T", "GET", "k"),  # a missing key is tracked too
    ("W", "SET", "k", "1"),  # T: >2 invalidate [k]
    ("W", "SET", "k", "2"),  # forgotten after one invalidation: nothing
    ("T", "GET", "k"), ("T", "GET", "k"), ("T", "STRLEN", "k"),  # still one entry
    ("W", "APPEND", "k", "x"),
    ("W", "APPEND", "k", "x"),
    ("T", "MGET", "a", "b", "k"),
    ("W", "MSET", "a", "1", "b", "2", "c", "3"),  # one push per key, in the command's order
    ("W", "SET", "k", "3"),
    ("T", "MGET", "b", "a"),
    ("W", "DEL", "a", "missing", "b"),
    # Writes that change nothing do not invalidate.
    ("T", "MGET", "k", "gone", "h"),
    ("W", "SET", "k", "4", "NX"), ("W", "SETNX", "k", "5"), ("W", "DEL", "gone"),
    ("W", "PERSIST", "k"), ("W", "EXPIRE", "gone", "100"), ("W", "GETEX", "k"),
    ("W", "HDEL", "h", "f"), ("W", "LPUSH", "k", "x"),  # WRONGTYPE
    ("W", "SET", "gone", "1"), ("W", "HSET", "h", "f", "v"), ("W", "SET", "k", "6"),
    # Another database: keys are tracked by name only.
    ("T", "SELECT", "3"), ("T", "GET", "k"), ("T", "SELECT", "0"),
    ("W", "SET", "k", "7"),
    ("T", "GET", "k"), ("W", "SELECT", "5"), ("W", "SET", "k", "db5"), ("W", "SELECT", "0"),
    # Binary key names.
    ("T", "GET", BINARY_KEY), ("W", "SET", BINARY_KEY, "v"),
    # Writes by T itself: the push comes after T's reply.
    ("T", "GET", "k"),
    ("T", "SET", "k", "8"),
    ("T", "SET", "k", "9"),  # no longer tracked: nothing
    ("T", "MGET", "k", "a"),
    ("T", "MSET", "a", "1", "k", "2"),
    ("T", "INCR", "counter"),  # a write command does not track its key
    ("W", "SET", "counter", "5"),
    ("T", "GETSET", "counter", "1"), ("T", "GETDEL", "counter"),
    ("W", "SET", "counter", "5"),
    # MULTI/EXEC by T: every push after EXEC's reply; reads inside MULTI are tracked.
    ("T", "GET", "k"), ("T", "GET", "a"),
    ("T", "MULTI"), ("T", "SET", "k", "1"), ("T", "GET", "b"), ("T", "SET", "a", "2"),
    ("T", "GET", "c"), ("T", "EXEC"),
    ("W", "MSET", "b", "x", "c", "y"),
    ("T", "GET", "k"),
    ("T", "MULTI"), ("T", "SET", "k", "1"), ("T", "SET", "k", "2"), ("T", "EXEC"),  # one push
    ("T", "GET", "k"),
    ("W", "MULTI"), ("W", "SET", "k", "1"), ("W", "DEL", "k"), ("W", "EXEC"),
    ("T", "MULTI"), ("T", "GET", "dk"), ("T", "DISCARD"),  # discarded: not tracked
    ("W", "SET", "dk", "x"),
    # Two tracking clients.
    ("T2", "CLIENT", "TRACKING", "ON"),
    ("T", "GET", "shared"), ("T2", "GET", "shared"),
    ("W", "SET", "shared", "1"),
    ("T", "GET", "shared"), ("T2", "GET", "shared"),
    ("T2", "SET", "shared", "2"),  # T now, T2 after its reply
    Step(conn="W", args=("INFO", "stats"), view=info_view),
    Step(conn="W", args=("INFO", "clients"), view=info_view),
]


def test_default_mode_invalidates_read_keys_like_redis(server, real_redis):
    assert_same(run_script(server, real_redis, {"T": 3, "T2": 3, "W": 2}, DEFAULT_MODE))


# Every read-only command tracks the keys it names (each command reads keys of its own, then one
# DEL names them all: one push per deleted key, in DEL's order); keyless reads track nothing.
READ_SETUP = [
    ("W", "MSET", *[item for i in range(1, 16) for item in (f"str{i}", "abcdef")]),
    ("W", "SETBIT", "bits1", "3", "1"), ("W", "SETBIT", "bits2", "3", "1"),
    ("W", "SETBIT", "bits3", "3", "1"),
    *[("W", "HSET", f"h{i}", "f", "v") for i in range(1, 8)],
    *[("W", "RPUSH", f"l{i}", "b", "a") for i in range(1, 6)],
    *[("W", "SADD", f"s{i}", "m") for i in range(1, 12)],
    *[("W", "ZADD", f"z{i}", "1", "m") for i in range(1, 8)],
    ("W", "SET", "kk", "1"),
]

READS = [
    ("T", "GET", "str1"), ("T", "STRLEN", "str2"), ("T", "GETRANGE", "str3", "0", "1"),
    ("T", "MGET", "str4", "str5"), ("T", "EXISTS", "str6", "str7", "nx1"), ("T", "TYPE", "str8"),
    ("T", "TTL", "str9"), ("T", "PTTL", "str10"), ("T", "SUBSTR", "str11", "0", "1"),
    ("T", "EXPIRETIME", "str12"), ("T", "LCS", "str13", "str14"), ("T", "TOUCH", "str15"),
    ("T", "GETBIT", "bits1", "3"), ("T", "BITCOUNT", "bits2"), ("T", "BITPOS", "bits3", "1"),
    ("T", "HGET", "h1", "f"), ("T", "HGETALL", "h2"), ("T", "HMGET", "h3", "f", "g"),
    ("T", "HEXISTS", "h4", "f"), ("T", "HLEN", "h5"), ("T", "HSTRLEN", "h6", "f"),
    ("T", "HKEYS", "h7"),
    ("T", "LRANGE", "l1", "0", "-1"), ("T", "LLEN", "l2"), ("T", "LINDEX", "l3", "0"),
    ("T", "LPOS", "l4", "a"), ("T", "SORT_RO", "l5", "ALPHA"),
    ("T", "SMEMBERS", "s1"), ("T", "SISMEMBER", "s2", "m"), ("T", "SCARD", "s3"),
    ("T", "SMISMEMBER", "s4", "m", "n"), ("T", "SINTER", "s5", "s6"), ("T", "SUNION", "s7", "nx2"),
    ("T", "SDIFF", "s8", "s9"), ("T", "SINTERCARD", "2", "s10", "s11"),
    ("T", "ZRANGE", "z1", "0", "-1"), ("T", "ZSCORE", "z2", "m"), ("T", "ZCARD", "z3"),
    ("T", "ZRANK", "z4", "m"), ("T", "ZCOUNT", "z5", "-inf", "+inf"),
    ("T", "ZRANGEBYSCORE", "z6", "-inf", "+inf"), ("T", "ZMSCORE", "z7", "m"),
    # Keyless reads track nothing.
    ("T", "KEYS", "kk"), ("T", "DBSIZE"), ("T", "PING"), ("T", "ECHO", "kk"),
]

READ_KEYS = ([f"str{i}" for i in range(1, 16)] + ["bits1", "bits2", "bits3"]
             + [f"h{i}" for i in range(1, 8)] + [f"l{i}" for i in range(1, 6)]
             + [f"s{i}" for i in range(1, 12)] + [f"z{i}" for i in range(1, 8)])

READ_COMMANDS = [
    *READ_SETUP,
    ("T", "CLIENT", "TRACKING", "ON"),
    *READS,
    Step(conn="W", args=("INFO", "stats"), view=info_view),
    ("W", "DEL", *reversed(READ_KEYS), "kk"),  # kk was only listed by KEYS: no push for it
    ("W", "MSET", "nx1", "1", "nx2", "2", "kk", "3"),  # missing keys that were read: tracked
    Step(conn="W", args=("INFO", "stats"), view=info_view),
]


def test_read_commands_of_every_type_track_their_keys(server, real_redis):
    assert_same(run_script(server, real_redis, {"T": 3, "W": 2}, READ_COMMANDS))


# --------------------------------------------------------------------------------------------
# Expiry, keyspace-wide changes, flushes
# --------------------------------------------------------------------------------------------

EXPIRY = [
    ("B", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "e"),
    ("T", "CLIENT", "TRACKING", "ON"),
    ("W", "MSET", "e1", "1", "e2", "1", "e3", "1", "e4", "1", "e5", "1", "x", "1"),
    ("T", "MGET", "e1", "e2", "e3", "e4", "e5", "x"),
    ("W", "PEXPIRE", "e1", EXPIRE_MS),  # a write: invalidates
    ("W", "PEXPIRE", "e2", EXPIRE_MS), ("W", "PEXPIRE", "e3", EXPIRE_MS),
    ("W", "PEXPIRE", "e4", EXPIRE_MS), ("W", "PEXPIRE", "e5", EXPIRE_MS),
    ("T", "MGET", "e1", "e2", "e3", "e4", "e5"),  # tracked again (values: not expired yet)
    sleep(EXPIRED_SLEEP_S),
    ("W", "GET", "e1"),  # lazy expiry by another client
    ("W", "EXISTS", "e2"),
    ("T", "GET", "e3"),  # lazy expiry by T itself: the reply, then the push
    ("T", "GET", "e3"),
    active_expire(1),  # e4, e5 (x stays)
    ("W", "EXPIRE", "x", "-1"),  # a TTL in the past deletes the key
    ("T", "GET", "x"), ("W", "SET", "x", "1"), ("T", "GET", "x"),
    ("W", "PEXPIREAT", "x", "1"),
    ("T", "GET", "x"), ("W", "SET", "x", "1", "EX", "100"), ("T", "GET", "x"),
    ("W", "PERSIST", "x"), ("T", "GET", "x"),
    ("W", "GETEX", "x", "PX", "100000"),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
]


def test_expiry_invalidates_like_redis(server, real_redis):
    assert_same(run_script(server, real_redis, {"T": 3, "B": 3, "W": 2}, EXPIRY))


KEYSPACE = [
    ("R", "SUBSCRIBE", INVALIDATE),
    ("T", "CLIENT", "TRACKING", "ON"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("R")),
    ("B", "CLIENT", "TRACKING", "ON", "BCAST"),
    ("W", "MSET", "a", "1", "b", "2"),
    ("T", "MGET", "a", "b", "c"), ("T2", "MGET", "a", "b", "c"),
    ("W", "RENAME", "a", "b"),  # both keys
    ("T", "MGET", "a", "b", "c"), ("T2", "MGET", "a", "b", "c"),
    ("W", "RENAME", "b", "c"),
    ("W", "RENAME", "missing", "d"),  # an error: nothing
    ("T", "MGET", "c", "d"), ("W", "RENAMENX", "c", "d"),
    ("T", "GET", "m"), ("W", "SET", "m", "1"), ("T", "GET", "m"),
    ("W", "MOVE", "m", "2"),
    ("T", "GET", "m"),
    ("W", "SELECT", "2"), ("W", "MOVE", "m", "0"), ("W", "SELECT", "0"),
    ("T", "MGET", "m", "cp"), ("W", "COPY", "m", "cp"),
    ("W", "COPY", "m", "cp", "DB", "4"),
    ("T", "GET", "x"), ("W", "SET", "x", "1"), ("T", "GET", "x"), ("T2", "GET", "x"),
    ("W", "SWAPDB", "0", "1"),  # Redis 7.0: no invalidation at all
    ("W", "SWAPDB", "0", "1"),
    ("W", "SET", "x", "2"),  # still tracked
    ("T", "GET", "x"), ("T2", "GET", "x"),
    ("W", "FLUSHDB"),  # a null invalidation for every tracking client, BCAST too
    ("W", "FLUSHDB"),  # even with nothing tracked and an empty database
    ("W", "SELECT", "5"), ("W", "FLUSHDB"), ("W", "SELECT", "0"),
    ("W", "FLUSHALL"), ("W", "FLUSHALL", "ASYNC"), ("W", "FLUSHDB", "SYNC"),
    ("T", "FLUSHALL"),  # T: the reply, then the null push
    ("T2", "FLUSHDB"),  # R: a message whose payload is a RESP2 null
    ("T", "GET", "y"), ("W", "FLUSHALL"),
    ("W", "SET", "y", "1"),  # the flush emptied the table: nothing
    Step(conn="W", args=("INFO", "stats"), view=info_view),
]


def test_keyspace_changes_and_flushes_invalidate_like_redis(server, real_redis):
    assert_same(run_script(server, real_redis, {"T": 3, "T2": 2, "B": 3, "R": 2, "W": 2},
                           KEYSPACE))


# A RESP3 tracking client redirecting to a RESP2 subscriber: on a flush Redis writes the null in
# the tracking client's protocol (RESP3 `_`) inside the RESP2 message.
FLUSH_NULL_PROTOCOL = [
    ("R", "SUBSCRIBE", INVALIDATE),
    ("T", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("R")),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("R3")),
    ("T", "GET", "k"), ("T2", "GET", "k"),
    ("W", "SET", "k", "1"),
    ("W", "FLUSHALL"),
    ("T", "FLUSHDB"),
    ("T2", "FLUSHDB"),
]


def test_flush_null_through_redirect_is_in_the_trackers_protocol(server, real_redis):
    assert_same(run_script(server, real_redis, {"T": 3, "T2": 2, "R": 2, "R3": 3, "W": 2},
                           FLUSH_NULL_PROTOCOL))


# --------------------------------------------------------------------------------------------
# REDIRECT
# --------------------------------------------------------------------------------------------

REDIRECT = [
    ("R", "SUBSCRIBE", INVALIDATE),
    ("O", "SUBSCRIBE", "other"),
    with_ids("T2", "CLIENT", "GETREDIR"),  # -1: tracking off
    with_ids("T2", "CLIENT", "TRACKINGINFO"),
    ("T2", "CLIENT", "TRACKING", "ON"),  # RESP2 without redirect: accepted, nothing delivered
    with_ids("T2", "CLIENT", "GETREDIR"),  # 0
    ("T2", "GET", "k"), ("W", "SET", "k", "1"),
    ("T2", "GET", "k"), ("T2", "SET", "k", "2"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("R")),
    with_ids("T2", "CLIENT", "GETREDIR"), with_ids("T2", "CLIENT", "TRACKINGINFO"),
    ("T2", "GET", "k"), ("W", "SET", "k", "1"),  # R: message __redis__:invalidate [k]
    ("T2", "MGET", "k", "j"), ("W", "MSET", "k", "1", "j", "2"),
    ("T2", "GET", "k"), ("T2", "SET", "k", "3"),  # T2's own write, redirected
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("O")),  # subscribed to another channel
    ("T2", "GET", "k"), ("W", "SET", "k", "1"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("N")),  # not subscribed: nothing
    ("T2", "GET", "k"), ("W", "SET", "k", "1"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("R3")),  # RESP3: a push
    ("T2", "GET", "k"), ("W", "SET", "k", "1"),
    ("T2", "GET", "k"), ("T2", "SET", "k", "2"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("T2")),  # itself, RESP2: nothing
    ("T2", "GET", "k"), ("W", "SET", "k", "1"),
    with_ids("T2", "CLIENT", "TRACKINGINFO"),
    ("T", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("R")),  # RESP3 client to RESP2 subscriber
    ("T", "GET", "k"), ("W", "SET", "k", "1"),
    ("T", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("T")),  # RESP3 itself
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "GET", "k"), ("W", "SET", "k", "1"),
    ("T", "GET", "k"), ("T", "SET", "k", "2"),
    # Redirect targets that left Pub/Sub mode.
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("R")),
    ("R", "UNSUBSCRIBE"),
    ("T2", "GET", "k"), ("W", "SET", "k", "1"),
    ("R", "SUBSCRIBE", INVALIDATE),
    ("T2", "GET", "k"), ("W", "SET", "k", "1"),
    # Errors leave the state alone.
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", "999999"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", "0"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", "-1"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", "abc"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", "1.5"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT"),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("R"), "REDIRECT", Id("R")),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", "abc", "REDIRECT", Id("R")),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", "999999", "BOGUS"),
    ("T2", "CLIENT", "TRACKING", "ON", "BOGUS", "REDIRECT", "999999"),
    ("T2", "CLIENT", "TRACKING", "OFF", "REDIRECT", "999999"),
    with_ids("T2", "CLIENT", "GETREDIR"), with_ids("T2", "CLIENT", "TRACKINGINFO"),
    ("T2", "CLIENT", "TRACKING", "OFF"),
    with_ids("T2", "CLIENT", "GETREDIR"),
    ("W", "SET", "k", "1"),
    Step(conn="W", args=("INFO", "clients"), view=info_view),
]


def test_redirect_like_redis(server, real_redis):
    assert_same(run_script(server, real_redis,
                           {"T": 3, "T2": 2, "W": 2, "R": 2, "O": 2, "N": 2, "R3": 3}, REDIRECT))


BROKEN_REDIRECT = [
    ("T", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("N")),
    ("T2", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("N")),
    ("T", "MGET", "k", "j", "i"), ("T2", "GET", "k"),
    Step(conn="W", args=("CLIENT", "LIST"), view=client_list_view("T", "T2", "N")),
    close("N"),
    with_ids("T", "CLIENT", "TRACKINGINFO"),  # not broken until an invalidation is due
    ("W", "SET", "k", "1"),  # T: tracking-redir-broken <id>; T2 (RESP2): nothing
    with_ids("T", "CLIENT", "TRACKINGINFO"), with_ids("T2", "CLIENT", "TRACKINGINFO"),
    with_ids("T", "CLIENT", "GETREDIR"),
    Step(conn="W", args=("CLIENT", "LIST"), view=client_list_view("T", "T2")),
    ("W", "MSET", "j", "1", "i", "1"),  # one push per key
    ("W", "SET", "j", "1"),  # forgotten: nothing
    ("T", "GET", "j"), ("T", "SET", "j", "2"),  # the reply, then the push
    ("T", "FLUSHDB"),  # instead of the null invalidation
    ("W", "FLUSHALL"),
    ("T", "CLIENT", "TRACKING", "ON", "REDIRECT", Id("N")),  # gone: an error
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "CLIENT", "TRACKING", "ON", "NOLOOP", "REDIRECT", Id("N2")),  # clears the flag
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "GET", "k"),
    close("N2"),
    ("T", "SET", "k", "1"),  # NOLOOP: nothing, not even the broken-redirect push
    ("T", "GET", "k"), ("W", "SET", "k", "2"),
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    Step(conn="W", args=("CLIENT", "LIST"), view=client_list_view("T", "T2")),
    ("T", "CLIENT", "TRACKING", "ON"),  # back to no redirect
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "GET", "k"), ("W", "SET", "k", "3"),
]


def test_broken_redirect_like_redis(server, real_redis):
    assert_same(run_script(server, real_redis,
                           {"T": 3, "T2": 2, "W": 2, "N": 2, "N2": 2}, BROKEN_REDIRECT))


# --------------------------------------------------------------------------------------------
# BCAST
# --------------------------------------------------------------------------------------------

BCAST = [
    ("R", "SUBSCRIBE", INVALIDATE),
    ("B", "CLIENT", "TRACKING", "ON", "BCAST"),  # every key
    ("P", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "b", "PREFIX", "a"),
    ("P", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "c"),  # adds c
    ("Q", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "NOLOOP"),
    ("BR", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "b", "REDIRECT", Id("R")),
    ("T", "CLIENT", "TRACKING", "ON"),
    with_ids("P", "CLIENT", "TRACKINGINFO"), with_ids("BR", "CLIENT", "TRACKINGINFO"),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
    ("W", "SET", "a1", "1"),
    # One command changing several keys: one push per prefix (prefixes and keys sorted).
    ("W", "MSET", "b2", "1", "a2", "1", "c1", "1", "d1", "1", "a1", "2"),
    ("W", "MULTI"), ("W", "SET", "b1", "1"), ("W", "SET", "a3", "1"), ("W", "DEL", "a3"),
    ("W", "SET", "b1", "2"), ("W", "EXEC"),
    ("W", "SET", "zzz", "1"),  # only B
    ("W", "DEL", "nothing"),  # nobody
    ("W", "GET", "a1"),  # reads: nobody
    ("W", "SET", BINARY_KEY, "1"),
    ("B", "SET", "a5", "1"),  # B's own write: the reply, then the push
    ("Q", "SET", "a6", "1"),  # NOLOOP: nothing for Q
    ("Q", "MSET", "a7", "1", "b7", "1"),
    ("Q", "MULTI"), ("Q", "SET", "a8", "1"), ("Q", "EXEC"),
    ("B", "GET", "a1"), ("P", "MGET", "a1", "b1"),  # BCAST clients do not track reads
    ("W", "SET", "a1", "3"),
    ("T", "GET", "a1"), ("W", "SET", "a1", "4"),  # default mode and BCAST side by side
    ("W", "EXPIRE", "a1", "100"), ("W", "DEL", "a1", "b1", "c1"),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
    ("W", "FLUSHALL"),  # a null invalidation for every tracking client
    # Keys changed before a flush in the same EXEC are still broadcast, after the null.
    ("W", "MULTI"), ("W", "SET", "a1", "1"), ("W", "FLUSHDB"), ("W", "SET", "b1", "1"),
    ("W", "EXEC"),
    ("P", "CLIENT", "TRACKING", "OFF"),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
    ("W", "MSET", "c2", "1", "a2", "1"),
    ("P", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", ""),  # the empty prefix: every key
    with_ids("P", "CLIENT", "TRACKINGINFO"),
    ("W", "MSET", "c2", "1", "a2", "1"),
    ("P", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "x"),  # overlaps ''
    Step(conn="W", args=("CLIENT", "LIST"), view=client_list_view("B", "P", "Q", "BR", "T")),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
]


def test_bcast_like_redis(server, real_redis):
    assert_same(run_script(server, real_redis,
                           {"B": 3, "P": 3, "Q": 3, "BR": 2, "R": 2, "T": 3, "W": 2}, BCAST))


# CLIENT TRACKING ON BCAST (no PREFIX) while already in BCAST mode with prefixes adds the empty
# prefix without an overlap check: every key then comes once per matching prefix.
BCAST_AGAIN = [
    ("B", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "b"),
    ("B", "CLIENT", "TRACKING", "ON", "BCAST"),
    with_ids("B", "CLIENT", "TRACKINGINFO"),
    ("W", "SET", "a1", "1"),
    ("W", "MSET", "b1", "1", "c1", "1"),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
]


def test_bcast_again_without_prefix_adds_the_empty_prefix(server, real_redis):
    assert_same(run_script(server, real_redis, {"B": 3, "W": 2}, BCAST_AGAIN))


# --------------------------------------------------------------------------------------------
# OPTIN / OPTOUT / NOLOOP / OFF
# --------------------------------------------------------------------------------------------

OPTIN_OPTOUT = [
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN"),
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "GET", "a"), ("W", "SET", "a", "1"),  # not tracked without CACHING yes
    ("T", "CLIENT", "CACHING", "yes"),
    with_ids("T", "CLIENT", "TRACKINGINFO", quiet=True),  # caching-yes; a CLIENT command keeps it
    ("T", "GET", "b"), ("W", "SET", "b", "1"),  # tracked
    ("T", "CLIENT", "CACHING", "yes"), ("T", "GET", "c"), ("T", "GET", "d"),  # only c
    ("W", "MSET", "c", "1", "d", "1"),
    ("T", "CLIENT", "CACHING", "yes"), ("T", "PING"), ("T", "GET", "e"),  # PING used it up
    ("W", "SET", "e", "1"),
    ("T", "CLIENT", "CACHING", "yes"), ("T", "CLIENT", "CACHING", "yes"), ("T", "GET", "f"),
    ("W", "SET", "f", "1"),
    ("T", "CLIENT", "CACHING", "YES"), ("T", "MGET", "g", "h"), ("W", "MSET", "g", "1", "h", "1"),
    ("T", "CLIENT", "CACHING", "yes"),
    Step(conn="T", args=("GET", "x", "y"), quiet=True),  # a rejected command uses it up too
    ("T", "GET", "i"), ("W", "SET", "i", "1"),
    # MULTI: CACHING yes before MULTI, or queued inside it, covers every read of the EXEC.
    ("T", "CLIENT", "CACHING", "yes"), ("T", "MULTI"), ("T", "GET", "j"), ("T", "GET", "k"),
    ("T", "EXEC"), ("W", "MSET", "j", "1", "k", "1"),
    ("T", "MULTI"), ("T", "CLIENT", "CACHING", "yes"), ("T", "GET", "l"), ("T", "GET", "m"),
    ("T", "EXEC"), ("W", "MSET", "l", "1", "m", "1"),
    ("T", "MULTI"), ("T", "GET", "n"), ("T", "EXEC"), ("W", "SET", "n", "1"),
    ("T", "CLIENT", "CACHING", "no"),  # only in OPTOUT mode
    ("T", "CLIENT", "CACHING", "maybe"),
    ("T", "CLIENT", "CACHING"),
    ("T", "CLIENT", "CACHING", "yes", "extra"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTOUT"),  # switching needs OFF first
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN", "OPTIN"),
    ("T", "CLIENT", "TRACKING", "OFF"),
    ("T", "CLIENT", "CACHING", "yes"),  # tracking off
    ("T", "CLIENT", "TRACKING", "ON", "OPTOUT"),
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "CLIENT", "CACHING", "yes"),  # only in OPTIN mode
    ("T", "GET", "a"), ("W", "SET", "a", "2"),  # tracked by default
    ("T", "CLIENT", "CACHING", "no"),
    with_ids("T", "CLIENT", "TRACKINGINFO", quiet=True),  # caching-no
    ("T", "GET", "b"), ("W", "SET", "b", "2"),  # not tracked
    ("T", "GET", "b"), ("W", "SET", "b", "3"),  # tracked again
    ("T", "CLIENT", "CACHING", "no"), ("T", "MULTI"), ("T", "GET", "c"), ("T", "GET", "d"),
    ("T", "EXEC"), ("W", "MSET", "c", "2", "d", "2"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTOUT", "NOLOOP"),  # flags replaced: noloop now
    ("T", "CLIENT", "CACHING", "no"),
    with_ids("T", "CLIENT", "TRACKINGINFO", quiet=True),
    ("T", "CLIENT", "TRACKING", "OFF"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN", "REDIRECT", Id("R")),
    ("T", "CLIENT", "CACHING", "yes"), ("T", "GET", "o"), ("W", "SET", "o", "1"),
    ("T", "CLIENT", "TRACKING", "OFF"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "OPTOUT"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN", "BCAST"),
    with_ids("T", "CLIENT", "TRACKINGINFO"),
]


def test_optin_optout_like_redis(server, real_redis):
    script = [("R", "SUBSCRIBE", INVALIDATE)] + OPTIN_OPTOUT
    assert_same(run_script(server, real_redis, {"T": 3, "R": 2, "W": 2}, script))


NOLOOP_AND_OFF = [
    ("T", "CLIENT", "TRACKING", "ON", "NOLOOP"), ("T2", "CLIENT", "TRACKING", "ON"),
    ("T", "GET", "a"), ("T", "SET", "a", "1"),  # no push
    ("W", "SET", "a", "2"),  # nothing either: T's own write dropped the entry
    ("T", "GET", "a"), ("W", "SET", "a", "3"),
    ("T", "MGET", "a", "b"), ("T", "MSET", "a", "1", "b", "1"),
    ("T", "GET", "a"), ("T", "MULTI"), ("T", "SET", "a", "5"), ("T", "EXEC"),
    ("T", "GET", "a"), ("T2", "GET", "a"), ("T", "SET", "a", "6"),  # T2 still gets it
    ("T", "FLUSHDB"),  # a flush is not a key write: the null push comes anyway
    ("T", "CLIENT", "TRACKING", "OFF"),
    ("T", "GET", "a"), ("W", "SET", "a", "1"),  # nothing
    ("T", "CLIENT", "TRACKING", "OFF"),
    ("T", "CLIENT", "TRACKING", "ON"),
    # The table forgets a client's keys lazily: OFF then ON keeps what was read before.
    ("T", "GET", "a"), ("T", "CLIENT", "TRACKING", "OFF"), ("T", "CLIENT", "TRACKING", "ON"),
    ("W", "SET", "a", "2"),
    ("T", "GET", "a"), ("T", "CLIENT", "TRACKING", "OFF"),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
    Step(conn="W", args=("INFO", "clients"), view=info_view),
    ("W", "SET", "a", "3"),  # while off: the entry goes
    ("T", "CLIENT", "TRACKING", "ON"), ("W", "SET", "a", "4"),
    ("T", "GET", "a"), ("T", "CLIENT", "TRACKING", "OFF"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "zz"),
    ("W", "SET", "a", "5"),  # a key read in default mode is not sent to a BCAST client
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "yy", "NOLOOP"),  # adds a prefix
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "MSET", "zz1", "1", "yy1", "1"), ("W", "MSET", "zz1", "1", "yy1", "1"),
    ("T", "CLIENT", "TRACKING", "OFF", "BCAST"),  # OFF ignores the options
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("W", "SET", "zz1", "2"),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
]


def test_noloop_and_off_like_redis(server, real_redis):
    assert_same(run_script(server, real_redis, {"T": 3, "T2": 3, "W": 2}, NOLOOP_AND_OFF))


# --------------------------------------------------------------------------------------------
# CLIENT TRACKINGINFO, GETREDIR, CLIENT LIST, INFO
# --------------------------------------------------------------------------------------------

MODES = [
    ("OFF",),
    ("ON",),
    ("ON", "OPTIN"),
    ("ON", "OPTOUT", "NOLOOP"),
    ("ON", "NOLOOP", "REDIRECT", Id("R")),
    ("ON", "BCAST"),
    ("ON", "BCAST", "PREFIX", "b", "PREFIX", "a", "NOLOOP", "REDIRECT", Id("R")),
    ("ON", "BCAST", "PREFIX", "", "REDIRECT", Id("R")),
]


def _mode_steps(conn: str) -> list:
    steps = []
    for mode in MODES:
        steps += [
            (conn, "CLIENT", "TRACKING", "OFF"),
            (conn, "CLIENT", "TRACKING", *mode),
            with_ids(conn, "CLIENT", "TRACKINGINFO"),
            with_ids(conn, "CLIENT", "GETREDIR"),
            Step(conn="W", args=("CLIENT", "LIST"), view=client_list_view(conn)),
        ]
        if "OPTIN" in mode or "OPTOUT" in mode:
            steps += [(conn, "CLIENT", "CACHING", "yes" if "OPTIN" in mode else "no"),
                      with_ids(conn, "CLIENT", "TRACKINGINFO", quiet=True),
                      Step(conn="W", args=("CLIENT", "LIST"), view=client_list_view(conn))]
    return steps


@pytest.mark.parametrize("protocol", [3, 2], ids=["RESP3", "RESP2"])
def test_trackinginfo_getredir_and_client_list_in_every_mode(server, real_redis, protocol):
    script = [("R", "SUBSCRIBE", INVALIDATE)] + _mode_steps("T")
    script += [  # a broken redirect
        ("T", "CLIENT", "TRACKING", "OFF"),
        ("T", "CLIENT", "TRACKING", "ON", "OPTIN", "NOLOOP", "REDIRECT", Id("N")),
        ("T", "CLIENT", "CACHING", "yes"), ("T", "GET", "k"),
        close("N"),
        ("W", "SET", "k", "1"),
        with_ids("T", "CLIENT", "TRACKINGINFO"), with_ids("T", "CLIENT", "GETREDIR"),
        Step(conn="W", args=("CLIENT", "LIST"), view=client_list_view("T")),
        ("T", "CLIENT", "TRACKING", "OFF"),
        with_ids("T", "CLIENT", "TRACKINGINFO"),
        ("T", "CLIENT", "TRACKINGINFO", "extra"), ("T", "CLIENT", "GETREDIR", "extra"),
    ]
    assert_same(run_script(server, real_redis, {"T": protocol, "R": 2, "N": 2, "W": 2}, script),
                expect_pushes=False)


INFO_FIELDS = [
    Step(conn="W", args=("INFO",), view=info_view),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
    Step(conn="W", args=("INFO", "clients"), view=info_view),
    ("T", "CLIENT", "TRACKING", "ON"),
    ("T", "MGET", "a", "b", "c"),
    ("T2", "CLIENT", "TRACKING", "ON"), ("T2", "MGET", "a", "d"),
    ("B", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "b"),
    ("B2", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a"),
    Step(conn="W", args=("INFO",), view=info_view),  # 4 clients, 4 keys, 5 items, 2 prefixes
    Step(conn="W", args=("INFO", "everything"), view=info_view),
    ("W", "SET", "a", "1"),
    Step(conn="W", args=("INFO",), view=info_view),
    ("T", "CLIENT", "TRACKING", "OFF"),  # the keys stay until invalidated
    ("B2", "CLIENT", "TRACKING", "OFF"),
    Step(conn="W", args=("INFO",), view=info_view),
    ("B", "CLIENT", "TRACKING", "OFF"),
    ("W", "SET", "b", "1"),
    Step(conn="W", args=("INFO",), view=info_view),
    ("W", "FLUSHALL"),
    Step(conn="W", args=("INFO",), view=info_view),
    Step(conn="W", args=("INFO", "stats"), view=info_view),
]


def test_info_tracking_fields_like_redis(server, real_redis):
    assert_same(run_script(server, real_redis, {"T": 3, "T2": 3, "B": 3, "B2": 3, "W": 2},
                           INFO_FIELDS))


# --------------------------------------------------------------------------------------------
# tracking-table-max-keys
# --------------------------------------------------------------------------------------------


class EvictionCheck:
    """Structural checks for evictions from a full tracking table: Redis picks random keys.

    evicted(count): after the step, T got exactly `count` invalidations, one key each, distinct,
    among `keys` and not evicted before; other connections got the same frames as Redis.
    rest(): a write of every key then invalidates exactly the keys still tracked.
    """

    def __init__(self, keys):
        self.keys = [key.encode() for key in keys]
        self.gone = [set(), set()]  # per side: keys evicted so far

    def _pushes(self, frames, side: int, label: str):
        replies, keys = [], []
        for raw in frames.get("T", []):
            got = _invalidated(raw)
            if got is False:
                replies.append(raw)
            elif not isinstance(got, list) or len(got) != 1:
                return None, None, f"{label}: an invalidation of other than one key: {raw!r}"
            else:
                keys.append(got[0])
        return replies, keys, None

    def _others_same(self, expected, got):
        for name in set(expected) | set(got):
            if name != "T" and expected.get(name) != got.get(name):
                return f"{name}: redis {expected.get(name)!r}, gigakv {got.get(name)!r}"
        return None

    def evicted(self, count: int):
        def check(expected, got):
            problem = self._others_same(expected, got)
            if problem:
                return problem
            results = []
            for side, (frames, label) in enumerate(((expected, "redis"), (got, "gigakv"))):
                replies, keys, problem = self._pushes(frames, side, label)
                if problem:
                    return problem
                if len(keys) != count or len(set(keys)) != count:
                    return f"{label}: {count} distinct evictions expected, got {keys!r}"
                if not set(keys) <= set(self.keys) - self.gone[side]:
                    return f"{label}: evicted {keys!r}, not all tracked ({self.gone[side]!r} gone)"
                self.gone[side] |= set(keys)
                results.append(replies)
            if results[0] != results[1]:
                return f"replies: redis {results[0]!r}, gigakv {results[1]!r}"
            return None

        return check

    def rest(self):
        def check(expected, got):
            problem = self._others_same(expected, got)
            if problem:
                return problem
            results = []
            for side, (frames, label) in enumerate(((expected, "redis"), (got, "gigakv"))):
                replies, keys, problem = self._pushes(frames, side, label)
                if problem:
                    return problem
                remaining = [key for key in self.keys if key not in self.gone[side]]
                if keys != remaining:
                    return (f"{label}: invalidations {keys!r}, expected the keys still tracked "
                            f"{remaining!r} in order")
                results.append(replies)
            if results[0] != results[1]:
                return f"replies: redis {results[0]!r}, gigakv {results[1]!r}"
            return None

        return check


def _max_keys_script(first: EvictionCheck, second: EvictionCheck) -> list:
    return [
        ("W", "CONFIG", "GET", "tracking-table-max-keys"),
        ("W", "CONFIG", "SET", "tracking-table-max-keys", "2"),
        ("W", "CONFIG", "GET", "tracking-table-max-keys"),
        ("T", "CLIENT", "TRACKING", "ON"),
        ("T", "MGET", "k1", "k2"),
        Step(conn="W", args=("INFO", "stats"), view=info_view),
        # 5 keys in the table: the next command (the markers' PING) evicts down to 2, each
        # eviction sent as an invalidation of one key.
        Step(conn="T", args=("MGET", "k1", "k2", "k3", "k4", "k5"), check=first.evicted(3)),
        Step(conn="W", args=("INFO", "stats"), view=info_view),
        Step(conn="W", args=("MSET", "k1", "1", "k2", "1", "k3", "1", "k4", "1", "k5", "1"),
             check=first.rest()),
        Step(conn="W", args=("INFO", "stats"), view=info_view),
        # Lowering the limit under the table's size evicts too.
        ("W", "CONFIG", "SET", "tracking-table-max-keys", "0"),  # no limit
        ("T", "MGET", "m1", "m2", "m3", "m4"),
        Step(conn="W", args=("INFO", "stats"), view=info_view),
        Step(conn="W", args=("CONFIG", "SET", "tracking-table-max-keys", "1"),
             check=second.evicted(3)),
        Step(conn="W", args=("INFO", "stats"), view=info_view),
        Step(conn="W", args=("MSET", "m1", "1", "m2", "1", "m3", "1", "m4", "1"),
             check=second.rest()),
        ("W", "CONFIG", "SET", "tracking-table-max-keys", "-1"),
        ("W", "CONFIG", "SET", "tracking-table-max-keys", "abc"),
        ("W", "CONFIG", "SET", "tracking-table-max-keys", "1000000"),
        ("W", "CONFIG", "GET", "tracking-table-max-keys"),
    ]


def test_tracking_table_max_keys_evicts_like_redis(server, real_redis):
    script = _max_keys_script(EvictionCheck(["k1", "k2", "k3", "k4", "k5"]),
                              EvictionCheck(["m1", "m2", "m3", "m4"]))
    assert_same(run_script(server, real_redis, {"T": 3, "W": 2}, script))


# --------------------------------------------------------------------------------------------
# Syntax and mode errors
# --------------------------------------------------------------------------------------------

ERRORS = [
    ("T", "CLIENT", "TRACKING"),
    ("T", "CLIENT", "TRACKING", "maybe"),
    ("T", "CLIENT", "TRACKING", "ON", "BOGUS"),
    ("T", "CLIENT", "TRACKING", "ON", "PREFIX"),
    ("T", "CLIENT", "TRACKING", "ON", "PREFIX", "a"),
    ("T", "CLIENT", "TRACKING", "ON", "PREFIX", "a", "OPTIN", "OPTOUT"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "x", "PREFIX"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "ab"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "a"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "a"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "", "PREFIX", ""),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "b", "PREFIX", "a"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTOUT", "BCAST"),
    ("T", "CLIENT", "TRACKING", "OFF", "PREFIX", "a"),
    ("T", "CLIENT", "TRACKING", "OFF", "OPTIN", "OPTOUT"),
    ("T", "CLIENT", "TRACKING", "off", "bogus"),
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "CLIENT", "CACHING", "yes"),
    ("T", "CLIENT", "CACHING", "no"),
    ("T", "CLIENT", "CACHING", "maybe"),
    ("T", "CLIENT", "CACHING"),
    ("T", "CLIENT", "TRACKINGINFO", "x"),
    ("T", "CLIENT", "GETREDIR", "x"),
    ("T", "CLIENT", "tracking", "on", "bcast", "prefix", "a", "prefix", "b"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ax"),  # overlaps an existing prefix
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "b"),  # the same as an existing one
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", ""),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "c", "PREFIX", "ab"),  # none added
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "CLIENT", "TRACKING", "ON"),  # BCAST on/off needs OFF first
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN"),
    ("T", "CLIENT", "TRACKING", "ON", "PREFIX", "zz"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN", "NOLOOP", "BCAST"),
    ("T", "CLIENT", "CACHING", "yes"),
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "CLIENT", "TRACKING", "OFF"),
    ("T", "CLIENT", "TRACKING", "ON", "NOLOOP"),
    ("T", "CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP"),
    ("T", "CLIENT", "TRACKING", "ON", "OPTIN"),  # default to OPTIN: allowed
    ("T", "CLIENT", "TRACKING", "ON"),  # OPTIN to default: allowed too
    with_ids("T", "CLIENT", "TRACKINGINFO"),
    ("T", "CLIENT", "TRACKING", "OFF"),
    ("W", "SET", "a", "1"),
]


@pytest.mark.parametrize("protocol", [3, 2], ids=["RESP3", "RESP2"])
def test_errors_like_redis(server, real_redis, protocol):
    assert_same(run_script(server, real_redis, {"T": protocol, "W": 2}, ERRORS),
                expect_pushes=False)
