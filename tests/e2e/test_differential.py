"""Differential test: gigakv against Debian's redis-server 7.0 on a seeded random command mix.

The same ~3000 commands (GET/SET with NX XX GET EX PX EXAT PXAT KEEPTTL, INCR/DECR/INCRBY/DECRBY
with overflow and non-integer values, DEL/UNLINK/EXISTS with several keys, DBSIZE, ECHO, PING,
SELECT, FLUSHDB, wrong arity, unknown commands and options) go to both servers, one at a time, as
multibulk or (when the arguments allow) inline requests. Every reply is compared byte for byte, so
errors are compared by their full text. The run is repeated in RESP3 after HELLO 3. At the end the
whole keyspace of the databases used is compared too.

Avoided on purpose: replies that legitimately differ (TIME, INFO, CLIENT ID, HELLO's id) and
anything whose result depends on timing (short TTLs, PTTL/TTL): relative expiries are at least
1000 s and absolute ones are far in the past or future.  Active expiry is switched off on both
servers (DEBUG SET-ACTIVE-EXPIRE 0), so keys set with a past EXAT/PXAT stay counted by DBSIZE
until a command touches them, on both sides alike, instead of whenever a background cycle runs.
"""

from __future__ import annotations

import time

from differential import DifferentialRun, SeededGenerator, both_protocols, flat_report, open_pair
from e2e_support import encode_command

SEED = 20260130
COMMANDS = 3000
DATABASES = 4
MAX_REPORTED = 25

KEYS = [b"k0", b"k1", b"k2", b"k3", b"k4", b"k5", b"{tag}a", b"bin\x00\r\nkey", b"", b"long" * 40]
GOOD_INTS = [
    b"0", b"1", b"-1", b"7", b"42", b"-42", b"100000", b"9223372036854775807",
    b"-9223372036854775808", b"9223372036854775806", b"-9223372036854775807",
    b"4611686018427387904",
]
BAD_INTS = [
    b"abc", b"1.5", b"", b"+1", b"01", b" 1", b"1 ", b"0x10", b"9223372036854775808",
    b"-9223372036854775809", b"1e3", b"-0", b"--1", b"\x001", b"12abc",
]
STRINGS = [b"v", b"hello world", b"\x00\xff\r\n", b"x" * 10_000, b"\xe2\x82\xac", b"a b 'c'"]
UNKNOWN = [b"FOO", b"getx", b"sett", b"INCRBYFLOAT2", b"dell"]


class Generator(SeededGenerator):
    """Builds one random command at a time from a seeded RNG."""

    def __init__(self, seed: int):
        super().__init__(seed)
        now = int(time.time())
        self.future_s = now + 10_000_000
        self.future_ms = self.future_s * 1000

    def key(self) -> bytes:
        return self.rng.choice(KEYS)

    def value(self) -> bytes:
        pool = self.rng.choice([GOOD_INTS, GOOD_INTS, BAD_INTS, STRINGS])
        return self.rng.choice(pool)

    def integer_argument(self) -> bytes:
        return self.rng.choice(GOOD_INTS * 3 + BAD_INTS)

    def expiry(self) -> list[bytes]:
        rng = self.rng
        kind = rng.choice(["EX", "PX", "EXAT", "PXAT", "KEEPTTL"])
        if kind == "KEEPTTL":
            return [self.case(kind)]
        if kind == "EX":
            values = [b"1000", b"99999", b"4611686018427387", b"9223372036854775807", b"0", b"-1",
                      b"abc", b"1.5"]
        elif kind == "PX":
            values = [b"1000000", b"99999999", b"9223372036854775807", b"0", b"-100", b"12x"]
        elif kind == "EXAT":
            values = [str(self.future_s).encode(), b"1", b"1000", b"0", b"-5",
                      b"9223372036854775807"]
        else:
            values = [str(self.future_ms).encode(), b"1", b"1000", b"0", b"-5",
                      b"9223372036854775807"]
        return [self.case(kind), rng.choice(values)]

    def set_command(self) -> list[bytes]:
        rng = self.rng
        options: list[list[bytes]] = []
        condition = rng.choice([None, None, "NX", "XX"])
        if condition:
            options.append([self.case(condition)])
        if rng.random() < 0.3:
            options.append([self.case("GET")])
        if rng.random() < 0.5:
            options.append(self.expiry())
        if rng.random() < 0.08:  # conflicting, duplicated, dangling or unknown options
            options.append(rng.choice([
                [self.case("NX")], [self.case("XX")], [self.case("EX")], [self.case("GET")],
                [self.case("KEEPTTL")], [b"FOO"], self.expiry(),
            ]))
        rng.shuffle(options)
        args = [self.case("SET"), self.key(), self.value()]
        for option in options:
            args += option
        return args

    def command(self) -> list[bytes]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.25:
            return self.set_command()
        if roll < 0.40:
            return [self.case("GET"), self.key()]
        if roll < 0.47:
            return [self.case(rng.choice(["INCR", "DECR"])), self.key()]
        if roll < 0.56:
            name = rng.choice(["INCRBY", "DECRBY"])
            return [self.case(name), self.key(), self.integer_argument()]
        if roll < 0.64:
            name = rng.choice(["DEL", "UNLINK", "EXISTS"])
            return [self.case(name)] + [self.key() for _ in range(rng.randint(1, 4))]
        if roll < 0.67:
            return [self.case("DBSIZE")]
        if roll < 0.70:
            return [self.case("ECHO"), rng.choice(STRINGS + GOOD_INTS)]
        if roll < 0.73:
            return [self.case("PING")] + ([rng.choice(STRINGS)] if rng.random() < 0.5 else [])
        if roll < 0.80:
            index = rng.choice([b"0", b"1", b"2", b"3"] * 6 + [b"16", b"-1", b"abc", b"1.0", b""])
            return [self.case("SELECT"), index]
        if roll < 0.805:
            return [self.case("FLUSHDB")] + ([self.case(rng.choice(["ASYNC", "SYNC"]))]
                                              if rng.random() < 0.5 else [])
        if roll < 0.92:
            return self.wrong_arity()
        return [rng.choice(UNKNOWN)] + [self.value() for _ in range(rng.randint(0, 3))]

    def wrong_arity(self) -> list[bytes]:
        rng = self.rng
        k, v = self.key(), self.value()
        return rng.choice([
            [self.case("GET")], [self.case("GET"), k, k], [self.case("SET"), k], [self.case("SET")],
            [self.case("INCR")], [self.case("INCR"), k, v], [self.case("DECR")],
            [self.case("INCRBY"), k], [self.case("DECRBY"), k, v, v], [self.case("DEL")],
            [self.case("UNLINK")], [self.case("EXISTS")], [self.case("ECHO")],
            [self.case("ECHO"), v, v], [self.case("PING"), v, v], [self.case("DBSIZE"), k],
            [self.case("SELECT")], [self.case("SELECT"), b"0", b"1"],
            [self.case("FLUSHDB"), b"ASYNC", b"SYNC"], [self.case("FLUSHDB"), b"bogus"],
        ])


class Run(DifferentialRun):
    """One pass: every reply byte for byte, no resync; then DBSIZE and GET of every key."""

    inline_rate = 0.2

    def __init__(self, reference, candidate, protocol: int):
        super().__init__(reference, candidate, protocol, SEED)

    def step(self, index, args: list[bytes]) -> bool:
        return self.plain(index, args, self.encode(args))

    def compare_keyspace(self) -> None:
        for db in range(DATABASES):
            for conn in (self.reference, self.candidate):
                conn.call("SELECT", db)
            self.db = db
            for args in [[b"DBSIZE"]] + [[b"GET", key] for key in KEYS]:
                self.plain("final", args, encode_command(*args))


@both_protocols
def test_random_commands_match_redis(server, real_redis, protocol, target):
    reference, candidate = open_pair(server, real_redis, protocol, target)
    run = Run(reference, candidate, protocol)
    run.play(Generator(SEED), COMMANDS, resync=False)

    # Guard against a degenerate mix: both successes and errors of many kinds must occur.
    replies = run.replies[:run.stream_replies]  # not those of the final comparison
    errors = [reply for reply in replies if reply.startswith(b"-")]
    assert len(replies) < COMMANDS or (
        len(errors) > 300 and len(replies) - len(errors) > 1500
        and len({error.split(b"\r\n")[0] for error in errors}) >= 8
    ), "the random command mix no longer exercises enough distinct outcomes"

    assert not run.mismatches, flat_report(run.mismatches, MAX_REPORTED)
