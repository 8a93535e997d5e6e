"""Differential test of the list command family against redis-server 7.0.

A seeded generator builds a few thousand commands over a small key space (six list keys, two of
them sharing a hash tag so multi-key commands also run within one shard, one string key for
cross-type uses, one binary key name) so that commands interact: LPUSH RPUSH LPUSHX RPUSHX LPOP
RPOP (with and without COUNT) LLEN LINDEX LSET LRANGE LTRIM LREM LINSERT LPOS (RANK COUNT MAXLEN)
LMOVE RPOPLPUSH LMPOP, the blocking BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP with a tiny timeout (they
are served at once when a key has data and time out after 10-20 ms otherwise, never blocking for
long), mixed with DEL EXISTS TYPE OBJECT ENCODING and string commands on list keys (WRONGTYPE)
and list commands on the string key. Arguments are valid, edge and invalid (bad integers,
negative counts, RANK 0, unknown options, wrong arity). Elements repeat often (so LREM, LPOS and
LINSERT find their pivots) and include integers, empty, binary and 5000-byte strings. Bulk
pushes of up to 150 elements make lists of hundreds of elements.

Each run sets the same list-max-listpack-size on both servers: the default (8 KiB nodes) and 4
entries per node, so that the candidate's nodes split and merge all the time.

The same stream goes to gigakv and to Debian's redis-server, one command at a time, and every
reply is compared byte for byte. After a mismatch both servers are resynchronised from the
reference (FLUSHALL, then every list rebuilt by RPUSH and every string by SET), so one bug shows
up as its own mismatch instead of a cascade. At the end the whole keyspace is compared (sorted
KEYS, then TYPE, OBJECT ENCODING and the contents of every key). Runs in RESP2, then in RESP3.
"""

from __future__ import annotations

import pytest

from differential import (DifferentialRun, SeededGenerator, both_protocols, grouped_report,
                          open_pair)
from e2e_support import encode_command

SEED = 20_261_130
COMMANDS = 4000
MAX_MISMATCHES = 300
MAX_CLASSES_REPORTED = 50

LIST_KEYS = [b"l0", b"l1", b"l2", b"{t}a", b"{t}b", b"bin\x00\xffkey"]
STRING_KEY = b"s"
KEYS = LIST_KEYS * 3 + [STRING_KEY, b"missing"]

ELEMENTS = [
    b"a", b"b", b"c", b"a", b"b", b"0", b"1", b"-1", b"42", b"127", b"128", b"32768",
    b"9223372036854775807", b"-9223372036854775808", b"007", b"", b"hello world",
    b"\x00\xff\r\n", b"x" * 70, b"y" * 300,
]
BIG = b"z" * 5000
INDEXES = [b"0", b"1", b"2", b"-1", b"-2", b"3", b"5", b"10", b"-10", b"50", b"-50", b"200",
           b"9223372036854775807", b"-9223372036854775808"]
BAD_INTS = [b"abc", b"1.5", b"", b"+1", b" 1", b"9223372036854775808", b"1e3"]
TIMEOUTS = [b"0.01", b"0.02", b"0.01"]
BAD_TIMEOUTS = [b"abc", b"-1", b"-0.5", b""]


class Generator(SeededGenerator):
    """Builds one random command at a time from a seeded RNG."""

    def key(self) -> bytes:
        return self.rng.choice(KEYS)

    def element(self) -> bytes:
        if self.rng.random() < 0.01:
            return BIG
        return self.rng.choice(ELEMENTS)

    def index(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.05:
            return self.rng.choice(BAD_INTS)
        if roll < 0.5:
            return str(self.rng.randrange(-30, 30)).encode()
        return self.rng.choice(INDEXES)

    def count(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.08:
            return self.rng.choice(BAD_INTS + [b"-1", b"-5"])
        return self.rng.choice([b"0", b"1", b"2", b"3", b"5", b"10", b"100"])

    def end(self) -> bytes:
        if self.rng.random() < 0.03:
            return self.rng.choice([b"UP", b"", b"middle"])
        return self.case(self.rng.choice(["LEFT", "RIGHT"]))

    def timeout(self) -> bytes:
        if self.rng.random() < 0.06:
            return self.rng.choice(BAD_TIMEOUTS)
        return self.rng.choice(TIMEOUTS)

    # Commands --------------------------------------------------------------------------------

    def push(self, name: str):
        count = self.rng.choice([1, 1, 2, 3, 5])
        return [self.case(name), self.key()] + [self.element() for _ in range(count)]

    def bulk_push(self):
        count = self.rng.randint(20, 150)
        return ([self.case(self.rng.choice(["RPUSH", "LPUSH"])), self.rng.choice(LIST_KEYS)]
                + [self.element() for _ in range(count)])

    def pop(self, name: str):
        args = [self.case(name), self.key()]
        roll = self.rng.random()
        if roll < 0.4:
            return args + [self.count()]
        if roll < 0.43:
            return args + [b"1", b"2"]
        return args

    def lpos(self):
        args = [self.case("LPOS"), self.key(), self.element()]
        for _ in range(self.rng.choice([0, 0, 1, 1, 2, 3])):
            option = self.rng.choice(["RANK", "COUNT", "MAXLEN", "RANK", "BOGUS"])
            if option == "RANK":
                value = self.rng.choice([b"1", b"2", b"-1", b"-2", b"3", b"-3", b"0", b"x",
                                         b"-9223372036854775808"])
            elif option == "COUNT":
                value = self.rng.choice([b"0", b"1", b"2", b"5", b"-1", b"x"])
            else:
                value = self.rng.choice([b"0", b"1", b"3", b"10", b"-1"])
            args += [self.case(option)] + ([value] if self.rng.random() < 0.97 else [])
        return args

    def lmpop(self, blocking: bool):
        keys = [self.key() for _ in range(self.rng.randint(1, 3))]
        numkeys = str(len(keys)).encode()
        if self.rng.random() < 0.05:
            numkeys = self.rng.choice([b"0", b"-1", b"abc", b"5", b"9223372036854775807"])
        args = [self.case("BLMPOP"), self.timeout()] if blocking else [self.case("LMPOP")]
        args += [numkeys] + keys + [self.end()]
        roll = self.rng.random()
        if roll < 0.5:
            args += [self.case("COUNT"), self.rng.choice([b"1", b"2", b"5", b"100", b"0", b"-1",
                                                           b"x"])]
        elif roll < 0.53:
            args += [self.case("COUNT")]
        return args

    def command(self) -> list[bytes]:
        rng = self.rng
        table = [
            (10, lambda: self.push("RPUSH")),
            (8, lambda: self.push("LPUSH")),
            (2, lambda: self.push("LPUSHX")),
            (2, lambda: self.push("RPUSHX")),
            (2, self.bulk_push),
            (6, lambda: self.pop("LPOP")),
            (6, lambda: self.pop("RPOP")),
            (3, lambda: [self.case("LLEN"), self.key()]),
            (5, lambda: [self.case("LINDEX"), self.key(), self.index()]),
            (4, lambda: [self.case("LSET"), self.key(), self.index(), self.element()]),
            (6, lambda: [self.case("LRANGE"), self.key(), self.index(), self.index()]),
            (2, lambda: [self.case("LTRIM"), self.key(), self.index(), self.index()]),
            (4, lambda: [self.case("LREM"), self.key(),
                         rng.choice([b"0", b"1", b"2", b"-1", b"-2", b"5", b"x"]),
                         self.element()]),
            (4, lambda: [self.case("LINSERT"), self.key(),
                         self.case(rng.choice(["BEFORE", "AFTER", "BEFORE", "AFTER", "AROUND"])),
                         self.element(), self.element()]),
            (5, self.lpos),
            (4, lambda: [self.case("LMOVE"), self.key(), self.key(), self.end(), self.end()]),
            (2, lambda: [self.case("RPOPLPUSH"), self.key(), self.key()]),
            (3, lambda: self.lmpop(False)),
            (1.5, lambda: [self.case("BLPOP")] + [self.key() for _ in range(rng.randint(1, 3))]
             + [self.timeout()]),
            (1.5, lambda: [self.case("BRPOP")] + [self.key() for _ in range(rng.randint(1, 3))]
             + [self.timeout()]),
            (1, lambda: [self.case("BLMOVE"), self.key(), self.key(), self.end(), self.end(),
                         self.timeout()]),
            (1, lambda: [self.case("BRPOPLPUSH"), self.key(), self.key(), self.timeout()]),
            (1, lambda: self.lmpop(True)),
            (2, lambda: [self.case("DEL"), self.key()]),
            (1, lambda: [self.case("EXISTS")] + [self.key() for _ in range(rng.randint(1, 3))]),
            (1, lambda: [self.case("TYPE"), self.key()]),
            (1, lambda: [self.case("OBJECT"), self.case("ENCODING"), self.key()]),
            (1, lambda: [self.case("SET"), rng.choice([STRING_KEY] * 20 + LIST_KEYS), b"v"]),
            (1, lambda: [self.case("GET"), self.key()]),
            (0.5, lambda: [self.case("APPEND"), self.key(), b"x"]),
            (3, self.wrong_arity),
        ]
        return self.pick(table)

    def wrong_arity(self) -> list[bytes]:
        k = self.key()
        choice = self.rng.choice([
            [b"LPUSH", k], [b"RPUSH"], [b"LPUSHX", k], [b"LPOP"], [b"LPOP", k, b"1", b"2"],
            [b"LLEN"], [b"LLEN", k, k], [b"LINDEX", k], [b"LSET", k, b"0"], [b"LRANGE", k, b"0"],
            [b"LTRIM", k], [b"LREM", k, b"0"], [b"LINSERT", k, b"BEFORE", b"a"], [b"LPOS", k],
            [b"LMOVE", k, k, b"LEFT"], [b"RPOPLPUSH", k], [b"LMPOP", b"1", k], [b"BLPOP", k],
            [b"BLMOVE", k, k, b"LEFT", b"LEFT"], [b"BRPOPLPUSH", k, k], [b"BLMPOP", b"0", b"1"],
        ])
        return [self.case(choice[0].decode())] + choice[1:]


# --------------------------------------------------------------------------------------------
# Running and comparing
# --------------------------------------------------------------------------------------------


class Run(DifferentialRun):
    """One pass over the stream, with list-aware resyncs and the final keyspace comparison."""

    def __init__(self, reference, candidate, protocol: int):
        super().__init__(reference, candidate, protocol, SEED)
        self.longest = 0  # the longest list a push reported on the reference

    def step(self, index, args: list[bytes]) -> bool:
        same = self.plain(index, args, self.encode(args))
        reply = self.replies[-1]
        if args[0].upper() in (b"LPUSH", b"RPUSH") and reply[:1] == b":":
            self.longest = max(self.longest, int(reply[1:-2]))
        return same

    def resync(self) -> None:
        ref = self.reference
        state = []
        for key in sorted(ref.call("KEYS", "*")):
            kind = ref.call("TYPE", key)
            if kind == "list" or kind == b"list":
                state.append((b"RPUSH", key, ref.call("LRANGE", key, 0, -1)))
            else:
                state.append((b"SET", key, [ref.call("GET", key)]))
        for conn in (self.reference, self.candidate):
            assert conn.call_raw("FLUSHALL") == b"+OK\r\n"
            for command, key, values in state:
                assert conn.call_raw(command, key, *values)[:1] in (b":", b"+")

    def compare_keyspace(self) -> None:
        keys = sorted(self.reference.call("KEYS", "*"))
        got_keys = sorted(self.candidate.call("KEYS", "*"))
        if keys != got_keys:
            self.mismatch("final", [b"KEYS", b"*"], repr(keys).encode(), repr(got_keys).encode())
        for key in keys:
            for args in ([b"TYPE", key], [b"OBJECT", b"ENCODING", key],
                         [b"LRANGE", key, b"0", b"-1"], [b"LLEN", key], [b"GET", key]):
                self.plain("final", args, encode_command(*args))


@both_protocols
@pytest.mark.parametrize("node_size", [b"-2", b"4"], ids=["8KiB-nodes", "4-entry-nodes"])
def test_list_commands_match_redis(server, real_redis, protocol, target, node_size):
    reference, candidate = open_pair(server, real_redis, protocol, target)
    for conn in (reference, candidate):
        assert conn.call_raw("CONFIG", "SET", "list-max-listpack-size", node_size) == b"+OK\r\n"
    run = Run(reference, candidate, protocol)
    run.play(Generator(SEED + int(node_size)), COMMANDS, max_mismatches=MAX_MISMATCHES)

    # Guard against a degenerate mix: successes, many kinds of errors, and lists of hundreds of
    # elements must occur.
    errors, successes = run.outcomes()
    assert run.stopped_early or (
        len(errors) >= 12 and successes > COMMANDS // 2 and run.longest >= 200
    ), f"the random mix no longer exercises enough ({len(errors)} error kinds, {run.longest})"

    assert not run.mismatches, grouped_report(run.mismatches, MAX_CLASSES_REPORTED,
                                              show_db=False)
