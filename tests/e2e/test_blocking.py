"""Blocking commands end to end: clients parked on keys, woken from other connections.

The server runs 4 I/O threads so waiters and pushers live on different threads. Every wait is
bounded: waits use finite server-side timeouts or end by a push the test makes, and every socket
read has the connection's timeout. No assertion is about time: timeout precision is measured by
benchmarks/blocking_latency.py.
"""

from __future__ import annotations

import resource
import time

import pytest

from e2e_support import ErrorReply, encode_command, wait_blocked

IO_THREADS = ("--io-threads", "4")

# 1,000 client sockets here and as many on the server (which inherits this process's limits).
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if _soft != resource.RLIM_INFINITY and _soft < 4096:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, _hard), _hard))


@pytest.fixture
def blocking_server(server_factory):
    return server_factory(*IO_THREADS)


def test_blpop_is_woken_by_a_push_from_another_connection(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as pusher:
        waiter.send_command("BLPOP", "k1", "k2", "10")
        wait_blocked(pusher, 1)
        clients = pusher.call("CLIENT", "LIST").decode().splitlines()
        assert sorted(line.split(" flags=")[1].split(" ")[0] for line in clients) == ["N", "b"]
        assert pusher.call("RPUSH", "k2", "a", "b") == 2
        assert waiter.read_reply() == [b"k2", b"a"]
        assert pusher.call("LRANGE", "k2", "0", "-1") == [b"b"]
        assert pusher.call("INFO", "clients").decode().count("blocked_clients:0") == 1


def test_waiters_are_served_in_the_order_they_blocked(blocking_server):
    conns = [blocking_server.raw() for _ in range(3)]
    with blocking_server.raw() as pusher:
        for i, conn in enumerate(conns):
            conn.send_command("BRPOP", "q", "10")
            wait_blocked(pusher, i + 1)
        assert pusher.call("LPUSH", "q", "x", "y", "z") == 3
        # BRPOP takes from the tail: z was pushed last at the head, so x is at the tail.
        assert [c.read_reply() for c in conns] == [[b"q", b"x"], [b"q", b"y"], [b"q", b"z"]]
        assert pusher.call("EXISTS", "q") == 0
    for conn in conns:
        conn.close()


def test_timeout_replies_null_array_in_resp2_and_resp3(blocking_server):
    with blocking_server.raw() as conn:
        assert conn.call_raw("BLPOP", "missing", "0.05") == b"*-1\r\n"
        assert conn.call_raw("BZPOPMIN", "missing", "0.05") == b"*-1\r\n"
        conn.call("HELLO", "3")
        assert conn.call_raw("BLPOP", "missing", "0.05") == b"_\r\n"
        assert conn.call_raw("BLMOVE", "missing", "d", "LEFT", "RIGHT", "0.05") == b"_\r\n"


def test_commands_pipelined_after_a_blocking_one_run_after_it_is_served(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as pusher:
        waiter.send(encode_command("BLPOP", "p", "10") + encode_command("PING"))
        wait_blocked(pusher, 1)
        pusher.call("RPUSH", "p", "v")
        assert waiter.read_reply() == [b"p", b"v"]
        assert waiter.read_reply() == "PONG"


def test_a_client_that_disconnects_while_blocked_is_forgotten(blocking_server):
    with blocking_server.raw() as pusher:
        waiter = blocking_server.raw()
        waiter.send_command("BLPOP", "gone", "0")
        wait_blocked(pusher, 1)
        waiter.close()
        wait_blocked(pusher, 0)
        assert pusher.call("RPUSH", "gone", "kept") == 1
        assert pusher.call("LRANGE", "gone", "0", "-1") == [b"kept"]


def test_client_unblock_timeout_and_error(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as admin:
        waiter_id = waiter.call("CLIENT", "ID")
        assert admin.call("CLIENT", "UNBLOCK", str(waiter_id)) == 0
        waiter.send_command("BLPOP", "u", "0")
        wait_blocked(admin, 1)
        assert admin.call("CLIENT", "UNBLOCK", str(waiter_id)) == 1
        assert waiter.read_reply() is None
        waiter.send_command("BZPOPMAX", "u", "0")
        wait_blocked(admin, 1)
        assert admin.call("CLIENT", "UNBLOCK", str(waiter_id), "ERROR") == 1
        reply = waiter.read_reply()
        assert isinstance(reply, ErrorReply)
        assert reply == "UNBLOCKED client unblocked via CLIENT UNBLOCK"
        assert admin.call("CLIENT", "UNBLOCK", str(waiter_id), "BOGUS") == ErrorReply(
            "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
        )
        assert admin.call("CLIENT", "UNBLOCK", "notanumber") == ErrorReply(
            "ERR value is not an integer or out of range"
        )


def test_blmove_chain_wakes_the_next_waiter(blocking_server):
    with blocking_server.raw() as mover, blocking_server.raw() as popper, blocking_server.raw() as pusher:
        mover.send_command("BLMOVE", "src", "dst", "LEFT", "RIGHT", "10")
        wait_blocked(pusher, 1)
        popper.send_command("BLPOP", "dst", "10")
        wait_blocked(pusher, 2)
        pusher.call("RPUSH", "src", "hop")
        assert mover.read_reply() == b"hop"
        assert popper.read_reply() == [b"dst", b"hop"]
        assert pusher.call("EXISTS", "src", "dst") == 0


def test_rename_and_move_wake_waiters(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as other:
        waiter.send_command("BLPOP", "target", "10")
        wait_blocked(other, 1)
        other.call("RPUSH", "staging", "r")
        assert other.call("RENAME", "staging", "target") == "OK"
        assert waiter.read_reply() == [b"target", b"r"]

        waiter.send_command("BZPOPMIN", "z", "10")
        wait_blocked(other, 1)
        other.call("SELECT", "1")
        other.call("ZADD", "z", "5", "m")
        assert other.call("MOVE", "z", "0") == 1
        assert waiter.read_reply() == [b"z", b"m", b"5"]


def test_swapdb_wakes_a_waiter_whose_key_arrives_with_the_swapped_db(blocking_server):
    # Redis 7.0 serves clients blocked in either swapped db (db.c swapdbCommand ->
    # scanDatabaseForReadyKeys). No other change consumer is attached here.
    with blocking_server.raw() as waiter, blocking_server.raw() as other:
        waiter.send_command("BLPOP", "swapped", "10")
        wait_blocked(other, 1)
        other.call("SELECT", "3")
        assert other.call("RPUSH", "swapped", "v") == 1
        assert other.call("SWAPDB", "0", "3") == "OK"
        assert waiter.read_reply() == [b"swapped", b"v"]
        assert other.call("EXISTS", "swapped") == 0


def test_bzpopmin_is_woken_by_zadd(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as pusher:
        waiter.send_command("BZPOPMIN", "zs", "10")
        wait_blocked(pusher, 1)
        pusher.call("ZADD", "zs", "2", "b", "1", "a")
        assert waiter.read_reply() == [b"zs", b"a", b"1"]
        assert pusher.call("ZRANGE", "zs", "0", "-1") == [b"b"]


def test_a_key_of_another_type_leaves_the_client_blocked(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as other:
        waiter.send_command("BLPOP", "t", "10")
        wait_blocked(other, 1)
        other.call("ZADD", "t", "1", "m")  # Redis 7.0: a list waiter ignores a sorted set.
        other.call("DEL", "t")
        other.call("RPUSH", "t", "finally")
        assert waiter.read_reply() == [b"t", b"finally"]


def test_thousand_clients_on_hundred_keys_get_one_element_each(blocking_server):
    """1,000 clients blocked on BLPOP over 100 keys; 1,000 elements pushed from 10 other
    connections: every client gets exactly one element and every element goes to one client."""
    clients = [blocking_server.raw(timeout=30) for _ in range(1000)]
    try:
        for i, conn in enumerate(clients):
            conn.send_command("BLPOP", f"key:{i % 100}", "30")
        with blocking_server.raw() as admin:
            wait_blocked(admin, 1000)
            pushers = [blocking_server.raw() for _ in range(10)]
            for p, pusher in enumerate(pushers):
                batch = b"".join(
                    encode_command("RPUSH", f"key:{(p * 100 + e) % 100}", f"e{p}-{e}")
                    for e in range(100)
                )
                pusher.send(batch)
            for pusher in pushers:
                for _ in range(100):
                    assert isinstance(pusher.read_reply(), int)
                pusher.close()
            received = [conn.read_reply() for conn in clients]
            elements = [reply[1] for reply in received]
            assert len(set(elements)) == 1000
            for i, reply in enumerate(received):
                assert reply[0] == f"key:{i % 100}".encode()
            assert admin.call("DBSIZE") == 0
            wait_blocked(admin, 0)
    finally:
        for conn in clients:
            conn.close()


def test_a_waiter_is_served_by_the_ready_key_even_if_an_earlier_key_has_another_type(
    blocking_server,
):
    with blocking_server.raw() as waiter, blocking_server.raw() as other:
        waiter.send_command("BLPOP", "k1", "k2", "10")
        wait_blocked(other, 1)
        other.call("SET", "k1", "x")
        other.call("RPUSH", "k2", "v")
        assert waiter.read_reply() == [b"k2", b"v"]
        waiter.send_command("BZMPOP", "10", "2", "z1", "z2", "MIN")
        wait_blocked(other, 1)
        other.call("SET", "z1", "x")
        other.call("ZADD", "z2", "1", "m")
        assert waiter.read_reply() == [b"z2", [[b"m", b"1"]]]


def test_client_reply_skip_and_off_apply_to_the_reply_that_ends_the_wait(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as other:
        waiter.send(encode_command("CLIENT", "REPLY", "SKIP") + encode_command("BLPOP", "s", "10"))
        wait_blocked(other, 1)
        other.call("RPUSH", "s", "v")
        assert waiter.call("PING") == "PONG"  # The BLPOP reply was skipped.
        assert other.call("EXISTS", "s") == 0
        waiter.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command("BLPOP", "s", "0.05"))
        assert waiter.call("CLIENT", "REPLY", "ON") == "OK"  # No timeout reply before it.
        # CLIENT UNBLOCK (with or without ERROR) ends a wait without a reply as well.
        waiter_id = waiter.call("CLIENT", "ID")
        for unblock in (("CLIENT", "UNBLOCK", str(waiter_id)),
                        ("CLIENT", "UNBLOCK", str(waiter_id), "ERROR")):
            for blocking in (("BLPOP", "s", "0"), ("WAIT", "1", "0")):
                waiter.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command(*blocking))
                wait_blocked(other, 1)
                assert other.call(*unblock) == 1
                assert waiter.call("CLIENT", "REPLY", "ON") == "OK", (unblock, blocking)


def test_far_timeouts_block_and_unrepresentable_ones_are_negative(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as admin:
        waiter_id = waiter.call("CLIENT", "ID")
        waiter.send_command("BLPOP", "far", "1e10")
        wait_blocked(admin, 1)
        assert admin.call("CLIENT", "UNBLOCK", str(waiter_id)) == 1
        assert waiter.read_reply() is None
        for timeout in ("inf", "1e20", "9223372036854775807"):
            assert waiter.call("BLPOP", "far", timeout) == ErrorReply("ERR timeout is negative")
        assert waiter.call("BLPOP", "far", "-1") == ErrorReply("ERR timeout is negative")
        assert waiter.call("BLPOP", "far", "abc") == ErrorReply(
            "ERR timeout is not a float or out of range"
        )
        assert admin.call("CLIENT", "UNBLOCK", str(waiter_id), "ERROR", "x") == ErrorReply(
            "ERR unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP."
        )


def test_deadlines_past_int64_block_until_unblocked(blocking_server):
    # The timeout fits in milliseconds but now + timeout does not: Redis 7.0's deadline wraps
    # and never fires, so the client waits (here until CLIENT UNBLOCK).
    with blocking_server.raw() as waiter, blocking_server.raw() as admin:
        waiter_id = waiter.call("CLIENT", "ID")
        for command in (("BLPOP", "far", "9223372036854775"),
                        ("WAIT", "1", "9223372036854775807")):
            waiter.send_command(*command)
            wait_blocked(admin, 1)
            assert admin.call("CLIENT", "UNBLOCK", str(waiter_id)) == 1
            assert waiter.read_reply() == (None if command[0] == "BLPOP" else 0)


def test_wait_answers_zero_replicas(blocking_server):
    """gigakv has no replicas: WAIT counts 0 of them, at once when it asks for none or cannot
    block (MULTI), else when its timeout passes or CLIENT UNBLOCK ends it."""
    with blocking_server.raw() as waiter, blocking_server.raw() as admin:
        waiter_id = waiter.call("CLIENT", "ID")
        assert waiter.call("SET", "k", "v") == "OK"
        assert waiter.call("WAIT", "0", "0") == 0
        assert waiter.call("WAIT", "-3", "0") == 0
        assert waiter.call("WAIT", "1", "30") == 0  # after its 30 ms
        waiter.send_command("WAIT", "1", "0")
        wait_blocked(admin, 1)
        clients = admin.call("CLIENT", "LIST").decode().splitlines()
        assert sorted(line.split(" flags=")[1].split(" ")[0] for line in clients) == ["N", "b"]
        assert admin.call("CLIENT", "UNBLOCK", str(waiter_id)) == 1
        assert waiter.read_reply() == 0
        waiter.send_command("WAIT", "2", "100000")
        wait_blocked(admin, 1)
        assert admin.call("CLIENT", "UNBLOCK", str(waiter_id), "ERROR") == 1
        assert waiter.read_reply() == ErrorReply("UNBLOCKED client unblocked via CLIENT UNBLOCK")
        assert waiter.call("MULTI") == "OK"
        assert waiter.call("WAIT", "5", "0") == "QUEUED"
        assert waiter.call("EXEC") == [0]
        for args, error in [
            (("x", "0"), "ERR value is not an integer or out of range"),
            (("1", "x"), "ERR timeout is not an integer or out of range"),
            (("1", "1.5"), "ERR timeout is not an integer or out of range"),
            (("1", "-1"), "ERR timeout is negative"),
            (("1",), "ERR wrong number of arguments for 'wait' command"),
        ]:
            assert waiter.call("WAIT", *args) == ErrorReply(error), args
        # Pipelined behind a blocked WAIT, a command runs once the WAIT has its reply.
        waiter.send(encode_command("WAIT", "1", "0") + encode_command("PING"))
        wait_blocked(admin, 1)
        assert admin.call("CLIENT", "UNBLOCK", str(waiter_id)) == 1
        assert waiter.read_reply() == 0
        assert waiter.read_reply() == "PONG"


def test_served_blocked_commands_are_counted_once_and_not_refused_for_memory(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as other:
        other.call("CONFIG", "RESETSTAT")
        other.call("RPUSH", "tmp", "v")
        other.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
        waiter.send_command("BLMOVE", "src", "dst", "LEFT", "LEFT", "10")
        wait_blocked(other, 1)
        other.call("CONFIG", "SET", "maxmemory", "1")
        try:
            assert other.call("RENAME", "tmp", "src") == "OK"
            assert waiter.read_reply() == b"v"
        finally:
            other.call("CONFIG", "SET", "maxmemory", "0")
        assert other.call("LRANGE", "dst", "0", "-1") == [b"v"]
        stats = other.call("INFO", "commandstats").decode()
        assert "cmdstat_blmove:calls=1," in stats


def test_blocked_clients_are_not_idle_but_their_input_is_limited(blocking_server):
    with blocking_server.raw() as waiter, blocking_server.raw() as other:
        other.call("CONFIG", "SET", "timeout", "1")
        try:
            waiter.send_command("BLPOP", "idle", "0")
            wait_blocked(other, 1)
            for _ in range(25):  # 2.5 s: past the idle timeout, bounded.
                other.call("PING")
                time.sleep(0.1)
            other.call("RPUSH", "idle", "v")
            assert waiter.read_reply() == [b"idle", b"v"]
        finally:
            other.call("CONFIG", "SET", "timeout", "0")
    with blocking_server.raw() as waiter, blocking_server.raw() as other:
        other.call("CONFIG", "SET", "client-query-buffer-limit", "1mb")
        try:
            waiter.send_command("BLPOP", "q", "0")
            wait_blocked(other, 1)
            chunk = encode_command("SET", "x", "y" * 100_000)
            try:
                for _ in range(40):  # 4 MB of pipelined input while parked.
                    waiter.send(chunk)
            except OSError:
                pass  # Closed by the server midway.
            wait_blocked(other, 0)
            assert other.call("CLIENT", "LIST").decode().count("cmd=blpop") == 0
        finally:
            other.call("CONFIG", "SET", "client-query-buffer-limit", "1gb")


def _server_cpu_seconds(admin) -> float:
    info = admin.call("INFO", "cpu").decode()
    fields = dict(l.split(":", 1) for l in info.splitlines() if l.startswith("used_cpu_"))
    return float(fields["used_cpu_sys"]) + float(fields["used_cpu_user"])


def test_a_wake_up_too_big_for_the_socket_leaves_the_server_idle(blocking_server):
    # The reply that ends the wait (a 16 MB element) does not fit the socket, so it waits for
    # the socket to become writable; once it is out, the connection must go back to waiting for
    # input. Watching for writability any longer would spin its I/O thread: an idle server uses
    # next to no CPU (a spinning thread would use about one second per second).
    value = b"w" * (16 * 1024 * 1024)
    with blocking_server.raw(timeout=30) as waiter, blocking_server.raw() as pusher:
        waiter.send_command("BLPOP", "big", "0")
        wait_blocked(pusher, 1)
        assert pusher.call("RPUSH", "big", value) == 1
        time.sleep(0.2)  # The server finds the waiter's socket full.
        assert waiter.read_reply() == [b"big", value]
        before = _server_cpu_seconds(pusher)
        time.sleep(1.0)  # Both clients idle.
        used = _server_cpu_seconds(pusher) - before
        assert used < 0.5, f"server used {used:.2f} s of CPU in 1 s while idle"
        assert waiter.call("PING") == "PONG"
