"""Keyspace notifications end to end (notify-keyspace-events, __keyspace@<db>__:<key> and
__keyevent@<db>__:<event>): the same scripts run on gigakv and on Debian's redis-server 7.0 side by
side, and every message a listener gets is compared byte for byte, in order.

Each server gets a "writer" connection (RESP2) that runs the script and a "listener" connection
(RESP2, or RESP3 after HELLO 3) that sets notify-keyspace-events, subscribes to a marker channel
and then to the key channels (PSUBSCRIBE __key*@*__:* unless a test says otherwise). After each
step (its reply read) a third connection publishes a marker on a channel of its own, which no key
pattern matches; the listener reads until that marker, so a step's messages are exactly those that
came before it. Redis has written a command's notifications to the listener before it replies to
the writer, so the split is deterministic without waiting for quiet, and a server that sends
nothing fails fast instead of timing out. Every wait is bounded (STEP_TIMEOUT_S for a
marker, a few seconds for active expiry and eviction).

Compared, per step: the listener's frames, raw bytes, in order. Exceptions, where Redis's own
output is not ordered: active expiry and SCAN's lazy expiry walk a hash table (compared as sorted
lists); eviction picks random victims (compared by structure: only "evicted" messages, in
keyspace/keyevent pairs, for keys that existed, none twice). The writer's replies are shown in a
failure message but not compared (other tests own them; SPOP or DUMP replies legitimately differ).

Also: a RESP3 client that is subscribed and writes on the same connection (its pushes and its
replies, byte for byte, in the order Redis interleaves them: before, after or inside the reply,
wherever the command's code notifies), for a script of its own and for every family script's
plain commands; CONFIG SET / GET normalisation of the flags and the invalid-character error, and
the flags given on the command line.

With GIGAKV_E2E_TARGET=redis the "server under test" is redis-server too: the tests then compare
redis-server with itself, which proves the scripts deterministic where they claim to be.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from typing import Callable

import pytest

from e2e_support import _parse as _parse_resp, encode_command

MARKER = b"gigakv-test-marker"  # no __key*@*__:* pattern matches it
PATTERN = "__key*@*__:*"
STEP_TIMEOUT_S = 3.0  # for a step's marker to arrive
SETTLE_TIMEOUT_S = 3.0  # for active expiry / eviction to empty the databases
QUIET_S = 0.1  # at the end: nothing may follow the last marker
LAZY_EXPIRY_SLEEP_S = 0.05  # keys were given PX 1 / PEXPIRE PEXPIRE_MS
# Not 1: Redis's PEXPIRE deletes the key at once (a "del" event, no "expired") when its clock
# moved past now+ms between the two times it reads it in one command, which a loaded machine does
# for 1 ms now and then.
PEXPIRE_MS = "20"
MAX_PROBLEMS_SHOWN = 25
FAR_S = "4102444800"  # 2100-01-01
FAR_MS = "4102444800000"
BINARY_KEY = b"bin\r\n\x00\xff key"


# --------------------------------------------------------------------------------------------
# Script steps
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dumped:
    """An argument: the reply of this side's own `dump(key)` step (DUMP payloads may differ)."""

    key: str


@dataclass
class Step:
    """One step of a script: a command on a connection of each side, then a marker.

    conn: "w" (the writer) or the name of an extra connection (made on first use, in db 0).
    wait: read the command's reply (False: a blocking command that a later step serves).
    serves: after the reply, read the pending reply of this connection (a client it unblocked).
    unordered: compare the step's messages as sorted lists (hash-table order).
    check: instead of equality, a function (reference frames, candidate frames) returning a
      problem description or None.
    The others make special steps (see the helpers below): sleep (once, no marker), dump (DUMP a
    key on each side for a later `Dumped` argument), wait_blocked, active_expire, evict.
    """

    args: tuple = ()
    conn: str = "w"
    wait: bool = True
    serves: str | None = None
    unordered: bool = False
    sleep: float = 0.0
    dump: str | None = None
    wait_blocked: int | None = None
    active_expire: tuple = ()
    evict: tuple = ()
    check: Callable | None = None
    label: str = ""

    def describe(self) -> str:
        if self.label:
            return self.label
        parts = []
        for arg in self.args:
            if isinstance(arg, Dumped):
                parts.append(f"<DUMP {arg.key}>")
            elif isinstance(arg, bytes):
                parts.append(repr(arg))
            else:
                parts.append(str(arg))
        where = "" if self.conn == "w" else f"[{self.conn}] "
        return where + " ".join(parts)


def _step(item) -> Step:
    if isinstance(item, Step):
        return item
    return Step(args=tuple(item))


def unordered(*args) -> Step:
    return Step(args=args, unordered=True)


def on(conn: str, *args) -> Step:
    return Step(args=args, conn=conn)


def send_only(conn: str, *args) -> Step:
    return Step(args=args, conn=conn, wait=False)


def served(conn: str, *args) -> Step:
    return Step(args=args, serves=conn)


def sleep(seconds: float) -> Step:
    return Step(sleep=seconds, label=f"<sleep {seconds}s>")


def dump(key: str) -> Step:
    return Step(dump=key, label=f"<DUMP {key}>")


def wait_blocked(count: int) -> Step:
    return Step(wait_blocked=count, label=f"<wait for {count} blocked client(s)>")


def active_expire(*dbs: int) -> Step:
    return Step(active_expire=dbs, unordered=True,
                label=f"<DEBUG SET-ACTIVE-EXPIRE 1, wait until dbs {list(dbs)} are empty>")


# --------------------------------------------------------------------------------------------
# One server's connections
# --------------------------------------------------------------------------------------------


def _is_marker(value, token: bytes) -> bool:
    return (isinstance(value, list) and len(value) == 3 and value[0] == b"message"
            and value[1] == MARKER and value[2] == token)


def _text(item) -> str:
    return repr(item)[2:-1] if isinstance(item, bytes) else str(item)


def _show(value) -> str:
    """A frame for a failure message: '__keyspace@0__:k set' for a pmessage of PATTERN,
    'message <channel> <payload>' and the like otherwise; '>' marks a RESP3 push."""
    if isinstance(value, list):
        push = ">" if type(value).__name__ == "Push" else ""
        if len(value) == 4 and value[0] == b"pmessage" and value[1] == PATTERN.encode():
            return push + f"{_text(value[2])} {_text(value[3])}"
        return push + " ".join(_text(item) for item in value)
    return repr(value)


class Side:
    """One server's writer, listener and extra connections, set up for a script."""

    def __init__(self, server, name: str, flags: str | None, protocol: int,
                 subscriptions=(("PSUBSCRIBE", PATTERN),)):
        self.server, self.name = server, name
        self.conns = {}
        self.dumps: dict[str, bytes] = {}
        self.markers = 0
        self.broken = False
        writer = self.conn("w")
        assert writer.call_raw("FLUSHALL") == b"+OK\r\n"
        assert writer.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
        self.listener = server.raw()
        if protocol == 3:
            assert isinstance(self.listener.call("HELLO", "3"), dict)
        self.config_reply = None
        if flags is not None:
            self.config_reply = self.listener.call_raw("CONFIG", "SET", "notify-keyspace-events",
                                                       flags)
        self.listener.send_command("SUBSCRIBE", MARKER)
        self.listener.read_reply()
        self.subscribe_replies = []
        for command, *channels in subscriptions:
            self.listener.send_command(command, *channels)
            for _ in channels:
                self.subscribe_replies.append(self.listener.read_reply_raw()[1])

    def conn(self, name: str):
        if name not in self.conns:
            self.conns[name] = self.server.raw()
        return self.conns[name]

    def close(self) -> None:
        for conn in list(self.conns.values()) + [self.listener]:
            conn.close()

    # Steps -------------------------------------------------------------------------------------

    def execute(self, step: Step):
        """Runs one step's action; returns the reply (raw bytes) worth showing, if any."""
        if step.dump is not None:
            self.dumps[step.dump] = self.conn("w").call("DUMP", step.dump)
            return None
        if step.wait_blocked is not None:
            self._wait_blocked(step.wait_blocked)
            return None
        if step.active_expire:
            return self._active_expire(step.active_expire)
        if step.evict:
            return self._evict(step.evict)
        if not step.args:
            return None
        args = [self.dumps[arg.key] if isinstance(arg, Dumped) else arg for arg in step.args]
        conn = self.conn(step.conn)
        conn.send_command(*args)
        if not step.wait:
            return None
        reply = conn.read_reply_raw()[1]
        if step.serves is not None:
            reply += b" / served: " + self.conn(step.serves).read_reply_raw()[1]
        return reply

    def _wait_blocked(self, count: int) -> None:
        admin = self.conn("admin")
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while time.monotonic() < deadline:
            info = admin.call("INFO", "clients").decode()
            if f"blocked_clients:{count}\r\n" in info:
                return
            time.sleep(0.01)
        raise AssertionError(f"{self.name}: {count} blocked client(s) expected: {info!r}")

    def _dbs_empty(self, dbs) -> bool:
        admin = self.conn("admin")
        sizes = []
        for db in dbs:
            admin.call("SELECT", db)
            sizes.append(admin.call("DBSIZE"))
        admin.call("SELECT", 0)
        return all(size == 0 for size in sizes)

    def _settle(self, dbs) -> bool:
        """Waits (bounded) until the databases are empty; False if they are not by then."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while not self._dbs_empty(dbs):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def _active_expire(self, dbs):
        admin = self.conn("admin")
        assert admin.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "1") == b"+OK\r\n"
        emptied = self._settle(dbs)
        assert admin.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
        return b"emptied" if emptied else b"NOT emptied within %.1fs" % SETTLE_TIMEOUT_S

    def _evict(self, dbs):
        admin = self.conn("admin")
        assert admin.call_raw("CONFIG", "SET", "maxmemory-policy", "allkeys-random") == b"+OK\r\n"
        assert admin.call_raw("CONFIG", "SET", "maxmemory", "1") == b"+OK\r\n"
        trigger = admin.call_raw("SET", "trigger", "1")  # OOM in Redis once nothing is left
        emptied = self._settle(dbs)
        assert admin.call_raw("CONFIG", "SET", "maxmemory", "0") == b"+OK\r\n"
        return trigger + (b" emptied" if emptied else b" NOT emptied")

    # Messages ----------------------------------------------------------------------------------

    def mark_and_read(self):
        """Publishes the next marker and returns the listener's frames before it as
        [(value, raw)], and whether the marker came within STEP_TIMEOUT_S. The step's replies
        were read before: Redis has written the step's messages by then."""
        self.markers += 1
        token = b"step-%d" % self.markers
        # From a connection of its own: the writer may be inside MULTI.
        receivers = self.conn("marker").call("PUBLISH", MARKER, token)
        assert receivers == 1, f"{self.name}: PUBLISH of the marker reached {receivers!r}"
        listener = self.listener
        frames = []
        deadline = time.monotonic() + STEP_TIMEOUT_S
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return frames, False
                listener.sock.settimeout(remaining)
                value, raw = listener.read_reply_raw()
                if _is_marker(value, token):
                    return frames, True
                frames.append((value, raw))
        except socket.timeout:
            return frames, False
        finally:
            listener.sock.settimeout(listener.timeout)

    def leftovers(self):
        """Frames that arrive within QUIET_S after the last marker (there should be none)."""
        listener = self.listener
        frames = []
        try:
            while True:
                listener.sock.settimeout(QUIET_S)
                frames.append(listener.read_reply_raw())
        except socket.timeout:
            return frames
        finally:
            listener.sock.settimeout(listener.timeout)


# --------------------------------------------------------------------------------------------
# Running a script on both servers
# --------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    problems: list[str] = field(default_factory=list)
    reference_frames: list = field(default_factory=list)  # every (value, raw), in order
    steps: list = field(default_factory=list)  # (step, reference frames, candidate frames)

    def events(self) -> list[tuple[bytes, bytes]]:
        """The reference's messages as (channel, payload)."""
        return [(value[-2], value[-1]) for value, _ in self.reference_frames
                if isinstance(value, list) and value and value[0] in (b"pmessage", b"message")]

    def event_names(self) -> set[bytes]:
        names = set()
        for channel, payload in self.events():
            if channel.startswith(b"__keyspace@"):
                names.add(payload)
            elif channel.startswith(b"__keyevent@"):
                names.add(channel.split(b"__:", 1)[1])
        return names

    def report(self) -> str:
        shown = self.problems[:MAX_PROBLEMS_SHOWN]
        more = len(self.problems) - len(shown)
        return "\n".join([f"{len(self.problems)} step(s) differ from redis-server 7.0:"] + shown
                         + ([f"... and {more} more"] if more > 0 else []))


def _frames_text(frames) -> str:
    return "[" + ", ".join(_show(value) for value, _ in frames) + "]"


def _pair(server, real_redis, flags, protocol, subscriptions=(("PSUBSCRIBE", PATTERN),)):
    reference = Side(real_redis, "redis", flags, protocol, subscriptions)
    candidate = Side(server, "candidate", flags, protocol, subscriptions)
    return reference, candidate


def run_script(server, real_redis, script, flags: str | None = "KEA", protocol: int = 2,
               subscriptions=(("PSUBSCRIBE", PATTERN),)) -> Outcome:
    """Runs `script` step by step on redis-server (reference) and on the server under test."""
    reference, candidate = _pair(server, real_redis, flags, protocol, subscriptions)
    outcome = Outcome()
    try:
        if reference.config_reply != candidate.config_reply:
            outcome.problems.append(f"CONFIG SET notify-keyspace-events {flags!r}:\n"
                                    f"  redis  {reference.config_reply!r}\n"
                                    f"  gigakv {candidate.config_reply!r}")
        if reference.subscribe_replies != candidate.subscribe_replies:
            outcome.problems.append(f"subscription replies:\n"
                                    f"  redis  {reference.subscribe_replies!r}\n"
                                    f"  gigakv {candidate.subscribe_replies!r}")
        for index, item in enumerate(script):
            step = _step(item)
            if step.sleep:
                time.sleep(step.sleep)
                continue
            ref_reply = reference.execute(step)
            expected, ok = reference.mark_and_read()
            assert ok, (f"redis-server: no marker after step {index} {step.describe()} "
                        f"(a harness bug); frames so far {_frames_text(expected)}")
            outcome.reference_frames += expected
            got_reply = candidate.execute(step)
            got, ok = candidate.mark_and_read()
            outcome.steps.append((step, expected, got))
            where = f"step {index}: {step.describe()}"
            replies = f"  (replies: redis {ref_reply!r}, gigakv {got_reply!r})"
            if not ok:
                outcome.problems.append(
                    f"{where}\n  gigakv: the marker did not come within {STEP_TIMEOUT_S}s "
                    f"(stopping here); frames so far {_frames_text(got)}\n"
                    f"  redis  {_frames_text(expected)}\n{replies}")
                candidate.broken = True
                break
            if step.check is not None:
                problem = step.check(expected, got)
                if problem:
                    outcome.problems.append(f"{where}\n  {problem}\n{replies}")
                continue
            exp_raw, got_raw = [raw for _, raw in expected], [raw for _, raw in got]
            if step.unordered:
                exp_raw, got_raw = sorted(exp_raw), sorted(got_raw)
            if exp_raw != got_raw:
                exp_text, got_text = _frames_text(expected), _frames_text(got)
                if exp_text == got_text:  # the same messages, other bytes
                    exp_text, got_text = repr(exp_raw), repr(got_raw)
                outcome.problems.append(f"{where}\n  redis  {exp_text}\n  gigakv {got_text}\n"
                                        f"{replies}")
        if not candidate.broken:
            extra_ref, extra_got = reference.leftovers(), candidate.leftovers()
            if [raw for _, raw in extra_ref] != [raw for _, raw in extra_got]:
                outcome.problems.append(f"after the last step:\n  redis  {_frames_text(extra_ref)}"
                                        f"\n  gigakv {_frames_text(extra_got)}")
    finally:
        reference.close()
        candidate.close()
    return outcome


def assert_same(outcome: Outcome, expect_events: bool = True) -> None:
    assert not outcome.problems, outcome.report()
    if expect_events:  # so that the comparison cannot pass vacuously
        assert outcome.events(), "redis-server sent no notification at all for this script"


# --------------------------------------------------------------------------------------------
# Scripts, one per command family
# --------------------------------------------------------------------------------------------

GENERIC = [
    ["SET", "a", "1"], ["SET", "b", "1"], ["SET", "c", "1"],
    ["DEL", "a", "b", "missing"],
    ["UNLINK", "c", "missing"],
    ["DEL", "missing"],
    ["SET", BINARY_KEY, "v"], ["DEL", BINARY_KEY],
    ["SET", "t", "1"],
    ["EXPIRE", "t", "100"], ["PEXPIRE", "t", "100000"],
    ["EXPIREAT", "t", FAR_S], ["PEXPIREAT", "t", FAR_MS],
    ["EXPIRE", "t", "100", "NX"], ["EXPIRE", "t", "50", "GT"], ["EXPIRE", "t", "200", "LT"],
    ["PERSIST", "t"], ["PERSIST", "t"], ["PERSIST", "missing"],
    ["EXPIRE", "missing", "10"], ["PEXPIREAT", "missing", "1"],
    ["EXPIRE", "t", "-1"],  # a time in the past deletes the key
    ["SET", "t", "1"], ["PEXPIREAT", "t", "1"],
    ["SET", "t", "1"], ["EXPIREAT", "t", "1"],
    ["SET", "t", "1"], ["PEXPIRE", "t", "0"],
    ["SET", "src", "v", "EX", "100"],
    ["RENAME", "src", "dst"],  # destination missing
    ["SET", "other", "o"],
    ["RENAME", "dst", "other"],  # destination exists
    ["RENAME", "other", "other"],
    ["RENAME", "missing", "x"],
    ["RENAMENX", "other", "fresh"],
    ["SET", "taken", "t"],
    ["RENAMENX", "fresh", "taken"],
    ["COPY", "taken", "copy"], ["COPY", "taken", "copy"], ["COPY", "taken", "copy", "REPLACE"],
    ["COPY", "taken", "copy", "DB", "2"], ["COPY", "missing", "copy2"],
    ["MOVE", "copy", "3"], ["SET", "copy", "again"], ["MOVE", "copy", "3"],
    ["MOVE", "missing", "3"],
    dump("taken"),
    ["RESTORE", "restored", "0", Dumped("taken")],
    ["RESTORE", "restored", "0", Dumped("taken")],  # BUSYKEY
    ["RESTORE", "restored", "0", Dumped("taken"), "REPLACE"],
    ["RESTORE", "withttl", "100000", Dumped("taken")],
    ["RESTORE", "pastttl", "1", Dumped("taken"), "ABSTTL"],
    ["GETDEL", "restored"], ["GETDEL", "restored"],
    ["SET", "gx", "v"],
    ["GETEX", "gx", "EX", "100"], ["GETEX", "gx", "PX", "100000"], ["GETEX", "gx", "EXAT", FAR_S],
    ["GETEX", "gx", "PXAT", FAR_MS], ["GETEX", "gx", "PERSIST"], ["GETEX", "gx", "PERSIST"],
    ["GETEX", "gx"], ["GETEX", "gx", "EXAT", "1"], ["GETEX", "missing", "EX", "10"],
    ["SET", "k", "v"], ["TOUCH", "k"], ["TYPE", "k"], ["EXISTS", "k"],
]

STRINGS = [
    ["SET", "a", "1"], ["SET", "a", "2", "EX", "100"], ["SET", "b", "1", "PX", "100000"],
    ["SET", "a", "3", "KEEPTTL"], ["SET", "a", "4", "GET"], ["SET", "a", "5", "NX"],
    ["SET", "a", "6", "XX"], ["SET", "nx", "6", "XX"], ["SET", "a", "7", "XX", "GET", "EX", "200"],
    ["SET", "c", "1", "EXAT", FAR_S], ["SET", "c", "1", "PXAT", FAR_MS],
    ["SET", "past", "v", "EXAT", "1"], ["EXISTS", "past"],
    ["SETNX", "a", "x"], ["SETNX", "d", "x"],
    ["SETEX", "e", "10", "x"], ["SETEX", "e", "0", "x"], ["PSETEX", "f", "10000", "x"],
    ["MSET", "a", "1", "g", "2"], ["MSETNX", "h", "1", "i", "1"], ["MSETNX", "h", "1", "j", "1"],
    ["GETSET", "a", "9"], ["GETSET", "newgs", "9"],
    ["APPEND", "a", "x"], ["APPEND", "a", ""], ["APPEND", "ap", "x"],
    ["SETRANGE", "a", "5", "y"], ["SETRANGE", "a", "0", ""], ["SETRANGE", "sr", "0", ""],
    ["SETRANGE", "sr", "2", "z"],
    ["INCR", "n"], ["INCRBY", "n", "5"], ["INCRBY", "n", "0"], ["DECR", "n"], ["DECRBY", "n", "2"],
    ["INCRBYFLOAT", "n", "1.5"], ["INCRBYFLOAT", "fl", "0"], ["INCR", "a"],
    ["SETBIT", "bits", "7", "1"], ["SETBIT", "bits", "7", "1"], ["SETBIT", "bits", "100", "0"],
    ["SETBIT", "zero", "0", "0"],
    ["BITFIELD", "bf", "SET", "u8", "0", "255", "GET", "u8", "0"],
    ["BITFIELD", "bf", "GET", "u8", "0"],
    ["BITFIELD", "bf2", "GET", "u8", "0"], ["BITFIELD_RO", "bf", "GET", "u8", "0"],
    ["BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "10"],
    ["BITFIELD", "bf3", "INCRBY", "u2", "0", "1", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10"],
    ["BITOP", "OR", "dest", "a", "bits"], ["BITOP", "NOT", "dest", "bits"],
    ["BITOP", "AND", "dest", "nope1", "nope2"],  # empty result: deletes the existing dest
    ["BITOP", "AND", "dest2", "nope1", "nope2"],
    ["GETDEL", "g"], ["GET", "a"], ["STRLEN", "a"],
]

LISTS = [
    ["LPUSH", "l", "a", "b"], ["RPUSH", "l", "c"], ["LPUSHX", "l", "d"], ["RPUSHX", "l", "e"],
    ["LPUSHX", "nx", "d"], ["RPUSHX", "nx", "d"],
    ["LPOP", "l"], ["RPOP", "l"], ["LPOP", "l", "2"], ["LPOP", "l", "0"],
    ["RPOP", "l", "5"],  # empties the list
    ["LPOP", "l"], ["LPOP", "l", "3"],
    ["RPUSH", "l", "1", "2", "3", "2"],
    ["LINSERT", "l", "BEFORE", "2", "x"], ["LINSERT", "l", "AFTER", "nope", "x"],
    ["LINSERT", "nx", "BEFORE", "a", "b"],
    ["LSET", "l", "0", "y"], ["LSET", "l", "99", "y"],
    ["LREM", "l", "0", "x"], ["LREM", "l", "0", "zz"], ["LREM", "l", "-1", "2"],
    ["LTRIM", "l", "0", "-1"], ["LTRIM", "l", "0", "0"], ["LTRIM", "nx", "0", "1"],
    ["LTRIM", "l", "5", "10"],  # empties the list
    ["RPUSH", "l", "1", "2", "3"],
    ["RPOPLPUSH", "l", "m"], ["RPOPLPUSH", "l", "l"], ["RPOPLPUSH", "nx", "m"],
    ["LMOVE", "l", "m", "LEFT", "RIGHT"], ["LMOVE", "l", "m", "RIGHT", "LEFT"],  # empties l
    ["LMOVE", "l", "m", "LEFT", "RIGHT"],
    ["LMPOP", "2", "nx", "m", "LEFT", "COUNT", "2"], ["LMPOP", "1", "m", "RIGHT"],
    ["LMPOP", "1", "m", "RIGHT"],
    ["RPUSH", "q", "1", "2", "3", "4"],
    ["BLPOP", "nx", "q", "1"], ["BRPOP", "q", "1"],
    ["BLMOVE", "q", "q2", "RIGHT", "LEFT", "1"],
    ["BLMPOP", "1", "2", "nx", "q", "LEFT", "COUNT", "5"],  # empties q
    ["BRPOPLPUSH", "q2", "q3", "1"],  # empties q2
    ["LRANGE", "q3", "0", "-1"], ["LLEN", "q3"], ["LINDEX", "q3", "0"],
]

HASHES = [
    ["HSET", "h", "a", "1", "b", "2"], ["HSET", "h", "a", "1"], ["HMSET", "h", "c", "3"],
    ["HSETNX", "h", "a", "x"], ["HSETNX", "h", "d", "x"], ["HSETNX", "h2", "d", "x"],
    ["HINCRBY", "h", "n", "2"], ["HINCRBY", "h", "n", "0"], ["HINCRBY", "h3", "n", "1"],
    ["HINCRBYFLOAT", "h", "f", "1.5"], ["HINCRBY", "h", "a", "x"],
    ["HDEL", "h", "zz"], ["HDEL", "h", "a", "b"], ["HDEL", "nx", "a"],
    ["HDEL", "h", "c", "d", "n", "f"],  # empties the hash
    ["HDEL", "h", "x"],
    ["HDEL", "h2", "d"], ["HGET", "h3", "n"], ["HGETALL", "h3"],
]

SETS = [
    ["SADD", "s", "a", "b", "c"], ["SADD", "s", "a"],
    ["SREM", "s", "zz"], ["SREM", "s", "a"], ["SREM", "nx", "a"],
    ["SREM", "s", "b", "c"],  # empties the set
    ["SADD", "s", "1", "2", "3", "4", "5"],
    ["SPOP", "s"], ["SPOP", "s", "2"], ["SPOP", "s", "0"],
    ["SPOP", "s", "5"],  # takes the rest: empties the set
    ["SPOP", "s"], ["SPOP", "nx", "2"],
    ["SADD", "s", "1", "2", "3"], ["SPOP", "s", "3"],
    ["SADD", "s", "1", "2"],
    ["SMOVE", "s", "t", "1"], ["SMOVE", "s", "t", "9"], ["SMOVE", "s", "s", "2"],
    ["SMOVE", "s", "t", "2"],  # empties s
    ["SADD", "u", "x", "y"], ["SADD", "v", "y", "z"],
    ["SINTERSTORE", "d", "u", "v"], ["SUNIONSTORE", "d", "u", "v"], ["SDIFFSTORE", "d", "u", "v"],
    ["SINTERSTORE", "e", "u", "nx"],  # empty result, no destination: nothing
    ["SDIFFSTORE", "d", "u", "u"],  # empty result over an existing destination
    ["SUNIONSTORE", "d", "nx1", "nx2"],
    ["SADD", "d", "q"], ["SINTERSTORE", "d", "u", "nx"],
    ["SINTERCARD", "2", "u", "v"], ["SMEMBERS", "u"],
]

ZSETS = [
    ["ZADD", "z", "1", "a", "2", "b", "3", "c"], ["ZADD", "z", "1", "a"],
    ["ZADD", "z", "XX", "5", "nx"], ["ZADD", "z", "NX", "9", "a"], ["ZADD", "z", "INCR", "1", "a"],
    ["ZADD", "z", "GT", "CH", "0", "a"], ["ZADD", "z", "CH", "1", "a", "9", "b"],
    ["ZINCRBY", "z", "1", "b"], ["ZINCRBY", "z", "0", "b"], ["ZINCRBY", "zn", "1", "b"],
    ["ZREM", "z", "nope"], ["ZREM", "z", "b"], ["ZREM", "zn", "b"],  # empties zn
    ["ZADD", "z", "4", "d", "5", "e", "6", "f", "0", "g"],
    ["ZREMRANGEBYSCORE", "z", "100", "200"], ["ZREMRANGEBYSCORE", "z", "0", "0"],
    ["ZREMRANGEBYRANK", "z", "0", "0"], ["ZREMRANGEBYRANK", "z", "50", "60"],
    ["ZADD", "lx", "0", "a", "0", "b", "0", "c"],
    ["ZREMRANGEBYLEX", "lx", "[a", "[b"], ["ZREMRANGEBYLEX", "lx", "[x", "[y"],
    ["ZREMRANGEBYLEX", "lx", "-", "+"],  # empties lx
    ["ZPOPMIN", "z"], ["ZPOPMAX", "z", "2"], ["ZPOPMIN", "z", "0"],
    ["ZPOPMIN", "z", "10"],  # empties z
    ["ZPOPMIN", "z"], ["ZPOPMAX", "nx"],
    ["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"],
    ["BZPOPMIN", "nx", "z", "1"], ["BZPOPMAX", "z", "1"],
    ["ZMPOP", "2", "nx", "z", "MIN", "COUNT", "1"], ["ZMPOP", "1", "z", "MAX", "COUNT", "5"],
    ["ZMPOP", "1", "z", "MIN"],
    ["ZADD", "z", "1", "a"], ["BZMPOP", "1", "1", "z", "MAX"],
    ["ZADD", "z1", "1", "a", "2", "b"], ["ZADD", "z2", "1", "b", "2", "c"],
    ["ZUNIONSTORE", "d", "2", "z1", "z2"], ["ZINTERSTORE", "d", "2", "z1", "z2"],
    ["ZDIFFSTORE", "d", "2", "z1", "z2"], ["ZRANGESTORE", "d", "z1", "0", "-1"],
    ["ZINTERSTORE", "d", "2", "z1", "nx"],  # empty result over an existing destination
    ["ZINTERSTORE", "d", "2", "z1", "nx"],  # empty result, no destination
    ["ZUNIONSTORE", "e", "1", "nx"], ["ZDIFFSTORE", "d", "1", "z1"],
    ["ZDIFFSTORE", "d", "2", "z1", "z1"],
    ["ZRANGESTORE", "d", "z1", "0", "-1"], ["ZRANGESTORE", "d", "z1", "5", "10"],
    ["ZRANGE", "z1", "0", "-1"], ["ZSCORE", "z1", "a"],
]

SORT_STORE = [
    ["RPUSH", "l", "3", "1", "2"], ["SADD", "s", "b", "a"],
    ["SORT", "l", "STORE", "d"], ["SORT", "l", "STORE", "d"], ["SORT", "s", "ALPHA", "STORE", "d"],
    ["SORT", "nx", "STORE", "d"],  # empty result over an existing destination
    ["SORT", "nx", "STORE", "d"],
    ["SORT", "l", "LIMIT", "5", "5", "STORE", "d2"],
    ["SET", "d3", "x"], ["SORT", "l", "STORE", "d3"],
    ["SORT", "l", "BY", "nosort", "STORE", "d4"],
    ["SORT", "l"], ["SORT_RO", "l"],
]

KEYMISS = [
    ["SET", "present", "v"], ["HSET", "h", "f", "v"],
    ["GET", "miss"], ["GET", "present"],
    ["EXISTS", "miss"], ["EXISTS", "present", "miss", "miss2"],
    ["TYPE", "miss"], ["TTL", "miss"], ["PTTL", "miss"],
    ["OBJECT", "ENCODING", "miss"],  # no keymiss in Redis
    ["OBJECT", "ENCODING", "present"],
    ["MGET", "miss", "present", "miss2"],
    ["STRLEN", "miss"], ["GETRANGE", "miss", "0", "1"],
    ["HGET", "miss", "f"], ["HGET", "h", "nofield"], ["HGETALL", "miss"],
    ["HGET", "present", "f"],  # WRONGTYPE
    ["LRANGE", "miss", "0", "-1"], ["LINDEX", "miss", "0"],
    ["SMEMBERS", "miss"], ["SRANDMEMBER", "miss"],
    ["ZSCORE", "miss", "a"], ["ZRANGE", "miss", "0", "-1"],
    ["SUNION", "miss", "miss2"], ["SINTERSTORE", "d", "miss", "miss2"],
    ["DUMP", "miss"], ["GETDEL", "miss"], ["GETEX", "miss"], ["GETSET", "miss3", "x"],
    ["COPY", "miss", "x"], ["TOUCH", "miss"], ["SORT", "miss"], ["BITCOUNT", "miss"],
    ["LPOP", "miss"], ["EXPIRE", "miss", "10"], ["DEL", "miss"], ["PERSIST", "miss"],
    ["APPEND", "miss4", "x"], ["INCR", "miss5"],
    ["SELECT", "2"], ["GET", "miss"], ["SELECT", "0"],
]

NEW_KEYS = [
    ["SET", "a", "1"], ["SET", "a", "2"], ["SET", "nxk", "1", "NX"], ["SET", "nxk", "2", "XX"],
    ["LPUSH", "l", "x"], ["LPUSH", "l", "y"], ["RPUSH", "l2", "x"],
    ["SADD", "s1", "1", "2"], ["SADD", "s2", "2"], ["HSET", "h", "f", "v"], ["ZADD", "z", "1", "a"],
    ["INCR", "n"], ["INCRBYFLOAT", "fl", "1"], ["APPEND", "ap", "x"], ["SETRANGE", "sr", "1", "x"],
    ["SETBIT", "sb", "1", "1"], ["BITFIELD", "bf", "SET", "u8", "0", "1"],
    ["MSET", "m1", "1", "m2", "2"], ["MSETNX", "m3", "1"], ["GETSET", "gs", "1"],
    ["HINCRBY", "h2", "f", "1"], ["ZINCRBY", "z2", "1", "a"],
    ["SET", "b", "1"],
    ["RENAME", "a", "b"],  # onto an existing destination
    ["RENAME", "b", "c"],  # onto a missing one
    ["RENAMENX", "c", "d"],
    ["SINTERSTORE", "dst", "s1", "s2"],  # new destination
    ["SINTERSTORE", "dst", "s1", "s2"],  # existing destination
    ["SUNIONSTORE", "dst2", "s1", "s2"],
    ["ZUNIONSTORE", "zd", "1", "z"], ["ZUNIONSTORE", "zd", "1", "z"],
    ["SORT", "l", "ALPHA", "STORE", "sorted"], ["SORT", "l", "ALPHA", "STORE", "sorted"],
    ["BITOP", "OR", "bo", "d"],
    ["COPY", "d", "e"], ["COPY", "d", "e", "REPLACE"], ["COPY", "d", "e2", "DB", "1"],
    ["MOVE", "e", "3"],
    dump("d"),
    ["RESTORE", "r", "0", Dumped("d")], ["RESTORE", "r", "0", Dumped("d"), "REPLACE"],
    ["LMOVE", "l", "lm", "LEFT", "LEFT"], ["RPOPLPUSH", "l", "lm"], ["SMOVE", "s1", "sm", "1"],
    ["LINSERT", "lm", "BEFORE", "x", "w"], ["LSET", "lm", "0", "v"],
]

FAMILIES = {
    "generic": GENERIC,
    "strings": STRINGS,
    "lists": LISTS,
    "hashes": HASHES,
    "sets": SETS,
    "zsets": ZSETS,
    "sort_store": SORT_STORE,
    "keymiss": KEYMISS,
    "new": NEW_KEYS,
}

# Each family with its own flags in RESP2 and RESP3, and with every class ('KEAnm') in RESP2.
_FAMILY_FLAGS = {"keymiss": "KEm", "new": "KEn"}
FAMILY_CASES = []
for _name in FAMILIES:
    _flags = _FAMILY_FLAGS.get(_name, "KEA")
    FAMILY_CASES += [pytest.param(_name, _flags, 2, id=f"{_name}-{_flags}-RESP2"),
                     pytest.param(_name, _flags, 3, id=f"{_name}-{_flags}-RESP3"),
                     pytest.param(_name, "KEAnm", 2, id=f"{_name}-KEAnm-RESP2")]


@pytest.mark.parametrize("family, flags, protocol", FAMILY_CASES)
def test_family_notifications_match_redis(server, real_redis, family, flags, protocol):
    outcome = run_script(server, real_redis, FAMILIES[family], flags, protocol)
    assert_same(outcome)


# Expiry: lazy (a lookup finds the key past its deadline) and active (the server's own cycle).
EXPIRY = [
    ["SET", "a", "1"], ["PEXPIRE", "a", PEXPIRE_MS],
    ["SET", "b", "1", "PX", "1"], ["SET", "c", "1", "PX", "1"], ["SET", "e", "1", "PX", "1"],
    ["RPUSH", "d", "1"], ["PEXPIRE", "d", PEXPIRE_MS],
    ["HSET", "h", "f", "v"], ["PEXPIRE", "h", PEXPIRE_MS],
    ["SET", "f", "1", "PX", "1"], ["SET", "g", "1", "PX", "1"],
    ["SET", "keep", "1", "EX", "1000"],
    ["SELECT", "3"], ["SET", "x", "1", "PX", "1"], ["SELECT", "0"],
    sleep(LAZY_EXPIRY_SLEEP_S),
    ["GET", "a"],  # a read
    ["SET", "b", "2"],  # a write over an expired key
    ["EXISTS", "c"], ["TTL", "e"],
    ["LPUSH", "d", "x"], ["HGET", "h", "f"],
    ["DBSIZE"],
    ["KEYS", "*"],  # Redis 7.0's KEYS skips expired keys without deleting them
    unordered("SCAN", "0", "COUNT", "1000"),  # ...SCAN deletes them, in hash-table order
    ["SELECT", "3"], ["GET", "x"], ["SELECT", "0"],
    # Active expiry, in db 0 and db 5.
    ["SET", "p1", "1", "PX", "1"], ["SET", "p2", "1", "PX", "1"], ["LPUSH", "p3", "x"],
    ["PEXPIRE", "p3", PEXPIRE_MS], ["DEL", "keep", "b", "d"],
    ["SELECT", "5"], ["SET", "q1", "1", "PX", "1"], ["SADD", "q2", "m"], ["PEXPIRE", "q2", PEXPIRE_MS],
    ["SELECT", "0"],
    sleep(LAZY_EXPIRY_SLEEP_S),
    active_expire(0, 5),
]


@pytest.mark.parametrize("flags", ["KEA", "KEAm", "Kx", "Ex"])
def test_expiry_notifications_match_redis(server, real_redis, flags):
    outcome = run_script(server, real_redis, EXPIRY, flags)
    assert_same(outcome)
    assert b"expired" in outcome.event_names()
    last_step, expected, _ = outcome.steps[-1]
    assert last_step.active_expire and expected, "redis-server: no active expiry messages"


# Flag filtering: one script touching every class, under many flag sets.
FLAG_SCRIPT = [
    ["SET", "s", "1"], ["APPEND", "s", "x"], ["INCR", "n"],
    ["LPUSH", "l", "x"], ["RPOP", "l"],
    ["SADD", "st", "m"], ["HSET", "h", "f", "v"], ["ZADD", "z", "1", "m"],
    ["EXPIRE", "s", "100"], ["PERSIST", "s"], ["RENAME", "s", "s2"], ["DEL", "st"],
    ["GET", "missing"], ["EXISTS", "missing"],
    ["SET", "px", "1", "PX", "1"], sleep(LAZY_EXPIRY_SLEEP_S), ["GET", "px"],
    ["SELECT", "1"], ["SET", "db1", "v"], ["GET", "missing1"], ["SELECT", "0"],
    ["FLUSHDB"], ["SET", "b", "1"], ["SWAPDB", "0", "1"], ["SWAPDB", "0", "1"], ["FLUSHALL"],
    ["FLUSHALL", "ASYNC"], ["FLUSHDB", "SYNC"],
]

FLAG_SETS = ["KEA", "AKE", "Kl", "E$", "Kx", "Ex", "Eg", "Ks", "Eh", "Kz", "KA", "EA", "KEn", "KEm",
             "KEAnm", "Kg$", "E$lshzxe", "KEAx", "Knm", "A", "", "g$lshz", "Kt", "Ke", "Kd"]
# Flag sets under which Redis sends nothing for FLAG_SCRIPT (no K/E, or only classes it lacks).
QUIET_FLAG_SETS = {"A", "", "g$lshz", "Kt", "Ke", "Kd"}


@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: f"flags[{f}]")
def test_flag_filtering_matches_redis(server, real_redis, flags):
    outcome = run_script(server, real_redis, FLAG_SCRIPT, flags)
    assert_same(outcome, expect_events=flags not in QUIET_FLAG_SETS)
    names = outcome.event_names()
    if flags in ("KEA", "AKE", "KA"):  # 'A' is every class but 'n' and 'm'
        assert names and not names & {b"new", b"keymiss"}, names
    if flags == "KEAnm":
        assert {b"new", b"keymiss", b"expired"} <= names, names


DATABASES = [
    ["SELECT", "3"],
    ["SET", "k", "v"], ["LPUSH", "l", "x"], ["EXPIRE", "k", "100"], ["GET", "miss"],
    ["MOVE", "k", "0"], ["COPY", "l", "l2", "DB", "7"], ["DEL", "l"],
    ["SELECT", "0"], ["COPY", "k", "k3", "DB", "3"], ["RENAME", "k", "k0"],
    ["SWAPDB", "0", "3"], ["SET", "after_swap", "1"],
    ["SELECT", "15"], ["SADD", "s", "m"], ["FLUSHDB"], ["SELECT", "0"],
]


@pytest.mark.parametrize("protocol", [2, 3], ids=["RESP2", "RESP3"])
def test_databases_in_channel_names_match_redis(server, real_redis, protocol):
    outcome = run_script(server, real_redis, DATABASES, "KEAm", protocol)
    assert_same(outcome)
    channels = {channel for channel, _ in outcome.events()}
    assert b"__keyspace@3__:k" in channels and b"__keyevent@7__:copy_to" in channels


# Plain SUBSCRIBE to a few key channels (message frames), and a narrower pattern.
CHANNEL_SUBSCRIPTIONS = (
    ("SUBSCRIBE", "__keyspace@0__:k", "__keyevent@0__:del", "__keyevent@3__:set"),
    ("PSUBSCRIBE", "__keyspace@0__:l*"),
)
CHANNEL_SCRIPT = [
    ["SET", "k", "v"], ["SET", "other", "v"], ["DEL", "k", "other"], ["LPUSH", "list", "x"],
    ["RPOP", "list"], ["SELECT", "3"], ["SET", "k", "v"], ["DEL", "k"], ["SELECT", "0"],
]


@pytest.mark.parametrize("protocol", [2, 3], ids=["RESP2", "RESP3"])
def test_channel_subscriptions_match_redis(server, real_redis, protocol):
    outcome = run_script(server, real_redis, CHANNEL_SCRIPT, "KEA", protocol,
                         subscriptions=CHANNEL_SUBSCRIPTIONS)
    assert_same(outcome)


# Transactions: a committed EXEC's events come at EXEC, in command order; an aborted or
# discarded one (or one whose WATCH fired) sends none.
TRANSACTIONS = [
    ["MULTI"], ["SET", "a", "1"], ["LPUSH", "l", "x", "y"], ["INCR", "n"], ["DEL", "a"],
    ["RPOP", "l"], ["LPOP", "l"], ["EXPIRE", "n", "100"], ["EXEC"],
    ["MULTI"], ["SET", "a", "1"], ["NOSUCHCOMMAND"], ["EXEC"],  # EXECABORT
    ["MULTI"], ["SET", "a", "1"], ["DISCARD"],
    ["SET", "w", "1"], ["WATCH", "w"], on("other", "SET", "w", "2"),
    ["MULTI"], ["SET", "a", "1"], ["EXEC"],  # the WATCH fired: nil, no events
    ["SET", "str", "s"],
    ["MULTI"], ["SET", "a", "1"], ["LPUSH", "str", "x"], ["SADD", "s", "m"], ["EXEC"],  # WRONGTYPE
    ["MULTI"], ["SELECT", "2"], ["SET", "a", "2"], ["SELECT", "0"], ["GET", "gone"], ["EXEC"],
]


@pytest.mark.parametrize("flags, protocol", [("KEA", 2), ("KEA", 3), ("KEAnm", 2)],
                         ids=["KEA-RESP2", "KEA-RESP3", "KEAnm-RESP2"])
def test_transaction_notifications_match_redis(server, real_redis, flags, protocol):
    outcome = run_script(server, real_redis, TRANSACTIONS, flags, protocol)
    assert_same(outcome)


# Blocked clients served by another client's write: the write's events, then the pop's.
BLOCKING_SERVED = [
    send_only("b1", "BLPOP", "q", "5"), wait_blocked(1),
    served("b1", "RPUSH", "q", "1", "2"),
    send_only("b1", "BLMOVE", "q2", "dst", "LEFT", "RIGHT", "5"), wait_blocked(1),
    served("b1", "LPUSH", "q2", "x"),
    send_only("b1", "BZPOPMIN", "z", "5"), wait_blocked(1),
    served("b1", "ZADD", "z", "1", "a"),
    send_only("b1", "BLMPOP", "5", "1", "q3", "RIGHT", "COUNT", "2"), wait_blocked(1),
    served("b1", "RPUSH", "q3", "a", "b", "c"),
    send_only("b1", "BLPOP", "q4", "5"), wait_blocked(1),
    ["MULTI"], ["RPUSH", "q4", "1"], ["SET", "after", "1"],
    served("b1", "EXEC"),  # served after the whole EXEC
]


@pytest.mark.parametrize("flags", ["KEA", "KEAn"])
def test_blocked_clients_served_notifications_match_redis(server, real_redis, flags):
    outcome = run_script(server, real_redis, BLOCKING_SERVED, flags)
    assert_same(outcome)


# --------------------------------------------------------------------------------------------
# Eviction: Redis picks victims at random; compare structure, not victims.
# --------------------------------------------------------------------------------------------

EVICTABLE = {(0, b"k%d" % i) for i in range(20)} | {
    (0, b"list"), (0, b"hash"), (0, b"set"), (0, b"zset"), (2, b"other"), (2, b"other2")}


def _eviction_problem(frames, evictable) -> str | None:
    """None if `frames` are only 'evicted' messages for keys of `evictable`, none twice, at least
    one; with both channels, each keyspace message followed by its keyevent message."""
    events = [value for value, _ in frames if value[0] == b"pmessage"]
    # The trigger write may be accepted once some room was made (its own events are not ours).
    events = [value for value in events
              if value[2] != b"__keyspace@0__:trigger" and value[3] != b"trigger"]
    if not events:
        return "no evicted messages"
    victims = {"keyspace": [], "keyevent": []}
    for value in events:
        channel, payload = value[2], value[3]
        if channel.startswith(b"__keyspace@") and payload == b"evicted":
            db_text, key = channel[len(b"__keyspace@"):].split(b"__:", 1)
            victims["keyspace"].append((int(db_text), key))
        elif channel.startswith(b"__keyevent@") and channel.endswith(b"__:evicted"):
            db_text = channel[len(b"__keyevent@"):-len(b"__:evicted")]
            victims["keyevent"].append((int(db_text), payload))
        else:
            return f"not an 'evicted' message: {_show(value)}"
    for kind, keys in victims.items():
        for db, key in keys:
            if (db, key) not in evictable:
                return f"{kind}: evicted a key that did not exist: db {db} {key!r}"
        if len(set(keys)) != len(keys):
            return f"{kind}: a key evicted twice: {keys}"
    if victims["keyspace"] and victims["keyevent"]:
        if victims["keyspace"] != victims["keyevent"]:
            return "the keyspace and keyevent messages name different victims"
        for space, event in zip(events[0::2], events[1::2]):
            if not (space[2].startswith(b"__keyspace@") and event[2].startswith(b"__keyevent@")):
                return f"not keyspace/keyevent pairs: {_show(space)}, {_show(event)}"
    return None


def _check_eviction(expected, got) -> str | None:
    problem = _eviction_problem(expected, EVICTABLE)
    assert problem is None, f"redis-server's own eviction messages: {problem}"
    problem = _eviction_problem(got, EVICTABLE)
    if problem:
        return (f"gigakv: {problem}\n  redis  {_frames_text(expected)}\n"
                f"  gigakv {_frames_text(got)}")
    return None


EVICTION = [
    ["MSET"] + [item for i in range(20) for item in (b"k%d" % i, b"x" * 100)],
    ["RPUSH", "list", "a", "b"], ["HSET", "hash", "f", "v"], ["SADD", "set", "m"],
    ["ZADD", "zset", "1", "m"],
    ["SELECT", "2"], ["SET", "other", "1"], ["SET", "other2", "1", "EX", "1000"], ["SELECT", "0"],
    Step(evict=(0, 2), check=_check_eviction,
         label="<maxmemory-policy allkeys-random, maxmemory 1, SET trigger, wait, maxmemory 0>"),
]


@pytest.mark.parametrize("flags", ["KEA", "Ke", "Ee"])
def test_eviction_notifications(server, real_redis, flags):
    outcome = run_script(server, real_redis, EVICTION, flags)
    assert not outcome.problems, outcome.report()
    assert b"evicted" in outcome.event_names()


# --------------------------------------------------------------------------------------------
# RESP3: a client that is subscribed and writes on the same connection
# --------------------------------------------------------------------------------------------
#
# Redis 7.0 writes a notification to a subscriber's output buffer the moment the command calls
# notifyKeyspaceEvent, so on the writer's own connection its pushes land before the reply, after
# it, or inside it (between the header of an array reply and its elements, e.g. ZPOPMIN), exactly
# where the command's code notifies. These tests compare that interleaving byte for byte.

SAME_CONNECTION = [
    ["SET", "k", "v"], ["GET", "k"], ["GET", "missing"], ["SET", "k2", "v", "EX", "100"],
    ["RPUSH", "l", "a", "b"], ["LPOP", "l"], ["LPOP", "l"],  # the second one empties l
    ["DEL", "k", "missing"], ["INCR", "n"], ["APPEND", "n", "0"],
    ["HSET", "h", "f", "v"], ["HDEL", "h", "f"], ["SADD", "s", "a"], ["SPOP", "s"],
    ["ZADD", "z", "1", "a"], ["ZPOPMIN", "z"], ["EXPIRE", "n", "100"], ["RENAME", "n", "m"],
    ["RPUSH", "q", "x"], ["BLPOP", "q", "1"], ["LMOVE", "nope", "d", "LEFT", "LEFT"],
    ["PUBLISH", "__keyspace@0__:fake", "hello"],
    ["MULTI"], ["SET", "t", "1"], ["LPUSH", "tl", "1"], ["GET", "nothere"], ["DEL", "t", "tl"],
    ["EXEC"],
    ["SET", "p", "1", "PX", "1"], "sleep", ["GET", "p"],
    ["UNLINK", "k2"], ["FLUSHALL"],
]

# Commands whose replies (not their pushes) legitimately differ between servers: random members,
# or set members in hash-table order. Their bulk strings outside pushes are masked before the
# comparison (same lengths, same places), so the interleaving is still compared byte for byte.
RANDOM_REPLY_COMMANDS = {"SPOP", "SRANDMEMBER", "SMEMBERS", "SUNION", "SINTER", "SDIFF"}


def _until_ping(conn, token: bytes) -> list:
    """The frames `conn` gets up to (and with) the reply to PING token, as [(value, raw)];
    bounded (a missing reply ends the list with a "<timeout>" entry)."""
    conn.send_command("PING", token)
    frames = []
    deadline = time.monotonic() + STEP_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            conn.sock.settimeout(max(deadline - time.monotonic(), 0.001))
            value, raw = conn.read_reply_raw()
            frames.append((value, raw))
            if value == token:
                return frames
    except socket.timeout:
        pass
    finally:
        conn.sock.settimeout(conn.timeout)
    frames.append(("<timeout: no PING reply>", b"<timeout>"))
    return frames


def _timed_out(frames) -> bool:
    return frames[-1][1] == b"<timeout>"


def _mask_reply_bulks(raw: bytes) -> bytes:
    """`raw` (whole RESP frames) with the payload of every bulk string that is not inside a push
    replaced by '?'s of the same length."""
    out = bytearray()

    def walk(pos: int, in_push: bool) -> int:
        end = raw.index(b"\r\n", pos)
        kind, line = raw[pos:pos + 1], raw[pos + 1:end]
        out.extend(raw[pos:end + 2])
        pos = end + 2
        if kind in (b"$", b"=", b"!"):
            length = int(line)
            if length >= 0:
                payload = raw[pos:pos + length]
                out.extend(payload if in_push else b"?" * length)
                out.extend(b"\r\n")
                pos += length + 2
        elif kind in (b"*", b"~", b">", b"%", b"|"):
            count = max(int(line), 0) * (2 if kind in (b"%", b"|") else 1)
            for _ in range(count):
                pos = walk(pos, in_push or kind == b">")
            if kind == b"|":  # an attribute: the reply it decorates follows
                pos = walk(pos, in_push)
        return pos

    pos = 0
    try:
        while pos < len(raw):
            pos = walk(pos, False)
    except (ValueError, IndexError):  # not RESP: compared as it is
        return raw
    return bytes(out)


def _push_events(values) -> list[str]:
    """Names for a run of pushes: a key's keyspace push followed by its keyevent push for the
    same event counts once ('rpush'); any other push is shown whole."""
    names, pending = [], None  # pending: (event, key) of a keyspace push not yet paired
    for push in values:
        event = key = None
        if len(push) == 4 and push[0] == b"pmessage":
            channel, payload = push[2], push[3]
            if channel.startswith(b"__keyspace@"):
                event, key, kind = payload, channel.split(b"__:", 1)[1], "space"
            elif channel.startswith(b"__keyevent@"):
                event, key, kind = channel.split(b"__:", 1)[1], payload, "event"
        if event is not None and kind == "event" and pending == (event, key):
            pending = None
            continue
        names.append(_text(event) if event is not None else "push(" + _show(push) + ")")
        pending = (event, key) if event is not None and kind == "space" else None
    return names


def _layout(frames) -> str:
    """Where a step's pushes are relative to its reply, read from the bytes with every push taken
    out of band: 'new rpush REPLY', 'REPLY del', or, for pushes written in the middle of a reply,
    its parts by RESP type around them: 'REPLY[*2 zpopmin $ ,] del'. The PING reply that ends a
    step is left out."""
    timed_out = bool(frames) and _timed_out(frames)
    if timed_out:
        frames = frames[:-1]
    if frames and isinstance(frames[-1][0], bytes) and frames[-1][0].startswith(b"after-"):
        frames = frames[:-1]
    raw = bytearray(b"".join(raw for _, raw in frames))
    try:
        return _layout_of(raw) + (" <timeout>" if timed_out else "")
    except Exception:  # malformed or truncated output: the bytes are shown too
        return "<not RESP>"


def _layout_of(raw: bytearray) -> str:
    """_layout's text for whole RESP frames."""
    tokens = []  # ("push", Push) or ("part", type) or ("end", None): a reply is complete
    remaining = []  # elements still to come, per open aggregate of the reply
    pos = 0
    while pos < len(raw):
        kind = bytes(raw[pos:pos + 1])
        if kind == b">":
            value, pos = _parse_resp(raw, pos)
            tokens.append(("push", value))
            continue
        end = raw.index(b"\r\n", pos)
        line = bytes(raw[pos + 1:end])
        pos = end + 2
        count = 0
        if kind in (b"$", b"=", b"!") and int(line) >= 0:
            pos += int(line) + 2
        elif kind in (b"*", b"~", b"%", b"|") and int(line) > 0:
            count = int(line) * (2 if kind in (b"%", b"|") else 1) + (kind == b"|")
        tokens.append(("part", kind.decode() + (line.decode() if count else "")))
        if count:
            remaining.append(count)
            continue
        while remaining:  # one element done: close the aggregates it completes
            remaining[-1] -= 1
            if remaining[-1]:
                break
            remaining.pop()
        if not remaining:
            tokens.append(("end", None))
    words, reply, pushes = [], [], []
    interrupted = False  # pushes came in the middle of the current reply
    for what, item in tokens:
        if what == "push":
            pushes.append(item)
            continue
        if pushes:
            interrupted = interrupted or bool(reply)
            (reply if reply else words).extend(_push_events(pushes))
            pushes = []
        if what == "part":
            reply.append(item)
        else:
            words.append("REPLY[" + " ".join(reply) + "]" if interrupted else "REPLY")
            reply, interrupted = [], False
    words += _push_events(pushes)
    if reply:
        words.append("INCOMPLETE[" + " ".join(reply) + "]")
    return " ".join(words)


def _own_connection_steps(script):
    """The steps of `script` that run on the writer's connection: ('sleep', seconds), ('dump',
    key) or ('command', args, description). Steps on other connections, steps that leave a client
    blocked or serve one, and the other special steps (active expiry, eviction, checks, unordered
    steps) are left out; blocking commands that are served at once stay."""
    steps = []
    for item in script:
        if item == "sleep":
            steps.append(("sleep", LAZY_EXPIRY_SLEEP_S))
            continue
        step = _step(item)
        if step.sleep:
            steps.append(("sleep", step.sleep))
        elif step.dump is not None:
            steps.append(("dump", step.dump))
        elif (step.args and step.conn == "w" and step.wait and step.serves is None
              and step.check is None and not step.unordered):
            steps.append(("command", step.args, step.describe()))
    return steps


def _command_name(args) -> str:
    first = args[0]
    return (first.decode() if isinstance(first, bytes) else str(first)).upper()


def _own_connection_problems(server, real_redis, flags: str, script) -> tuple[list[str], int]:
    """Runs `script` on one RESP3 connection per server that is PSUBSCRIBEd to PATTERN, with
    notify-keyspace-events `flags`; after each command a PING ends the step's output. Returns the
    steps whose output (pushes and replies, raw bytes, in order) differs, and how many pushes
    redis-server sent."""
    conns = []
    for srv in (real_redis, server):
        conn = srv.raw()
        assert conn.call_raw("FLUSHALL") == b"+OK\r\n"
        assert conn.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
        assert isinstance(conn.call("HELLO", "3"), dict)
        assert conn.call_raw("CONFIG", "SET", "notify-keyspace-events", flags) == b"+OK\r\n"
        conn.send_command("PSUBSCRIBE", PATTERN)
        conns.append(conn)
    problems = []
    confirmations = [conn.read_reply_raw()[1] for conn in conns]
    if confirmations[0] != confirmations[1]:
        problems.append(f"PSUBSCRIBE: redis {confirmations[0]!r}, gigakv {confirmations[1]!r}")
    dumps = [{}, {}]  # per side: key -> its DUMP payload
    pushes = 0
    in_multi = False
    try:
        for index, step in enumerate(_own_connection_steps(script)):
            if step[0] == "sleep":
                time.sleep(step[1])
                continue
            token = b"after-%d" % index
            if step[0] == "dump":  # a read of an existing key: no pushes, payloads may differ
                for side, conn in enumerate(conns):
                    conn.send_command("DUMP", step[1])
                    frames = _until_ping(conn, token)
                    assert not _timed_out(frames), f"DUMP {step[1]}: {_frames_text(frames)}"
                    dumps[side][step[1]] = frames[-2][0]
                continue
            _, args, described = step
            name = _command_name(args)
            outputs = []
            for side, conn in enumerate(conns):
                conn.send(encode_command(*[dumps[side][arg.key] if isinstance(arg, Dumped)
                                           else arg for arg in args]))
                if name == "MULTI" or (in_multi and name not in ("EXEC", "DISCARD")):
                    outputs.append([conn.read_reply_raw()])  # PING would be queued: one reply
                else:
                    outputs.append(_until_ping(conn, token))
            in_multi = (in_multi or name == "MULTI") and name not in ("EXEC", "DISCARD")
            expected, got = outputs
            assert not _timed_out(expected), f"redis-server: {_frames_text(expected)}"
            pushes += sum(raw.startswith(b">") for _, raw in expected)
            exp_raw = b"".join(raw for _, raw in expected)
            got_raw = b"".join(raw for _, raw in got)
            if name in RANDOM_REPLY_COMMANDS and not _timed_out(got):
                exp_raw, got_raw = _mask_reply_bulks(exp_raw), _mask_reply_bulks(got_raw)
            if exp_raw != got_raw:
                # Shown as the order (pushes out of band), parsed (a push inside an array reply
                # parses as one of its elements), and as the bytes.
                problems.append(f"step {index}: {described}\n"
                                f"  redis  order: {_layout(expected)}\n"
                                f"  gigakv order: {_layout(got)}\n"
                                f"  redis  {_frames_text(expected)}\n"
                                f"  gigakv {_frames_text(got)}\n"
                                f"  redis  {exp_raw!r}\n  gigakv {got_raw!r}")
                if _timed_out(got):
                    break
    finally:
        for conn in conns:
            conn.close()
    return problems, pushes


def _assert_own_connection_same(problems, pushes) -> None:
    assert not problems, (f"{len(problems)} step(s) differ from redis-server 7.0:\n"
                          + "\n".join(problems[:MAX_PROBLEMS_SHOWN])
                          + (f"\n... and {len(problems) - MAX_PROBLEMS_SHOWN} more"
                             if len(problems) > MAX_PROBLEMS_SHOWN else ""))
    assert pushes > 0, "redis-server sent no push at all"


@pytest.mark.parametrize("flags", ["KEAm", "KEAnm"])
def test_resp3_subscriber_writing_on_its_own_connection_matches_redis(server, real_redis, flags):
    _assert_own_connection_same(*_own_connection_problems(server, real_redis, flags,
                                                          SAME_CONNECTION))


# Every family script's plain commands (DUMP/RESTORE included) on the subscribed connection: for
# every write command, whether its pushes come before, after or inside its reply, as in Redis.
@pytest.mark.parametrize("family", list(FAMILIES))
def test_resp3_subscriber_running_family_on_its_own_connection_matches_redis(server, real_redis,
                                                                               family):
    _assert_own_connection_same(*_own_connection_problems(server, real_redis, "KEAnm",
                                                          FAMILIES[family]))


# --------------------------------------------------------------------------------------------
# CONFIG SET / GET of notify-keyspace-events, and the flags given at start-up
# --------------------------------------------------------------------------------------------

CONFIG_INPUTS = ["KEA", "AKE", "gK", "Elsx$", "", "A", "K", "E", "KA", "Kg$lshzxe", "KEAnm",
                 "KEAmn", "tdKE", "KEg$lshzxetd", "Ax", "KEAt", "KEd", "x", "KEAK", "nmKE", "Kn",
                 "mE", "g$lshzxetdn", "g$lshzxetdnm", "KEAb", "kea", "KE ", "?", "KEA*", "KEA"]


def test_config_get_normalises_flags_like_redis(server, real_redis):
    with real_redis.raw() as reference, server.raw() as candidate:
        problems = []
        for flags in CONFIG_INPUTS:
            exchange = []
            for conn in (reference, candidate):
                set_reply = conn.call_raw("CONFIG", "SET", "notify-keyspace-events", flags)
                get_reply = conn.call_raw("CONFIG", "GET", "notify-keyspace-events")
                exchange.append((set_reply, get_reply))
            if exchange[0] != exchange[1]:
                problems.append(f"{flags!r}:\n  redis  {exchange[0]!r}\n  gigakv {exchange[1]!r}")
        # Several parameters at once: the invalid one fails the whole CONFIG SET.
        for conn in (reference, candidate):
            conn.call("CONFIG", "SET", "notify-keyspace-events", "Kl")
        multi = [conn.call_raw("CONFIG", "SET", "notify-keyspace-events", "KEA",
                               "maxmemory-samples", "7")
                 + conn.call_raw("CONFIG", "GET", "notify-keyspace-events")
                 for conn in (reference, candidate)]
        if multi[0] != multi[1]:
            problems.append(f"with another parameter:\n  redis  {multi[0]!r}\n"
                            f"  gigakv {multi[1]!r}")
        bad = [conn.call_raw("CONFIG", "SET", "maxmemory-samples", "5", "notify-keyspace-events",
                             "KEb") + conn.call_raw("CONFIG", "GET", "notify-keyspace-events")
               + conn.call_raw("CONFIG", "GET", "maxmemory-samples")
               for conn in (reference, candidate)]
        if bad[0] != bad[1]:
            problems.append(f"invalid with another parameter:\n  redis  {bad[0]!r}\n"
                            f"  gigakv {bad[1]!r}")
    assert not problems, "\n".join(problems)


STARTUP_SCRIPT = [["SET", "k", "v"], ["LPUSH", "l", "x"], ["DEL", "k"], ["GET", "k"],
                  ["SADD", "s", "m"]]


@pytest.mark.parametrize("flags", ["KEg$", "Elm", "AK"])
def test_flags_given_at_startup_match_redis(server_factory, redis_factory, flags):
    server = server_factory("--notify-keyspace-events", flags)
    real_redis = redis_factory("--notify-keyspace-events", flags)
    with real_redis.raw() as reference, server.raw() as candidate:
        replies = [conn.call_raw("CONFIG", "GET", "notify-keyspace-events")
                   for conn in (reference, candidate)]
    assert replies[0] == replies[1]
    outcome = run_script(server, real_redis, STARTUP_SCRIPT, flags=None)
    assert_same(outcome)
