"""Differential test of the bitmap command family against redis-server 7.0.

A seeded generator builds a few thousand commands over a small key space (8 keys, three sharing a
hash tag so BITOP also runs within one shard, one binary key name) so that commands interact:
SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO, mixed with the string commands that
shape what the bit commands see (SET of integers, short, binary and 5000+ byte values, APPEND,
SETRANGE, DEL, EXPIRE, OBJECT ENCODING, STRLEN, GET, TTL). Arguments are valid, edge and invalid:
negative and huge ranges, BIT/BYTE units in any case, bad integers, offsets at and past 2^32-1,
`#` offsets, every bitfield type width, out-of-range SET values and increments under WRAP, SAT and
FAIL, unknown subcommands, wrong arity.

Offsets that would make a string larger than about 16 KB are only used where Redis reads (GETBIT,
BITFIELD GET) or rejects them, so neither server allocates 512 MB.

The same stream goes to gigakv and to Debian's redis-server, one command at a time, and every
reply is compared byte for byte, except TTL (within a tolerance: the servers see the command a few
microseconds apart). After a mismatch both servers are resynchronised from the reference (FLUSHALL,
then SET ... PXAT of every key), so one bug shows up as its own mismatch instead of a cascade. At
the end the whole keyspace is compared (sorted KEYS, then GET, OBJECT ENCODING and TTL of every
key). Runs in RESP2, then in RESP3 after HELLO 3.
"""

from __future__ import annotations

import random
import re
from collections import OrderedDict

import pytest

from e2e_support import ConnectionClosed, ErrorReply, encode_command

SEED = 20_260_517
COMMANDS = 6000
MAX_MISMATCHES = 300
MAX_CLASSES_REPORTED = 50
TTL_TOLERANCE_S = 2

KEYS = [b"b0", b"b1", b"b2", b"{t}x", b"{t}y", b"{t}z", b"bin\x00\xffkey", b"s"]

_BINARY = bytes(random.Random(SEED).randrange(256) for _ in range(5000))
VALUES = [
    b"", b"0", b"1", b"123", b"-7", b"9223372036854775807", b"foobar", b"\xff\xf0\x00",
    b"\x00\x00\x00\x00", b"\xff" * 9, b"\x80", b"x" * 44, b"y" * 45, b"abc" * 30, _BINARY,
    b"\x00" * 4100, b"\xaa\x55" * 2100,
]
# Offsets for commands that write (the string grows up to offset / 8 bytes).
WRITE_OFFSETS = [b"0", b"1", b"7", b"8", b"15", b"31", b"63", b"64", b"100", b"255", b"1000",
                 b"32767", b"32768", b"40000", b"100000"]
# Offsets that only read, or are rejected.
READ_OFFSETS = [b"4294967295", b"4294967294", b"1000000", b"536870912"]
BAD_OFFSETS = [b"-1", b"4294967296", b"abc", b"", b"+1", b"01", b"1.0", b" 1",
               b"9223372036854775807", b"-9223372036854775808", b"18446744073709551616"]
RANGE_INDEXES = [b"0", b"1", b"2", b"3", b"-1", b"-2", b"-3", b"5", b"7", b"8", b"9", b"15",
                 b"16", b"17", b"100", b"-100", b"4999", b"-5000", b"39999", b"40000",
                 b"9223372036854775807", b"-9223372036854775808"]
BAD_INTS = [b"abc", b"1.5", b"", b"+1", b"01", b" 1", b"9223372036854775808", b"1e3"]
GOOD_VALUES = [b"0", b"1", b"-1", b"5", b"100", b"127", b"128", b"-128", b"-129", b"255", b"256",
               b"65535", b"65536", b"-32769", b"2147483647", b"4294967296",
               b"4611686018427387904", b"9223372036854775807", b"-9223372036854775808",
               b"-9223372036854775807", b"-9223372036854775680", b"-9223372036854775681",
               b"9223372036854775680"]
INLINE_SAFE = re.compile(rb"[A-Za-z0-9_{}:.#+-]+")


class Generator:
    """Builds one random command at a time from a seeded RNG."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        # While set, argument builders pick only valid arguments (for commands with many
        # arguments, where one bad argument in each would leave few successful runs).
        self.clean = False

    def case(self, word: str) -> bytes:
        choice = self.rng.randrange(4)
        if choice == 0:
            return word.lower().encode()
        if choice == 1:
            return "".join(c.upper() if self.rng.random() < 0.5 else c.lower()
                           for c in word).encode()
        return word.upper().encode()

    def key(self) -> bytes:
        return self.rng.choice(KEYS)

    def write_offset(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.08 and not self.clean:
            return self.rng.choice(BAD_OFFSETS)
        if roll < 0.5:
            return str(self.rng.randrange(0, 200)).encode()
        return self.rng.choice(WRITE_OFFSETS)

    def read_offset(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.15:
            return self.rng.choice(READ_OFFSETS)
        return self.write_offset()

    def range_index(self) -> bytes:
        if self.rng.random() < 0.06:
            return self.rng.choice(BAD_INTS)
        if self.rng.random() < 0.4:
            return str(self.rng.randrange(-60, 60)).encode()
        return self.rng.choice(RANGE_INDEXES)

    def unit(self) -> list[bytes]:
        roll = self.rng.random()
        if roll < 0.35:
            return [self.case("BIT")]
        if roll < 0.6:
            return [self.case("BYTE")]
        if roll < 0.65:
            return [self.rng.choice([b"BITS", b"foo", b""])]
        return []

    # Commands --------------------------------------------------------------------------------

    def cmd_setbit(self):
        bit = self.rng.choice([b"0", b"1"] * 8 + [b"2", b"-1", b"a", b"", b"01", b"1.0"])
        return [self.case("SETBIT"), self.key(), self.write_offset(), bit]

    def cmd_bitcount(self):
        rng = self.rng
        args = [self.case("BITCOUNT"), self.key()]
        shape = rng.random()
        if shape < 0.25:
            return args
        if shape < 0.3:  # odd argument counts
            return args + [self.range_index() for _ in range(rng.choice([1, 4, 5]))]
        return args + [self.range_index(), self.range_index()] + self.unit()

    def cmd_bitpos(self):
        rng = self.rng
        bit = rng.choice([b"0", b"1"] * 6 + [b"2", b"-1", b"x", b""])
        args = [self.case("BITPOS"), self.key(), bit]
        shape = rng.random()
        if shape < 0.2:
            return args
        if shape < 0.4:
            return args + [self.range_index()]
        if shape < 0.45:  # too many, or a unit where the end should be
            return args + [self.range_index(), self.case("BIT")] + (
                [self.range_index(), self.range_index(), b"x"] if rng.random() < 0.5 else [])
        return args + [self.range_index(), self.range_index()] + self.unit()

    def cmd_bitop(self):
        rng = self.rng
        op = rng.choice(["AND", "OR", "XOR", "NOT", "AND", "OR", "XOR", "NOT", "DIFF", "FOO"])
        if op == "NOT" and rng.random() < 0.85:
            sources = [self.key()]
        else:
            sources = [self.key() for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.1:
            sources.append(b"missing")
        return [self.case("BITOP"), self.case(op), self.key()] + sources

    def bitfield_type(self) -> bytes:
        rng = self.rng
        if rng.random() < 0.06 and not self.clean:
            return rng.choice([b"u64", b"i65", b"u0", b"i0", b"U8", b"x8", b"u", b"", b"u08",
                               b"u+8", b"i-1", b"8"])
        sign = rng.choice(["i", "u"])
        bits = rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 62, 63, 64]
                          + [rng.randint(1, 64)])
        if sign == "u" and bits == 64:
            bits = 63
        return f"{sign}{bits}".encode()

    def bitfield_offset(self, write: bool) -> bytes:
        rng = self.rng
        if rng.random() < 0.3:
            index = rng.choice([b"0", b"1", b"2", b"3", b"7", b"100"]
                               + ([] if self.clean else [b"-1", b"", b"#", b"x"])
                               + ([] if write else [b"67108863", b"536870911"]))
            return b"#" + index
        return self.write_offset() if write else self.read_offset()

    def bitfield_op(self, read_only: bool) -> list[bytes]:
        rng = self.rng
        roll = rng.random()
        values = GOOD_VALUES if self.clean else GOOD_VALUES * 4 + BAD_INTS
        if read_only or roll < 0.35:
            return [self.case("GET"), self.bitfield_type(), self.bitfield_offset(False)]
        if roll < 0.6:
            return [self.case("SET"), self.bitfield_type(), self.bitfield_offset(True),
                    rng.choice(values)]
        if roll < 0.85:
            return [self.case("INCRBY"), self.bitfield_type(), self.bitfield_offset(True),
                    rng.choice(values)]
        if roll < 0.97 or self.clean:
            policies = ["WRAP", "SAT", "FAIL", "FAIL"]
            return [self.case("OVERFLOW"), self.case(rng.choice(policies)) if self.clean or
                    rng.random() < 0.95 else b"foo"]
        return [rng.choice([b"FOO", self.case("GET"), self.case("SET"), self.case("OVERFLOW")])]

    def cmd_bitfield(self, name: str):
        read_only = name == "BITFIELD_RO" and self.rng.random() < 0.85
        self.clean = self.rng.random() < 0.6
        args = [self.case(name), self.key()]
        for _ in range(self.rng.choice([0, 1, 1, 2, 2, 3, 4, 6])):
            args += self.bitfield_op(read_only)
        self.clean = False
        return args

    def command(self) -> list[bytes]:
        rng = self.rng
        table = [
            (12, self.cmd_setbit),
            (8, lambda: [self.case("GETBIT"), self.key(), self.read_offset()]),
            (10, self.cmd_bitcount),
            (10, self.cmd_bitpos),
            (8, self.cmd_bitop),
            (14, lambda: self.cmd_bitfield("BITFIELD")),
            (5, lambda: self.cmd_bitfield("BITFIELD_RO")),
            (5, lambda: [self.case("SET"), self.key(), rng.choice(VALUES)]),
            (2, lambda: [self.case("APPEND"), self.key(), rng.choice(VALUES[:9])]),
            (2, lambda: [self.case("SETRANGE"), self.key(), rng.choice([b"0", b"3", b"100"]),
                         rng.choice([b"\xff", b"ab", b"\x00\x01"])]),
            (3, lambda: [self.case("GET"), self.key()]),
            (2, lambda: [self.case("STRLEN"), self.key()]),
            (3, lambda: [self.case("OBJECT"), self.case("ENCODING"), self.key()]),
            (2, lambda: [self.case("DEL"), self.key()]),
            (2, lambda: [self.case("EXPIRE"), self.key(), b"1000"]),
            (2, lambda: [self.case("TTL"), self.key()]),
            (0.5, lambda: [self.case("PEXPIREAT"), self.key(), b"1"]),
            (4, self.wrong_arity),
        ]
        total = sum(weight for weight, _ in table)
        roll = rng.random() * total
        for weight, make in table:
            roll -= weight
            if roll < 0:
                return make()
        return table[-1][1]()

    def wrong_arity(self) -> list[bytes]:
        k = self.key()
        choice = self.rng.choice([
            [b"SETBIT"], [b"SETBIT", k], [b"SETBIT", k, b"1"], [b"SETBIT", k, b"1", b"1", b"1"],
            [b"GETBIT", k], [b"GETBIT", k, b"1", b"1"], [b"BITCOUNT"], [b"BITPOS", k],
            [b"BITPOS"], [b"BITOP"], [b"BITOP", b"AND"], [b"BITOP", b"AND", k],
            [b"BITOP", b"NOT", k], [b"BITFIELD"], [b"BITFIELD_RO"],
        ])
        return [self.case(choice[0].decode())] + choice[1:]


# --------------------------------------------------------------------------------------------
# Running and comparing
# --------------------------------------------------------------------------------------------


def _is_error(raw: bytes) -> bool:
    return raw[:1] in (b"-", b"!")


def _encode(args: list[bytes], rng: random.Random) -> bytes:
    """Multibulk, or (sometimes, when every argument is a plain word) the inline form."""
    if args and rng.random() < 0.1 and all(INLINE_SAFE.fullmatch(arg) for arg in args):
        return b" ".join(args) + b"\r\n"
    return encode_command(*args)


def _exchange(conn, request: bytes):
    conn.send(request)
    return conn.read_reply_raw()


def _same_ttl(expected, got) -> bool:
    (e_value, e_raw), (g_value, g_raw) = expected, got
    if e_raw[:1] != b":" or g_raw[:1] != b":":
        return e_raw == g_raw
    if e_value <= 0 or g_value <= 0:
        return e_value == g_value
    return abs(e_value - g_value) <= TTL_TOLERANCE_S


class Run:
    """One pass over the stream, with resyncs and the final keyspace comparison."""

    def __init__(self, reference, candidate, protocol: int):
        self.reference, self.candidate, self.protocol = reference, candidate, protocol
        self.mismatches: list[tuple] = []
        self.replies: list[bytes] = []

    def step(self, index, args: list[bytes], request: bytes) -> bool:
        expected = _exchange(self.reference, request)
        got = _exchange(self.candidate, request)
        self.replies.append(expected[1])
        if args[0].upper() == b"TTL":
            same = _same_ttl(expected, got)
        else:
            same = expected[1] == got[1]
        if not same:
            self.mismatches.append((self.protocol, index, list(args), expected[1], got[1]))
        return same

    def resync(self) -> None:
        """Makes the candidate's keyspace equal to the reference's (both rewritten by SET)."""
        ref = self.reference
        entries = []
        for key in sorted(ref.call("KEYS", "*")):
            value = ref.call("GET", key)
            when = ref.call("PEXPIRETIME", key)
            if isinstance(value, bytes) and not isinstance(value, ErrorReply):
                entries.append((key, value, when))
        for conn in (self.reference, self.candidate):
            assert conn.call_raw("FLUSHALL") == b"+OK\r\n"
            for key, value, when in entries:
                args = [b"SET", key, value] + ([b"PXAT", when] if when > 0 else [])
                assert conn.call_raw(*args) == b"+OK\r\n"

    def compare_keyspace(self) -> None:
        keys = sorted(self.reference.call("KEYS", "*"))
        got_keys = sorted(self.candidate.call("KEYS", "*"))
        if keys != got_keys:
            self.mismatches.append((self.protocol, "final", [b"KEYS", b"*"], repr(keys).encode(),
                                    repr(got_keys).encode()))
        for key in keys:
            for args in ([b"GET", key], [b"OBJECT", b"ENCODING", key], [b"TTL", key]):
                self.step("final", args, encode_command(*args))


def _shown(args) -> str:
    parts = []
    for arg in args:
        if isinstance(arg, bytes) and len(arg) > 60:
            parts.append(f"<{len(arg)} bytes {arg[:12]!r}...>")
        else:
            parts.append(repr(arg)[2:-1] if isinstance(arg, bytes) else str(arg))
    return " ".join(parts)


def _shape(raw: bytes) -> bytes:
    """A reply reduced for grouping: first line, digits folded."""
    return re.sub(rb"\d+", b"N", raw.split(b"\r\n")[0][:80]).upper()


def _report(mismatches) -> str:
    classes: "OrderedDict[tuple, list]" = OrderedDict()
    for item in mismatches:
        protocol, index, args, expected, got = item
        classes.setdefault((args[0].upper(), _shape(expected), _shape(got)), []).append(item)
    lines = [f"{len(mismatches)} replies differ from redis-server 7.0, in {len(classes)} classes "
             f"(one example each, first {MAX_CLASSES_REPORTED}):"]
    for (name, _, _), items in list(classes.items())[:MAX_CLASSES_REPORTED]:
        protocol, index, args, expected, got = items[0]
        lines.append(f"  [{name.decode(errors='replace')}] x{len(items)}  first: RESP{protocol} "
                     f"#{index}: {_shown(args)}\n"
                     f"      redis : {expected[:300]!r}\n      gigakv: {got[:300]!r}")
    return "\n".join(lines)


@pytest.mark.parametrize("protocol", [2, 3], ids=["RESP2", "RESP3"])
def test_bitmap_commands_match_redis(server, real_redis, protocol, target):
    if target == "redis":
        pytest.skip("the server under test is redis-server itself")
    reference, candidate = real_redis.raw(), server.raw()
    for conn in (reference, candidate):
        assert conn.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
    if protocol == 3:
        for conn in (reference, candidate):
            hello = conn.call("HELLO", "3")
            assert isinstance(hello, dict), hello

    run = Run(reference, candidate, protocol)
    generator, encode_rng = Generator(SEED), random.Random(SEED + 1)
    lost = False
    for index in range(COMMANDS):
        args = generator.command()
        try:
            if not run.step(index, args, _encode(args, encode_rng)):
                run.resync()
        except (ConnectionClosed, OSError) as error:
            run.mismatches.append((protocol, index, list(args), b"<reply>",
                                   f"<connection lost: {error!r}>".encode()))
            lost = True
            break
        if len(run.mismatches) >= MAX_MISMATCHES:
            break
    if not lost:
        run.compare_keyspace()

    # Guard against a degenerate mix: successes and many kinds of errors must both occur, and
    # BITFIELD must hit its nil (OVERFLOW FAIL) replies.
    errors = {reply.split(b"\r\n")[0] for reply in run.replies if _is_error(reply)}
    successes = sum(1 for reply in run.replies if not _is_error(reply))
    nil = b"$-1\r\n" if protocol == 2 else b"_\r\n"
    fails = sum(1 for reply in run.replies if reply[:1] == b"*" and nil in reply)
    assert lost or len(run.mismatches) >= MAX_MISMATCHES or (
        len(errors) >= 12 and successes > COMMANDS // 2 and fails > 10
    ), f"the random mix no longer exercises enough outcomes ({len(errors)} error kinds, {fails})"

    assert not run.mismatches, _report(run.mismatches)
