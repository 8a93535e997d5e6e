"""PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST side by side with redis-server 7.0.

A HyperLogLog is a string in Redis's representation, so the differential cases compare not only
the replies but the values themselves (GET returns the raw sparse or dense bytes, cached
cardinality included), byte for byte, in RESP2 and RESP3: sparse values growing run by run,
promotion to dense at hll-sparse-max-bytes, merges of sparse and dense values, the cache that
PFCOUNT fills and PFADD invalidates, PFDEBUG's views, and the errors for strings that are not
HyperLogLogs or are corrupt. Then cardinalities from 0 to 10^7 elements compared exactly with
Redis's, values moved with DUMP/RESTORE and GET/SET in both directions, and the log replaying
them after a restart.
"""

from __future__ import annotations

import pytest

from differential import both_protocols, compare_case


def elements(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(count)]


CASES = [
    ("pfadd and the raw values", [
        ["PFADD", "h"],
        ["GET", "h"],
        ["PFADD", "h"],
        ["PFADD", "h", "a"],
        ["GET", "h"],
        ["PFADD", "h", "a"],
        ["PFADD", "h", "b", "c", "d"],
        ["GET", "h"],
        ["PFCOUNT", "h"],
        ["GET", "h"],  # The cached cardinality.
        ["PFCOUNT", "h"],
        ["PFADD", "h", *elements("e", 50)],
        ["GET", "h"],
        ["PFCOUNT", "h"],
        ["PFDEBUG", "ENCODING", "h"],
        ["PFDEBUG", "DECODE", "h"],
        ["STRLEN", "h"],
        ["TYPE", "h"],
        ["OBJECT", "ENCODING", "h"],
    ]),
    ("promotion to dense", [
        ["CONFIG", "SET", "hll-sparse-max-bytes", "200"],
        ["PFADD", "d", *elements("x", 30)],
        ["PFDEBUG", "ENCODING", "d"],
        ["PFADD", "d", *elements("y", 30)],
        ["PFDEBUG", "ENCODING", "d"],
        ["STRLEN", "d"],
        ["GET", "d"],
        ["PFCOUNT", "d"],
        ["PFDEBUG", "DECODE", "d"],
        ["CONFIG", "SET", "hll-sparse-max-bytes", "0"],
        ["PFADD", "z", "one"],
        ["PFDEBUG", "ENCODING", "z"],
        ["PFADD", "z", "two"],
        ["PFDEBUG", "ENCODING", "z"],
        ["CONFIG", "SET", "hll-sparse-max-bytes", "3000"],
        ["PFADD", "s", *elements("w", 200)],
        ["PFDEBUG", "ENCODING", "s"],
        ["PFDEBUG", "TODENSE", "s"],
        ["PFDEBUG", "TODENSE", "s"],
        ["PFDEBUG", "ENCODING", "s"],
        ["GET", "s"],
        ["PFADD", "g", "a", "b", "c"],
        ["PFDEBUG", "GETREG", "g"],
        ["PFDEBUG", "ENCODING", "g"],
    ]),
    ("merge and union", [
        ["PFADD", "m1", *elements("a", 20)],
        ["PFADD", "m2", *elements("a", 10), *elements("b", 10)],
        ["PFCOUNT", "m1", "m2"],
        ["PFCOUNT", "m1", "m2", "missing"],
        ["PFCOUNT", "missing"],
        ["PFCOUNT", "missing", "other"],
        ["PFMERGE", "m3", "m1", "m2"],
        ["GET", "m3"],
        ["PFCOUNT", "m3"],
        ["PFMERGE", "m1", "m2"],
        ["GET", "m1"],
        ["PFMERGE", "empty"],
        ["GET", "empty"],
        ["PFMERGE", "empty2", "missing"],
        ["GET", "empty2"],
        ["PFDEBUG", "TODENSE", "m2"],
        ["PFMERGE", "m4", "m2", "m3"],
        ["PFDEBUG", "ENCODING", "m4"],
        ["GET", "m4"],
        ["PFCOUNT", "m4", "m1"],
    ]),
    # A short HyperLogLog stored by SET is embedded; Redis makes it raw before reading it.
    ("embedded values become raw", [
        ["SET", "e", b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"],
        ["OBJECT", "ENCODING", "e"],
        ["PFCOUNT", "e"],
        ["OBJECT", "ENCODING", "e"],
        ["SET", "e2", b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"],
        ["PFCOUNT", "e2"],
        ["GET", "e2"],
        ["SET", "e3", b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"],
        ["PFDEBUG", "ENCODING", "e3"],
        ["OBJECT", "ENCODING", "e3"],
        ["SET", "e4", b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"],
        ["PFCOUNT", "e4", "e"],
        ["OBJECT", "ENCODING", "e4"],
    ]),
    ("ttl is kept", [
        ["PFADD", "t", "a"],
        ["EXPIRE", "t", "1000"],
        ["PFADD", "t", "b"],
        ["TTL", "t"],
        ["PFCOUNT", "t"],
        ["TTL", "t"],
        ["PFMERGE", "t", "t"],
        ["TTL", "t"],
    ]),
    ("errors", [
        ["SET", "str", "not an hll"],
        ["PFADD", "str", "a"],
        ["PFCOUNT", "str"],
        ["PFCOUNT", "missing", "str"],
        ["PFMERGE", "dest", "str"],
        ["EXISTS", "dest"],
        ["PFMERGE", "str", "missing"],
        ["PFDEBUG", "ENCODING", "str"],
        ["RPUSH", "list", "a"],
        ["PFADD", "list", "a"],
        ["PFCOUNT", "list"],
        ["PFMERGE", "list"],
        ["PFDEBUG", "GETREG", "list"],
        ["PFDEBUG", "GETREG", "missing"],
        ["PFADD", "ok", "a"],
        ["PFDEBUG", "NOSUCH", "ok"],
        ["PFDEBUG", "GETREG"],
        ["PFDEBUG", "GETREG", "ok", "extra"],
        ["PFADD"],
        ["PFCOUNT"],
        ["PFMERGE"],
        ["PFSELFTEST", "extra"],
        # A header that says dense on a sparse-sized value, an unknown encoding, a short value.
        ["SET", "bad1", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"],
        ["PFADD", "bad1", "a"],
        ["SET", "bad2", "HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"],
        ["PFCOUNT", "bad2"],
        ["SET", "bad3", "HYLL"],
        ["PFCOUNT", "bad3"],
        # Sparse values whose runs do not add up to 16384 registers: corrupt.
        ["SET", "bad4", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x40\x00"],
        ["PFCOUNT", "bad4"],
        ["PFADD", "bad4", "a"],
        ["PFMERGE", "out", "bad4"],
        ["SET", "bad5", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x7f\xff"],
        ["PFCOUNT", "bad5"],
        ["PFCOUNT", "bad5", "ok"],
        ["PFDEBUG", "GETREG", "bad5"],
    ]),
]


@both_protocols
@pytest.mark.parametrize("case", CASES, ids=[name for name, _ in CASES])
def test_hyperloglogs_reply_and_store_as_redis(server, real_redis, target, protocol, case):
    compare_case(server, real_redis, target, protocol, case)


def add_in_batches(client, key: str, start: int, count: int, batch: int = 5000) -> None:
    pipe = client.pipeline(transaction=False)
    for first in range(start, start + count, batch):
        pipe.pfadd(key, *(f"el:{i}" for i in range(first, min(first + batch, start + count))))
        if len(pipe) >= 20:
            pipe.execute()
    pipe.execute()


def pfadd_requests(key: str, start: int, count: int, batch: int = 10_000) -> tuple[bytes, int]:
    """PFADDs of el:<start> .. el:<start + count - 1> as raw RESP requests (built once, sent to
    both servers), and how many requests they are."""
    key_bytes = key.encode()
    head = b"$5\r\nPFADD\r\n$%d\r\n%s\r\n" % (len(key_bytes), key_bytes)
    requests = []
    for first in range(start, start + count, batch):
        last = min(first + batch, start + count)
        elements = [b"el:%d" % i for i in range(first, last)]
        requests.append(b"*%d\r\n" % (len(elements) + 2) + head + b"".join(
            b"$%d\r\n%s\r\n" % (len(element), element) for element in elements))
    return b"".join(requests), len(requests)


def test_cardinalities_up_to_ten_million_match_redis_exactly(server, real_redis, target):
    """Counts after each step from 0 to 10^7 elements, raw values after each step, and unions
    of the steps: exactly Redis's."""
    if target == "redis":
        pytest.skip("compares gigakv with redis-server")
    ours, theirs = server.client(), real_redis.client()
    steps = [0, 1, 10, 100, 1000, 5000, 20_000, 100_000, 1_000_000, 3_000_000, 10_000_000]
    done = 0
    with server.raw() as ours_raw, real_redis.raw() as theirs_raw:
        for step in steps:
            requests, replies = pfadd_requests("big", done, step - done)
            for connection in (ours_raw, theirs_raw):
                connection.send(requests)
                for _ in range(replies):
                    assert connection.read_reply() in (0, 1)
            for client in (ours, theirs):
                client.pfadd(f"step:{step}", *(f"el:{i}" for i in range(min(step, 1000))))
            done = step
            assert ours.pfcount("big") == theirs.pfcount("big"), step
            assert ours.get("big") == theirs.get("big"), step
    assert 9_500_000 < ours.pfcount("big") < 10_500_000
    keys = [f"step:{step}" for step in steps] + ["big"]
    assert ours.pfcount(*keys) == theirs.pfcount(*keys)
    for client in (ours, theirs):
        client.pfmerge("merged", *keys)
    assert ours.get("merged") == theirs.get("merged")
    assert ours.pfcount("merged") == theirs.pfcount("merged")


def test_values_move_between_redis_and_gigakv(server, real_redis, target):
    """A HyperLogLog made by Redis counts and merges the same on gigakv after DUMP/RESTORE or
    GET/SET, and the reverse."""
    if target == "redis":
        pytest.skip("compares gigakv with redis-server")
    ours, theirs = server.client(), real_redis.client()
    add_in_batches(theirs, "sparse", 0, 100)
    add_in_batches(theirs, "dense", 0, 50_000)
    for key in ("sparse", "dense"):
        ours.restore(key, 0, theirs.dump(key))
        assert ours.pfcount(key) == theirs.pfcount(key)
        ours.set(f"{key}:copy", theirs.get(key))
        assert ours.pfcount(f"{key}:copy") == theirs.pfcount(key)
    ours.pfadd("sparse", "one more")
    theirs.pfadd("sparse", "one more")
    assert ours.get("sparse") == theirs.get("sparse")
    ours.pfmerge("both", "sparse", "dense")
    theirs.restore("from-gigakv", 0, ours.dump("both"))
    theirs.pfmerge("both", "sparse", "dense")
    assert theirs.pfcount("from-gigakv") == theirs.pfcount("both")
    assert theirs.get("from-gigakv") == theirs.get("both")


def test_selftest_passes(server):
    assert server.client().execute_command("PFSELFTEST") in (b"OK", "OK", True)


def test_hyperloglogs_survive_a_restart_through_the_log(server_factory):
    server = server_factory("--appendonly", "yes", "--appendfsync", "always", "--save", "")
    client = server.client()
    add_in_batches(client, "h", 0, 3000)
    client.pfadd("s", "a", "b")
    client.pfmerge("m", "h", "s")
    client.pfcount("h")  # Fills the cache: logged too.
    client.execute_command("PFDEBUG", "TODENSE", "s")
    before = {key: client.get(key) for key in ("h", "s", "m")}
    server.expect_exit = True
    server.proc.kill()
    server.proc.wait(timeout=10)
    server.expect_exit = False
    server.start()
    client = server.client()
    assert {key: client.get(key) for key in ("h", "s", "m")} == before


def test_watch_keyspace_events_and_dirty_as_redis(server, real_redis, target):
    """PFADD and PFMERGE notify (new, pfadd), PFCOUNT filling its cache notifies nothing but
    fails a WATCH, PFDEBUG TODENSE fails none; rdb_changes_since_last_save grows as Redis's."""
    if target == "redis":
        pytest.skip("compares gigakv with redis-server")

    def session(srv):
        client = srv.client()
        client.config_set("notify-keyspace-events", "KEA")
        pubsub = client.pubsub()
        pubsub.psubscribe("__key*__:*")
        pubsub.get_message(timeout=1)
        seen = {}
        before = client.info("persistence")["rdb_changes_since_last_save"]
        client.pfadd("h", "a", "b", "c")
        client.pfadd("h", "a")
        client.pfmerge("m", "h")
        seen["dirty"] = client.info("persistence")["rdb_changes_since_last_save"] - before
        for key, command in (("h", ["PFCOUNT", "h"]), ("h", ["PFCOUNT", "h"]),
                             ("m", ["PFDEBUG", "TODENSE", "m"])):
            watcher = srv.client()
            pipe = watcher.pipeline()
            pipe.watch(key)
            client.execute_command(*command)
            pipe.multi()
            pipe.get(key)
            try:
                pipe.execute()
                seen.setdefault("watch", []).append("ran")
            except Exception as error:  # WatchError: the key changed
                seen.setdefault("watch", []).append(type(error).__name__)
        events = []
        while (message := pubsub.get_message(timeout=0.2)) is not None:
            if message["type"] == "pmessage":
                events.append((message["channel"], message["data"]))
        seen["events"] = events
        return seen

    assert session(server) == session(real_redis)
