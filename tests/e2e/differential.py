"""Shared machinery of the differential tests (gigakv against Debian's redis-server 7.0).

Each test_differential*.py file has its own seeded command generator and its own notion of which
replies may legitimately differ; what they share lives here:
- `both_protocols` and `open_pair`: the RESP2/RESP3 parametrization and the paired connections
  (reference first), with active expiry switched off on both servers and HELLO 3 for RESP3.
- `SeededGenerator`: the seeded RNG, mixed-case command words and weighted command tables.
- `encode_request`: multibulk, or now and then the inline form when every argument allows it.
- `DifferentialRun`: sends each request to both servers, compares the replies, records
  mismatches, resynchronises the candidate from the reference after a mismatch (optional) and
  stops on a lost connection.
- `same_ttl`, `is_error`, `grouped_report`, `flat_report`: comparisons and failure messages.
"""

from __future__ import annotations

import random
import re
from collections import OrderedDict
from typing import Callable, NamedTuple

import pytest

from e2e_support import ConnectionClosed, ErrorReply, encode_command

INLINE_SAFE = re.compile(rb"[A-Za-z0-9_{}:.+-]+")
TTL_TOLERANCE_S = 2
TTL_TOLERANCE_MS = 2000

both_protocols = pytest.mark.parametrize("protocol", [2, 3], ids=["RESP2", "RESP3"])


def open_pair(server, real_redis, protocol: int, target: str):
    """(reference, candidate) raw connections, ready for a differential run.

    Skips when the server under test is redis-server itself. Active expiry is switched off on both
    servers (DEBUG SET-ACTIVE-EXPIRE 0) so that expired keys leave only when a command touches
    them, on both sides alike; with protocol 3 both connections switch to RESP3 by HELLO 3.
    """
    if target == "redis":
        pytest.skip("the server under test is redis-server itself")
    reference, candidate = real_redis.raw(), server.raw()
    for conn in (reference, candidate):
        assert conn.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
    if protocol == 3:
        for conn in (reference, candidate):
            hello = conn.call("HELLO", "3")
            assert isinstance(hello, dict), hello
    return reference, candidate


def compare_session(reference, candidate, commands, name: str, protocol: int,
                    width: int = 300, mismatch=None) -> None:
    """Sends each command of `commands` to both connections in turn; fails listing every command
    whose replies differ: byte for byte (both replies cut to `width` bytes in the report), or as
    `mismatch(args, expected, got)` says (None when they agree, else the text to report)."""
    mismatches = []
    for args in commands:
        expected = reference.call_raw(*args)
        got = candidate.call_raw(*args)
        if mismatch is not None:
            problem = mismatch(args, expected, got)
        elif expected != got:
            problem = (f"{list(args)[:5]}\n  redis:  {expected[:width]!r}\n"
                       f"  gigakv: {got[:width]!r}")
        else:
            problem = None
        if problem:
            mismatches.append(problem)
    assert not mismatches, f"{name} (RESP{protocol}):\n" + "\n".join(mismatches)


def compare_case(server, real_redis, target: str, protocol: int, case, reset=(("FLUSHALL",),),
                 mismatch=None):
    """A CASES entry (name, commands) run on fresh connections to both servers after the `reset`
    commands, compared as compare_session does (byte for byte unless `mismatch` is given)."""
    name, commands = case
    reference, candidate = open_pair(server, real_redis, protocol, target)
    for conn in (reference, candidate):
        for command in reset:
            conn.call_raw(*command)
    compare_session(reference, candidate, commands, name, protocol, mismatch=mismatch)


class SeededGenerator:
    """Base of the command generators: a seeded RNG and helpers drawing from it."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def case(self, word: str) -> bytes:
        """The word in upper, lower or mixed case (commands and options are case-insensitive)."""
        choice = self.rng.randrange(4)
        if choice == 0:
            return word.lower().encode()
        if choice == 1:
            return "".join(c.upper() if self.rng.random() < 0.5 else c.lower()
                           for c in word).encode()
        return word.upper().encode()

    def pick(self, table: list[tuple[float, Callable]]):
        """Calls one maker of a [(weight, maker), ...] table, chosen by weight."""
        total = sum(weight for weight, _ in table)
        roll = self.rng.random() * total
        for weight, make in table:
            roll -= weight
            if roll < 0:
                return make()
        return table[-1][1]()


def encode_request(args: list[bytes], rng: random.Random, inline_rate: float,
                   inline_safe: re.Pattern = INLINE_SAFE) -> bytes:
    """Multibulk, or (sometimes, when every argument is a plain word) the inline form."""
    if args and rng.random() < inline_rate and all(inline_safe.fullmatch(arg) for arg in args):
        return b" ".join(args) + b"\r\n"
    return encode_command(*args)


def exchange(conn, request: bytes):
    """Sends one request; returns its reply as (value, raw bytes)."""
    conn.send(request)
    return conn.read_reply_raw()


def is_error(raw: bytes) -> bool:
    return raw[:1] in (b"-", b"!")


def same_ttl(expected, got, args) -> bool:
    """TTL-like replies: -1/-2 and errors exactly, positive values within a small tolerance."""
    (e_value, e_raw), (g_value, g_raw) = expected, got
    if e_raw[:1] != b":" or g_raw[:1] != b":":
        return e_raw == g_raw
    if e_value <= 0 or g_value <= 0:
        return e_value == g_value
    tolerance = TTL_TOLERANCE_MS if args[0].upper().startswith(b"P") else TTL_TOLERANCE_S
    return abs(e_value - g_value) <= tolerance


class Mismatch(NamedTuple):
    protocol: int
    index: int | str  # the command's position in the stream, or "final"
    db: int
    args: list
    expected: bytes
    got: bytes


class DifferentialRun:
    """One pass of a command stream over a (reference, candidate) pair of connections.

    Subclasses define `step(index, command)` (False when the servers have diverged) and
    `compare_keyspace()`, and may set `inline_rate` / `inline_safe` for `encode`.
    """

    inline_rate = 0.1  # the share of plain-word commands sent in the inline form
    inline_safe = INLINE_SAFE

    def __init__(self, reference, candidate, protocol: int, seed: int, databases: int = 1):
        self.reference, self.candidate, self.protocol = reference, candidate, protocol
        self.encode_rng = random.Random(seed + 1)  # multibulk or inline, apart from the stream
        self.databases = databases  # how many the resync copies
        self.mismatches: list[Mismatch] = []
        self.replies: list[bytes] = []  # the reference's raw replies, in order
        self.stream_replies = 0  # how many of them the stream (not the final comparison) got
        self.db = 0
        self.lost = False
        self.max_mismatches: int | None = None

    def encode(self, args: list[bytes]) -> bytes:
        return encode_request(args, self.encode_rng, self.inline_rate, self.inline_safe)

    def play(self, generator, commands: int, max_mismatches: int | None = None,
             resync: bool = True) -> None:
        """The whole pass: the stream (see `drive`), then, unless the connection was lost, the
        final keyspace comparison."""
        self.max_mismatches = max_mismatches
        self.drive(generator, commands, max_mismatches, resync)
        self.stream_replies = len(self.replies)
        if not self.lost:
            self.compare_keyspace()

    @property
    def stopped_early(self) -> bool:
        """The connection was lost or the run stopped at its mismatch limit."""
        return self.lost or (self.max_mismatches is not None
                             and len(self.mismatches) >= self.max_mismatches)

    def mismatch(self, index, args, expected, got) -> None:
        self.mismatches.append(Mismatch(self.protocol, index, self.db, list(args), expected, got))

    def both(self, request: bytes):
        expected = exchange(self.reference, request)
        got = exchange(self.candidate, request)
        return expected, got

    def plain(self, index, args, request: bytes, compare=None) -> bool:
        """Sends the request to both; compares raw replies (or by `compare`); tracks SELECT."""
        expected, got = self.both(request)
        self.replies.append(expected[1])
        same = compare(expected, got) if compare else expected[1] == got[1]
        if not same:
            self.mismatch(index, args, expected[1], got[1])
        if args[0].upper() == b"SELECT" and expected[1] == b"+OK\r\n":
            self.db = int(args[1])
        return same

    def step(self, index, command) -> bool:
        raise NotImplementedError

    def compare_keyspace(self) -> None:
        raise NotImplementedError

    def drive(self, generator, commands: int, max_mismatches: int | None = None,
              resync: bool = True) -> None:
        """Runs `self.step(index, command)` for `commands` generated commands.

        A command is a list of arguments or a ('kind', args, ...) tuple. After a step that
        returns False the servers are resynchronised (with `resync`); a lost connection is
        recorded as a mismatch and ends the run, as does reaching `max_mismatches`.
        """
        for index in range(commands):
            command = generator.command()
            try:
                if not self.step(index, command) and resync:
                    self.resync()
            except (ConnectionClosed, OSError) as error:
                args = command if isinstance(command, list) else command[1]
                self.mismatch(index, args, b"<reply>", f"<connection lost: {error!r}>".encode())
                self.lost = True
                break
            if max_mismatches is not None and len(self.mismatches) >= max_mismatches:
                break

    def resync(self) -> None:
        """Makes the candidate's keyspace equal to the reference's (both rewritten by SET)."""
        ref = self.reference
        state = []
        for db in range(self.databases):
            ref.call("SELECT", db)
            entries = []
            for key in sorted(ref.call("KEYS", "*")):
                value = ref.call("GET", key)
                when = ref.call("PEXPIRETIME", key)
                if isinstance(value, bytes) and not isinstance(value, ErrorReply):
                    entries.append((key, value, when))
            state.append(entries)
        for conn in (self.reference, self.candidate):
            assert conn.call_raw("FLUSHALL") == b"+OK\r\n"
            for db, entries in enumerate(state):
                if not entries:
                    continue
                conn.call("SELECT", db)
                for key, value, when in entries:
                    args = [b"SET", key, value] + ([b"PXAT", when] if when > 0 else [])
                    conn.send_command(*args)
                for _ in entries:
                    assert conn.read_reply_raw()[1] == b"+OK\r\n"
            conn.call("SELECT", self.db)

    def outcomes(self) -> tuple[set[bytes], int]:
        """(distinct first lines of the error replies, number of non-error replies) so far."""
        errors = {reply.split(b"\r\n")[0] for reply in self.replies if is_error(reply)}
        successes = sum(1 for reply in self.replies if not is_error(reply))
        return errors, successes


# Failure messages ---------------------------------------------------------------------------


def shown(args) -> str:
    parts = []
    for arg in args:
        if isinstance(arg, bytes) and len(arg) > 60:
            parts.append(f"<{len(arg)} bytes {arg[:12]!r}...>")
        else:
            parts.append(repr(arg)[2:-1] if isinstance(arg, bytes) else str(arg))
    return " ".join(parts)


def _shape(raw) -> bytes:
    """A reply reduced for grouping: first line, digits folded."""
    if not isinstance(raw, bytes):
        raw = str(raw).encode()
    return re.sub(rb"\d+", b"N", raw.split(b"\r\n")[0][:80]).upper()


def _command_name(args) -> bytes:
    return args[0].upper()


def _where(item: Mismatch, show_db: bool) -> str:
    return f"#{item.index} db{item.db}" if show_db else f"#{item.index}"


def grouped_report(mismatches: list[Mismatch], max_classes: int, name_of=_command_name,
                   show_db: bool = True) -> str:
    """Mismatches grouped by command name and reply shapes, one example of each class."""
    classes: "OrderedDict[tuple, list]" = OrderedDict()
    for item in mismatches:
        key = (name_of(item.args), _shape(item.expected), _shape(item.got))
        classes.setdefault(key, []).append(item)
    lines = [f"{len(mismatches)} replies differ from redis-server 7.0, in {len(classes)} classes "
             f"(one example each, first {max_classes}):"]
    for (name, _, _), items in list(classes.items())[:max_classes]:
        first = items[0]
        lines.append(f"  [{name.decode(errors='replace')}] x{len(items)}  first: "
                     f"RESP{first.protocol} {_where(first, show_db)}: {shown(first.args)}\n"
                     f"      redis : {first.expected[:300]!r}\n"
                     f"      gigakv: {first.got[:300]!r}")
    return "\n".join(lines)


def flat_report(mismatches: list[Mismatch], limit: int) -> str:
    """The first `limit` mismatches, one by one."""
    lines = [f"{len(mismatches)} replies differ from redis-server 7.0 (first {limit}):"]
    for item in mismatches[:limit]:
        lines.append(f"  RESP{item.protocol} {_where(item, True)}: {shown(item.args)}\n"
                     f"      redis : {item.expected[:200]!r}\n"
                     f"      gigakv: {item.got[:200]!r}")
    return "\n".join(lines)
