"""Differential test of the set command family against redis-server 7.0.

A seeded generator builds a few thousand commands over a small key space (sets, three keys sharing
a hash tag so multi-key commands also run within one shard, a binary key name, two keys that get
integers only, and a key that mostly holds a string for cross-type uses): SADD SREM SCARD
SISMEMBER SMISMEMBER SMEMBERS SPOP SRANDMEMBER SMOVE SINTER SINTERCARD SINTERSTORE SUNION
SUNIONSTORE SDIFF SDIFFSTORE SSCAN, plus DEL EXISTS TYPE SET GET OBJECT ENCODING EXPIRE TTL on the
same keys. Members are small and huge integers, non-canonical integer texts ("01", "-0", "+1"),
short strings, the empty string, binary bytes and strings longer than set-max-listpack-value; now
and then one SADD adds 20 to 150 members so sets cross the listpack (128) and intset (512) limits
and live in the hashtable encoding. Arguments are valid, edge and invalid (wrong arity, bad
counts, numkeys and LIMIT errors, bad cursors).

The same stream goes to gigakv and to Debian's redis-server, one command at a time, and replies
are compared byte for byte, except:
- unordered replies (SMEMBERS, SINTER, SUNION, SDIFF): same type byte, same elements once sorted;
- SRANDMEMBER: same shape and length; every member returned must be in the set (checked with
  SMISMEMBER on gigakv), and without repeats for a non-negative count;
- SPOP: same shape and length, distinct members of the set as it was; both servers are then made
  equal again by removing, on each, what the other popped (SREM, not compared), and SCARD is
  compared;
- SSCAN: each server is iterated to completion from cursor 0; the sets of members are compared;
- TTL: within a small tolerance (the servers see the command a few microseconds apart);
- OBJECT ENCODING: "intset" must match exactly; for other sets Redis 7.0 says "hashtable" where
  gigakv may say "listpack" (Redis 7.2's small encoding).
After a mismatch both servers are resynchronised from the reference (FLUSHALL, then SET or SADD of
every reference key). At the end the whole keyspace is compared (sorted KEYS, TYPE, GET or sorted
SMEMBERS, SCARD, OBJECT ENCODING as above). Runs in RESP2, then in RESP3 after HELLO 3.
"""

from __future__ import annotations

import random

from differential import (DifferentialRun, SeededGenerator, both_protocols, exchange,
                          grouped_report, is_error, open_pair, same_ttl)
from e2e_support import encode_command

SEED = 20_261_130
COMMANDS = 5000
MAX_MISMATCHES = 300
MAX_CLASSES_REPORTED = 50

SET_KEYS = [b"s0", b"s1", b"s2", b"{t}a", b"{t}b", b"{t}c", b"bin\x00\xffkey", b"i0", b"i1"]
INT_KEYS = (b"i0", b"i1")  # SADD gives these integers only, so they stay intsets for a while
STRING_KEY = b"str"
KEYS = SET_KEYS + [STRING_KEY]

_rng = random.Random(SEED)
SMALL_MEMBERS = (
    [str(i).encode() for i in range(-3, 25)]
    + [b"-9223372036854775808", b"9223372036854775807", b"65536", b"-70000", b"4294967296"]
    + [b"01", b"-0", b"+1", b"1.5", b" 2", b"9223372036854775808"]
    + [b"a", b"b", b"c", b"d", b"e", b"foo", b"bar", b"", b"\x00\xff\x01", b"x" * 64, b"y" * 65]
    + [bytes(_rng.randrange(256) for _ in range(80))]
)


class Generator(SeededGenerator):
    """Builds one random command at a time from a seeded RNG."""

    def key(self) -> bytes:
        if self.rng.random() < 0.06:
            return STRING_KEY
        if self.rng.random() < 0.03:
            return b"missing"
        return self.rng.choice(SET_KEYS)

    def member(self) -> bytes:
        return self.rng.choice(SMALL_MEMBERS)

    def members(self, low: int = 1, high: int = 5) -> list[bytes]:
        return [self.member() for _ in range(self.rng.randint(low, high))]

    def bulk_members(self) -> list[bytes]:
        """20 to 150 members: integers (toward the intset limit) or strings (past the listpack)."""
        rng = self.rng
        count = rng.randint(20, 150)
        if rng.random() < 0.5:
            return [str(rng.randrange(0, 1500)).encode() for _ in range(count)]
        return [b"m:%d" % rng.randrange(0, 600) for _ in range(count)]

    def keys(self, low: int = 1, high: int = 4) -> list[bytes]:
        return [self.key() for _ in range(self.rng.randint(low, high))]

    def count(self, negative: bool) -> bytes:
        rng = self.rng
        roll = rng.random()
        if roll < 0.08:
            return rng.choice([b"abc", b"", b"1.5", b"+1", b"9223372036854775808",
                               b"-9223372036854775808"])
        if negative and roll < 0.35:
            return str(-rng.randint(1, 200)).encode()
        if roll < 0.4:
            return rng.choice([b"0", b"-1"])
        return str(rng.choice([1, 2, 3, 5, 10, 50, 200, 1000])).encode()

    def int_members(self) -> list[bytes]:
        rng = self.rng
        count = rng.randint(20, 150) if rng.random() < 0.15 else rng.randint(1, 5)
        return [str(rng.randrange(-100, 1500)).encode() for _ in range(count)]

    # Commands --------------------------------------------------------------------------------

    def cmd_sadd(self):
        key = self.key()
        if key in INT_KEYS and self.rng.random() < 0.9:
            return [self.case("SADD"), key] + self.int_members()
        members = self.bulk_members() if self.rng.random() < 0.12 else self.members()
        return [self.case("SADD"), key] + members

    def cmd_sintercard(self):
        rng = self.rng
        keys = self.keys()
        roll = rng.random()
        numkeys = str(len(keys)).encode()
        if roll < 0.1:
            numkeys = rng.choice([b"0", b"-1", b"abc", str(len(keys) + 1).encode()])
        args = [self.case("SINTERCARD"), numkeys] + keys
        roll = rng.random()
        if roll < 0.4:
            args += [self.case("LIMIT"), rng.choice([b"0", b"1", b"2", b"5", b"100", b"-1",
                                                     b"x"])]
        elif roll < 0.45:
            args += [rng.choice([self.case("LIMIT"), b"FOO"])]
        return args

    def cmd_sscan(self):
        rng = self.rng
        cursor = b"0" if rng.random() < 0.9 else rng.choice([b"abc", b" 1", b"1x", b""])
        args = [self.case("SSCAN"), self.key(), cursor]
        if rng.random() < 0.4:
            args += [self.case("MATCH"), rng.choice([b"*", b"m:1*", b"1*", b"?", b"[a-c]",
                                                     b"*o*"])]
        if rng.random() < 0.4:
            args += [self.case("COUNT"), rng.choice([b"1", b"5", b"20", b"1000", b"0", b"x"])]
        if rng.random() < 0.04:
            args += [rng.choice([self.case("TYPE"), self.case("MATCH"), b"FOO"])]
        return ("sscan", args)

    def command(self):
        rng = self.rng
        table = [
            (14, self.cmd_sadd),
            (6, lambda: [self.case("SREM"), self.key()] + self.members()),
            (3, lambda: [self.case("SCARD"), self.key()]),
            (4, lambda: [self.case("SISMEMBER"), self.key(), self.member()]),
            (3, lambda: [self.case("SMISMEMBER"), self.key()] + self.members()),
            (4, lambda: ("sorted", [self.case("SMEMBERS"), self.key()])),
            (5, lambda: ("spop", [self.case("SPOP"), self.key()]
                         + ([self.count(False)] if rng.random() < 0.6 else []))),
            (5, lambda: ("srandmember", [self.case("SRANDMEMBER"), self.key()]
                         + ([self.count(True)] if rng.random() < 0.7 else []))),
            (5, lambda: [self.case("SMOVE"), self.key(), self.key(), self.member()]),
            (4, lambda: ("sorted", [self.case("SINTER")] + self.keys())),
            (4, self.cmd_sintercard),
            (3, lambda: [self.case("SINTERSTORE"), self.key()] + self.keys()),
            (4, lambda: ("sorted", [self.case("SUNION")] + self.keys())),
            (3, lambda: [self.case("SUNIONSTORE"), self.key()] + self.keys()),
            (4, lambda: ("sorted", [self.case("SDIFF")] + self.keys())),
            (3, lambda: [self.case("SDIFFSTORE"), self.key()] + self.keys()),
            (5, self.cmd_sscan),
            (2, lambda: [self.case("DEL"), self.key()]),
            (2, lambda: [self.case("EXISTS")] + self.keys()),
            (2, lambda: [self.case("TYPE"), self.key()]),
            (2, lambda: [self.case("SET"), rng.choice([STRING_KEY, self.key()]), b"v"]),
            (1, lambda: [self.case("GET"), self.key()]),
            (3, lambda: ("encoding", [self.case("OBJECT"), self.case("ENCODING"), self.key()])),
            (0.5, lambda: [self.case("PEXPIREAT"), self.key(), b"1"]),
            (1, lambda: [self.case("EXPIRE"), self.key(), b"1000"]),
            (1, lambda: ("ttl", [self.case("TTL"), self.key()])),
            (6, self.wrong_arity),
        ]
        return self.pick(table)

    def wrong_arity(self):
        k, m = self.key(), self.member()
        choice = self.rng.choice([
            [b"SADD"], [b"SADD", k], [b"SREM", k], [b"SCARD"], [b"SCARD", k, k],
            [b"SISMEMBER", k], [b"SISMEMBER", k, m, m], [b"SMISMEMBER", k], [b"SMEMBERS"],
            [b"SMEMBERS", k, k], [b"SPOP"], [b"SPOP", k, b"1", b"1"], [b"SRANDMEMBER"],
            [b"SRANDMEMBER", k, b"1", b"1"], [b"SMOVE", k, k], [b"SMOVE", k, k, m, m],
            [b"SINTER"], [b"SINTERCARD"], [b"SINTERCARD", b"1"], [b"SINTERSTORE", k],
            [b"SUNION"], [b"SUNIONSTORE", k], [b"SDIFF"], [b"SDIFFSTORE", k], [b"SSCAN", k],
        ])
        return [self.case(choice[0].decode())] + choice[1:]


# --------------------------------------------------------------------------------------------
# Running and comparing
# --------------------------------------------------------------------------------------------


def _compare_sorted(expected, got) -> bool:
    (e_value, e_raw), (g_value, g_raw) = expected, got
    if is_error(e_raw) or not isinstance(e_value, list):
        return e_raw == g_raw
    return (isinstance(g_value, list) and e_raw[:1] == g_raw[:1]
            and sorted(e_value) == sorted(g_value))


def _same_encoding(expected, got) -> bool:
    (e_value, e_raw), (g_value, g_raw) = expected, got
    if e_raw == g_raw:
        return True
    return e_value == b"hashtable" and g_value == b"listpack"


def _header(raw: bytes) -> bytes:
    return raw.split(b"\r\n", 1)[0]


class Run(DifferentialRun):
    """One pass over the stream, with resyncs and the final keyspace comparison."""

    inline_rate = 0.1

    def __init__(self, reference, candidate, protocol: int):
        super().__init__(reference, candidate, protocol, SEED)

    def step(self, index, command) -> bool:
        if isinstance(command, list):
            return self.plain(index, command, self.encode(command))
        kind, args = command
        request = self.encode(args)
        if kind == "sorted":
            return self.plain(index, args, request, _compare_sorted)
        if kind == "ttl":
            return self.plain(index, args, request, lambda e, g: same_ttl(e, g, args))
        if kind == "encoding":
            return self.plain(index, args, request, _same_encoding)
        if kind == "sscan":
            return self.sscan(index, args, request)
        if kind == "srandmember":
            return self.srandmember(index, args, request)
        if kind == "spop":
            return self.spop(index, args, request)
        raise AssertionError(kind)

    def problem(self, index, args, expected_raw: bytes, message: str) -> bool:
        self.mismatch(index, args, expected_raw, message.encode())
        return False

    def same_shape(self, index, args, expected, got) -> bool:
        """Errors, nil and empty replies byte for byte; otherwise the header line and type."""
        (e_value, e_raw), (g_value, g_raw) = expected, got
        if is_error(e_raw) or is_error(g_raw) or not isinstance(e_value, list) or not e_value:
            if e_raw[:1] == b"$" and e_value is not None:  # one member
                if g_raw[:1] == b"$" and g_value is not None:
                    return True
            if e_raw != g_raw:
                self.mismatch(index, args, e_raw, g_raw)
                return False
            return True
        if _header(e_raw) != _header(g_raw) or not isinstance(g_value, list):
            self.mismatch(index, args, e_raw, g_raw)
            return False
        return True

    def members_of_candidate(self, key: bytes, members: list[bytes]) -> list[int]:
        reply = self.candidate.call("SMISMEMBER", key, *members)
        return list(reply) if isinstance(reply, list) else []

    def srandmember(self, index, args, request) -> bool:
        expected, got = self.both(request)
        self.replies.append(expected[1])
        if not self.same_shape(index, args, expected, got):
            return False
        g_value = got[0]
        if isinstance(g_value, bytes) and not is_error(got[1]):
            g_value = [g_value]
        if not isinstance(g_value, list) or not g_value:
            return True
        flags = self.members_of_candidate(args[1], g_value)
        if flags != [1] * len(g_value):
            return self.problem(index, args, expected[1], f"not members: {g_value!r}")
        if len(args) == 3 and not args[2].startswith(b"-") and len(set(g_value)) != len(g_value):
            return self.problem(index, args, expected[1], f"repeated members: {g_value!r}")
        return True

    def spop(self, index, args, request) -> bool:
        key = args[1]
        expected, got = self.both(request)
        self.replies.append(expected[1])
        if not self.same_shape(index, args, expected, got):
            return False
        (e_value, e_raw), (g_value, _) = expected, got
        if is_error(e_raw) or e_value is None:
            return True
        e_popped = e_value if isinstance(e_value, list) else [e_value]
        g_popped = g_value if isinstance(g_value, list) else [g_value]
        if not e_popped:
            return True
        if len(set(g_popped)) != len(g_popped):
            return self.problem(index, args, e_raw, f"repeated members: {g_popped!r}")
        # What gigakv popped must have been in the set: popped by redis too, or still there.
        still = self.reference.call("SMISMEMBER", key, *g_popped)
        for member, flag in zip(g_popped, still):
            if flag != 1 and member not in e_popped:
                return self.problem(index, args, e_raw, f"{member!r} was not a member")
        # Make both sets equal again: each side loses what the other popped.
        self.reference.call("SREM", key, *g_popped)
        self.candidate.call("SREM", key, *e_popped)
        scard = [b"SCARD", key]
        return self.plain(index, scard, encode_command(*scard))

    def full_sscan(self, conn, args, first):
        """Iterates SSCAN to completion from its first reply; returns (members, problem)."""
        members: set = set()
        value, raw = first
        for _ in range(100_000):
            if not (raw.startswith(b"*2\r\n$") and isinstance(value, list) and len(value) == 2
                    and isinstance(value[1], list)):
                return None, f"malformed SSCAN reply {raw[:200]!r}"
            members.update(value[1])
            if value[0] == b"0":
                return members, None
            value, raw = exchange(conn, encode_command(args[0], args[1], value[0], *args[3:]))
        return None, "SSCAN did not finish within 100000 calls"

    def sscan(self, index, args, request) -> bool:
        expected, got = self.both(request)
        self.replies.append(expected[1])
        if is_error(expected[1]) or is_error(got[1]):
            if expected[1] != got[1]:
                self.mismatch(index, args, expected[1], got[1])
                return False
            return True
        e_members, e_problem = self.full_sscan(self.reference, args, expected)
        assert e_problem is None, f"redis-server: {e_problem}"
        g_members, g_problem = self.full_sscan(self.candidate, args, got)
        if g_problem is not None:
            return self.problem(index, args, b"<full iteration>", g_problem)
        if e_members != g_members:
            self.mismatch(index, args, b"<full iteration> " + repr(sorted(e_members)).encode(),
                          b"<full iteration> " + repr(sorted(g_members)).encode())
            return False
        return True

    def resync(self) -> None:
        """Makes the candidate's keyspace equal to the reference's (strings and sets)."""
        ref = self.reference
        entries = []
        for key in sorted(ref.call("KEYS", "*")):
            kind = ref.call("TYPE", key)
            if kind == "string":
                entries.append([b"SET", key, ref.call("GET", key)])
            elif kind == "set":
                entries.append([b"SADD", key] + list(ref.call("SMEMBERS", key)))
        for conn in (self.reference, self.candidate):
            assert conn.call_raw("FLUSHALL") == b"+OK\r\n"
            for entry in entries:
                reply = conn.call_raw(*entry)
                assert not is_error(reply), reply

    def compare_keyspace(self) -> None:
        keys_args = [b"KEYS", b"*"]
        if not self.plain("final", keys_args, encode_command(*keys_args), _compare_sorted):
            return
        for key in sorted(self.reference.call("KEYS", "*")):
            self.plain("final", [b"TYPE", key], encode_command(b"TYPE", key))
            if self.reference.call("TYPE", key) == "string":
                self.plain("final", [b"GET", key], encode_command(b"GET", key))
                continue
            for args, compare in (([b"SMEMBERS", key], _compare_sorted), ([b"SCARD", key], None),
                                  ([b"OBJECT", b"ENCODING", key], _same_encoding)):
                self.plain("final", args, encode_command(*args), compare)


def _class_name(args) -> bytes:
    name = args[0].upper()
    if name == b"OBJECT" and len(args) > 1:
        name += b" " + args[1].upper()
    return name


@both_protocols
def test_set_commands_match_redis(server, real_redis, protocol, target):
    reference, candidate = open_pair(server, real_redis, protocol, target)
    run = Run(reference, candidate, protocol)
    run.play(Generator(SEED), COMMANDS, max_mismatches=MAX_MISMATCHES)

    # Guard against a degenerate mix: successes and many kinds of errors must both occur, and
    # sets must reach the hashtable encoding.
    errors, successes = run.outcomes()
    assert run.stopped_early or (
        len(errors) >= 15 and successes > COMMANDS // 2
    ), f"the random mix no longer exercises enough outcomes ({len(errors)} error kinds)"
    encodings = {run.reference.call("OBJECT", "ENCODING", key) for key in SET_KEYS}
    assert run.stopped_early or b"hashtable" in encodings or any(
        b"$9\r\nhashtable" in reply for reply in run.replies
    ), "no set reached the hashtable encoding"

    assert not run.mismatches, grouped_report(run.mismatches, MAX_CLASSES_REPORTED,
                                              name_of=_class_name, show_db=False)
