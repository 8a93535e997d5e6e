"""Differential test of WATCH: which commands count as changing a key, against redis-server 7.0.

The seeded command streams of the family differential tests (strings and keyspace, bitmaps,
hashes, sets, lists, sorted sets, streams with consumer groups) are replayed on both servers. Before each command a second
connection on each server WATCHes every key of the family's key space (in the database the stream
is in); after it, that connection runs MULTI/EXEC, and whether EXEC failed (a watched key changed)
must be the same on both servers. That is Redis's signalModifiedKey compared, command by command
and argument case by argument case, with gigakv's effect-based WATCH (docs/transactions.md),
including writes that change nothing (no touch) and lazy expiry.

Commands whose effect is random (SPOP, SRANDMEMBER, HRANDFIELD, ZRANDMEMBER, RANDOMKEY) and cursor
or time based replies (SCAN family, TTL family, OBJECT) are left out of the stream. When the two servers'
replies to a command differ anyway, both are flushed and the stream goes on. Runs in RESP2.

Streams give some keys short TTLs (PSETEX ... 100). A watched key whose deadline passes between
WATCH and EXEC fails the EXEC on both servers, but the two servers run each step a few ms apart,
so on a loaded machine the deadline can fall inside the step on one server and outside it on the
other. Steps where a watched key is within NEAR_EXPIRY_MS of its deadline are run but not
compared.
"""

from __future__ import annotations

import importlib

import pytest

from differential import exchange, open_pair
from e2e_support import encode_command

COMMANDS_PER_FAMILY = 1500
NEAR_EXPIRY_MS = 5000
SEED = 2026_11_30
SKIPPED = {b"SPOP", b"SRANDMEMBER", b"HRANDFIELD", b"ZRANDMEMBER", b"RANDOMKEY", b"SCAN",
           b"HSCAN", b"SSCAN", b"ZSCAN", b"TTL", b"PTTL", b"EXPIRETIME", b"PEXPIRETIME",
           b"OBJECT", b"DEBUG"}
FAMILIES = ["test_differential", "test_differential_keyspace", "test_differential_bitmap",
            "test_differential_hash", "test_differential_set", "test_differential_list",
            "test_differential_zset", "test_stream_groups"]


def key_space(module) -> list[bytes]:
    keys = []
    for name in ("KEYS", "ZKEYS", "LEX_KEYS", "SET_KEYS", "LIST_KEYS", "STRING_KEY"):
        value = getattr(module, name, None)
        if isinstance(value, bytes):
            value = [value]
        for key in value or []:
            if key not in keys:
                keys.append(key)
    return keys


def args_of(command) -> list[bytes]:
    return command if isinstance(command, list) else command[1]


def _expires_soon(conn, keys) -> bool:
    """Whether any of `keys` (in conn's database) has a deadline within NEAR_EXPIRY_MS."""
    conn.send(b"".join(encode_command(b"PTTL", key) for key in keys))
    ttls = [conn.read_reply() for _ in keys]
    return any(0 <= ttl <= NEAR_EXPIRY_MS for ttl in ttls)


@pytest.mark.parametrize("family", FAMILIES)
def test_watch_sees_the_same_changes_as_redis(server, real_redis, target, family):
    module = importlib.import_module(family)
    keys = key_space(module)
    assert keys, family
    generator = module.Generator(SEED)
    reference, candidate = open_pair(server, real_redis, 2, target)
    ref_watcher, cand_watcher = open_pair(server, real_redis, 2, target)
    watchers = (ref_watcher, cand_watcher)
    mismatches = []
    compared = failed_both = 0
    db = b"0"
    for index in range(COMMANDS_PER_FAMILY):
        args = args_of(generator.command())
        name = args[0].upper()
        if name in SKIPPED:
            continue
        # Asked of both servers, so that lazy expiry by the PTTLs happens on both alike.
        racing_a_deadline = any([_expires_soon(conn, keys) for conn in (reference, candidate)])
        for watcher in watchers:
            assert watcher.call_raw("SELECT", db) == b"+OK\r\n"
            assert watcher.call_raw("WATCH", *keys) == b"+OK\r\n"
        request = encode_command(*args)
        expected = exchange(reference, request)[1]
        got = exchange(candidate, request)[1]
        exec_replies = []
        for watcher in watchers:
            assert watcher.call_raw("MULTI") == b"+OK\r\n"
            exec_replies.append(watcher.call_raw("EXEC"))
        if expected != got:
            # Diverged for another reason (the family test reports those): start over clean.
            for conn in (reference, candidate):
                conn.call_raw("FLUSHALL")
            continue
        if name == b"SELECT" and expected == b"+OK\r\n":
            db = args[1]
        if racing_a_deadline:
            continue
        compared += 1
        ref_failed, cand_failed = (reply == b"*-1\r\n" for reply in exec_replies)
        failed_both += ref_failed and cand_failed
        if ref_failed != cand_failed:
            mismatches.append(f"#{index} {b' '.join(a[:40] for a in args)!r}: redis "
                              f"{'failed' if ref_failed else 'ran'} EXEC, gigakv "
                              f"{'failed' if cand_failed else 'ran'} it")
    assert compared > COMMANDS_PER_FAMILY // 3, compared
    assert failed_both > 0, "no command changed a watched key: the test checks nothing"
    assert not mismatches, f"{len(mismatches)} WATCH differences:\n" + "\n".join(mismatches[:40])
