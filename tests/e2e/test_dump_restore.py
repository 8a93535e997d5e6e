"""DUMP and RESTORE against redis-server 7.0: payloads move both ways for every type and encoding,
gigakv's payloads are Redis's bytes where Redis's layout is deterministic, and RESTORE's errors
are Redis's, byte for byte."""

from __future__ import annotations

import pytest

from e2e_support import fill_every_type, key_contents


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


KEYS = ["s0:1", "int0", "big", "compressible", "bin", "list", "biglist", "intset", "set", "zset",
        "bigzset", "hash", "bighash", "hashttl"]
# Keys whose payload bytes are deterministic in both servers (no hash table order).
SAME_BYTES = ["s0:1", "int0", "big", "compressible", "bin", "list", "intset", "zset", "hash"]


@pytest.mark.parametrize("direction", ["redis_to_gigakv", "gigakv_to_redis"])
def test_payloads_move_both_ways(server, real_redis, direction):
    gigakv, redis_ = server.client(), real_redis.client()
    source, target = (redis_, gigakv) if direction == "redis_to_gigakv" else (gigakv, redis_)
    fill_every_type(source)
    for key in KEYS:
        payload = source.dump(key)
        assert payload is not None, key
        assert target.restore(key, 0, payload) in (True, b"OK"), key
        assert key_contents(target, key) == key_contents(source, key), key
        assert (target.object("encoding", key) == source.object("encoding", key)
                or key == "set"), key  # gigakv keeps small string sets as listpacks (7.2).


def test_payload_bytes_match_redis(server, real_redis):
    gigakv, redis_ = server.client(), real_redis.client()
    fill_every_type(gigakv)
    fill_every_type(redis_)
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
