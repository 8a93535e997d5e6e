"""DUMP and RESTORE against redis-server 7.0: payloads move both ways for every type and encoding,
gigakv's payloads are Redis's bytes where Redis's layout is deterministic, and RESTORE's errors
are Redis's, byte for byte."""

from __future__ import annotations

import pytest


def _crc64(data: bytes) -> int:
    """CRC-64/Jones as Redis computes it (reflected, no conditioning)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
    return crc


def _payload(value: bytes) -> bytes:
    """A DUMP payload of `value` (type byte and body) with a valid footer."""
    body = value + b"\x0a\x00"
    return body + _crc64(body).to_bytes(8, "little")


def _fill(client):
    """One key per type and encoding (Redis 7.0's default thresholds)."""
    client.set("str", "hello")
    client.set("int", "12345")
    client.set("long", "x" * 5000)
    client.set("bin", b"\x00\xff\r\n" * 10)
    client.rpush("list", *[str(i) for i in range(10)], "a", "bb")
    client.rpush("biglist", *[("e%d" % i) * 20 for i in range(2000)])
    client.sadd("intset", 1, 2, 3, 70000, -5)
    client.sadd("set", *[("m%d" % i) for i in range(300)])
    client.zadd("zset", {"a": 1, "b": 2.5, "c": -1e20})
    client.zadd("bigzset", {("z%d" % i): i * 0.5 for i in range(300)})
    client.hset("hash", mapping={"f1": "v1", "f2": "2"})
    client.hset("bighash", mapping={("f%d" % i): ("v%d" % i) for i in range(600)})


def _contents(client, key):
    kind = client.type(key).decode()
    if kind == "string":
        return kind, client.get(key)
    if kind == "list":
        return kind, client.lrange(key, 0, -1)
    if kind == "set":
        return kind, sorted(client.smembers(key))
    if kind == "zset":
        return kind, client.zrange(key, 0, -1, withscores=True)
    if kind == "hash":
        return kind, sorted(client.hgetall(key).items())
    return kind, None


KEYS = ["str", "int", "long", "bin", "list", "biglist", "intset", "set", "zset", "bigzset",
        "hash", "bighash"]
# Keys whose payload bytes are deterministic in both servers (no hash table order).
SAME_BYTES = ["str", "int", "long", "bin", "list", "intset", "zset", "hash"]


@pytest.mark.parametrize("direction", ["redis_to_gigakv", "gigakv_to_redis"])
def test_payloads_move_both_ways(server, real_redis, direction):
    gigakv, redis_ = server.client(), real_redis.client()
    source, target = (redis_, gigakv) if direction == "redis_to_gigakv" else (gigakv, redis_)
    _fill(source)
    for key in KEYS:
        payload = source.dump(key)
        assert payload is not None, key
        assert target.restore(key, 0, payload) in (True, b"OK"), key
        assert _contents(target, key) == _contents(source, key), key
        assert (target.object("encoding", key) == source.object("encoding", key)
                or key == "set"), key  # gigakv keeps small string sets as listpacks (7.2).


def test_payload_bytes_match_redis(server, real_redis):
    gigakv, redis_ = server.client(), real_redis.client()
    _fill(gigakv)
    _fill(redis_)
    for key in SAME_BYTES:
        assert gigakv.dump(key) == redis_.dump(key), key
    assert gigakv.dump("missing") is None and redis_.dump("missing") is None


def test_restore_ttl_and_options(server, real_redis):
    for client in (server.client(), real_redis.client()):
        client.set("s", "v")
        payload = client.dump("s")
        client.restore("t", 100000, payload)
        assert 99000 < client.pttl("t") <= 100000
        client.restore("abs", 4102444800000, payload, absttl=True)
        assert client.pexpiretime("abs") == 4102444800000
        client.restore("gone", 1, payload, absttl=True)  # Already expired: nothing is stored.
        assert client.exists("gone") == 0
        client.restore("s", 0, payload, replace=True, idletime=1000)
        assert client.object("idletime", "s") >= 1000


def test_restore_errors_are_redis_errors(server, real_redis):
    conns = [server.raw(), real_redis.raw()]
    replies = []
    for conn in conns:
        conn.call("SET", "k", "v")
        good = conn.call("DUMP", "k")
        corrupt = good[:-1] + bytes([good[-1] ^ 1])
        cases = [
            ("RESTORE", "k", "0", good),                            # BUSYKEY
            ("RESTORE", "n", "-1", good),                           # negative TTL
            ("RESTORE", "n", "x", good),                            # not an integer
            ("RESTORE", "n", "0", corrupt),                         # checksum
            ("RESTORE", "n", "0", b"short"),                        # too short
            ("RESTORE", "n", "0", good, "IDLETIME", "-1"),
            ("RESTORE", "n", "0", good, "FREQ", "256"),
            ("RESTORE", "n", "0", good, "IDLETIME", "1", "FREQ", "1"),  # syntax error
            ("RESTORE", "n", "0", good, "BOGUS"),
            ("RESTORE", "n", "0"),                                  # arity
            ("DUMP",),
            ("RESTORE", "n", "0", _payload(b"\x00\xc7")),            # bad data, good footer
            ("RESTORE", "n", "0", _payload(b"\x0f\x00")),            # a stream: refused
            ("RESTORE", "n", "0", _payload(b"\x02\x00")),            # an empty set
        ]
        out = [conn.call_raw(*case) for case in cases]
        replies.append(out)
    assert replies[0] == replies[1]
