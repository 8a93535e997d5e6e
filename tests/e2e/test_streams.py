"""Streams side by side with redis-server 7.0, byte for byte, in RESP2 and RESP3: XADD (IDs,
NOMKSTREAM, MAXLEN/MINID with = and ~, LIMIT), XRANGE/XREVRANGE (exclusive bounds, COUNT), XLEN,
XDEL, XTRIM, XSETID, their errors, and DUMP payloads (the same node bytes as Redis's, so DUMP of
the same stream is identical and a Redis DUMP restores into gigakv).

Seeded random sessions mix every command on a few streams with small node limits (so `~` trims
depend on node boundaries, which must be Redis's) and compare every reply.
"""

from __future__ import annotations

import random

import pytest

from differential import both_protocols, compare_case

RESET = (("FLUSHALL",), ("CONFIG", "SET", "stream-node-max-entries", "100"),
         ("CONFIG", "SET", "stream-node-max-bytes", "4096"))


def random_session(seed: int, length: int) -> list[list[str]]:
    rng = random.Random(seed)
    commands = [["CONFIG", "SET", "stream-node-max-entries", str(rng.choice([3, 5, 10, 100]))],
                ["CONFIG", "SET", "stream-node-max-bytes", str(rng.choice([100, 300, 4096]))]]
    keys = ["s1", "s2", "s3"]
    last_ms = {key: 0 for key in keys}
    fields = ["f", "g", "name", "1", "-7", "big" * 30]

    def random_id(key: str) -> str:
        choice = rng.randrange(10)
        if choice < 4:
            last_ms[key] += rng.randrange(3)
            return f"{last_ms[key]}-{rng.randrange(4)}"
        if choice < 6:
            last_ms[key] += rng.randrange(2)
            return f"{last_ms[key]}-*"
        if choice < 8:
            last_ms[key] += 1 + rng.randrange(3)
            return str(last_ms[key])
        return rng.choice(["0-0", "0-1", "1-1", "*-1", "abc", "18446744073709551616-0"])

    def random_bound(key: str, end: bool) -> str:
        if rng.random() < 0.2:
            return "+" if end else "-"
        text = f"{rng.randrange(last_ms[key] + 2)}" + (f"-{rng.randrange(5)}"
                                                       if rng.random() < 0.6 else "")
        return ("(" if rng.random() < 0.2 else "") + text

    def trim_args(key: str) -> list[str]:
        args = []
        if rng.random() < 0.5:
            args += ["MAXLEN", *rng.choice([[], ["~"], ["="]]), str(rng.randrange(30))]
        else:
            args += ["MINID", *rng.choice([[], ["~"], ["="]]), f"{rng.randrange(last_ms[key] + 1)}"]
        if "~" in args and rng.random() < 0.4:
            args += ["LIMIT", str(rng.randrange(12))]
        return args

    for _ in range(length):
        key = rng.choice(keys)
        kind = rng.randrange(20)
        if kind < 10:
            options = []
            if rng.random() < 0.1:
                options.append("NOMKSTREAM")
            if rng.random() < 0.25:
                options += trim_args(key)
            pairs = []
            same = rng.random() < 0.6
            for i in range(rng.choice([1, 1, 2, 3])):
                field = fields[i] if same else rng.choice(fields)
                value = rng.choice([str(rng.randrange(-5000, 5000)), "v" * rng.randrange(70),
                                    str(rng.randrange(2 ** 40))])
                pairs += [field, value]
            commands.append(["XADD", key, *options, random_id(key), *pairs])
        elif kind < 13:
            reverse = rng.random() < 0.4
            start, end = random_bound(key, False), random_bound(key, True)
            count = ["COUNT", str(rng.randrange(-1, 6))] if rng.random() < 0.4 else []
            if reverse:
                commands.append(["XREVRANGE", key, end, start, *count])
            else:
                commands.append(["XRANGE", key, start, end, *count])
        elif kind < 15:
            ids = [f"{rng.randrange(last_ms[key] + 1)}-{rng.randrange(4)}"
                   for _ in range(rng.randrange(1, 4))]
            commands.append(["XDEL", key, *ids])
        elif kind < 17:
            commands.append(["XTRIM", key, *trim_args(key)])
        elif kind < 18:
            commands.append(["XLEN", key])
        elif kind < 19:
            commands.append(["DUMP", key])
        else:
            commands.append(["XRANGE", key, "-", "+"])
    for key in keys:
        commands += [["XLEN", key], ["XRANGE", key, "-", "+"], ["DUMP", key]]
    return commands


CASES = [
    ("basics", [
        ["XADD", "s", "1-1", "a", "1", "b", "hello"],
        ["XADD", "s", "1-2", "a", "2", "b", "x"],
        ["XADD", "s", "2-0", "c", "-5000"],
        ["XADD", "s", "2-*", "c", "7"],
        ["XADD", "s", "2", "c", "7"],
        ["XADD", "s", "1-5", "c", "7"],
        ["XADD", "s", "0-0", "c", "7"],
        ["XADD", "s", "5-1", "c"],
        ["XADD", "s", "NOMKSTREAM", "6-1", "c", "d"],
        ["XADD", "nos", "NOMKSTREAM", "6-1", "c", "d"],
        ["EXISTS", "nos"],
        ["XADD", "s", "MAXLEN", "~", "2", "7-1", "a", "b"],
        ["XADD", "s", "MAXLEN", "=", "2", "8-1", "a", "b"],
        ["XRANGE", "s", "-", "+"],
        ["XREVRANGE", "s", "+", "-"],
        ["XRANGE", "s", "(7-1", "+"],
        ["XRANGE", "s", "-", "+", "COUNT", "0"],
        ["XRANGE", "s", "-", "+", "COUNT", "1"],
        ["XRANGE", "s", "-", "+", "COUNT", "-5"],
        ["XREVRANGE", "s", "+", "-", "COUNT", "1"],
        ["XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"],
        ["XRANGE", "s", "-", "(0-0"],
        ["XRANGE", "s", "(-", "+"],
        ["XRANGE", "s", "x", "+"],
        ["XRANGE", "s", "-", "+", "COUNTX", "1"],
        ["XRANGE", "s", "-", "+", "COUNT"],
        ["XRANGE", "nokey", "-", "+"],
        ["XREVRANGE", "nokey", "+", "-", "COUNT", "0"],
        ["XLEN", "s"],
        ["XLEN", "nokey"],
        ["TYPE", "s"],
        ["OBJECT", "ENCODING", "s"],
        ["XDEL", "s", "7-1", "8-1", "9-9"],
        ["XDEL", "s", "1-1", "bad"],
        ["XDEL", "nokey", "bad"],
        ["XLEN", "s"],
        ["XRANGE", "s", "-", "+"],
        ["DUMP", "s"],
    ]),
    ("ids", [
        ["XADD", "s2", "0-*", "a", "b"],
        ["XADD", "s2", "00010-+5", "a", "b"],
        ["XADD", "s2", " 20-1", "a", "b"],
        ["XADD", "s2", "30--01", "a", "b"],
        ["XADD", "s2", "30-", "a", "b"],
        ["XADD", "s2", "-", "a", "b"],
        ["XADD", "s2", "+", "a", "b"],
        ["XADD", "s2", "1" * 130, "a", "b"],
        ["XRANGE", "s2", "-", "+"],
        ["XADD", "s", "18446744073709551615-18446744073709551615", "a", "b"],
        ["XADD", "s", "*", "a", "b"],
        ["XADD", "s", "18446744073709551615-*", "a", "b"],
        ["XADD", "t", "18446744073709551615-*", "a", "b"],
        ["XADD", "t", "18446744073709551615-*", "a", "b"],
        ["XRANGE", "t", "-", "+"],
        ["XSETID", "t", "18446744073709551615-18446744073709551615"],
        ["XADD", "t", "*", "a", "b"],
    ]),
    ("trim", [
        ["CONFIG", "SET", "stream-node-max-entries", "10"],
        *[["XADD", "s", f"{i}-0", "f", str(i)] for i in range(1, 96)],
        ["XTRIM", "s", "MAXLEN", "~", "52"],
        ["XLEN", "s"],
        ["XRANGE", "s", "-", "+", "COUNT", "2"],
        ["XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "15"],
        ["XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "30"],
        ["XLEN", "s"],
        ["XTRIM", "s", "MINID", "~", "75"],
        ["XRANGE", "s", "-", "+", "COUNT", "2"],
        ["XTRIM", "s", "MINID", "83"],
        ["XTRIM", "s", "MAXLEN", "3"],
        ["XRANGE", "s", "-", "+"],
        ["XTRIM", "s", "LIMIT", "5"],
        ["XTRIM", "s", "MAXLEN", "0", "LIMIT", "5"],
        ["XTRIM", "s", "MAXLEN", "-1"],
        ["XTRIM", "s", "MAXLEN", "1", "MINID", "1"],
        ["XTRIM", "s", "MAXLEN", "x"],
        ["XTRIM", "s", "MINID", "x"],
        ["XTRIM", "s", "FOO"],
        ["XTRIM", "s"],
        ["XTRIM", "nokey", "MAXLEN", "0"],
        ["XADD", "s", "MAXLEN", "~", "2", "LIMIT", "-1", "*", "a", "b"],
        ["XADD", "s", "LIMIT", "2", "*", "a", "b"],
        ["XADD", "s", "MAXLEN", "0", "100-0", "a", "b"],
        ["XLEN", "s"],
        ["EXISTS", "s"],
        ["DUMP", "s"],
        ["XADD", "s3", "MAXLEN", "~", "0", "1-1", "a", "b"],
        ["XLEN", "s3"],
        ["SET", "str", "x"],
        ["XADD", "str", "*", "a", "b"],
        ["XLEN", "str"],
        ["XRANGE", "str", "-", "+"],
        ["XTRIM", "str", "MAXLEN", "1"],
        ["XDEL", "str", "1-1"],
        ["XSETID", "str", "1-1"],
    ]),
    ("setid", [
        ["XADD", "s", "5-0", "a", "b"],
        ["XADD", "s", "6-0", "a", "b"],
        ["XDEL", "s", "6-0"],
        ["XSETID", "s", "4-0"],
        ["XSETID", "s", "5-0"],
        ["XSETID", "s", "100-0", "ENTRIESADDED", "0"],
        ["XSETID", "s", "100-0", "ENTRIESADDED", "-1"],
        ["XSETID", "s", "100-0", "ENTRIESADDED", "50", "MAXDELETEDID", "99-0"],
        ["XSETID", "s", "100-0", "MAXDELETEDID", "101-0"],
        ["XSETID", "s", "100-0", "MAXDELETEDID"],
        ["XSETID", "s", "+"],
        ["XSETID", "nokey", "1-1"],
        ["XADD", "s", "100-0", "x", "y"],
        ["XADD", "s", "100-*", "x", "y"],
        ["DUMP", "s"],
    ]),
    *[(f"random {seed}", random_session(seed, 300)) for seed in range(4)],
]


@both_protocols
@pytest.mark.parametrize("case", CASES, ids=[name for name, _ in CASES])
def test_streams_reply_as_redis(server, real_redis, target, protocol, case):
    compare_case(server, real_redis, target, protocol, case, reset=RESET)


def test_redis_dump_restores_into_gigakv(server, real_redis, target):
    """A stream DUMPed by redis-server restores into gigakv with the same entries and metadata,
    and gigakv's DUMP of it is Redis's payload byte for byte."""
    if target == "redis":
        pytest.skip("the server under test is redis-server itself")
    reference, candidate = real_redis.raw(), server.raw()
    for conn in (reference, candidate):
        conn.call_raw("FLUSHALL")
    for command in random_session(99, 200):
        if command[0] == "XADD" or command[0] == "XDEL" or command[0] == "XTRIM":
            reference.call_raw(*command)
    for conn in (reference, candidate):
        conn.call_raw("CONFIG", "SET", "stream-node-max-entries", "100")
        conn.call_raw("CONFIG", "SET", "stream-node-max-bytes", "4096")
    for key in ("s1", "s2", "s3"):
        payload = reference.call("DUMP", key)
        if payload is None:
            continue
        assert candidate.call_raw("RESTORE", key, "0", payload) == b"+OK\r\n"
        assert candidate.call_raw("XRANGE", key, "-", "+") == reference.call_raw("XRANGE", key,
                                                                                "-", "+")
        assert candidate.call("DUMP", key) == payload
        assert candidate.call_raw("XADD", key, "*", "new", "entry")[:1] == b"$"
