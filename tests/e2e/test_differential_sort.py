"""Differential test of SORT and SORT_RO against redis-server 7.0.

A seeded generator fills lists, sets and sorted sets with numbers, words and mixed elements, weight
strings (w_<element>, all distinct) and hash fields (h_<element> -> f), then sends SORT / SORT_RO
with random BY (a weight pattern, a hash-field pattern, a pattern matching nothing, or a constant
meaning "don't sort"), LIMIT (including negative and out-of-range windows), GET (including "#"),
ASC/DESC, ALPHA and STORE, plus invalid options. Replies are compared byte for byte, which is why
the generator avoids the cases Redis leaves unordered: BY nosort on a set without STORE (hash
table order) and ALPHA with a BY pattern that gives several elements no value (ties of equal
missing weights). After each STORE the stored list is compared too. RESP2 and RESP3.
"""

from __future__ import annotations

from differential import (DifferentialRun, SeededGenerator, both_protocols, flat_report,
                          open_pair)

SEED = 20261130
COMMANDS = 1500

NUMBERS = [b"3", b"1", b"-2", b"10", b"2.5", b"0", b"1e3", b"-0.5", b"7", b"42"]
WORDS = [b"pear", b"apple", b"fig", b"Banana", b"kiwi", b"date", b"cherry", b"lime"]


class SortGenerator(SeededGenerator):
    def __init__(self, seed: int):
        super().__init__(seed)
        self.setup: list[list[bytes]] = []
        for i, element in enumerate(NUMBERS + WORDS):
            self.setup.append([b"SET", b"w_" + element, b"%d" % ((i * 7) % 19 + 100)])
            if i % 3:
                self.setup.append([b"HSET", b"h_" + element, b"f", b"%d" % (i * 13 % 17)])
        self.setup.append([b"SET", b"str", b"v"])

    def elements(self) -> list[bytes]:
        pool = self.rng.choice([NUMBERS, WORDS, NUMBERS + WORDS])
        return self.rng.sample(pool, self.rng.randint(1, len(pool)))

    def fill(self) -> list[bytes]:
        kind = self.rng.choice(["list", "set", "zset"])
        key = b"%s:%d" % (kind.encode(), self.rng.randrange(3))
        elements = self.elements()
        if kind == "list":
            return [b"RPUSH", key] + elements + self.rng.sample(elements, min(2, len(elements)))
        if kind == "set":
            return [b"SADD", key] + elements
        args = [b"ZADD", key]
        for e in elements:
            args += [b"%d" % self.rng.randrange(5), e]
        return args

    def sort(self) -> list[bytes]:
        key = self.rng.choice([b"list:0", b"list:1", b"list:2", b"set:0", b"set:1", b"set:2",
                               b"zset:0", b"zset:1", b"zset:2", b"missing", b"str"])
        name = self.case(self.rng.choice(["SORT", "SORT_RO"]))
        args = [name, key]
        alpha = self.rng.random() < 0.5
        by = self.rng.random()
        store = name.upper() == b"SORT" and self.rng.random() < 0.3
        if by < 0.25:
            args += [self.case("BY"), b"w_*"]
        elif by < 0.4 and not alpha:
            args += [self.case("BY"), self.rng.choice([b"h_*->f", b"none_*"])]
        elif by < 0.5 and (not key.startswith(b"set") or store):
            args += [self.case("BY"), b"nosort"]
        if self.rng.random() < 0.4:
            start = self.rng.choice([0, 1, 2, -1, 5, 30])
            count = self.rng.choice([0, 1, 3, -1, 100])
            args += [self.case("LIMIT"), b"%d" % start, b"%d" % count]
        for _ in range(self.rng.choice([0, 0, 1, 2])):
            args += [self.case("GET"), self.rng.choice([b"#", b"w_*", b"h_*->f", b"nostar"])]
        if self.rng.random() < 0.4:
            args.append(self.case(self.rng.choice(["ASC", "DESC"])))
        if alpha:
            args.append(self.case("ALPHA"))
        if store:
            args += [self.case("STORE"), b"dst"]
        if self.rng.random() < 0.05:
            args.append(self.rng.choice([b"BOGUS", b"LIMIT", b"STORE"]))
        return args

    def command(self):
        return self.pick([
            (1, self.fill),
            (1, lambda: [b"DEL", self.rng.choice([b"list:0", b"set:1", b"zset:2", b"dst"])]),
            (6, self.sort),
        ])


class SortRun(DifferentialRun):
    def step(self, index, command) -> bool:
        same = self.plain(index, command, self.encode(command))
        if b"STORE" in [a.upper() for a in command]:
            check = [b"LRANGE", b"dst", b"0", b"-1"]
            same = self.plain(f"{index}+stored", check, self.encode(check)) and same
        return same

    def compare_keyspace(self) -> None:
        check = [b"KEYS", b"*"]
        expected, got = self.both(self.encode(check))
        if sorted(expected[0]) != sorted(got[0]):
            self.mismatch("final", check, expected[1], got[1])


@both_protocols
def test_sort_matches_redis(server, real_redis, protocol, target):
    reference, candidate = open_pair(server, real_redis, protocol, target)
    generator = SortGenerator(SEED + protocol)
    for args in generator.setup:
        for conn in (reference, candidate):
            conn.call(*args)
    run = SortRun(reference, candidate, protocol, SEED + protocol)
    run.play(generator, COMMANDS, max_mismatches=20)
    assert not run.mismatches, flat_report(run.mismatches, 20)
    errors, successes = run.outcomes()
    assert successes > COMMANDS // 2
    assert any(b"syntax error" in e for e in errors)
    # The stream must exercise real sorting, not only empty keys and errors.
    assert sum(1 for reply in run.replies if reply.startswith(b"*") and reply.count(b"$") >= 4) > 100
