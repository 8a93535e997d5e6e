"""benchmarks' gigakv-load against the server: it must send exactly the requests it is asked for,
the commands redis-benchmark sends for the same test, count multi-read replies right and stop on
an error reply as redis-benchmark does. compare.sh's figures with --client load rest on this.

Each run has a timeout; the tool itself gives up after 5 s without a reply.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
LOAD = Path(os.environ.get("GIGAKV_LOAD", REPO_ROOT / "build" / "benchmarks" / "load" / "gigakv-load"))
RUN_TIMEOUT = 60

# Benchmarks are not built in sanitizer builds (GIGAKV_BUILD_BENCHMARKS=OFF).
pytestmark = pytest.mark.skipif(not os.access(LOAD, os.X_OK), reason="gigakv-load not built")


def _load(server, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(LOAD), "-h", "127.0.0.1", "-p", str(server.port), *args],
        capture_output=True,
        timeout=RUN_TIMEOUT,
        check=False,
        text=True,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_sends_exactly_the_requested_number_of_requests(server, client):
    # 1,003 is not a multiple of the pipeline or of the clients: the last batches are short.
    _load(server, "-c", "7", "-P", "16", "-n", "1003", "-t", "lpush")
    assert client.llen("mylist") == 1003
    _load(server, "-c", "3", "-n", "10", "RPUSH", "other", "a", "b")
    assert client.lrange("other", 0, -1) == [b"a", b"b"] * 10


def test_keys_and_values_are_redis_benchmarks(server, client):
    _load(server, "-n", "5", "-t", "set,incr,sadd,hset,zadd")
    # Without -r the placeholder stays literal, as redis-benchmark sends it.
    assert sorted(client.keys()) == [b"counter:__rand_int__", b"key:__rand_int__", b"myhash",
                                     b"myset", b"myzset"]
    assert re.fullmatch(rb"[A-Z]{3}", client.get("key:__rand_int__"))
    assert client.get("counter:__rand_int__") == b"5"
    assert client.zrange("myzset", 0, -1, withscores=True) == [(b"element:__rand_int__", 0.0)]

    _load(server, "-r", "50", "-n", "2000", "-d", "8", "-t", "set,mset")
    keys = [k for k in client.keys("key:*") if k != b"key:__rand_int__"]
    assert 40 <= len(keys) <= 50
    assert all(re.fullmatch(rb"key:0000000000[0-4][0-9]", k) for k in keys)
    assert all(re.fullmatch(rb"[A-Z]{8}", v) for v in client.mget(keys))


def test_large_array_replies_across_reads(server, client):
    client.rpush("mylist", *[f"element-{i:04d}" for i in range(600)])
    result = _load(server, "-c", "4", "-P", "16", "-n", "200", "--csv", "-t", "lrange_600,get")
    lines = result.stdout.strip().splitlines()
    assert lines[0] == '"test","rps"'
    assert re.fullmatch(r'"LRANGE_600 \(first 600 elements\)","[0-9]+\.[0-9]{2}"', lines[1])
    assert re.fullmatch(r'"GET","[0-9]+\.[0-9]{2}"', lines[2])
    assert client.llen("mylist") == 600


def test_error_reply_stops_the_run(server, client):
    client.set("mylist", "not a list")
    result = _load(server, "-n", "100", "-t", "lpush", check=False)
    assert result.returncode == 1
    assert "Error from server: WRONGTYPE" in result.stderr


def test_bad_usage_is_refused(server):
    for args in (["-n", "0", "-t", "get"], ["-t", "nosuchtest"], ["-c"], []):
        result = _load(server, *args, check=False)
        assert result.returncode == 2, args
