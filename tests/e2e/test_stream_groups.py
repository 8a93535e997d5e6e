"""Stream consumer groups side by side with redis-server 7.0, byte for byte, in RESP2 and RESP3:
XGROUP (CREATE with $, an ID, MKSTREAM and ENTRIESREAD; SETID with ENTRIESREAD; DESTROY;
CREATECONSUMER; DELCONSUMER; HELP), XREADGROUP (>, history IDs, COUNT, NOACK, several streams),
XREAD, XACK, XPENDING (summary and extended, with a consumer and with IDLE), XCLAIM (JUSTID,
FORCE, RETRYCOUNT, IDLE, TIME, LASTID, deleted entries), XAUTOCLAIM (COUNT, JUSTID, deleted
entries), XINFO GROUPS / CONSUMERS / STREAM [FULL [COUNT n]], with their errors.

Some fields are times, which no two servers share: XPENDING's idle column, XINFO CONSUMERS' idle,
and in XINFO STREAM FULL each group's and consumer's PEL delivery times and each consumer's
seen-time. differential.py's compare_case is given a comparison (`masked_mismatch`) for them:
`masked_reply` here replaces exactly those integers by a token (`:<idle>`, `:<time>`) and returns
their values; two replies match when the masked bytes are equal and each pair of times is within TIME_TOLERANCE_MS (both servers see the
same commands a moment apart). Everything else, including the framing around a masked field, is
compared byte for byte. Thresholds on time (XCLAIM / XAUTOCLAIM min-idle-time, XPENDING IDLE) are
0 or an hour, against entries delivered just now or given an idle time of days, so which entries
they select does not depend on timing.

A seeded random session per seed mixes XADD / XDEL / XTRIM / XSETID with every group command on
three streams and compares every reply (masked). Blocking XREAD / XREADGROUP run on both servers
(gigakv with I/O threads, as in test_blocking.py) and must get the same bytes: woken by an XADD
from another connection, and the error Redis 7.0 sends a blocked XREADGROUP when its group is
destroyed (-NOGROUP) or its key deleted (-UNBLOCKED). DUMP payloads of streams with groups cross
between the servers both ways (compared by XINFO STREAM FULL and the other group views, masked),
and a Redis payload restored into gigakv DUMPs back byte for byte.
"""

from __future__ import annotations

import random
import time
from typing import NamedTuple

import pytest

from differential import both_protocols, compare_case, open_pair
from e2e_support import ErrorReply, info_int, wait_blocked

RESET = (("FLUSHALL",), ("CONFIG", "SET", "stream-node-max-entries", "100"),
         ("CONFIG", "SET", "stream-node-max-bytes", "4096"))
TIME_TOLERANCE_MS = 2000  # how far apart the two servers' idle times / timestamps may be
IO_THREADS = ("--io-threads", "4")
BIG_IDLE_MS = "100000000"  # XCLAIM IDLE far above MIN_IDLE_MS: a deterministic threshold
MIN_IDLE_MS = "3600000"
PAST_MS = "1000000000000"  # XCLAIM TIME in 2001
FUTURE_MS = "99999999999999"  # XCLAIM TIME in the future: Redis uses now instead


# Time-dependent fields ---------------------------------------------------------------------


class Node(NamedTuple):
    """One RESP value: its type byte, header line, and bulk payload or children."""

    kind: bytes
    line: bytes
    payload: bytes | None = None
    children: tuple = ()


def _parse_node(raw: bytes, pos: int) -> tuple[Node, int]:
    end = raw.index(b"\r\n", pos)
    kind, line = raw[pos:pos + 1], raw[pos + 1:end]
    pos = end + 2
    if kind in (b"$", b"=", b"!"):
        length = int(line)
        if length < 0:
            return Node(kind, line), pos
        return Node(kind, line, raw[pos:pos + length]), pos + length + 2
    if kind in (b"*", b"~", b">", b"%", b"|"):
        count = max(int(line), 0) * (2 if kind in (b"%", b"|") else 1)
        children = []
        for _ in range(count):
            child, pos = _parse_node(raw, pos)
            children.append(child)
        return Node(kind, line, None, tuple(children)), pos
    return Node(kind, line), pos


def _serialize(node: Node) -> bytes:
    out = node.kind + node.line + b"\r\n"
    if node.payload is not None:
        return out + node.payload + b"\r\n"
    return out + b"".join(_serialize(child) for child in node.children)


def _is_map(node: Node) -> bool:
    """A RESP3 map, or a RESP2 flat array of (bulk name, value) pairs."""
    if node.kind == b"%":
        return True
    return (node.kind == b"*" and len(node.children) % 2 == 0
            and all(child.kind in (b"$", b"+") for child in node.children[0::2]))


def _with_children(node: Node, children) -> Node:
    return node._replace(children=tuple(children))


def _mask_int(node: Node, label: str, times: list) -> Node:
    """An integer replaced by `:<label>`, its value appended to `times`; other nodes unchanged
    (a time sent as another type stays visible in the comparison)."""
    if node.kind != b":":
        return node
    times.append((label, int(node.line)))
    return Node(b":", f"<{label}>".encode())


def _mask_fields(node: Node, maskers: dict, times: list) -> Node:
    """A map-like node with the value of each field named in `maskers` passed through it."""
    if not _is_map(node):
        return node
    children = list(node.children)
    for i in range(0, len(children), 2):
        name = children[i].payload if children[i].payload is not None else children[i].line
        make = maskers.get(name)
        if make is not None:
            children[i + 1] = make(children[i + 1], times)
    return _with_children(node, children)


def _mask_each(node: Node, mask, times: list) -> Node:
    """An array with `mask(child, times)` applied to each child."""
    if node.kind not in (b"*", b"~"):
        return node
    return _with_children(node, [mask(child, times) for child in node.children])


def _mask_position(position: int, label: str):
    """A masker of one element of a fixed-shape array (an XPENDING or PEL row)."""
    def mask(node: Node, times: list) -> Node:
        if node.kind != b"*" or len(node.children) <= position:
            return node
        children = list(node.children)
        children[position] = _mask_int(children[position], label, times)
        return _with_children(node, children)
    return mask


def _mask_consumer_full(node: Node, times: list) -> Node:
    return _mask_fields(node, {
        b"seen-time": lambda n, t: _mask_int(n, "time", t),
        b"active-time": lambda n, t: _mask_int(n, "time", t),
        b"pending": lambda n, t: _mask_each(n, _mask_position(1, "time"), t),
    }, times)


def _mask_group_full(node: Node, times: list) -> Node:
    return _mask_fields(node, {
        b"pending": lambda n, t: _mask_each(n, _mask_position(2, "time"), t),
        b"consumers": lambda n, t: _mask_each(n, _mask_consumer_full, t),
    }, times)


def _mask_consumer_info(node: Node, times: list) -> Node:
    return _mask_fields(node, {
        b"idle": lambda n, t: _mask_int(n, "idle", t),
        b"inactive": lambda n, t: _mask_int(n, "idle", t),
    }, times)


def _reply_masker(args):
    """The masker for the reply of `args`, or None when the reply holds no time."""
    words = [str(arg).upper() for arg in args]
    if words[0] == "XPENDING" and len(words) > 3:
        return lambda node, times: _mask_each(node, _mask_position(2, "idle"), times)
    if words[0] == "XINFO" and len(words) > 1 and words[1] == "CONSUMERS":
        return lambda node, times: _mask_each(node, _mask_consumer_info, times)
    if words[0] == "XINFO" and len(words) > 3 and words[1] == "STREAM" and words[3] == "FULL":
        return lambda node, times: _mask_fields(node, {
            b"groups": lambda n, t: _mask_each(n, _mask_group_full, t)}, times)
    return None


def masked_reply(args, raw: bytes) -> tuple[bytes, list[tuple[str, int]]]:
    """(the reply with its time fields masked, [(label, value) of each masked field])."""
    masker = _reply_masker(args)
    if masker is None or raw[:1] in (b"-", b"!"):
        return raw, []
    node, end = _parse_node(raw, 0)
    assert end == len(raw), f"one reply expected, got {raw[:200]!r}"
    times: list = []
    return _serialize(masker(node, times)), times


def same_masked(args, expected: bytes, got: bytes) -> bool:
    """Equal replies once times are masked, each pair of times within TIME_TOLERANCE_MS."""
    (e_masked, e_times), (g_masked, g_times) = masked_reply(args, expected), masked_reply(args, got)
    if e_masked != g_masked or len(e_times) != len(g_times):
        return False
    return all(abs(e - g) <= TIME_TOLERANCE_MS for (_, e), (_, g) in zip(e_times, g_times))


def _around_difference(expected: bytes, got: bytes, width: int = 300) -> tuple[bytes, bytes]:
    """Both byte strings cut to `width` bytes around their first difference."""
    first = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b),
                 min(len(expected), len(got)))
    start = max(0, first - width // 3)
    return expected[start:start + width], got[start:start + width]


def describe_mismatch(args, expected: bytes, got: bytes) -> str:
    (e_masked, e_times), (g_masked, g_times) = masked_reply(args, expected), masked_reply(args, got)
    shown_e, shown_g = _around_difference(e_masked, g_masked)
    text = f"{list(args)[:8]}\n  redis:  {shown_e!r}\n  gigakv: {shown_g!r}"
    if e_masked == g_masked:
        text += (f"\n  times redis:  {[v for _, v in e_times]}"
                 f"\n  times gigakv: {[v for _, v in g_times]}")
    return text


def masked_mismatch(args, expected: bytes, got: bytes) -> str | None:
    """compare_session's test: the replies differ once time fields are masked (same_masked)."""
    return None if same_masked(args, expected, got) else describe_mismatch(args, expected, got)


def test_masking_keeps_everything_but_the_time_fields():
    """The masker itself: only the named integers change, in both protocols' shapes."""
    resp2 = (b"*1\r\n*4\r\n$3\r\n1-1\r\n$2\r\nc1\r\n:1234\r\n:1\r\n")
    assert masked_reply(["XPENDING", "s", "g", "-", "+", "10"], resp2) == (
        b"*1\r\n*4\r\n$3\r\n1-1\r\n$2\r\nc1\r\n:<idle>\r\n:1\r\n", [("idle", 1234)])
    summary = b"*4\r\n:1\r\n$3\r\n1-1\r\n$3\r\n1-1\r\n*1\r\n*2\r\n$2\r\nc1\r\n$1\r\n1\r\n"
    assert masked_reply(["XPENDING", "s", "g"], summary) == (summary, [])
    consumers = (b"*1\r\n%3\r\n$4\r\nname\r\n$4\r\nidle\r\n"  # a consumer named "idle"
                 b"$7\r\npending\r\n:2\r\n$4\r\nidle\r\n:77\r\n")
    assert masked_reply(["XINFO", "CONSUMERS", "s", "g"], consumers) == (
        b"*1\r\n%3\r\n$4\r\nname\r\n$4\r\nidle\r\n$7\r\npending\r\n:2\r\n$4\r\nidle\r\n:<idle>\r\n",
        [("idle", 77)])
    assert same_masked(["XINFO", "CONSUMERS", "s", "g"], consumers,
                       consumers.replace(b":77\r\n", b":1500\r\n"))
    assert not same_masked(["XINFO", "CONSUMERS", "s", "g"], consumers,
                           consumers.replace(b":77\r\n", b":9000\r\n"))
    assert not same_masked(["XINFO", "CONSUMERS", "s", "g"], consumers,
                           consumers.replace(b":77\r\n", b"$2\r\n77\r\n"))


# Cases ---------------------------------------------------------------------------------------


def _entries(key: str, first: int, count: int, field: str = "f") -> list[list[str]]:
    return [["XADD", key, f"{ms}-0", field, str(ms)] for ms in range(first, first + count)]


CASES = [
    ("xgroup create", [
        ["XGROUP", "CREATE", "s", "g", "$"],
        ["EXISTS", "s"],
        ["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"],
        ["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"],
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["TYPE", "s"],
        ["XLEN", "s"],
        *_entries("s", 1, 4),
        ["XGROUP", "CREATE", "s", "dollar", "$"],
        ["XGROUP", "CREATE", "s", "zero", "0"],
        ["XGROUP", "CREATE", "s", "mid", "2-0"],
        ["XGROUP", "CREATE", "s", "midseq", "2"],
        ["XGROUP", "CREATE", "s", "future", "100-5"],
        ["XGROUP", "CREATE", "s", "er1", "0", "ENTRIESREAD", "1"],
        ["XGROUP", "CREATE", "s", "er0", "2-0", "ENTRIESREAD", "0"],
        ["XGROUP", "CREATE", "s", "erneg", "0", "ENTRIESREAD", "-1"],
        ["XGROUP", "CREATE", "s", "erbig", "1-0", "ENTRIESREAD", "9"],
        ["XGROUP", "CREATE", "s", "erdollar", "$", "ENTRIESREAD", "2"],
        ["XGROUP", "CREATE", "s", "both", "$", "MKSTREAM", "ENTRIESREAD", "4"],
        ["XGROUP", "CREATE", "s", "both2", "$", "ENTRIESREAD", "4", "MKSTREAM"],
        ["XGROUP", "CREATE", "s", "bad", "0", "ENTRIESREAD", "-2"],
        ["XGROUP", "CREATE", "s", "bad", "0", "ENTRIESREAD", "x"],
        ["XGROUP", "CREATE", "s", "bad", "0", "ENTRIESREAD"],
        ["XGROUP", "CREATE", "s", "bad", "0", "FOO"],
        ["XGROUP", "CREATE", "s", "bad", "0", "MKSTREAM", "FOO"],
        ["XGROUP", "CREATE", "s", "bad", "nope"],
        ["XGROUP", "CREATE", "s", "bad", "-"],
        ["XGROUP", "CREATE", "s", "bad", "+"],
        ["XGROUP", "CREATE", "s", "bad", ">"],
        ["XGROUP", "CREATE", "s", "bad", "1-x"],
        ["XGROUP", "CREATE", "s", "g"],
        ["XGROUP", "CREATE", "s"],
        ["XGROUP", "create", "s", "lower", "$"],
        ["xgroup", "Create", "s", "mixed", "0", "mkstream"],
        ["XGROUP", "CREATE", "other", "g", "0", "MKSTREAM", "ENTRIESREAD", "3"],
        ["XINFO", "STREAM", "other"],
        ["XGROUP", "CREATE", "nokey", "g", "0", "ENTRIESREAD", "1"],
        ["SET", "str", "x"],
        ["XGROUP", "CREATE", "str", "g", "$"],
        ["XGROUP", "CREATE", "str", "g", "$", "MKSTREAM"],
        ["XINFO", "GROUPS", "s"],
        ["XINFO", "GROUPS", "other"],
        ["XINFO", "STREAM", "s"],
        ["XINFO", "STREAM", "s", "FULL"],
    ]),
    ("xgroup setid destroy consumers help", [
        *_entries("s", 1, 5),
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XGROUP", "SETID", "s", "g", "$"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "SETID", "s", "g", "2-0"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "SETID", "s", "g", "3-0", "ENTRIESREAD", "3"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "SETID", "s", "g", "3-0", "ENTRIESREAD", "-1"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "17"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "SETID", "s", "g", "99-0"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "-3"],
        ["XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD"],
        ["XGROUP", "SETID", "s", "g", "0", "FOO", "1"],
        ["XGROUP", "SETID", "s", "g", "0", "MKSTREAM"],
        ["XGROUP", "SETID", "s", "g", "bad"],
        ["XGROUP", "SETID", "s", "nog", "0"],
        ["XGROUP", "SETID", "nokey", "g", "0"],
        ["XGROUP", "SETID", "s", "g"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "c1"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "c1"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "c2"],
        ["XGROUP", "CREATECONSUMER", "s", "nog", "c1"],
        ["XGROUP", "CREATECONSUMER", "nokey", "g", "c1"],
        ["XGROUP", "CREATECONSUMER", "s", "g"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "c1", "extra"],
        ["XINFO", "CONSUMERS", "s", "g"],
        ["XGROUP", "SETID", "s", "g", "0"],
        ["XREADGROUP", "GROUP", "g", "c1", "COUNT", "3", "STREAMS", "s", ">"],
        ["XINFO", "CONSUMERS", "s", "g"],
        ["XGROUP", "DELCONSUMER", "s", "g", "c1"],
        ["XGROUP", "DELCONSUMER", "s", "g", "c1"],
        ["XGROUP", "DELCONSUMER", "s", "g", "c2"],
        ["XGROUP", "DELCONSUMER", "s", "g", "never"],
        ["XGROUP", "DELCONSUMER", "s", "nog", "c1"],
        ["XGROUP", "DELCONSUMER", "nokey", "g", "c1"],
        ["XGROUP", "DELCONSUMER", "s", "g"],
        ["XINFO", "CONSUMERS", "s", "g"],
        ["XPENDING", "s", "g"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "DESTROY", "s", "g"],
        ["XGROUP", "DESTROY", "s", "g"],
        ["XGROUP", "DESTROY", "nokey", "g"],
        ["XGROUP", "DESTROY", "s"],
        ["XGROUP", "DESTROY", "s", "g", "extra"],
        ["XINFO", "GROUPS", "s"],
        ["SET", "str", "x"],
        ["XGROUP", "DESTROY", "str", "g"],
        ["XGROUP", "SETID", "str", "g", "0"],
        ["XGROUP", "HELP"],
        ["XGROUP", "help"],
        ["XGROUP", "HELP", "extra"],
        ["XGROUP", "FOO"],
        ["XGROUP", "FOO", "s", "g"],
        ["XGROUP"],
        ["XINFO", "HELP"],
        ["XINFO", "FOO"],
        ["XINFO"],
    ]),
    ("xreadgroup", [
        *_entries("s", 1, 6),
        *_entries("t", 10, 3, "tf"),
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XGROUP", "CREATE", "t", "g", "$"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "1-0"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", "0-0"],
        ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "NOACK", "COUNT", "1", "STREAMS", "s", ">"],
        ["XPENDING", "s", "g"],
        ["XREADGROUP", "GROUP", "g", "bob", "COUNT", "0", "STREAMS", "s", "t", ">", ">"],
        ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "t", ">", ">"],
        ["XADD", "t", "20-0", "tf", "20"],
        ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "t", ">", ">"],
        ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "t", "0", ">"],
        ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "t", "s", "0", "0"],
        ["XDEL", "s", "1-0", "5-0"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "10", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "-1", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "x", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "-1", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "BLOCK", "x", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "$"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "t", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS"],
        ["XREADGROUP", "GROUP", "g", "alice", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g"],
        ["XREADGROUP", "STREAMS", "s", ">"],
        ["XREADGROUP", "COUNT", "1", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "FOO", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "bad"],
        ["XREADGROUP", "GROUP", "nog", "alice", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "nokey", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "nokey", ">", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "nokey", "s", ">", ">"],
        ["SET", "str", "x"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "str", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "str", ">", ">"],
        ["XINFO", "GROUPS", "s"],
        ["XINFO", "GROUPS", "t"],
        ["XINFO", "CONSUMERS", "s", "g"],
        ["XINFO", "CONSUMERS", "t", "g"],
        ["XINFO", "STREAM", "s", "FULL"],
        ["XPENDING", "s", "g", "-", "+", "10"],
    ]),
    ("xread", [
        *_entries("a", 1, 5),
        *_entries("b", 3, 2, "bf"),
        ["XREAD", "STREAMS", "a", "0"],
        ["XREAD", "COUNT", "2", "STREAMS", "a", "0"],
        ["XREAD", "COUNT", "2", "STREAMS", "a", "2"],
        ["XREAD", "COUNT", "2", "STREAMS", "a", "2-0"],
        ["XREAD", "COUNT", "0", "STREAMS", "a", "0"],
        ["XREAD", "COUNT", "-3", "STREAMS", "a", "0"],
        ["XREAD", "STREAMS", "a", "b", "0", "0"],
        ["XREAD", "COUNT", "1", "STREAMS", "a", "b", "4-0", "0-1"],
        ["XREAD", "STREAMS", "a", "b", "$", "$"],
        ["XREAD", "STREAMS", "a", "nokey", "0", "0"],
        ["XREAD", "STREAMS", "nokey", "a", "0", "5"],
        ["XREAD", "STREAMS", "a", "5-0"],
        ["XREAD", "STREAMS", "a", "18446744073709551615-18446744073709551615"],
        ["XREAD", "STREAMS", "a", "a", "0", "3"],
        ["XREAD", "BLOCK", "10", "STREAMS", "a", "0"],
        ["XREAD", "BLOCK", "10", "STREAMS", "a", "$"],
        ["XREAD", "BLOCK", "-1", "STREAMS", "a", "0"],
        ["XREAD", "STREAMS", "a", ">"],
        ["XREAD", "STREAMS", "a", "bad"],
        ["XREAD", "STREAMS", "a", "b", "0"],
        ["XREAD", "STREAMS", "a"],
        ["XREAD", "STREAMS"],
        ["XREAD", "a", "0"],
        ["XREAD", "COUNT", "STREAMS", "a", "0"],
        ["XREAD", "COUNT", "x", "STREAMS", "a", "0"],
        ["XREAD", "NOACK", "STREAMS", "a", "0"],
        ["XREAD", "GROUP", "g", "c", "STREAMS", "a", "0"],
        ["XREAD"],
        ["SET", "str", "x"],
        ["XREAD", "STREAMS", "str", "0"],
        ["XREAD", "STREAMS", "a", "str", "0", "0"],
        ["XDEL", "a", "2-0"],
        ["XREAD", "STREAMS", "a", "0"],
        ["xread", "count", "1", "streams", "a", "b", "1", "3"],
    ]),
    ("xack xpending", [
        *_entries("s", 1, 8),
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XPENDING", "s", "g"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "bob", "COUNT", "3", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],
        ["XPENDING", "s", "g"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XPENDING", "s", "g", "-", "+", "2"],
        ["XPENDING", "s", "g", "-", "+", "0"],
        ["XPENDING", "s", "g", "-", "+", "-1"],
        ["XPENDING", "s", "g", "(1-0", "(7-0", "10"],
        ["XPENDING", "s", "g", "3", "5", "10"],
        ["XPENDING", "s", "g", "-", "+", "10", "alice"],
        ["XPENDING", "s", "g", "-", "+", "10", "bob"],
        ["XPENDING", "s", "g", "-", "+", "10", "nobody"],
        ["XPENDING", "s", "g", "IDLE", "0", "-", "+", "10"],
        ["XPENDING", "s", "g", "IDLE", "0", "-", "+", "10", "bob"],
        ["XPENDING", "s", "g", "IDLE", MIN_IDLE_MS, "-", "+", "10"],
        ["XPENDING", "s", "g", "idle", "0", "-", "+", "1", "alice"],
        ["XPENDING", "s", "g", "IDLE", "-5", "-", "+", "10"],
        ["XPENDING", "s", "g", "IDLE", "x", "-", "+", "10"],
        ["XPENDING", "s", "g", "IDLE", "0"],
        ["XPENDING", "s", "g", "IDLE", "0", "-", "+"],
        ["XPENDING", "s", "g", "-", "+"],
        ["XPENDING", "s", "g", "-"],
        ["XPENDING", "s", "g", "-", "+", "x"],
        ["XPENDING", "s", "g", "bad", "+", "10"],
        ["XPENDING", "s", "g", "(+", "+", "10"],
        ["XPENDING", "s", "g", "-", "+", "10", "alice", "extra"],
        ["XPENDING", "s", "nog"],
        ["XPENDING", "s", "nog", "-", "+", "10"],
        ["XPENDING", "nokey", "g"],
        ["XPENDING", "s"],
        ["XACK", "s", "g", "1-0", "2-0", "1-0", "99-0"],
        ["XACK", "s", "g", "1-0"],
        ["XACK", "s", "g", "4"],
        ["XACK", "s", "g", "bad"],
        ["XACK", "s", "g", "5-0", "bad"],
        ["XACK", "s", "nog", "5-0"],
        ["XACK", "nokey", "g", "5-0"],
        ["XACK", "s", "g"],
        ["XPENDING", "s", "g"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XINFO", "CONSUMERS", "s", "g"],
        ["XINFO", "GROUPS", "s"],
        ["XACK", "s", "g", "3-0", "5-0", "6-0", "7-0"],
        ["XPENDING", "s", "g"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XINFO", "CONSUMERS", "s", "g"],
        ["SET", "str", "x"],
        ["XACK", "str", "g", "1-0"],
        ["XPENDING", "str", "g"],
    ]),
    ("xclaim", [
        *_entries("s", 1, 8),
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "5", "STREAMS", "s", ">"],
        ["XCLAIM", "s", "g", "bob", "0", "1-0"],
        ["XCLAIM", "s", "g", "bob", MIN_IDLE_MS, "2-0"],
        ["XCLAIM", "s", "g", "bob", "0", "2-0", "JUSTID"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XCLAIM", "s", "g", "bob", "0", "3-0", "RETRYCOUNT", "7"],
        ["XCLAIM", "s", "g", "carol", "0", "4-0", "IDLE", BIG_IDLE_MS],
        ["XCLAIM", "s", "g", "carol", "0", "5-0", "TIME", PAST_MS, "JUSTID"],
        ["XCLAIM", "s", "g", "carol", "0", "1-0", "TIME", FUTURE_MS, "JUSTID"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XPENDING", "s", "g", "IDLE", MIN_IDLE_MS, "-", "+", "10"],
        ["XCLAIM", "s", "g", "dave", MIN_IDLE_MS, "1-0", "2-0", "3-0", "4-0", "5-0"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XCLAIM", "s", "g", "dave", "0", "7-0"],
        ["XCLAIM", "s", "g", "dave", "0", "7-0", "FORCE"],
        ["XCLAIM", "s", "g", "dave", "0", "9-0", "FORCE"],
        ["XCLAIM", "s", "g", "dave", "0", "8-0", "FORCE", "JUSTID", "RETRYCOUNT", "0"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XCLAIM", "s", "g", "dave", "0", "6-0", "LASTID", "7-0"],
        ["XINFO", "GROUPS", "s"],
        ["XCLAIM", "s", "g", "dave", "0", "6-0", "LASTID", "2-0"],
        ["XINFO", "GROUPS", "s"],
        ["XCLAIM", "s", "g", "dave", "0", "6-0", "FORCE", "LASTID", "100-0"],
        ["XINFO", "GROUPS", "s"],
        ["XDEL", "s", "1-0", "4-0"],
        ["XCLAIM", "s", "g", "erin", "0", "1-0", "2-0", "4-0"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XCLAIM", "s", "g", "erin", "0", "3-0", "JUSTID"],
        ["XPENDING", "s", "g", "-", "+", "10"],
        ["XCLAIM", "s", "g", "erin", "0", "3-0", "IDLE", "x"],
        ["XCLAIM", "s", "g", "erin", "0", "3-0", "TIME", "x"],
        ["XCLAIM", "s", "g", "erin", "0", "3-0", "RETRYCOUNT", "x"],
        ["XCLAIM", "s", "g", "erin", "0", "3-0", "RETRYCOUNT", "-1"],
        ["XCLAIM", "s", "g", "erin", "0", "3-0", "LASTID", "bad"],
        ["XCLAIM", "s", "g", "erin", "0", "3-0", "IDLE"],
        ["XCLAIM", "s", "g", "erin", "0", "3-0", "FOO"],
        ["XCLAIM", "s", "g", "erin", "0", "bad"],
        ["XCLAIM", "s", "g", "erin", "0", "3-0", "bad"],
        ["XCLAIM", "s", "g", "erin", "-1", "3-0"],
        ["XCLAIM", "s", "g", "erin", "x", "3-0"],
        ["XCLAIM", "s", "nog", "erin", "0", "3-0"],
        ["XCLAIM", "nokey", "g", "erin", "0", "3-0"],
        ["XCLAIM", "s", "g", "erin", "0"],
        ["SET", "str", "x"],
        ["XCLAIM", "str", "g", "erin", "0", "3-0"],
        ["XPENDING", "s", "g"],
        ["XINFO", "CONSUMERS", "s", "g"],
        ["XINFO", "STREAM", "s", "FULL"],
    ]),
    ("names with a NUL byte in errors", [
        ["XADD", "s", "1-0", "f", "v"],
        ["XGROUP", "CREATE", "s", "g", "$"],
        ["XINFO", "CONSUMERS", "s", "a\0b"],
        ["XREADGROUP", "GROUP", "n\0x", "c", "STREAMS", "s", ">"],
        ["XCLAIM", "s", "g", "c", "0", "1-0", "F\0OO"],
        ["XCLAIM", "s", "n\0o", "c", "0", "1-0"],
        ["XAUTOCLAIM", "s", "n\0o", "c", "0", "0"],
        ["XPENDING", "s", "n\0o"],
        ["XGROUP", "SETID", "s", "n\0o", "0"],
    ]),
    ("xautoclaim", [
        *_entries("s", 1, 10),
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XAUTOCLAIM", "s", "g", "bob", "0", "0-0"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"],
        ["XAUTOCLAIM", "s", "g", "bob", "0", "0-0", "COUNT", "3"],
        ["XAUTOCLAIM", "s", "g", "bob", "0", "4-0", "COUNT", "2", "JUSTID"],
        ["XAUTOCLAIM", "s", "g", "bob", MIN_IDLE_MS, "0-0"],
        ["XPENDING", "s", "g", "-", "+", "20"],
        ["XDEL", "s", "2-0", "7-0", "8-0"],
        ["XAUTOCLAIM", "s", "g", "carol", "0", "-", "COUNT", "4"],
        ["XAUTOCLAIM", "s", "g", "carol", "0", "(3-0", "COUNT", "4"],
        ["XPENDING", "s", "g", "-", "+", "20"],
        ["XAUTOCLAIM", "s", "g", "carol", "0", "0", "JUSTID"],
        ["XAUTOCLAIM", "s", "g", "carol", "0", "+"],
        ["XAUTOCLAIM", "s", "g", "dave", "0", "9-0", "COUNT", "1"],
        ["XCLAIM", "s", "g", "dave", "0", "10-0", "IDLE", BIG_IDLE_MS, "JUSTID"],
        ["XAUTOCLAIM", "s", "g", "erin", MIN_IDLE_MS, "0-0"],
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "COUNT", "0"],
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "COUNT", "-1"],
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "COUNT", "x"],
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "COUNT", "576460752303423488"],
        # Redis allocates COUNT IDs up front: 4e9 of them fit its address space, 2^43 do not.
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "COUNT", "4000000000", "JUSTID"],
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "COUNT", "8796093022208"],
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "COUNT"],
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "FOO"],
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "JUSTID", "COUNT", "2"],
        ["XAUTOCLAIM", "s", "g", "erin", "-1", "0-0"],
        ["XAUTOCLAIM", "s", "g", "erin", "x", "0-0"],
        ["XAUTOCLAIM", "s", "g", "erin", "0", "bad"],
        ["XAUTOCLAIM", "s", "nog", "erin", "0", "0-0"],
        ["XAUTOCLAIM", "nokey", "g", "erin", "0", "0-0"],
        ["XAUTOCLAIM", "s", "g", "erin", "0"],
        ["SET", "str", "x"],
        ["XAUTOCLAIM", "str", "g", "erin", "0", "0-0"],
        ["XPENDING", "s", "g"],
        ["XPENDING", "s", "g", "-", "+", "20"],
        ["XINFO", "CONSUMERS", "s", "g"],
        # Below LONG_MAX / 16 but 16 PB of IDs: Redis's transient allocation always fails.
        ["XAUTOCLAIM", "s", "g", "erin", "0", "0-0", "COUNT", "1000000000000000"],
    ]),
    ("xinfo lag and entries-read", [
        *_entries("s", 1, 6),
        ["XGROUP", "CREATE", "s", "g1", "0"],
        ["XGROUP", "CREATE", "s", "g2", "0"],
        ["XGROUP", "CREATE", "s", "g3", "$"],
        ["XINFO", "GROUPS", "s"],
        ["XREADGROUP", "GROUP", "g1", "c", "COUNT", "2", "STREAMS", "s", ">"],
        ["XINFO", "GROUPS", "s"],
        ["XDEL", "s", "4-0"],
        ["XINFO", "GROUPS", "s"],
        ["XREADGROUP", "GROUP", "g1", "c", "COUNT", "1", "STREAMS", "s", ">"],
        ["XINFO", "GROUPS", "s"],
        ["XREADGROUP", "GROUP", "g1", "c", "STREAMS", "s", ">"],
        ["XINFO", "GROUPS", "s"],
        ["XDEL", "s", "1-0"],
        ["XINFO", "GROUPS", "s"],
        ["XTRIM", "s", "MAXLEN", "2"],
        ["XINFO", "GROUPS", "s"],
        ["XADD", "s", "7-0", "f", "7"],
        ["XINFO", "GROUPS", "s"],
        ["XREADGROUP", "GROUP", "g2", "c", "STREAMS", "s", ">"],
        ["XINFO", "GROUPS", "s"],
        ["XTRIM", "s", "MINID", "7"],
        ["XADD", "s", "8-0", "f", "8"],
        ["XINFO", "GROUPS", "s"],
        ["XSETID", "s", "20-0"],
        ["XINFO", "GROUPS", "s"],
        ["XSETID", "s", "20-0", "ENTRIESADDED", "50", "MAXDELETEDID", "15-0"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "SETID", "s", "g3", "7-0"],
        ["XINFO", "GROUPS", "s"],
        ["XGROUP", "SETID", "s", "g3", "7-0", "ENTRIESREAD", "45"],
        ["XINFO", "GROUPS", "s"],
        ["XADD", "s", "21-0", "f", "21"],
        ["XINFO", "GROUPS", "s"],
        ["XREADGROUP", "GROUP", "g3", "c", "STREAMS", "s", ">"],
        ["XINFO", "GROUPS", "s"],
        ["XINFO", "STREAM", "s"],
        ["XINFO", "STREAM", "s", "FULL"],
        ["XINFO", "STREAM", "s", "FULL", "COUNT", "1"],
        ["XINFO", "STREAM", "s", "FULL", "COUNT", "0"],
        ["XTRIM", "s", "MAXLEN", "0"],
        ["XINFO", "GROUPS", "s"],
        ["XINFO", "STREAM", "s"],
        ["XINFO", "STREAM", "s", "FULL"],
    ]),
    ("xinfo shapes and errors", [
        *_entries("s", 1, 15),
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XGROUP", "CREATE", "s", "h", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "12", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "h", "carol", "COUNT", "1", "STREAMS", "s", ">"],
        ["XGROUP", "CREATECONSUMER", "s", "h", "idle-one"],
        ["XINFO", "STREAM", "s"],
        ["XINFO", "STREAM", "s", "FULL"],
        ["XINFO", "STREAM", "s", "FULL", "COUNT", "2"],
        ["XINFO", "STREAM", "s", "FULL", "COUNT", "0"],
        ["XINFO", "STREAM", "s", "FULL", "COUNT", "-1"],
        ["XINFO", "STREAM", "s", "full", "count", "3"],
        ["XINFO", "STREAM", "s", "FULL", "COUNT", "x"],
        ["XINFO", "STREAM", "s", "FULL", "COUNT"],
        ["XINFO", "STREAM", "s", "FULL", "FOO", "1"],
        ["XINFO", "STREAM", "s", "COUNT", "1"],
        ["XINFO", "STREAM", "s", "FOO"],
        ["XINFO", "STREAM", "nokey"],
        ["XINFO", "STREAM", "nokey", "FULL"],
        ["XINFO", "STREAM"],
        ["XINFO", "GROUPS", "s"],
        ["XINFO", "GROUPS", "nokey"],
        ["XINFO", "GROUPS", "s", "extra"],
        ["XINFO", "GROUPS"],
        ["XINFO", "CONSUMERS", "s", "g"],
        ["XINFO", "CONSUMERS", "s", "h"],
        ["XINFO", "CONSUMERS", "s", "nog"],
        ["XINFO", "CONSUMERS", "nokey", "g"],
        ["XINFO", "CONSUMERS", "s"],
        ["XINFO", "CONSUMERS", "s", "g", "extra"],
        ["XINFO", "consumers", "s", "g"],
        ["SET", "str", "x"],
        ["XINFO", "STREAM", "str"],
        ["XINFO", "GROUPS", "str"],
        ["XINFO", "CONSUMERS", "str", "g"],
        ["XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM"],
        ["XINFO", "STREAM", "empty"],
        ["XINFO", "STREAM", "empty", "FULL"],
        ["XINFO", "GROUPS", "empty"],
        ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "empty", ">"],
        ["XINFO", "CONSUMERS", "empty", "g"],
        ["DEL", "s"],
        ["XINFO", "GROUPS", "s"],
        ["XADD", "s", "1-0", "f", "v"],
        ["XINFO", "GROUPS", "s"],
    ]),
    ("groups in transactions and keyspace", [
        *_entries("s", 1, 4),
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["MULTI"],
        ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"],
        ["XACK", "s", "g", "1-0"],
        ["XPENDING", "s", "g"],
        ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"],
        ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
        ["XINFO", "GROUPS", "s"],
        ["EXEC"],
        ["RENAME", "s", "s2"],
        ["XINFO", "GROUPS", "s2"],
        ["XPENDING", "s2", "g"],
        ["COPY", "s2", "s3"],
        ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s3", ">"],
        ["XINFO", "GROUPS", "s2"],
        ["XINFO", "GROUPS", "s3"],
        ["OBJECT", "ENCODING", "s3"],
    ]),
]


def random_session(seed: int, length: int) -> list[list[str]]:
    """A seeded session over three streams: entries come and go (XADD with explicit IDs, XDEL,
    XTRIM, XSETID) while two groups and a few consumers read, acknowledge and claim them."""
    rng = random.Random(seed)
    commands = [["CONFIG", "SET", "stream-node-max-entries", str(rng.choice([3, 5, 100]))]]
    keys = ["s1", "s2", "s3"]
    groups = ["g1", "g2"]
    consumers = ["alice", "bob", "carol"]
    last_ms = {key: 0 for key in keys}
    added: dict[str, list[str]] = {key: [] for key in keys}  # IDs XADD was given, newest last
    for key in keys:  # Groups from the start, so that most reads find one.
        commands += [["XGROUP", "CREATE", key, "g1", "0", "MKSTREAM"],
                     ["XGROUP", "CREATE", key, "g2", "$", "MKSTREAM"]]

    def some_id(key: str) -> str:
        """Mostly a recent entry's ID (likely pending somewhere), else any ID or a bad one."""
        choice = rng.randrange(20)
        if choice < 14 and added[key]:
            return rng.choice(added[key][-12:])
        if choice < 19:
            return f"{rng.randrange(last_ms[key] + 2)}-{rng.randrange(2)}"
        return rng.choice(["0", "0-0", "bad", "-", "+"])

    def start_id(key: str) -> str:
        return rng.choice(["$", "0", some_id(key)])

    def min_idle() -> str:
        return rng.choice(["0", "0", "0", MIN_IDLE_MS])

    def xadd():
        key = rng.choice(keys)
        last_ms[key] += 1 + rng.randrange(2)
        trim = (["MAXLEN", str(rng.randrange(3, 12))] if rng.random() < 0.1 else [])
        added[key].append(f"{last_ms[key]}-{rng.randrange(2)}")
        return ["XADD", key, *trim, added[key][-1], "f", str(last_ms[key]),
                *(["g", "v" * rng.randrange(20)] if rng.random() < 0.3 else [])]

    def xdel():
        key = rng.choice(keys)
        return ["XDEL", key, *[some_id(key) for _ in range(rng.randrange(1, 4))]]

    def xtrim():
        key = rng.choice(keys)
        if rng.random() < 0.5:
            return ["XTRIM", key, "MAXLEN", str(rng.randrange(2, 10))]
        return ["XTRIM", key, "MINID", str(rng.randrange(last_ms[key] + 1))]

    def xsetid():
        key = rng.choice(keys)
        last_ms[key] += rng.randrange(3)
        return ["XSETID", key, f"{last_ms[key]}-{rng.randrange(2)}"]

    def xgroup():
        key, group = rng.choice(keys), rng.choice(groups)
        kind = rng.randrange(12)
        if kind < 4:
            options = (["MKSTREAM"] if rng.random() < 0.5 else [])
            if rng.random() < 0.3:
                options += ["ENTRIESREAD", str(rng.randrange(-1, last_ms[key] + 2))]
            return ["XGROUP", "CREATE", key, group, start_id(key), *options]
        if kind < 7:
            options = (["ENTRIESREAD", str(rng.randrange(-1, last_ms[key] + 2))]
                       if rng.random() < 0.3 else [])
            return ["XGROUP", "SETID", key, group, start_id(key), *options]
        if kind < 9:
            return ["XGROUP", "DESTROY", key, group]
        if kind < 11:
            return ["XGROUP", "CREATECONSUMER", key, group, rng.choice(consumers)]
        return ["XGROUP", "DELCONSUMER", key, group, rng.choice(consumers)]

    def xreadgroup():
        streams = rng.sample(keys, rng.choice([1, 1, 2, 3]))
        options = []
        if rng.random() < 0.6:
            options += ["COUNT", str(rng.randrange(1, 5))]
        if rng.random() < 0.15:
            options.append("NOACK")
        ids = [rng.choice([">", ">", ">", "0", some_id(key)]) for key in streams]
        return ["XREADGROUP", "GROUP", rng.choice(groups), rng.choice(consumers), *options,
                "STREAMS", *streams, *ids]

    def xread():
        streams = rng.sample(keys, rng.choice([1, 2]))
        count = (["COUNT", str(rng.randrange(1, 4))] if rng.random() < 0.5 else [])
        return ["XREAD", *count, "STREAMS", *streams, *[some_id(key) for key in streams]]

    def xack():
        key = rng.choice(keys)
        ids = [some_id(key) for _ in range(rng.randrange(1, 4))]
        return ["XACK", key, rng.choice(groups), *ids]

    def xpending():
        key, group = rng.choice(keys), rng.choice(groups)
        if rng.random() < 0.3:
            return ["XPENDING", key, group]
        idle = (["IDLE", min_idle()] if rng.random() < 0.3 else [])
        consumer = ([rng.choice(consumers)] if rng.random() < 0.4 else [])
        return ["XPENDING", key, group, *idle, "-", "+", str(rng.randrange(1, 10)), *consumer]

    def xclaim():
        key = rng.choice(keys)
        options = []
        for option in rng.sample(["JUSTID", "FORCE", "RETRYCOUNT", "IDLE", "TIME", "LASTID"],
                                 rng.randrange(3)):
            if option == "RETRYCOUNT":
                options += [option, str(rng.randrange(5))]
            elif option == "IDLE":
                options += [option, rng.choice(["0", BIG_IDLE_MS])]
            elif option == "TIME":
                options += [option, rng.choice([PAST_MS, FUTURE_MS])]
            elif option == "LASTID":
                options += [option, some_id(key)]
            else:
                options.append(option)
        ids = [some_id(key) for _ in range(rng.randrange(1, 4))]
        return ["XCLAIM", key, rng.choice(groups), rng.choice(consumers), min_idle(), *ids,
                *options]

    def xautoclaim():
        key = rng.choice(keys)
        count = (["COUNT", str(rng.randrange(1, 5))] if rng.random() < 0.6 else [])
        justid = (["JUSTID"] if rng.random() < 0.3 else [])
        return ["XAUTOCLAIM", key, rng.choice(groups), rng.choice(consumers), min_idle(),
                rng.choice(["0-0", "-", some_id(key)]), *count, *justid]

    def xinfo():
        key = rng.choice(keys)
        kind = rng.randrange(4)
        if kind == 0:
            return ["XINFO", "GROUPS", key]
        if kind == 1:
            return ["XINFO", "CONSUMERS", key, rng.choice(groups)]
        if kind == 2:
            return ["XINFO", "STREAM", key]
        return ["XINFO", "STREAM", key, "FULL", *(["COUNT", str(rng.randrange(4))]
                                                   if rng.random() < 0.5 else [])]

    table = [(10, xadd), (2, xdel), (1, xtrim), (0.5, xsetid), (4, xgroup), (8, xreadgroup),
             (2, xread), (4, xack), (4, xpending), (3, xclaim), (3, xautoclaim), (4, xinfo)]
    total = sum(weight for weight, _ in table)
    for _ in range(length):
        roll = rng.random() * total
        for weight, make in table:
            roll -= weight
            if roll < 0:
                commands.append(make())
                break
    for key in keys:
        commands += [["XINFO", "STREAM", key, "FULL"], ["XINFO", "GROUPS", key]]
        for group in groups:
            commands += [["XPENDING", key, group], ["XPENDING", key, group, "-", "+", "100"],
                         ["XINFO", "CONSUMERS", key, group]]
    return commands


CASES += [(f"random {seed}", random_session(seed, 250)) for seed in range(4)]

# For test_differential_watch: the streams' key space and a generator of the random session's
# commands (without the read-only XINFO and XPENDING, whose idle times differ between servers).
KEYS = [b"s1", b"s2", b"s3"]


class Generator:
    def __init__(self, seed: int):
        self._commands = iter([command for command in random_session(seed, 2500)
                               if command[0] not in ("XINFO", "XPENDING")])

    def command(self) -> list[bytes]:
        return [arg.encode() for arg in next(self._commands)]


@both_protocols
@pytest.mark.parametrize("case", CASES, ids=[name for name, _ in CASES])
def test_stream_groups_reply_as_redis(server, real_redis, target, protocol, case):
    compare_case(server, real_redis, target, protocol, case, reset=RESET, mismatch=masked_mismatch)


# Blocking ------------------------------------------------------------------------------------


@pytest.fixture
def blocking_pair(server_factory, real_redis):
    """(redis-server, the server under test with I/O threads)."""
    return real_redis, server_factory(*IO_THREADS)


def _call(conn, *args) -> tuple[object, bytes]:
    """One command: (its parsed reply, its raw bytes)."""
    conn.send_command(*args)
    return conn.read_reply_raw()


def _blocked_replies(srv, protocol: int, scenario) -> list[tuple[object, bytes]]:
    """Runs `scenario(waiter, other)` on a fresh pair of connections to `srv` (the waiter in
    RESP`protocol`); returns the (parsed, raw) replies it collected."""
    with srv.raw() as waiter, srv.raw() as other:
        other.call("FLUSHALL")
        if protocol == 3:
            assert isinstance(waiter.call("HELLO", "3"), dict)
        return scenario(waiter, other)


def _on_both(blocking_pair, protocol: int, scenario) -> list:
    """The scenario's parsed replies on redis-server, whose raw bytes must be those of the
    server under test."""
    reference, candidate = blocking_pair
    expected = _blocked_replies(reference, protocol, scenario)
    got = _blocked_replies(candidate, protocol, scenario)
    expected_raw, got_raw = [raw for _, raw in expected], [raw for _, raw in got]
    assert got_raw == expected_raw, (f"RESP{protocol}:\n  redis:  {expected_raw!r}\n"
                                     f"  gigakv: {got_raw!r}")
    return [value for value, _ in expected]


def _as_pairs(reply) -> list:
    """An XREAD reply as [(key, entries)]: RESP3 sends a map, RESP2 an array of pairs."""
    if isinstance(reply, dict):
        return list(reply.items())
    return [tuple(pair) for pair in reply]


@both_protocols
def test_xread_block_is_woken_by_xadd_from_another_connection(blocking_pair, protocol):
    def scenario(waiter, other):
        replies = []
        other.call("XADD", "a", "1-0", "f", "old")
        waiter.send_command("XREAD", "COUNT", "5", "BLOCK", "10000", "STREAMS", "a", "b", "$", "$")
        wait_blocked(other, 1)
        other.call("XADD", "b", "7-1", "f", "new", "g", "x")
        replies.append(waiter.read_reply_raw())
        waiter.send_command("XREAD", "BLOCK", "10000", "STREAMS", "a", "1-0")
        wait_blocked(other, 1)
        other.call("SET", "unrelated", "x")
        other.call("XADD", "a", "2-0", "f", "later")
        replies.append(waiter.read_reply_raw())
        replies.append(_call(waiter, "XREAD", "BLOCK", "20", "STREAMS", "a", "$"))
        return replies

    woken, second, timeout = _on_both(blocking_pair, protocol, scenario)
    assert _as_pairs(woken) == [(b"b", [[b"7-1", [b"f", b"new", b"g", b"x"]]])]
    assert _as_pairs(second) == [(b"a", [[b"2-0", [b"f", b"later"]]])]
    assert timeout is None


@both_protocols
def test_xreadgroup_block_is_woken_by_xadd_from_another_connection(blocking_pair, protocol):
    def scenario(waiter, other):
        replies = []
        other.call("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
        waiter.send_command("XREADGROUP", "GROUP", "g", "worker", "BLOCK", "10000",
                            "STREAMS", "q", ">")
        wait_blocked(other, 1)
        other.call("XADD", "q", "5-0", "job", "1")
        replies.append(waiter.read_reply_raw())
        replies.append(_call(other, "XPENDING", "q", "g"))
        waiter.send_command("XREADGROUP", "GROUP", "g", "worker", "NOACK", "COUNT", "1",
                            "BLOCK", "10000", "STREAMS", "q", ">")
        wait_blocked(other, 1)
        other.call("XADD", "q", "6-0", "job", "2")
        replies.append(waiter.read_reply_raw())
        replies.append(_call(other, "XPENDING", "q", "g"))
        replies.append(_call(other, "XINFO", "GROUPS", "q"))
        replies.append(_call(waiter, "XREADGROUP", "GROUP", "g", "worker", "BLOCK", "20",
                                    "STREAMS", "q", ">"))
        # A history read never blocks.
        replies.append(_call(waiter, "XREADGROUP", "GROUP", "g", "worker", "BLOCK", "0",
                                    "STREAMS", "q", "0"))
        return replies

    woken, pending, woken_noack, pending_after, groups, timeout, history = _on_both(
        blocking_pair, protocol, scenario)
    assert _as_pairs(woken) == [(b"q", [[b"5-0", [b"job", b"1"]]])]
    assert pending == [1, b"5-0", b"5-0", [[b"worker", b"1"]]]
    assert _as_pairs(woken_noack) == [(b"q", [[b"6-0", [b"job", b"2"]]])]
    assert pending_after == pending
    assert timeout is None
    assert _as_pairs(history) == [(b"q", [[b"5-0", [b"job", b"1"]]])]
    group = dict(zip(groups[0][0::2], groups[0][1::2]))  # `other` speaks RESP2
    assert group[b"last-delivered-id"] == b"6-0" and group[b"pending"] == 1


@both_protocols
def test_blocked_xreadgroup_gets_an_error_when_its_group_or_key_goes(blocking_pair, protocol):
    """Redis 7.0 does not leave a client blocked on a group that can no longer serve it: it
    replies -NOGROUP when the group is destroyed (or the key comes back as a stream without it
    within one transaction) and -UNBLOCKED when the key is deleted, flushed or overwritten. The
    waits last 1 s: a server that leaves the client blocked answers the timeout's nil instead."""
    def scenario(waiter, other):
        replies = []
        for change in (["XGROUP", "DESTROY", "q", "g"], ["DEL", "q"], ["FLUSHALL"],
                       ["SET", "q", "x"]):
            other.call("DEL", "q")
            other.call("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
            waiter.send_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "1000",
                                "STREAMS", "q", ">")
            wait_blocked(other, 1)
            other.call(*change)
            replies.append(waiter.read_reply_raw())
            wait_blocked(other, 0)
        # Deleted, then made a stream again without the group, all while the client waits.
        other.call("DEL", "q")
        other.call("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
        waiter.send_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "1000",
                            "STREAMS", "q", ">")
        wait_blocked(other, 1)
        other.send_command("MULTI")
        other.send_command("DEL", "q")
        other.send_command("XADD", "q", "1-0", "f", "v")
        other.send_command("EXEC")
        for _ in range(4):
            other.read_reply()
        replies.append(waiter.read_reply_raw())
        # A plain XREAD is not told: the key coming back as a stream serves it.
        waiter.send_command("XREAD", "BLOCK", "1000", "STREAMS", "q", "$")
        wait_blocked(other, 1)
        other.call("DEL", "q")
        other.call("XADD", "q", "2-0", "f", "w")
        replies.append(waiter.read_reply_raw())
        return replies

    replies = _on_both(blocking_pair, protocol, scenario)
    nogroup = ErrorReply("NOGROUP the consumer group this client was blocked on no longer exists")
    unblocked = ErrorReply("UNBLOCKED the stream key no longer exists")
    assert replies[:5] == [nogroup, unblocked, unblocked, unblocked, nogroup]
    assert _as_pairs(replies[5]) == [(b"q", [[b"2-0", [b"f", b"w"]]])]


def _with_readers(srv, protocol: int, scenario) -> list[tuple[object, bytes]]:
    """Runs `scenario(readers, other)` with four reader connections (in RESP`protocol`) and one
    more connection to `srv`; returns the (parsed, raw) replies it collected."""
    from contextlib import ExitStack
    with ExitStack() as stack:
        readers = [stack.enter_context(srv.raw()) for _ in range(4)]
        other = stack.enter_context(srv.raw())
        other.call("FLUSHALL")
        if protocol == 3:
            for reader in readers:
                assert isinstance(reader.call("HELLO", "3"), dict)
        return scenario(readers, other)


@both_protocols
def test_every_blocked_reader_of_a_stream_is_tried_from_its_own_position(blocking_pair, protocol):
    """Redis's serveClientsBlockedOnStreamKey tries every reader blocked on the stream: one that
    the new entry cannot serve (a second consumer of a group the first one just served, an XREAD
    waiting past the new entry) holds up no one behind it. Group-only writes (XGROUP SETID) and
    XSETID wake no one; an XADD whose entry is deleted in the same transaction wakes readers
    with an empty list (the blocked path compares the stream's last ID)."""
    def scenario(readers, other):
        a, b, c, d = readers
        replies = []
        other.call("XADD", "s", "1-1", "a", "1")
        other.call("XGROUP", "CREATE", "s", "g", "$")
        other.call("XGROUP", "CREATE", "s", "g2", "$")
        # Each blocks before the next is sent: the order they wait in is the order they block.
        a.send_command("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "2000", "STREAMS", "s", ">")
        wait_blocked(other, 1)
        b.send_command("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "1000", "STREAMS", "s", ">")
        wait_blocked(other, 2)
        c.send_command("XREAD", "BLOCK", "2000", "STREAMS", "s", "$")
        wait_blocked(other, 3)
        d.send_command("XREADGROUP", "GROUP", "g2", "c1", "BLOCK", "2000", "STREAMS", "s", ">")
        wait_blocked(other, 4)
        other.call("XADD", "s", "2-1", "b", "2")
        replies += [a.read_reply_raw(), c.read_reply_raw(), d.read_reply_raw()]
        replies.append(b.read_reply_raw())  # Not served: its second runs out.
        # XGROUP SETID moves the group back without waking its reader; the next XADD serves it
        # everything after the group's new position.
        a.send_command("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "2000", "STREAMS", "s", ">")
        b.send_command("XREAD", "BLOCK", "2000", "STREAMS", "s", "$")
        wait_blocked(other, 2)
        other.call("XGROUP", "SETID", "s", "g", "0")
        other.call("XSETID", "s", "5-0")
        other.call("XADD", "s", "6-1", "c", "3")
        replies += [a.read_reply_raw(), b.read_reply_raw()]
        # A new entry deleted before the readers run: served, with nothing in it.
        other.call("XGROUP", "CREATE", "s", "g3", "$")
        c.send_command("XREAD", "BLOCK", "2000", "STREAMS", "s", "$")
        d.send_command("XREADGROUP", "GROUP", "g3", "late", "BLOCK", "2000", "STREAMS", "s", ">")
        wait_blocked(other, 2)
        for command in (["MULTI"], ["XADD", "s", "7-1", "d", "4"], ["XDEL", "s", "7-1"], ["EXEC"]):
            other.send_command(*command)
        for _ in range(4):
            other.read_reply()
        replies += [c.read_reply_raw(), d.read_reply_raw()]
        replies.append(_call(other, "XINFO", "CONSUMERS", "s", "g3"))
        return replies

    reference, candidate = blocking_pair
    expected = _with_readers(reference, protocol, scenario)
    got = _with_readers(candidate, protocol, scenario)
    # The last reply lists idle times: compared without them.
    expected_raw = [raw for _, raw in expected[:-1]]
    got_raw = [raw for _, raw in got[:-1]]
    assert got_raw == expected_raw, (f"RESP{protocol}:\n  redis:  {expected_raw!r}\n"
                                     f"  gigakv: {got_raw!r}")
    replies = [value for value, _ in expected]
    entry_2 = [b"2-1", [b"b", b"2"]]
    assert [_as_pairs(reply) for reply in replies[:3]] == [[(b"s", [entry_2])]] * 3
    assert replies[3] is None
    assert _as_pairs(replies[4]) == [(b"s", [[b"1-1", [b"a", b"1"]], entry_2,
                                             [b"6-1", [b"c", b"3"]]])]
    assert _as_pairs(replies[5]) == [(b"s", [[b"6-1", [b"c", b"3"]]])]
    assert [_as_pairs(reply) for reply in replies[6:8]] == [[(b"s", [])]] * 2
    assert [consumer[1] for consumer in replies[8]] == [b"late"]
    assert [consumer[1] for consumer in got[-1][0]] == [b"late"]


@both_protocols
def test_in_place_changes_and_expiry_as_redis_signals_them(blocking_pair, protocol):
    """XDEL, XTRIM, EXPIRE and PERSIST add nothing a reader could take: Redis wakes no blocked
    reader for them (a woken reader would compare the stream's last ID and get an empty list).
    A stream that expires (found by the active expiry, with no command touching it) ends its
    XREADGROUP clients' wait with -UNBLOCKED."""
    def scenario(waiter, other):
        replies = []
        other.call("XADD", "s", "1-0", "f", "v")
        other.call("XADD", "s", "2-0", "f", "v")
        other.call("XDEL", "s", "2-0")
        other.call("XGROUP", "CREATE", "s", "g", "1-0")
        for command in (["XREAD", "BLOCK", "300", "STREAMS", "s", "1-0"],
                        ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "300", "STREAMS", "s", ">"]):
            waiter.send_command(*command)
            wait_blocked(other, 1)
            other.call("XDEL", "s", "1-0")
            other.call("XTRIM", "s", "MAXLEN", "0")
            other.call("EXPIRE", "s", "100")
            other.call("PERSIST", "s")
            replies.append(waiter.read_reply_raw())  # The timeout's nil.
        other.call("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
        other.call("PEXPIRE", "q", "200")
        waiter.send_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "q", ">")
        replies.append(waiter.read_reply_raw())
        return replies

    replies = _on_both(blocking_pair, protocol, scenario)
    assert replies == [None, None, ErrorReply("UNBLOCKED the stream key no longer exists")]


def test_every_group_reader_of_an_expired_stream_is_told_even_if_it_comes_back(blocking_pair):
    """When a stream expires (found by the active expiry), all its blocked XREADGROUP clients get
    -UNBLOCKED in the same step, as Redis's unblockDeletedStreamReadgroupClients: a stream created
    again right after (here by a client that keeps trying) leaves none of them waiting."""
    from contextlib import ExitStack
    for srv in blocking_pair:
        with ExitStack() as stack:
            other = stack.enter_context(srv.raw())
            other.call("FLUSHALL")
            other.call("XGROUP", "CREATE", "k", "g", "$", "MKSTREAM")
            readers = [stack.enter_context(srv.raw()) for _ in range(100)]
            for i, reader in enumerate(readers):
                reader.send_command("XREADGROUP", "GROUP", "g", f"c{i}", "BLOCK", "10000",
                                    "STREAMS", "k", ">")
            wait_blocked(other, len(readers))
            expired_before = info_int(other, "Stats", "expired_keys")
            other.call("PEXPIRE", "k", "20")
            for _ in range(2000):  # Bounded: about 10 s. INFO touches no key: the cron expires it.
                if info_int(other, "Stats", "expired_keys") > expired_before:
                    break
                time.sleep(0.005)
            other.call("XGROUP", "CREATE", "k", "g", "$", "MKSTREAM")
            replies = [reader.read_reply() for reader in readers]
            assert replies == [ErrorReply("UNBLOCKED the stream key no longer exists")] * 100
            wait_blocked(other, 0)


def test_a_reader_of_several_streams_is_not_lost_while_being_served(server_factory):
    """A client blocked on two streams may be re-run for one (signalled by a write that cannot
    serve it) while another thread signals the other: that signal is looked at again once the
    re-run blocks again, so the client is served (bounded: 60 rounds, each must be served)."""
    import socket
    import threading
    srv = server_factory(*IO_THREADS)
    with srv.raw() as admin:
        admin.call("FLUSHALL")
        for key in ("s1", "s2", "s3"):
            admin.call("XADD", key, "1-0", "f", "v")
    stop = threading.Event()
    # COPY onto s1 signals it without serving its reader (the copy ends at 1-0 too).
    noise_request = b"*4\r\n$4\r\nCOPY\r\n$2\r\ns3\r\n$2\r\ns1\r\n$7\r\nREPLACE\r\n" * 100

    def noise():
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as sock:
            sock.settimeout(0.5)
            while not stop.is_set():
                sock.sendall(noise_request)
                try:
                    sock.recv(1 << 20)
                except OSError:
                    pass

    threads = [threading.Thread(target=noise, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        with srv.raw() as producer:
            for i in range(60):
                with srv.raw() as reader:
                    reader.send_command("XREAD", "BLOCK", "5000", "STREAMS", "s1", "s2", "1-0",
                                        f"{i + 1}-0")
                    time.sleep(0.005)
                    producer.call("XADD", "s2", f"{i + 2}-0", "f", "v")
                    reply = reader.read_reply()
                    assert _as_pairs(reply) == [(b"s2", [[f"{i + 2}-0".encode(), [b"f", b"v"]]])], i
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=5)


# DUMP / RESTORE across servers ---------------------------------------------------------------

GROUP_SETUP = [
    *_entries("s", 1, 12),
    ["XADD", "s", "13-0", "big", "v" * 300, "n", "-12345"],
    ["XGROUP", "CREATE", "s", "g1", "0"],
    ["XGROUP", "CREATE", "s", "g2", "3-0", "ENTRIESREAD", "3"],
    ["XGROUP", "CREATE", "s", "g3", "$"],
    ["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "s", ">"],
    ["XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "s", ">"],
    ["XREADGROUP", "GROUP", "g2", "carol", "STREAMS", "s", ">"],
    ["XGROUP", "CREATECONSUMER", "s", "g3", "dave"],
    ["XCLAIM", "s", "g1", "bob", "0", "2-0", "RETRYCOUNT", "4"],
    ["XCLAIM", "s", "g1", "alice", "0", "7-0", "IDLE", BIG_IDLE_MS, "JUSTID"],
    ["XACK", "s", "g1", "1-0", "6-0"],
    ["XDEL", "s", "3-0", "9-0"],
    ["XACK", "s", "g2", "5-0", "6-0"],
]


def _cross_restore(source, destination) -> None:
    """Builds GROUP_SETUP's stream `s` on `source`, DUMPs it and RESTOREs it under the same name
    into `destination` (flushed); XINFO STREAM FULL and the other group views of the copy must
    match the original's (masked), and both must go on alike."""
    for conn in (source, destination):
        for command in RESET:
            conn.call_raw(*command)
    for command in GROUP_SETUP:
        reply = source.call(*command)
        assert not isinstance(reply, ErrorReply), (command, reply)
    payload = source.call("DUMP", "s")
    assert isinstance(payload, bytes) and not isinstance(payload, ErrorReply), payload
    assert destination.call_raw("RESTORE", "s", "0", payload) == b"+OK\r\n"
    views = [["XINFO", "STREAM", "s", "FULL"], ["XINFO", "STREAM", "s"],
             ["XINFO", "GROUPS", "s"], ["XINFO", "CONSUMERS", "s", "g1"],
             ["XINFO", "CONSUMERS", "s", "g3"], ["XPENDING", "s", "g1"],
             ["XPENDING", "s", "g1", "-", "+", "20"], ["XPENDING", "s", "g2", "-", "+", "20"],
             ["XREADGROUP", "GROUP", "g1", "erin", "STREAMS", "s", ">"],
             ["XAUTOCLAIM", "s", "g1", "erin", "0", "0-0", "COUNT", "3"],
             ["XADD", "s", "20-0", "after", "restore"],
             ["XINFO", "STREAM", "s", "FULL"]]
    mismatches = []
    for view in views:
        original, copied = source.call_raw(*view), destination.call_raw(*view)
        if not same_masked(view, original, copied):
            mismatches.append(describe_mismatch(view, original, copied))
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("direction", ["redis-to-gigakv", "gigakv-to-redis"])
def test_dump_of_a_stream_with_groups_restores_across_servers(server, real_redis, target,
                                                               direction):
    reference, candidate = open_pair(server, real_redis, 2, target)
    if direction == "redis-to-gigakv":
        _cross_restore(reference, candidate)
    else:
        _cross_restore(candidate, reference)


def test_redis_dump_of_a_stream_with_groups_round_trips_through_gigakv(server, real_redis,
                                                                       target):
    """RESTORE keeps every group, consumer and PEL field (times included), so gigakv's DUMP of a
    restored Redis payload is that payload byte for byte, as Redis's own is."""
    reference, candidate = open_pair(server, real_redis, 2, target)
    for conn in (reference, candidate):
        for command in RESET:
            conn.call_raw(*command)
    for command in GROUP_SETUP:
        reference.call(*command)
    payload = reference.call("DUMP", "s")
    assert reference.call_raw("RESTORE", "again", "0", payload) == b"+OK\r\n"
    assert reference.call("DUMP", "again") == payload
    assert candidate.call_raw("RESTORE", "s", "0", payload) == b"+OK\r\n"
    assert candidate.call("DUMP", "s") == payload
