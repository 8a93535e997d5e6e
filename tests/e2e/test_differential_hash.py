"""Differential test of the hash command family against redis-server 7.0.

A seeded generator builds a few thousand commands over a small key space (8 keys, two sharing a
hash tag, one binary key name, and a string key `s` for cross-type uses) so that commands
interact: HSET HMSET HSETNX HGET HMGET HDEL HLEN HSTRLEN HEXISTS HINCRBY HINCRBYFLOAT HKEYS HVALS
HGETALL HRANDFIELD HSCAN, mixed with DEL EXISTS TYPE EXPIRE PEXPIRE TTL OBJECT ENCODING, SET/GET on
the same key names (WRONGTYPE both ways) and, now and then, CONFIG SET of hash-max-listpack-entries
and hash-max-listpack-value so that hashes cross the listpack/hashtable thresholds in both
directions of the settings. Bulk HSETs grow some hashes past 128 fields; values of 65+ bytes
convert others. Arguments are valid, edge and invalid: integer-looking fields and values, empty
and binary strings, bad integers and floats, overflowing increments, HRANDFIELD counts at the
range limits, bad HSCAN cursors and options, wrong arity.

The same stream goes to gigakv and to Debian's redis-server, one command at a time, and every
reply is compared byte for byte, except where the reply legitimately differs:
- HGETALL, HKEYS, HVALS: the reply type is compared, the elements (pairs for HGETALL) unordered.
- HRANDFIELD: the shape only: nil or not, reply type, element count, distinct fields for a positive
  count, nested pairs in RESP3 WITHVALUES, and every field (and value) present in the hash.
- HSCAN: each server is iterated to completion on its own and the field/value maps are compared
  (cursors are not). Errors are compared byte for byte. Cursors are each server's own, so an
  HSCAN started from another cursor than 0 is only checked for its shape and membership.
- TTL/PTTL: within a small tolerance.
After a mismatch both servers are resynchronised from the reference (FLUSHALL, then HSET/SET and
PEXPIREAT of every reference key). At the end of each pass the whole keyspace is compared: sorted
KEYS, then TYPE, OBJECT ENCODING, PTTL and HGETALL (unordered) or GET of every key. Runs in RESP2,
then in RESP3 after HELLO 3.
"""

from __future__ import annotations

import random

from differential import (DifferentialRun, SeededGenerator, both_protocols, exchange,
                          grouped_report, is_error, open_pair, same_ttl)
from e2e_support import RespMap, encode_command

SEED = 4_040_2026
COMMANDS = 6000
MAX_MISMATCHES = 300
MAX_CLASSES_REPORTED = 50

KEYS = [b"h0", b"h1", b"h2", b"h3", b"{t}a", b"{t}b", b"bin\x00\xffh", b"s"]

_RNG = random.Random(SEED)
FIELDS = ([b"f%d" % i for i in range(40)] + [b"%d" % i for i in range(-3, 12)]
          + [b"", b"007", b"-0", b"9223372036854775807", b"x" * 64,
             b"bin\x00\r\n\xff", b"\xe2\x82\xac"])
BULK_FIELDS = [b"bulk:%d" % i for i in range(400)]
VALUES = [
    b"0", b"1", b"-1", b"42", b"127", b"128", b"-129", b"32767", b"8388608", b"2147483648",
    b"9223372036854775807", b"-9223372036854775808", b"9223372036854775806", b"007", b"+5",
    b" 3", b"3.0", b"-0", b"1.5", b"1e3", b"0x10", b"inf", b"abc", b"", b"v" * 64,
    b"hello world", b"\x00\xff\r\n",
]
LONG_VALUES = [b"w" * 65, bytes(_RNG.randrange(256) for _ in range(300))]  # Past the value limit.
GOOD_INTS = [b"0", b"1", b"-1", b"5", b"42", b"-42", b"1000", b"9223372036854775807",
             b"-9223372036854775808"]
BAD_INTS = [b"abc", b"1.5", b"", b"+1", b"01", b" 1", b"9223372036854775808", b"1e3"]
INCR_FLOATS = [b"1", b"-1", b"0.1", b"1.5", b"-2.25", b"1e3", b"5.0e-3", b"10", b"0", b"-0",
               b"1e308", b"3.0e1", b"0x10", b".5"]
BAD_FLOATS = [b"abc", b"", b"1e", b"inf", b"-inf", b"nan", b"1.5x", b" 1"]
RAND_COUNTS = ([b"%d" % i for i in range(-12, 13)] + [b"30", b"-30", b"150", b"-150", b"400",
               b"9223372036854775807", b"4611686018427387903", b"4611686018427387904",
               b"-9223372036854775808", b"abc", b"1.5", b""])
# Only with WITHVALUES, where they are out of range: without it both servers would try to send
# that many fields.
HUGE_NEGATIVE_COUNTS = [b"-9223372036854775807", b"-4611686018427387904"]
PATTERNS = [b"*", b"f*", b"f?", b"f1*", b"bulk:1*", b"*1", b"[a-f]*", b"", b"[", b"\\", b"??",
            b"*x*", b"bin*"]
CURSORS = [b"0"] * 8 + [b"-1", b"abc", b" 0", b"18446744073709551616", b"", b"12", b"1.5"]


class Generator(SeededGenerator):
    """Builds one random command at a time from a seeded RNG."""

    def key(self) -> bytes:
        return self.rng.choice(KEYS)

    def field(self) -> bytes:
        if self.rng.random() < 0.01:
            return b"y" * 65  # past the value limit
        if self.rng.random() < 0.15:
            return self.rng.choice(BULK_FIELDS)
        return self.rng.choice(FIELDS)

    def fields(self, low=1, high=4) -> list[bytes]:
        return [self.field() for _ in range(self.rng.randint(low, high))]

    def value(self) -> bytes:
        return self.rng.choice(LONG_VALUES if self.rng.random() < 0.02 else VALUES)

    def pairs(self) -> list[bytes]:
        rng = self.rng
        if rng.random() < 0.04:  # bulk: grows hashes past the entry limit
            count = rng.randint(20, 80)
            return [a for _ in range(count) for a in (rng.choice(BULK_FIELDS), self.value())]
        return [a for _ in range(rng.randint(1, 4)) for a in (self.field(), self.value())]

    def cmd_hrandfield(self):
        rng = self.rng
        args = [self.case("HRANDFIELD"), self.key()]
        roll = rng.random()
        if roll < 0.2:
            return ("hrandfield", args)
        if roll < 0.25:
            return ("hrandfield", args + [rng.choice(HUGE_NEGATIVE_COUNTS),
                                          self.case("WITHVALUES")])
        args.append(rng.choice(RAND_COUNTS))
        if roll < 0.6:
            args.append(self.case("WITHVALUES"))
        elif roll < 0.65:
            args += rng.choice([[b"WITHSCORES"], [self.case("WITHVALUES"), b"x"], [b"foo"]])
        return ("hrandfield", args)

    def cmd_hscan(self):
        rng = self.rng
        options = []
        if rng.random() < 0.4:
            options += [self.case("MATCH"), rng.choice(PATTERNS)]
        if rng.random() < 0.5:
            options += [self.case("COUNT"), rng.choice([b"1", b"3", b"10", b"100", b"0", b"-1",
                                                        b"abc"])]
        if rng.random() < 0.06:
            options += rng.choice([[b"NOVALUES"], [self.case("MATCH")], [self.case("COUNT")],
                                   [b"TYPE", b"hash"]])
        return ("hscan", [self.case("HSCAN"), self.key(), rng.choice(CURSORS)] + options)

    def cmd_expire(self):
        rng = self.rng
        if rng.random() < 0.5:
            return [self.case("EXPIRE"), self.key(), rng.choice([b"100", b"1000", b"-1", b"0"])]
        return [self.case("PEXPIRE"), self.key(), rng.choice([b"100000", b"-5"])]

    def cmd_config(self):
        rng = self.rng
        name = rng.choice([b"hash-max-listpack-entries", b"hash-max-listpack-value"])
        value = rng.choice([b"128", b"128", b"64", b"16", b"4", b"1", b"0"]
                           if name.endswith(b"entries") else [b"64", b"64", b"8", b"3", b"0"])
        return [b"CONFIG", b"SET", name, value]

    def wrong_arity(self):
        k, f, v = self.key(), self.field(), self.value()
        return self.rng.choice([
            [b"HSET", k], [b"HSET", k, f], [b"HSET", k, f, v, f], [b"HMSET", k, f],
            [b"HMSET", k, f, v, f], [b"HSETNX", k, f], [b"HSETNX", k, f, v, v], [b"HGET", k],
            [b"HGET", k, f, f], [b"HMGET", k], [b"HDEL", k], [b"HLEN"], [b"HLEN", k, k],
            [b"HSTRLEN", k], [b"HEXISTS", k], [b"HINCRBY", k, f], [b"HINCRBYFLOAT", k, f, v, v],
            [b"HKEYS"], [b"HVALS", k, k], [b"HGETALL"], [b"HRANDFIELD"], [b"HSCAN", k],
        ])

    def command(self):
        rng = self.rng
        table = [
            (16, lambda: [self.case("HSET"), self.key()] + self.pairs()),
            (3, lambda: [self.case("HMSET"), self.key()] + self.pairs()),
            (4, lambda: [self.case("HSETNX"), self.key(), self.field(), self.value()]),
            (8, lambda: [self.case("HGET"), self.key(), self.field()]),
            (4, lambda: [self.case("HMGET"), self.key()] + self.fields(1, 5)),
            (8, lambda: [self.case("HDEL"), self.key()] + self.fields(1, 4)),
            (3, lambda: [self.case("HLEN"), self.key()]),
            (3, lambda: [self.case("HSTRLEN"), self.key(), self.field()]),
            (3, lambda: [self.case("HEXISTS"), self.key(), self.field()]),
            (5, lambda: [self.case("HINCRBY"), self.key(), self.field(),
                         rng.choice(GOOD_INTS * 3 + BAD_INTS)]),
            (5, lambda: [self.case("HINCRBYFLOAT"), self.key(), self.field(),
                         rng.choice(INCR_FLOATS * 3 + BAD_FLOATS)]),
            (3, lambda: ("unordered", [self.case(rng.choice(["HKEYS", "HVALS", "HGETALL"])),
                                       self.key()])),
            (5, self.cmd_hrandfield),
            (4, self.cmd_hscan),
            (4, lambda: [self.case("DEL")] + [self.key() for _ in range(rng.randint(1, 3))]),
            (2, lambda: [self.case("EXISTS")] + [self.key() for _ in range(rng.randint(1, 3))]),
            (2, lambda: [self.case("TYPE"), self.key()]),
            (3, lambda: [self.case("OBJECT"), self.case("ENCODING"), self.key()]),
            (2, self.cmd_expire),
            (1, lambda: ("ttl", [self.case("PTTL"), self.key()])),
            (2, lambda: [self.case("SET"), self.rng.choice([b"s", b"s", self.key()]),
                         self.value()]),
            (2, lambda: [self.case("GET"), self.key()]),
            (0.6, self.cmd_config),
            (3, self.wrong_arity),
        ]
        return self.pick(table)


# Comparisons -----------------------------------------------------------------------------------


def _elements(value) -> list:
    """Array elements, or a RESP3 map's pairs flattened as HGETALL sends them in RESP2."""
    if isinstance(value, RespMap):
        return [item for pair in value.items() for item in pair]
    return list(value)


def _compare_unordered(args):
    is_getall = args[0].upper() == b"HGETALL"

    def compare(expected, got) -> bool:
        (e_value, e_raw), (g_value, g_raw) = expected, got
        if is_error(e_raw) or is_error(g_raw) or e_raw[:1] != g_raw[:1]:
            return e_raw == g_raw
        e_items, g_items = _elements(e_value), _elements(g_value)
        if is_getall:
            return (sorted(zip(e_items[0::2], e_items[1::2]))
                    == sorted(zip(g_items[0::2], g_items[1::2])))
        return sorted(e_items) == sorted(g_items)

    return compare


def _full_hscan(conn, args: list[bytes], first) -> tuple[dict | None, str | None]:
    """Iterates HSCAN to completion from its first reply; returns (pairs, problem)."""
    pairs: dict = {}
    value, raw = first
    for _ in range(100_000):
        if not (raw.startswith(b"*2\r\n$") and isinstance(value, list) and len(value) == 2
                and isinstance(value[1], list) and len(value[1]) % 2 == 0):
            return None, f"malformed HSCAN reply {raw[:200]!r}"
        items = value[1]
        for field, item in zip(items[0::2], items[1::2]):
            if field in pairs:
                return None, f"field {field!r} returned twice"
            pairs[field] = item
        if value[0] == b"0":
            return pairs, None
        value, raw = exchange(conn, encode_command(args[0], args[1], value[0], *args[3:]))
    return None, "HSCAN did not finish within 100000 calls"


def _hash_of(conn, key: bytes) -> dict:
    """The whole hash at `key` on one server (empty when missing or of another type)."""
    value = conn.call("HGETALL", key)
    if not isinstance(value, (list, RespMap)):
        return {}
    items = _elements(value)
    return dict(zip(items[0::2], items[1::2]))


def _hrandfield_problem(args, expected, got, hash_now: dict, protocol: int) -> str | None:
    """Why the candidate's HRANDFIELD reply does not have the reference's shape, or None."""
    (e_value, e_raw), (g_value, g_raw) = expected, got
    if is_error(e_raw) or is_error(g_raw) or e_value is None or g_value is None:
        return None if e_raw == g_raw else "different reply"
    if e_raw[:1] != g_raw[:1]:
        return "different reply type"
    if len(args) == 2:  # a single field
        return None if g_value in hash_now else "field not in the hash"
    if len(e_value) != len(g_value):
        return "different length"
    with_values = len(args) == 4
    if with_values and protocol == 3:
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in g_value):
            return "RESP3 pairs not nested"
        pairs = [tuple(pair) for pair in g_value]
    elif with_values:
        pairs = list(zip(g_value[0::2], g_value[1::2]))
    else:
        pairs = [(field, hash_now.get(field)) for field in g_value]
    for field, value in pairs:
        if field not in hash_now or hash_now[field] != value:
            return f"pair {field!r} not in the hash"
    count = int(args[2])
    if count > 0 and len({field for field, _ in pairs}) != len(pairs):
        return "repeated field for a positive count"
    return None


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
        if kind == "unordered":
            return self.plain(index, args, request, _compare_unordered(args))
        if kind == "ttl":
            return self.plain(index, args, request, lambda e, g: same_ttl(e, g, args))
        if kind == "hrandfield":
            expected, got = self.both(request)
            self.replies.append(expected[1])
            problem = _hrandfield_problem(args, expected, got, _hash_of(self.candidate, args[1]),
                                          self.protocol)
            if problem is not None:
                self.mismatch(index, args, expected[1], f"<{problem}> ".encode() + got[1])
                return False
            return True
        if kind == "hscan":
            expected, got = self.both(request)
            self.replies.append(expected[1])
            if is_error(expected[1]) or is_error(got[1]):
                if expected[1] != got[1]:
                    self.mismatch(index, args, expected[1], got[1])
                    return False
                return True
            if args[2] not in (b"0", b""):
                # Cursors are each server's own: from another cursor than 0 only the shape and
                # the membership of what comes back are comparable.
                g_pairs, g_problem = _full_hscan(self.candidate, args, got)
                hash_now = _hash_of(self.candidate, args[1])
                if g_problem is None and any(hash_now.get(f) != v for f, v in g_pairs.items()):
                    g_problem = "a pair not in the hash"
                if g_problem is not None:
                    self.mismatch(index, args, expected[1], g_problem.encode())
                    return False
                return True
            e_pairs, e_problem = _full_hscan(self.reference, args, expected)
            assert e_problem is None, f"redis-server: {e_problem}"
            g_pairs, g_problem = _full_hscan(self.candidate, args, got)
            if g_problem is not None or e_pairs != g_pairs:
                self.mismatch(index, args, b"<full iteration> " + repr(sorted(e_pairs)).encode(),
                              (g_problem or repr(sorted(g_pairs))).encode())
                return False
            return True
        raise AssertionError(kind)

    def resync(self) -> None:
        """Copies the reference's keys (hashes and strings, with their expiry) to both."""
        ref = self.reference
        state = []
        for key in sorted(ref.call("KEYS", "*")):
            kind = ref.call("TYPE", key)
            when = ref.call("PEXPIRETIME", key)
            if kind == "hash":
                state.append((key, "hash", _hash_of(ref, key), when))
            elif kind == "string":
                state.append((key, "string", ref.call("GET", key), when))
        limits = [(name, ref.call("CONFIG", "GET", name)) for name in
                  (b"hash-max-listpack-entries", b"hash-max-listpack-value")]
        for conn in (self.reference, self.candidate):
            assert conn.call_raw("FLUSHALL") == b"+OK\r\n"
            for key, kind, value, when in state:
                if kind == "hash":
                    args = [b"HSET", key] + [a for pair in value.items() for a in pair]
                else:
                    args = [b"SET", key, value]
                assert not is_error(conn.call_raw(*args)), args
                if when > 0:
                    assert conn.call("PEXPIREAT", key, when) == 1
            for name, value in limits:
                items = _elements(value)
                assert conn.call_raw("CONFIG", "SET", name, items[1]) == b"+OK\r\n"

    def compare_keyspace(self) -> None:
        keys = sorted(self.reference.call("KEYS", "*"))
        got_keys = sorted(self.candidate.call("KEYS", "*"))
        if keys != got_keys:
            self.mismatch("final", [b"KEYS", b"*"], repr(keys).encode(), repr(got_keys).encode())
        for key in keys:
            self.plain("final", [b"TYPE", key], encode_command(b"TYPE", key))
            self.plain("final", [b"OBJECT", b"ENCODING", key],
                       encode_command(b"OBJECT", b"ENCODING", key))
            self.plain("final", [b"PTTL", key], encode_command(b"PTTL", key),
                       lambda e, g: same_ttl(e, g, [b"PTTL"]))
            for args in ([b"HGETALL", key], [b"GET", key]):
                self.plain("final", args, encode_command(*args), _compare_unordered(args))


@both_protocols
def test_hash_commands_match_redis(server, real_redis, protocol, target):
    reference, candidate = open_pair(server, real_redis, protocol, target)
    run = Run(reference, candidate, protocol)
    run.play(Generator(SEED), COMMANDS, max_mismatches=MAX_MISMATCHES)

    # Guard against a degenerate mix: successes and many kinds of errors must both occur, and
    # both encodings must be reached.
    errors, successes = run.outcomes()
    encodings = {reply for reply in run.replies if reply in (b"$8\r\nlistpack\r\n",
                                                             b"$9\r\nhashtable\r\n")}
    assert run.stopped_early or (
        len(errors) >= 10 and successes > COMMANDS // 2 and len(encodings) == 2
    ), f"the random mix no longer exercises enough outcomes ({sorted(errors)}, {encodings})"

    assert not run.mismatches, grouped_report(run.mismatches, MAX_CLASSES_REPORTED,
                                              show_db=False)
