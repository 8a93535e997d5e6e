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

from differential import (DifferentialRun, SeededGenerator, both_protocols, grouped_report,
                          open_pair, same_ttl)
from e2e_support import encode_command

SEED = 20_260_517
COMMANDS = 6000
MAX_MISMATCHES = 300
MAX_CLASSES_REPORTED = 50

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


class Generator(SeededGenerator):
    """Builds one random command at a time from a seeded RNG."""

    def __init__(self, seed: int):
        super().__init__(seed)
        # While set, argument builders pick only valid arguments (for commands with many
        # arguments, where one bad argument in each would leave few successful runs).
        self.clean = False

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
        return self.pick(table)

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


class Run(DifferentialRun):
    """One pass over the stream, with resyncs and the final keyspace comparison."""

    inline_rate = 0.1
    inline_safe = re.compile(rb"[A-Za-z0-9_{}:.#+-]+")  # '#' too, for BITFIELD's #N offsets

    def __init__(self, reference, candidate, protocol: int):
        super().__init__(reference, candidate, protocol, SEED)

    def step(self, index, args: list[bytes]) -> bool:
        return self.compared(index, args, self.encode(args))

    def compared(self, index, args: list[bytes], request: bytes) -> bool:
        """Byte for byte, except TTL (within a tolerance)."""
        compare = (lambda e, g: same_ttl(e, g, args)) if args[0].upper() == b"TTL" else None
        return self.plain(index, args, request, compare)

    def compare_keyspace(self) -> None:
        keys = sorted(self.reference.call("KEYS", "*"))
        got_keys = sorted(self.candidate.call("KEYS", "*"))
        if keys != got_keys:
            self.mismatch("final", [b"KEYS", b"*"], repr(keys).encode(), repr(got_keys).encode())
        for key in keys:
            for args in ([b"GET", key], [b"OBJECT", b"ENCODING", key], [b"TTL", key]):
                self.compared("final", args, encode_command(*args))


@both_protocols
def test_bitmap_commands_match_redis(server, real_redis, protocol, target):
    reference, candidate = open_pair(server, real_redis, protocol, target)
    run = Run(reference, candidate, protocol)
    run.play(Generator(SEED), COMMANDS, max_mismatches=MAX_MISMATCHES)

    # Guard against a degenerate mix: successes and many kinds of errors must both occur, and
    # BITFIELD must hit its nil (OVERFLOW FAIL) replies.
    errors, successes = run.outcomes()
    nil = b"$-1\r\n" if protocol == 2 else b"_\r\n"
    fails = sum(1 for reply in run.replies if reply[:1] == b"*" and nil in reply)
    assert run.stopped_early or (
        len(errors) >= 12 and successes > COMMANDS // 2 and fails > 10
    ), f"the random mix no longer exercises enough outcomes ({len(errors)} error kinds, {fails})"

    assert not run.mismatches, grouped_report(run.mismatches, MAX_CLASSES_REPORTED,
                                              show_db=False)
