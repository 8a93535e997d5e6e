"""MIGRATE against redis-server 7.0: every type moves gigakv -> Redis and Redis -> gigakv with its
value and TTL, and gigakv as a source answers every case (COPY, REPLACE, KEYS, NOKEY, errors
from the target, AUTH/AUTH2, connection failures and timeouts, argument errors) with Redis's
reply, byte for byte; the link to the target is cached and reused as Redis reuses it."""

from __future__ import annotations

import random
import socket

import redis

from e2e_support import ServerStartError, dump_dataset, fill_every_type

HOST = "127.0.0.1"
# Redis prints the port into 5 characters, so `port + 65536` reaches the same port (wrapped at 16
# bits) only when it still has 5 digits: the targets of the scenario listen below this.
WRAPPING_PORT_LIMIT = 99999 - 65536


def _start_below_wrapping_limit(redis_factory):
    """A redis-server on a free port below WRAPPING_PORT_LIMIT (ephemeral ports are above it, so
    one left to the system would make the wrap case depend on which port it picked)."""
    rng = random.Random()
    last_error = None
    for _ in range(20):
        port = rng.randrange(20000, WRAPPING_PORT_LIMIT)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((HOST, port))
            except OSError:
                continue
        try:
            return redis_factory(port=port)
        except ServerStartError as error:
            last_error = error
    raise RuntimeError(f"no free port below {WRAPPING_PORT_LIMIT}: {last_error}")


def _reply(client, *args):
    """A command's reply, an error reply as ("error", text)."""
    try:
        return client.execute_command(*args)
    except redis.ResponseError as error:
        return ("error", str(error))


def _migrate_everything(source, target_port):
    """Moves every key of every database with one MIGRATE ... KEYS per database."""
    for db in range(16):
        source.execute_command("SELECT", db)
        keys = list(source.scan_iter(count=1000))
        if keys:
            assert _reply(source, "MIGRATE", HOST, target_port, "", db, 5000, "KEYS",
                          *keys) == b"OK", db
    source.execute_command("SELECT", 0)


def _without_expiry(dataset):
    return {key: (kind, value) for key, (kind, value, _) in dataset.items()}


def _expiries(dataset):
    return {key: when for key, (_, _, when) in dataset.items()}


def _assert_moved(before, after):
    assert _without_expiry(after) == _without_expiry(before)
    # MIGRATE sends the remaining TTL, so the target's deadline is the source's, later by the
    # time the request took to reach it.
    for key, when in _expiries(before).items():
        if when == -1:
            assert _expiries(after)[key] == -1, key
        else:
            assert 0 <= _expiries(after)[key] - when < 5000, key


def test_every_type_moves_from_gigakv_to_redis(server, real_redis):
    ours, theirs = server.client(), real_redis.client()
    fill_every_type(ours)
    before = dump_dataset(ours)
    _migrate_everything(ours, real_redis.port)
    _assert_moved(before, dump_dataset(theirs))
    assert dump_dataset(ours) == {}


def test_every_type_moves_from_redis_to_gigakv(server, real_redis):
    ours, theirs = server.client(), real_redis.client()
    fill_every_type(theirs)
    before = dump_dataset(theirs)
    _migrate_everything(theirs, server.port)
    _assert_moved(before, dump_dataset(ours))
    assert dump_dataset(theirs) == {}


def _scenario(source, target, target_port, closed_port):
    """The same MIGRATE cases for a gigakv or a Redis source; returns every reply and what the
    source and the target hold afterwards."""
    out = []
    p = target_port

    def run(*args):
        out.append(_reply(source, *args))

    source.set("a", "1")
    source.rpush("l", "x", "y")
    source.set("t", "v", px=3_600_000)
    source.hset("h", "f", "v")
    run("MIGRATE", HOST, p, "a", 0, 1000)
    run("MIGRATE", HOST, p, "", 2, 1000, "KEYS", "l", "t", "missing", "h")
    run("MIGRATE", HOST, p, "missing", 0, 1000)
    run("MIGRATE", HOST, p, "", 0, 1000, "KEYS", "missing1", "missing2")
    # BUSYKEY on the second key: the first and third move all the same, the reply is the error.
    source.mset({"b1": "1", "b2": "2", "b3": "3"})
    target.set("b2", "theirs")
    run("MIGRATE", HOST, p, "", 0, 1000, "KEYS", "b1", "b2", "b3")
    run("MIGRATE", HOST, p, "b2", 0, 1000, "COPY")
    run("MIGRATE", HOST, p, "b2", 0, 1000, "COPY", "REPLACE")
    run("MIGRATE", HOST, p, "b2", 0, 1000, "REPLACE")
    # The target's own errors, and the SELECT it needs after one.
    source.set("c", "1")
    run("MIGRATE", HOST, p, "c", 99, 1000, "COPY")
    run("MIGRATE", HOST, p, "c", -1, 1000, "COPY")
    run("MIGRATE", HOST, p, "c", 5, 1000, "COPY", "AUTH", "secret")
    run("MIGRATE", HOST, p, "c", 5, 1000, "COPY", "AUTH2", "someone", "secret")
    run("MIGRATE", HOST, p, "c", 5, 0, "COPY")
    # Argument errors, in Redis's order of checks.
    for args in (("AUTH",), ("AUTH2", "u"), ("BOGUS",), ("KEYS", "c"), ("COPY", "KEYS")):
        run("MIGRATE", HOST, p, "c", 0, 1000, *args)
    run("MIGRATE", HOST, p, "", 0, 1000, "KEYS")
    run("MIGRATE", HOST, p, "c", "db", 1000)
    run("MIGRATE", HOST, p, "c", 0, "soon")
    run("MIGRATE", HOST, p, "c", "db", "soon")
    run("MIGRATE", HOST, p, "c", 0)
    # Nothing listens there: the connection fails.
    run("MIGRATE", HOST, closed_port, "c", 0, 200)
    run("MIGRATE", HOST, "not-a-port", "c", 0, 200)
    run("MIGRATE", HOST, 70000, "c", 0, 200)
    run("MIGRATE", "", p, "c", 0, 200)  # No host: it does not resolve.
    run("MIGRATE", HOST, -p, "c", 0, 200)  # A negative port does not resolve either.
    # Redis prints the port into 5 characters: a longer one loses digits (and what remains
    # wraps past 65535 as the C library's 16-bit port does); a timeout past 32 bits stays a
    # timeout (not 0, not forever).
    run("MIGRATE", HOST, p + 65536, "c", 0, 1000, "COPY", "REPLACE")
    run("MIGRATE", HOST, f"{p}0", "c", 0, 1000, "COPY", "REPLACE")
    run("MIGRATE", HOST, p, "c", 0, 4294967296, "COPY", "REPLACE")
    # A target that answers nothing within the timeout.
    target.execute_command("CLIENT", "PAUSE", 1500, "ALL")
    run("MIGRATE", HOST, p, "c", 0, 100, "COPY")
    target.execute_command("CLIENT", "UNPAUSE")
    run("MIGRATE", HOST, p, "c", 0, 1000)
    keys = {}
    for db in (0, 2, 5):
        for who, client in (("source", source), ("target", target)):
            client.execute_command("SELECT", db)
            keys[(who, db)] = sorted(client.keys("*"))
            client.execute_command("SELECT", 0)
    return out, keys


def test_replies_match_redis_as_source(server, redis_factory):
    ours = server.client()
    redis_source = redis_factory()
    target_for_ours = _start_below_wrapping_limit(redis_factory)
    target_for_redis = _start_below_wrapping_limit(redis_factory)
    closed = redis_factory()
    closed_port = closed.port
    closed.stop()
    ours_result = _scenario(ours, target_for_ours.client(), target_for_ours.port, closed_port)
    redis_result = _scenario(redis_source.client(), target_for_redis.client(),
                             target_for_redis.port, closed_port)
    for index, (got, want) in enumerate(zip(ours_result[0], redis_result[0])):
        assert got == want, index
    assert len(ours_result[0]) == len(redis_result[0])
    assert ours_result[1] == redis_result[1]


def test_auth_and_auth2_reach_a_target_with_a_password(server, redis_factory):
    target = redis_factory("--requirepass", "secret")
    ours = server.client()
    ours.set("k", "v")
    assert _reply(ours, "MIGRATE", HOST, target.port, "k", 0, 1000, "COPY") == (
        "error", "Target instance replied with error: NOAUTH Authentication required.")
    assert _reply(ours, "MIGRATE", HOST, target.port, "k", 0, 1000, "COPY", "AUTH", "wrong") == (
        "error", "Target instance replied with error: WRONGPASS invalid username-password pair "
        "or user is disabled.")
    assert _reply(ours, "MIGRATE", HOST, target.port, "k", 0, 1000, "COPY", "AUTH",
                  "secret") == b"OK"
    assert _reply(ours, "MIGRATE", HOST, target.port, "k", 3, 1000, "AUTH2", "default",
                  "secret") == b"OK"
    assert ours.exists("k") == 0
    theirs = target.client(password="secret")
    assert theirs.get("k") == b"v"
    theirs.execute_command("SELECT", 3)
    assert theirs.get("k") == b"v"


def test_the_link_is_cached_reused_and_reopened(server, real_redis):
    ours, theirs = server.client(), real_redis.client()

    def links():
        return [c for c in theirs.client_list() if c["cmd"] in ("restore", "select")]

    for i in range(3):
        ours.set(f"k{i}", i)
        assert _reply(ours, "MIGRATE", HOST, real_redis.port, f"k{i}", 0, 1000) == b"OK"
    assert len(links()) == 1  # One connection for the three.
    assert ours.info("stats")["migrate_cached_sockets"] == 1
    # The target closes it; the next MIGRATE reopens it without an error.
    theirs.client_kill_filter(_id=links()[0]["id"])
    ours.set("k3", 3)
    assert _reply(ours, "MIGRATE", HOST, real_redis.port, "k3", 0, 1000) == b"OK"
    assert theirs.get("k3") == b"3"
    assert len(links()) == 1


def test_getkeys_and_redaction_match_redis(server, real_redis):
    ours, theirs = server.client(), real_redis.client()
    ours_raw, theirs_raw = server.raw(), real_redis.raw()
    forms = [
        ("MIGRATE", "h", 1, "k", 0, 0),
        ("MIGRATE", "h", 1, "", 0, 0, "KEYS", "a", "b"),
        ("MIGRATE", "h", 1, "", 0, 0, "COPY", "AUTH", "keys", "KEYS", "a"),
        ("MIGRATE", "h", 1, "", 0, 0, "AUTH2", "keys", "keys", "REPLACE", "KEYS", "a", "b"),
        ("MIGRATE", "h", 1, "k", 0, 0, "KEYS", "a"),
        ("MIGRATE", "h", 1, "", 0, 0),
    ]
    for form in forms:
        for subcommand in ("GETKEYS", "GETKEYSANDFLAGS"):
            assert ours_raw.call_raw("COMMAND", subcommand, *form) == theirs_raw.call_raw(
                "COMMAND", subcommand, *form), (subcommand, form)
    ours.set("k", "v")
    theirs.set("k", "v")
    for client in (ours, theirs):
        client.config_set("slowlog-log-slower-than", 0)
        client.slowlog_reset()
        _reply(client, "MIGRATE", HOST, 1, "k", 0, 100, "COPY", "AUTH2", "user", "pw")
        _reply(client, "MIGRATE", HOST, 1, "k", 0, 100, "AUTH", "pw", "BOGUS", "AUTH", "x")
    ours_log = [e["command"] for e in ours.slowlog_get(10) if b"MIGRATE" in e["command"]]
    redis_log = [e["command"] for e in theirs.slowlog_get(10) if b"MIGRATE" in e["command"]]
    assert ours_log == redis_log
    assert all(b"pw" not in entry for entry in ours_log)
