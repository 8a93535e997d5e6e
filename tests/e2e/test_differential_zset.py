"""Differential test of the sorted-set command family against redis-server 7.0.

A seeded generator builds a few thousand commands over a small key space (sorted-set keys, three
sharing a hash tag, two keys whose members always share score 0 for the BYLEX commands, a string
key for cross-type use, a missing key) so that commands interact: ZADD (NX XX GT LT CH INCR),
ZINCRBY ZSCORE ZMSCORE ZCARD ZCOUNT ZLEXCOUNT ZRANGE (BYSCORE BYLEX REV LIMIT WITHSCORES)
ZRANGESTORE ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX ZREVRANGE ZRANK ZREVRANK ZREM
ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREMRANGEBYLEX ZPOPMIN ZPOPMAX ZMPOP ZRANDMEMBER ZUNION ZINTER
ZDIFF ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZINTERCARD ZSCAN, with DEL EXISTS TYPE OBJECT ENCODING
and string commands on the same keys (WRONGTYPE both ways). Scores are integers, decimals, huge
and tiny exponents, hex, +-inf and invalid texts; ranges use "(" bounds, +-inf and junk; members
include the empty string, integers, binary bytes and long members that force the skiplist.

Every reply is compared byte for byte, except:
- ZRANDMEMBER: random by nature. Compared: errors byte for byte, nil versus not, the reply's
  shape (count, pairs in RESP3), that every member belongs to the set with its score, and that a
  positive count returns distinct members.
- ZSCAN: each server is iterated to completion on its own (same MATCH and COUNT); the sets of
  (member, score) pairs are compared, not the cursors. Errors byte for byte.

Runs at small sizes (default zset-max-listpack-entries, so most sets are listpacks) and at large
sizes (zset-max-listpack-entries 3 and zset-max-listpack-value 8 on both servers, so most sets are
skiplists and conversions happen all the time; members also come from a pool of 400, so sets grow
to a few hundred members), each in RESP2 and in RESP3. After a mismatch the
candidate is resynchronised from the reference (strings by SET, sorted sets by ZADD). At the end
the whole keyspace is compared: sorted KEYS, then TYPE, OBJECT ENCODING and ZRANGE 0 -1 WITHSCORES
(or GET) of every key.
"""

from __future__ import annotations

import pytest

from differential import (DifferentialRun, SeededGenerator, both_protocols, exchange,
                          grouped_report, is_error, open_pair)
from e2e_support import ErrorReply, encode_command

SEED = 7_2026_1130
COMMANDS = 6000
MAX_MISMATCHES = 300
MAX_CLASSES_REPORTED = 50

ZKEYS = [b"z0", b"z1", b"z2", b"{t}a", b"{t}b", b"{t}c", b"missing"]
LEX_KEYS = [b"lex0", b"lex1"]  # every member added with score 0
STRING_KEY = b"str"  # a string, until a *STORE overwrites it
FIXED_STRING = b"fixed"  # always a string (set before the stream; only read by the stream)
# What the BYLEX commands read: Redis leaves their result undefined when scores differ.
LEX_READ_KEYS = LEX_KEYS + [FIXED_STRING, b"nokey"]
ALL_KEYS = ZKEYS + LEX_KEYS + [STRING_KEY, FIXED_STRING]

MEMBERS = [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h", b"i", b"j", b"", b"10", b"-5",
           b"007", b"x y", b"bin\x00\xff", b"m" * 70, b"member:12345678"]
SCORES = [b"0", b"1", b"-1", b"2", b"3", b"5", b"2.5", b"-3.75", b"0.1", b"1.1", b"3.14159",
          b"1e300", b"-1e300", b"1e-300", b"1e20", b"123456789012345678", b"9007199254740993",
          b"inf", b"-inf", b"+inf", b"0x10", b"-0.0", b"1E2", b".5", b"5."]
BAD_SCORES = [b"nan", b"abc", b"", b" 1", b"1e999", b"1 ", b"(1", b"--1", b"inf1"]
SCORE_BOUNDS = [b"-inf", b"+inf", b"inf", b"0", b"1", b"2", b"3", b"(1", b"(2.5", b"(0", b"(inf",
                b"(-inf", b"5", b"-1", b"1e300", b"(1e300", b"2.5", b" 2", b""]
BAD_SCORE_BOUNDS = [b"x", b"nan", b"(nan", b"((1", b"1x", b"[1"]
LEX_BOUNDS = [b"-", b"+", b"[a", b"(a", b"[c", b"(c", b"[e", b"(j", b"[j", b"[", b"(", b"[10",
              b"(x y", b"[m"]
BAD_LEX_BOUNDS = [b"a", b"", b"+x", b"-a", b"{a"]
INDEXES = [b"0", b"1", b"2", b"-1", b"-2", b"3", b"5", b"10", b"-100", b"100",
           b"9223372036854775807", b"-9223372036854775808"]
BAD_INTS = [b"x", b"1.5", b"", b"9223372036854775808", b" 1"]
WEIGHTS = [b"1", b"2", b"0", b"-1", b"0.5", b"inf", b"-inf", b"1e300"]


# At large sizes, half of the members come from a wider pool, so sets grow past one B+tree leaf.
WIDE_MEMBERS = [b"k%03d" % i for i in range(400)]


class Generator(SeededGenerator):
    """Builds one random command at a time from a seeded RNG."""

    def __init__(self, seed: int, wide: bool = False):
        super().__init__(seed)
        self.wide = wide

    def zkey(self, lex_ok: bool = True) -> bytes:
        roll = self.rng.random()
        if roll < 0.04:
            return STRING_KEY
        if roll < 0.1 and lex_ok:
            return self.rng.choice(LEX_KEYS)
        return self.rng.choice(ZKEYS)

    def member(self) -> bytes:
        if self.wide and self.rng.random() < 0.5:
            return self.rng.choice(WIDE_MEMBERS)
        return self.rng.choice(MEMBERS)

    def score(self) -> bytes:
        if self.rng.random() < 0.04:
            return self.rng.choice(BAD_SCORES)
        if self.rng.random() < 0.3:
            return str(self.rng.randrange(-20, 20)).encode()
        return self.rng.choice(SCORES)

    def score_bound(self) -> bytes:
        if self.rng.random() < 0.04:
            return self.rng.choice(BAD_SCORE_BOUNDS)
        if self.rng.random() < 0.3:
            return (b"(" if self.rng.random() < 0.3 else b"") + str(
                self.rng.randrange(-10, 10)).encode()
        return self.rng.choice(SCORE_BOUNDS)

    def lex_bound(self) -> bytes:
        if self.rng.random() < 0.04:
            return self.rng.choice(BAD_LEX_BOUNDS)
        return self.rng.choice(LEX_BOUNDS)

    def index(self) -> bytes:
        if self.rng.random() < 0.03:
            return self.rng.choice(BAD_INTS)
        if self.rng.random() < 0.6:
            return str(self.rng.randrange(-8, 8)).encode()
        return self.rng.choice(INDEXES)

    def count(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.04:
            return self.rng.choice(BAD_INTS + [b"-1", b"0"])
        return str(self.rng.randrange(0, 8)).encode()

    # Commands --------------------------------------------------------------------------------

    def cmd_zadd(self):
        rng = self.rng
        key = self.zkey()
        lex = key in LEX_KEYS
        args = [self.case("ZADD"), key]
        options = ["NX", "XX", "GT", "LT", "CH", "INCR"]
        if rng.random() < 0.5:
            picked = rng.sample(options, rng.choice([1, 1, 1, 2, 2, 3]))
            if rng.random() < 0.8:  # mostly compatible combinations
                if "NX" in picked:
                    picked = [o for o in picked if o not in ("XX", "GT", "LT")]
                if "GT" in picked and "LT" in picked:
                    picked.remove("LT")
            args += [self.case(o) for o in picked]
        incr = any(a.upper() == b"INCR" for a in args[2:])
        sizes = [1, 1, 2, 3, 5, 8] + ([40, 80, 120] if self.wide else [])
        pairs = 1 if incr and rng.random() < 0.9 else rng.choice(sizes)
        for _ in range(pairs):
            args += [b"0" if lex else self.score(), self.member()]
        if rng.random() < 0.03:
            args.append(self.score())  # odd number of arguments
        return args

    def cmd_range_like(self):
        rng = self.rng
        key = self.zkey()
        kind = rng.choice(["rank", "rank", "score", "score", "lex"])
        name = "ZRANGE"
        args = [key]
        if kind == "lex":
            key = rng.choice(LEX_READ_KEYS)
            args = [key, self.lex_bound(), self.lex_bound()]
        elif kind == "score":
            args = [key, self.score_bound(), self.score_bound()]
        else:
            args = [key, self.index(), self.index()]
        options = []
        if kind == "score":
            options.append(self.case("BYSCORE"))
        elif kind == "lex":
            options.append(self.case("BYLEX"))
        if rng.random() < 0.35:
            options.append(self.case("REV"))
        if rng.random() < 0.35 and (kind != "rank" or rng.random() < 0.2):
            options += [self.case("LIMIT"), self.index(), self.index()]
        if rng.random() < 0.4 and (kind != "lex" or rng.random() < 0.1):
            options.append(self.case("WITHSCORES"))
        if rng.random() < 0.03:
            options.append(rng.choice([b"FOO", self.case("LIMIT"), self.case("BYSCORE")]))
        rng.shuffle(options)
        if rng.random() < 0.25:
            dest = self.rng.choice(ZKEYS[:6] + [STRING_KEY])
            options = [o for o in options if o.upper() != b"WITHSCORES" or rng.random() < 0.1]
            return [self.case("ZRANGESTORE"), dest] + args + options
        return [self.case(name)] + args + options

    def cmd_legacy_range(self):
        rng = self.rng
        name = rng.choice(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGEBYLEX",
                           "ZREVRANGE"])
        if name.endswith("BYLEX"):
            args = [rng.choice(LEX_READ_KEYS), self.lex_bound(), self.lex_bound()]
        elif name == "ZREVRANGE":
            args = [self.zkey(), self.index(), self.index()]
        else:
            args = [self.zkey(), self.score_bound(), self.score_bound()]
        options = []
        if rng.random() < 0.4 and (not name.endswith("BYLEX") or rng.random() < 0.1):
            options.append(self.case("WITHSCORES"))
        if rng.random() < 0.35 and (name != "ZREVRANGE" or rng.random() < 0.1):
            options += [self.case("LIMIT"), self.index(), self.index()]
        if rng.random() < 0.03:
            options.append(rng.choice([self.case("REV"), self.case("LIMIT"), b"x"]))
        return [self.case(name)] + args + options

    def cmd_remrange(self):
        rng = self.rng
        which = rng.choice(["RANK", "SCORE", "LEX"])
        if which == "RANK":
            return [self.case("ZREMRANGEBYRANK"), self.zkey(), self.index(), self.index()]
        if which == "SCORE":
            return [self.case("ZREMRANGEBYSCORE"), self.zkey(), self.score_bound(),
                    self.score_bound()]
        return [self.case("ZREMRANGEBYLEX"), rng.choice(LEX_READ_KEYS),
                self.lex_bound(), self.lex_bound()]

    def cmd_pop(self):
        rng = self.rng
        roll = rng.random()
        if roll < 0.5:
            args = [self.case(rng.choice(["ZPOPMIN", "ZPOPMAX"])), self.zkey()]
            if rng.random() < 0.5:
                args.append(self.count())
            if rng.random() < 0.02:
                args.append(b"1")
            return args
        keys = [self.zkey() for _ in range(rng.randint(1, 3))]
        numkeys = str(len(keys)).encode()
        if rng.random() < 0.05:
            numkeys = rng.choice([b"0", b"-1", b"x", b"9"])
        args = [self.case("ZMPOP"), numkeys] + keys + [
            self.case(rng.choice(["MIN", "MAX"])) if rng.random() < 0.97 else b"MID"]
        if rng.random() < 0.5:
            args += [self.case("COUNT"), self.count()]
        if rng.random() < 0.02:
            args += [self.case("COUNT"), b"1"]
        return args

    def cmd_setop(self):
        rng = self.rng
        op = rng.choice(["ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE",
                         "ZINTERCARD"])
        keys = [self.zkey() for _ in range(rng.randint(1, 3))]
        numkeys = str(len(keys)).encode()
        if rng.random() < 0.05:
            numkeys = rng.choice([b"0", b"-1", b"x", b"7"])
        args = [self.case(op)]
        if op.endswith("STORE"):
            args.append(rng.choice(ZKEYS[:6] + [STRING_KEY]))
        args += [numkeys] + keys
        if op in ("ZUNION", "ZINTER", "ZUNIONSTORE", "ZINTERSTORE"):
            if rng.random() < 0.4:
                args.append(self.case("WEIGHTS"))
                n = len(keys) if rng.random() < 0.95 else len(keys) + 1
                args += [rng.choice(WEIGHTS) if rng.random() < 0.97 else b"w" for _ in range(n)]
            if rng.random() < 0.4:
                args += [self.case("AGGREGATE"),
                         self.case(rng.choice(["SUM", "MIN", "MAX"])) if rng.random() < 0.95
                         else b"AVG"]
        if op in ("ZUNION", "ZINTER", "ZDIFF") and rng.random() < 0.5:
            args.append(self.case("WITHSCORES"))
        if op == "ZINTERCARD" and rng.random() < 0.4:
            args += [self.case("LIMIT"), self.count()]
        if op == "ZDIFF" and rng.random() < 0.03:
            args += [self.case("WEIGHTS"), b"1"]
        return args

    def cmd_randmember(self):
        rng = self.rng
        args = [self.case("ZRANDMEMBER"), self.zkey()]
        if rng.random() < 0.75:
            args.append(rng.choice([b"0", b"1", b"2", b"3", b"5", b"-1", b"-3", b"-8", b"20",
                                    b"x", b"-9223372036854775808"]))
            if rng.random() < 0.4:
                args.append(self.case("WITHSCORES") if rng.random() < 0.95 else b"SCORES")
        return args

    def cmd_scan(self):
        rng = self.rng
        args = [self.case("ZSCAN"), self.zkey(), rng.choice([b"0"] * 10 + [b"x", b"1.5"])]
        if rng.random() < 0.4:
            args += [self.case("MATCH"), rng.choice([b"*", b"a*", b"?", b"[a-e]", b"*1*"])]
        if rng.random() < 0.4:
            args += [self.case("COUNT"), rng.choice([b"1", b"2", b"5", b"100", b"0", b"x"])]
        if rng.random() < 0.03:
            args += [self.case("TYPE"), b"zset"]
        return args

    def command(self) -> list[bytes]:
        rng = self.rng
        table = [
            (22, self.cmd_zadd),
            (3, lambda: [self.case("ZINCRBY"), self.zkey(lex_ok=False), self.score(),
                         self.member()]),
            (4, lambda: [self.case("ZSCORE"), self.zkey(), self.member()]),
            (2, lambda: [self.case("ZMSCORE"), self.zkey()] + [self.member() for _ in
                                                               range(rng.randint(1, 4))]),
            (3, lambda: [self.case("ZCARD"), self.zkey()]),
            (3, lambda: [self.case("ZCOUNT"), self.zkey(), self.score_bound(),
                         self.score_bound()]),
            (2, lambda: [self.case("ZLEXCOUNT"), rng.choice(LEX_READ_KEYS),
                         self.lex_bound(), self.lex_bound()]),
            (12, self.cmd_range_like),
            (6, self.cmd_legacy_range),
            (3, lambda: [self.case(rng.choice(["ZRANK", "ZREVRANK"])), self.zkey(),
                         self.member()]),
            (5, lambda: [self.case("ZREM"), self.zkey()] + [self.member() for _ in
                                                            range(rng.randint(1, 3))]),
            (4, self.cmd_remrange),
            (6, self.cmd_pop),
            (8, self.cmd_setop),
            (4, self.cmd_randmember),
            (3, self.cmd_scan),
            (1.5, lambda: [self.case("DEL"), self.zkey()]),
            (1.5, lambda: [self.case("EXISTS")] + [self.zkey() for _ in range(2)]),
            (1.5, lambda: [self.case("TYPE"), self.zkey()]),
            (1.5, lambda: [self.case("OBJECT"), self.case("ENCODING"), self.zkey()]),
            (1, lambda: [self.case("SET"), STRING_KEY, b"v"]),
            (1, lambda: [self.case("GET"), self.zkey()]),
            (1, lambda: [self.case("APPEND"), self.zkey(), b"x"]),
            (2, self.wrong_arity),
        ]
        return self.pick(table)

    def wrong_arity(self) -> list[bytes]:
        k = self.zkey()
        choice = self.rng.choice([
            [b"ZADD", k], [b"ZADD", k, b"1"], [b"ZINCRBY", k, b"1"], [b"ZSCORE", k],
            [b"ZMSCORE", k], [b"ZCARD"], [b"ZCOUNT", k, b"1"], [b"ZRANGE", k, b"0"],
            [b"ZRANGESTORE", k, k, b"0"], [b"ZRANK", k, b"a", b"WITHSCORE"], [b"ZREM", k],
            [b"ZPOPMIN"], [b"ZMPOP", b"1", k], [b"ZRANDMEMBER"], [b"ZUNION", b"1"],
            [b"ZUNIONSTORE", k, b"1"], [b"ZINTERCARD", b"1"], [b"ZSCAN", k],
            [b"ZREMRANGEBYRANK", k, b"0"], [b"ZLEXCOUNT", k, b"-"],
        ])
        return [self.case(choice[0].decode())] + choice[1:]


# --------------------------------------------------------------------------------------------
# Running and comparing
# --------------------------------------------------------------------------------------------


def _pairs(value, protocol):
    """[(member, score)] of a WITHSCORES-style reply (flat in RESP2, pairs in RESP3)."""
    if protocol == 3 and value and isinstance(value[0], list):
        return [(m, float(s)) for m, s in value]
    return [(value[i], float(value[i + 1])) for i in range(0, len(value), 2)]


class Run(DifferentialRun):
    """One pass over the stream, with resyncs and the final keyspace comparison."""

    def __init__(self, reference, candidate, protocol: int, seed: int):
        super().__init__(reference, candidate, protocol, seed)

    def step(self, index, args: list[bytes]) -> bool:
        name = args[0].upper()
        if name == b"ZRANDMEMBER" and len(args) >= 2:
            return self.randmember(index, args)
        if name == b"ZSCAN" and len(args) >= 3:
            return self.scan(index, args)
        return self.plain(index, args, self.encode(args))

    def contents(self, conn, key):
        """{member: score} of a key on one server (None if not a sorted set)."""
        reply = conn.call("ZRANGE", key, 0, -1, "WITHSCORES")
        if isinstance(reply, ErrorReply):
            return None
        return dict(_pairs(reply, self.protocol))

    def randmember(self, index, args) -> bool:
        request = self.encode(args)
        expected, got = self.both(request)
        self.replies.append(expected[1])
        same = self.randmember_alike(args, expected, got)
        if not same:
            self.mismatch(index, args, expected[1], got[1])
        return same

    def randmember_alike(self, args, expected, got) -> bool:
        (e_value, e_raw), (g_value, g_raw) = expected, got
        if is_error(e_raw) or is_error(g_raw) or e_value is None or g_value is None:
            return e_raw == g_raw
        members = self.contents(self.reference, args[1]) or {}
        if len(args) == 2:
            return isinstance(g_value, bytes) and g_value in members
        withscores = len(args) == 4
        if len(e_value) != len(g_value) or e_raw.split(b"\r\n")[0] != g_raw.split(b"\r\n")[0]:
            return False
        if withscores:
            if self.protocol == 3 and any(not isinstance(p, list) or len(p) != 2
                                          for p in g_value):
                return False
            pairs = _pairs(g_value, self.protocol)
        else:
            pairs = [(m, None) for m in g_value]
        for member, score in pairs:
            if member not in members or (score is not None and score != members[member]):
                return False
        if int(args[2]) > 0 and len({m for m, _ in pairs}) != len(pairs):
            return False
        return True

    def full_scan(self, conn, args):
        """Iterates ZSCAN to completion; returns the first error's raw reply or the pair set."""
        cursor = args[2]
        found = set()
        for _ in range(10000):
            request = encode_command(*(args[:2] + [cursor] + args[3:]))
            value, raw = exchange(conn, request)
            if is_error(raw):
                return raw
            cursor, elements = value
            found.update(
                (elements[i], elements[i + 1]) for i in range(0, len(elements), 2))
            if cursor == b"0":
                return found
        return b"<scan did not finish>"

    def scan(self, index, args) -> bool:
        expected = self.full_scan(self.reference, args)
        got = self.full_scan(self.candidate, args)
        self.replies.append(expected if isinstance(expected, bytes) else b"*2\r\n")
        if expected != got:
            shown_e = expected if isinstance(expected, bytes) else repr(sorted(expected)).encode()
            shown_g = got if isinstance(got, bytes) else repr(sorted(got)).encode()
            self.mismatch(index, args, shown_e, shown_g)
            return False
        return True

    def resync(self) -> None:
        """Makes the candidate's keyspace equal to the reference's."""
        ref, cand = self.reference, self.candidate
        assert cand.call_raw("FLUSHALL") == b"+OK\r\n"
        for key in sorted(ref.call("KEYS", "*")):
            kind = ref.call("TYPE", key)
            if kind == "string":
                cand.call("SET", key, ref.call("GET", key))
            elif kind == "zset":
                args = []
                for member, score in self.contents(ref, key).items():
                    args += [repr(score).encode(), member]
                cand.call("ZADD", key, *args)

    def compare_keyspace(self) -> None:
        keys = sorted(self.reference.call("KEYS", "*"))
        got_keys = sorted(self.candidate.call("KEYS", "*"))
        if keys != got_keys:
            self.mismatch("final", [b"KEYS", b"*"], repr(keys).encode(), repr(got_keys).encode())
        for key in keys:
            for args in ([b"TYPE", key], [b"OBJECT", b"ENCODING", key],
                         [b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"], [b"GET", key]):
                self.plain("final", args, encode_command(*args))


@pytest.mark.parametrize("size", ["small", "large"])
@both_protocols
def test_zset_commands_match_redis(server, real_redis, protocol, size, target):
    reference, candidate = open_pair(server, real_redis, protocol, target)
    if size == "large":
        for conn in (reference, candidate):
            assert conn.call_raw("CONFIG", "SET", "zset-max-listpack-entries", "3") == b"+OK\r\n"
            assert conn.call_raw("CONFIG", "SET", "zset-max-listpack-value", "8") == b"+OK\r\n"
    for conn in (reference, candidate):
        assert conn.call_raw("FLUSHALL") == b"+OK\r\n"
        assert conn.call_raw("SET", FIXED_STRING, "v") == b"+OK\r\n"
    seed = SEED + (1 if size == "large" else 0)
    run = Run(reference, candidate, protocol, seed)
    try:
        run.play(Generator(seed, wide=size == "large"), COMMANDS, max_mismatches=MAX_MISMATCHES)
    finally:
        for conn in (reference, candidate):
            conn.call("CONFIG", "SET", "zset-max-listpack-entries", "128")
            conn.call("CONFIG", "SET", "zset-max-listpack-value", "64")

    # Guard against a degenerate mix: successes and many kinds of errors must both occur, and
    # the large run must really have built skiplists.
    errors, successes = run.outcomes()
    assert run.stopped_early or (len(errors) >= 15 and successes > COMMANDS // 2), (
        f"the random mix no longer exercises enough outcomes ({len(errors)} error kinds)")
    encodings = b"".join(r for r in run.replies if b"skiplist" in r or b"listpack" in r)
    assert run.stopped_early or b"listpack" in encodings
    if size == "large":
        assert run.stopped_early or b"skiplist" in encodings

    assert not run.mismatches, grouped_report(run.mismatches, MAX_CLASSES_REPORTED,
                                              show_db=False)
