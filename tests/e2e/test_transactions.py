"""MULTI/EXEC/DISCARD/WATCH/UNWATCH end to end.

Every expectation here holds on real redis-server 7.0 too (GIGAKV_E2E_TARGET=redis runs this file
against it). The server runs 4 I/O threads so that transactions and the clients racing them live
on different threads. Loops are bounded by counts; no assertion is about time.
"""

from __future__ import annotations

import threading

import pytest
import redis

from e2e_support import ErrorReply, wait_until

IO_THREADS = ("--io-threads", "4")


@pytest.fixture
def tx_server(server_factory):
    return server_factory(*IO_THREADS)


def error_text(reply) -> str:
    assert isinstance(reply, ErrorReply), reply
    return str(reply)


def race(writer, writers: int, reader, readers: int) -> None:
    """Runs `writers` threads of writer() (bounded loops) while `readers` threads run
    reader(done) until every writer has finished (done is set)."""
    done = threading.Event()
    writer_threads = [threading.Thread(target=writer) for _ in range(writers)]
    reader_threads = [threading.Thread(target=reader, args=(done,)) for _ in range(readers)]
    for thread in reader_threads + writer_threads:
        thread.start()
    for thread in writer_threads:
        thread.join()
    done.set()
    for thread in reader_threads:
        thread.join()


def test_exec_replies_every_queued_command_in_order(tx_server):
    with tx_server.raw() as conn:
        assert conn.call("MULTI") == "OK"
        assert conn.call("SET", "a", "5") == "QUEUED"
        assert conn.call("INCR", "a") == "QUEUED"
        assert conn.call("LPUSH", "a", "x") == "QUEUED"
        assert conn.call("GET", "a") == "QUEUED"
        replies = conn.call("EXEC")
        assert replies[:2] == ["OK", 6]
        assert error_text(replies[2]).startswith("WRONGTYPE")  # A run-time error stays inside.
        assert replies[3] == b"6"
        assert conn.call("MULTI") == "OK"
        assert conn.call("EXEC") == []


def test_redis_py_transactional_pipeline(tx_server):
    client = tx_server.client()
    pipe = client.pipeline()  # transaction=True: MULTI ... EXEC
    pipe.set("k", "1").incrby("k", 41).get("k").hset("h", "f", "v").hgetall("h")
    assert pipe.execute() == [True, 42, b"42", 1, {b"f": b"v"}]


def test_exec_reply_shapes_in_resp3(tx_server):
    with tx_server.raw() as conn:
        conn.call("HELLO", "3")
        assert conn.call("MULTI") == "OK"
        for command in (("ZADD", "z", "1.5", "m"), ("ZSCORE", "z", "m"), ("SMEMBERS", "none"),
                        ("HGETALL", "none"), ("BLPOP", "none", "0")):
            assert conn.call(*command) == "QUEUED"
        assert conn.call_raw("EXEC") == b"*5\r\n:1\r\n,1.5\r\n~0\r\n%0\r\n_\r\n"
        conn.call("WATCH", "z")
        conn.call("ZADD", "z", "2", "m")  # The watcher's own write also counts.
        assert conn.call("MULTI") == "OK"
        assert conn.call_raw("EXEC") == b"_\r\n"


def test_errors_and_execabort(tx_server):
    with tx_server.raw() as conn:
        assert error_text(conn.call("EXEC")) == "ERR EXEC without MULTI"
        assert error_text(conn.call("DISCARD")) == "ERR DISCARD without MULTI"
        assert conn.call("MULTI") == "OK"
        assert error_text(conn.call("MULTI")) == "ERR MULTI calls can not be nested"
        assert error_text(conn.call("WATCH", "a")) == "ERR WATCH inside MULTI is not allowed"
        assert conn.call("SET", "a", "1") == "QUEUED"
        # Neither error above aborts the transaction.
        assert conn.call("EXEC") == ["OK"]

        for bad in (("NOSUCHCOMMAND", "x"), ("GET",), ("SHUTDOWN",)):
            assert conn.call("MULTI") == "OK"
            assert conn.call("SET", "a", "2") == "QUEUED"
            assert isinstance(conn.call(*bad), ErrorReply)
            assert error_text(conn.call("EXEC")) == (
                "EXECABORT Transaction discarded because of previous errors.")
            assert conn.call("GET", "a") == b"1"  # Nothing ran.
        assert conn.call("MULTI") == "OK"
        assert error_text(conn.call("SHUTDOWN")) == "ERR Command not allowed inside a transaction"
        assert conn.call("DISCARD") == "OK"


def test_discard_drops_the_queue_and_the_watches(tx_server):
    with tx_server.raw() as conn, tx_server.raw() as other:
        assert conn.call("WATCH", "w") == "OK"
        assert conn.call("MULTI") == "OK"
        assert conn.call("SET", "d", "1") == "QUEUED"
        assert conn.call("DISCARD") == "OK"
        assert conn.call("EXISTS", "d") == 0
        assert other.call("SET", "w", "changed") == "OK"
        assert conn.call("MULTI") == "OK"  # DISCARD forgot the WATCH: this one succeeds.
        assert conn.call("SET", "d", "1") == "QUEUED"
        assert conn.call("EXEC") == ["OK"]


def test_watch_fails_exec_when_another_client_changes_the_key(tx_server):
    with tx_server.raw() as conn, tx_server.raw() as other:
        other.call("SET", "balance", "10")
        assert conn.call("WATCH", "balance", "missing") == "OK"
        assert other.call("INCR", "balance") == 11
        assert conn.call("MULTI") == "OK"
        assert conn.call("SET", "balance", "0") == "QUEUED"
        assert conn.call("EXEC") is None
        assert conn.call("GET", "balance") == b"11"
        # The failed EXEC forgot the watches.
        assert conn.call("MULTI") == "OK"
        assert conn.call("SET", "balance", "0") == "QUEUED"
        assert conn.call("EXEC") == ["OK"]
        # Creating a watched missing key counts as a change too.
        assert conn.call("WATCH", "missing") == "OK"
        assert other.call("RPUSH", "missing", "x") == 1
        assert conn.call("MULTI") == "OK"
        assert conn.call("EXEC") is None


def test_watch_ignores_writes_that_change_nothing_and_unwatch_forgets(tx_server):
    with tx_server.raw() as conn, tx_server.raw() as other:
        other.call("SET", "k", "v")
        assert conn.call("WATCH", "k", "gone") == "OK"
        assert other.call("SETNX", "k", "other") == 0
        assert other.call("DEL", "gone") == 0
        assert other.call("GET", "k") == b"v"
        assert conn.call("MULTI") == "OK"
        assert conn.call("GET", "k") == "QUEUED"
        assert conn.call("EXEC") == [b"v"]
        assert conn.call("WATCH", "k") == "OK"
        assert conn.call("UNWATCH") == "OK"
        other.call("SET", "k", "w")
        assert conn.call("MULTI") == "OK"
        assert conn.call("EXEC") == []


@pytest.mark.parametrize(
    "change",
    [
        ("DEL", "w"),
        ("EXPIRE", "w", "100"),
        ("RENAME", "w", "w2"),
        ("FLUSHALL",),
        ("FLUSHDB",),
        ("SWAPDB", "0", "1"),
        ("MOVE", "w", "1"),
        ("HSET", "w", "f", "v"),
    ],
)
def test_every_kind_of_change_fails_exec(tx_server, change):
    with tx_server.raw() as conn, tx_server.raw() as other:
        other.call("HSET", "w", "a", "1")
        assert conn.call("WATCH", "w") == "OK"
        assert not isinstance(other.call(*change), ErrorReply)
        assert conn.call("MULTI") == "OK"
        assert conn.call("PING") == "QUEUED"
        assert conn.call("EXEC") is None


def test_a_watched_key_that_expires_fails_exec(tx_server):
    with tx_server.raw() as conn, tx_server.raw() as other:
        other.call("SET", "t", "v", "PX", "20")
        assert conn.call("WATCH", "t") == "OK"
        wait_until(lambda: other.call("EXISTS", "t") == 0, timeout=5, message="t to expire")
        assert conn.call("MULTI") == "OK"
        assert conn.call("PING") == "QUEUED"
        assert conn.call("EXEC") is None


def test_blocking_commands_do_not_block_inside_exec(tx_server):
    with tx_server.raw() as conn:
        assert conn.call("MULTI") == "OK"
        assert conn.call("BLPOP", "empty", "0") == "QUEUED"
        assert conn.call("BZPOPMIN", "empty", "0") == "QUEUED"
        assert conn.call("BLMOVE", "empty", "dst", "LEFT", "LEFT", "0") == "QUEUED"
        assert conn.call("BRPOPLPUSH", "empty", "dst", "0") == "QUEUED"
        assert conn.call("RPUSH", "l", "x") == "QUEUED"
        assert conn.call("BLPOP", "l", "0") == "QUEUED"
        assert conn.call_raw("EXEC") == (
            b"*6\r\n*-1\r\n*-1\r\n$-1\r\n$-1\r\n:1\r\n*2\r\n$1\r\nl\r\n$1\r\nx\r\n")


def test_exec_wakes_a_client_blocked_on_a_key_it_pushes_to(tx_server):
    with tx_server.raw() as waiter, tx_server.raw() as conn:
        waiter.send_command("BLPOP", "queue", "10")
        wait_until(lambda: b"blocked_clients:1" in conn.call("INFO", "clients"), timeout=5,
                   message="the waiter to block")
        assert conn.call("MULTI") == "OK"
        assert conn.call("RPUSH", "queue", "a", "b") == "QUEUED"
        assert conn.call("LLEN", "queue") == "QUEUED"
        # Inside the transaction nobody is served yet: LLEN sees both elements.
        assert conn.call("EXEC") == [2, 2]
        assert waiter.read_reply() == [b"queue", b"a"]
        assert conn.call("LRANGE", "queue", "0", "-1") == [b"b"]


def test_client_list_shows_multi_state(tx_server):
    with tx_server.raw() as conn:
        assert conn.call("MULTI") == "OK"
        assert conn.call("SET", "a", "1") == "QUEUED"
        assert conn.call("CLIENT", "LIST") == "QUEUED"
        replies = conn.call("EXEC")
        line = replies[1].decode()
        assert " flags=x " in line and " multi=2 " in line, line
        line = conn.call("CLIENT", "INFO").decode()
        assert " flags=N " in line and " multi=-1 " in line, line


def test_reset_leaves_multi(tx_server):
    with tx_server.raw() as conn:
        assert conn.call("MULTI") == "OK"
        assert conn.call("SET", "r", "1") == "QUEUED"
        assert conn.call("RESET") == "RESET"
        assert error_text(conn.call("EXEC")) == "ERR EXEC without MULTI"
        assert conn.call("EXISTS", "r") == 0


def test_transactions_are_atomic_against_other_threads(tx_server):
    """Writers move 1 from x to y in transactions; readers on other connections (and I/O
    threads) must never see x + y differ from the total, nor a counter under WATCH lose an
    update."""
    admin = tx_server.client()
    admin.mset({"x": 1000, "y": 0, "counter": 0})
    writers, rounds = 4, 250
    errors: list[str] = []

    def writer():
        c = tx_server.client()
        for _ in range(rounds):
            pipe = c.pipeline()
            pipe.decr("x").incr("y")
            pipe.execute()
            # Optimistic increment with WATCH, retried on conflict (bounded).
            for _attempt in range(1000):
                try:
                    with c.pipeline() as p:
                        p.watch("counter")
                        value = int(p.get("counter"))
                        p.multi()
                        p.set("counter", value + 1)
                        p.execute()
                        break
                except redis.WatchError:
                    continue
            else:
                errors.append("counter increment retried 1000 times")

    def reader(done):
        c = tx_server.client()
        while not done.is_set():
            x, y = c.mget("x", "y")
            if int(x) + int(y) != 1000:
                errors.append(f"torn transaction seen: x={x} y={y}")
                return

    race(writer, writers, reader, 2)
    assert errors == []
    assert admin.mget("x", "y", "counter") == [b"0", b"1000", str(writers * rounds).encode()]


def test_sort_by_and_get_are_atomic_against_other_threads(tx_server):
    """SORT ... BY/GET reads many keys; like Redis it runs as one step (under the same gate as
    EXEC): writers flipping 20 weight keys together (MSET) are never seen half done."""
    admin = tx_server.client()
    ids = [str(i) for i in range(20)]
    admin.rpush("ids", *ids)
    admin.mset({f"w_{i}": "a" for i in ids})
    errors: list[str] = []

    def writer():
        c = tx_server.client()
        for round_ in range(400):
            value = "a" if round_ % 2 else "b"
            c.mset({f"w_{i}": value for i in ids})

    def reader(done):
        c = tx_server.client()
        while not done.is_set():
            values = c.sort("ids", by="nosort", get="w_*")
            if len(set(values)) != 1:
                errors.append(f"SORT GET saw a half-applied MSET: {values}")
                return

    race(writer, 3, reader, 2)
    assert errors == []
