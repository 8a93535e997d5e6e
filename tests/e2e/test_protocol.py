"""RESP on the wire: pipelining, fragmentation, inline commands, protocol errors, big values and
the query/output buffer limits.

Expected bytes are Redis 7.0's (checked against Debian's redis-server 7.0.15; run the suite with
GIGAKV_E2E_TARGET=redis to re-check).
"""

from __future__ import annotations

import hashlib
import os
import random
import select
import socket
import struct
import threading
import time

import pytest

from e2e_support import config_set, encode_command, parse_info

PIPELINE_COMMANDS = 10_000


def _expect_raw_replies(conn, *expected: bytes) -> None:
    """Reads one reply per expected raw reply, in order, and compares each byte for byte."""
    for index, want in enumerate(expected):
        assert conn.read_reply_raw()[1] == want, f"reply #{index}"


def test_pipeline_10k_commands_redis_py(client):
    pipe = client.pipeline(transaction=False)
    for i in range(5_000):
        pipe.set(f"key:{i}", f"value:{i}")
    for i in range(4_000):
        pipe.get(f"key:{i * 7 % 5_000}")
    for _ in range(1_000):
        pipe.incr("counter")
    replies = pipe.execute()

    assert len(replies) == PIPELINE_COMMANDS
    assert replies[:5_000] == [True] * 5_000
    assert replies[5_000:9_000] == [f"value:{i * 7 % 5_000}".encode() for i in range(4_000)]
    assert replies[9_000:] == list(range(1, 1_001))
    assert client.dbsize() == 5_001


def _blast_commands(rng: random.Random):
    """10k commands mixing multibulk and inline forms, the exact reply each must get, and the
    final value of the counter they increment."""
    requests, expected = [], []
    counter = 0
    for i in range(PIPELINE_COMMANDS):
        kind = rng.randrange(4)
        if kind == 0:
            counter += 1
            requests.append(encode_command("INCR", "blast:counter"))
            expected.append(b":%d\r\n" % counter)
        elif kind == 1:
            payload = b"p%d-" % i + b"x" * rng.randrange(0, 300)
            requests.append(encode_command("ECHO", payload))
            expected.append(b"$%d\r\n%s\r\n" % (len(payload), payload))
        elif kind == 2:
            requests.append(b"SET blast:%d v%d\r\n" % (i % 100, i))
            expected.append(b"+OK\r\n")
        else:
            requests.append(b"PING\r\n")
            expected.append(b"+PONG\r\n")
    return b"".join(requests), expected, counter


def test_pipeline_10k_commands_raw_blast_in_random_fragments(server):
    rng = random.Random(1234)
    data, expected, counter = _blast_commands(rng)
    conn = server.raw()

    # Send from a thread in random-sized fragments while this thread reads, so neither side's
    # socket buffers can fill up and deadlock the test.
    cuts = sorted(rng.sample(range(1, len(data)), 3_000))
    fragments = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
    send_errors = []

    def sender():
        try:
            for fragment in fragments:
                conn.send(fragment)
        except OSError as error:
            send_errors.append(error)

    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    for index, want in enumerate(expected):
        _, got = conn.read_reply_raw()
        assert got == want, f"reply #{index}"
    thread.join(timeout=30)
    assert not thread.is_alive() and not send_errors
    assert conn.call("GET", "blast:counter") == str(counter).encode()


def test_request_sent_byte_by_byte(server):
    conn = server.raw()
    data = encode_command("SET", "k", "hello world") + b"GET k\r\n" + encode_command("GET", "k")
    for byte in data:
        conn.send(bytes([byte]))
        time.sleep(0.001)
    _expect_raw_replies(conn, b"+OK\r\n", b"$11\r\nhello world\r\n", b"$11\r\nhello world\r\n")


@pytest.mark.parametrize(
    "inline, stored",
    [
        (b'SET k "a b"\r\n', b"a b"),
        (b"SET k 'a b'\r\n", b"a b"),
        (b"SET k 'it\\'s'\r\n", b"it's"),
        (b'SET k "q\\"q"\r\n', b'q"q'),
        (b'SET k "\\x41\\x42\\n\\t"\r\n', b"AB\n\t"),
        (b'SET k "\\x4g"\r\n', b"x4g"),
        (b'SET k ""\r\n', b""),
        (b"SET   k\t  plain  \r\n", b"plain"),
        (b"SET k unix-newline\n", b"unix-newline"),
        (b"set k lower-case\r\n", b"lower-case"),
    ],
    ids=lambda value: value.decode(errors="replace").strip() if isinstance(value, bytes) else None,
)
def test_inline_commands(server, inline, stored):
    conn = server.raw()
    conn.send(inline)
    assert conn.read_reply_raw()[1] == b"+OK\r\n"
    conn.send(b"GET k\r\n")
    assert conn.read_reply() == stored


def test_inline_blank_lines_are_ignored_and_mixed_with_multibulk(server):
    conn = server.raw()
    conn.send(b"\r\n  \r\n\nPING\r\n" + encode_command("ECHO", "x y") + b'ECHO "x y"\r\n')
    _expect_raw_replies(conn, b"+PONG\r\n", b"$3\r\nx y\r\n", b"$3\r\nx y\r\n")


@pytest.mark.parametrize(
    "request_bytes, error",
    [
        (b"*abc\r\n", b"invalid multibulk length"),
        (b"*1\r\nfoo\r\n", b"expected '$', got 'f'"),
        (b"*2\r\n$3\r\nGET\r\n:1\r\n", b"expected '$', got ':'"),
        (b"*1\r\n$abc\r\n", b"invalid bulk length"),
        (b"*1\r\n$-5\r\n", b"invalid bulk length"),
        (b"*1\r\n$600000000\r\n", b"invalid bulk length"),  # over proto-max-bulk-len (512mb)
        (b'SET k "a b\r\n', b"unbalanced quotes in request"),
        (b"SET k 'a b\r\n", b"unbalanced quotes in request"),
        (b'SET k "a"b\r\n', b"unbalanced quotes in request"),
        (b"a" * 70_000, b"too big inline request"),
        (b"*" + b"1" * 70_000, b"too big mbulk count string"),
        (b"*1\r\n$" + b"1" * 70_000, b"too big bulk count string"),
    ],
    ids=[
        "multibulk-not-a-number",
        "expected-dollar",
        "expected-dollar-got-colon",
        "bulk-not-a-number",
        "bulk-negative",
        "bulk-over-proto-max-bulk-len",
        "inline-unbalanced-double-quote",
        "inline-unbalanced-single-quote",
        "inline-quote-not-followed-by-space",
        "inline-too-big",
        "multibulk-count-too-big",
        "bulk-count-too-big",
    ],
)
def test_protocol_error_replies_then_closes(server, request_bytes, error):
    conn = server.raw()
    if request_bytes.endswith(b"\n"):
        request_bytes += b"PING\r\n"  # nothing after the bad request may be executed
    conn.send(request_bytes)
    assert conn.read_until_closed(timeout=5) == b"-ERR Protocol error: " + error + b"\r\n"
    # The server itself is fine.
    assert server.raw().call_raw("PING") == b"+PONG\r\n"


def test_protocol_error_does_not_affect_other_clients(server):
    bystander = server.raw()
    bystander.call("SET", "k", "v")
    bad = server.raw()
    bad.send(b"*1\r\nfoo\r\n")
    bad.read_until_closed(timeout=5)
    assert bystander.call("GET", "k") == b"v"


def test_100mb_value_round_trip(server):
    client = server.client(socket_timeout=120)
    value = os.urandom(100 * 1024 * 1024)
    digest = hashlib.sha256(value).hexdigest()
    assert client.set("big", value) is True
    del value
    got = client.get("big")
    assert got is not None
    assert len(got) == 100 * 1024 * 1024
    assert hashlib.sha256(got).hexdigest() == digest
    assert client.delete("big") == 1


def test_replies_larger_than_the_socket_buffer_arrive_whole_and_in_order(server):
    # The server sends what fits at once and waits for the socket for the rest: a reader that
    # starts late must still get every byte, in order, and INFO must count them.
    admin = server.raw()
    values = [bytes([65 + i]) * (3 * 1024 * 1024 + i) for i in range(4)]
    for i, value in enumerate(values):
        assert admin.call("SET", f"big{i}", value) == "OK"
    before = int(parse_info(admin.call("INFO", "stats"))["Stats"]["total_net_output_bytes"])

    reader = server.raw(timeout=30)
    reader.send(b"".join(f"GET big{i}\r\n".encode() for i in range(4)) + b"PING\r\n")
    time.sleep(0.3)
    for value in values:
        assert reader.read_reply() == value
    assert reader.read_reply() == "PONG"

    after = int(parse_info(admin.call("INFO", "stats"))["Stats"]["total_net_output_bytes"])
    assert after - before >= sum(len(v) for v in values)


def test_replies_of_many_clients_in_one_wakeup_while_others_vanish(server):
    # Replies wait until every request that one wake-up of the server delivered has run, then
    # go out together. Clients that reset their connection in the meantime, or QUIT, must not
    # disturb the others: each live client gets exactly its own replies, in order.
    rng = random.Random(7)
    conns = [server.raw() for _ in range(40)]
    roles = [rng.choice(["live", "live", "reset", "quit"]) for _ in conns]
    for round_index in range(5):
        for i, (conn, role) in enumerate(zip(conns, roles)):
            if role == "gone":
                continue
            request = b"".join(
                encode_command("INCR", f"c{i}") for _ in range(round_index + 1))
            if role == "quit":
                request += encode_command("QUIT")
            conn.send(request)
            if role == "reset":
                conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()
                roles[i] = "gone"
        for i, (conn, role) in enumerate(zip(conns, roles)):
            if role == "live":
                start = sum(range(1, round_index + 1))
                for step in range(round_index + 1):
                    assert conn.read_reply() == start + step + 1, (i, round_index, step)
            elif role == "quit":
                for step in range(round_index + 1):
                    assert conn.read_reply() == step + 1
                assert conn.read_reply() == "OK"
                conn.read_until_closed(timeout=5)
                roles[i] = "gone"
    assert "live" in roles
    assert server.raw().call("PING") == "PONG"


def test_pipeline_streamed_in_while_its_replies_fill_the_socket(server):
    # 200,000 SETs sent in one go, while a second thread drains the replies: the server reads
    # more input while earlier replies wait for room in the socket, and neither side stalls.
    # Meanwhile another client is served.
    count = 200_000
    conn = server.raw(timeout=60)
    payload = b"".join(encode_command("SET", f"p{i}", "v") for i in range(count))
    received = []

    def drain():
        total = 0
        while total < count * len(b"+OK\r\n"):
            chunk = conn.sock.recv(1 << 16)
            if not chunk:
                break
            total += len(chunk)
        received.append(total)

    reader = threading.Thread(target=drain)
    reader.start()
    conn.sock.sendall(payload)
    assert server.raw().call("PING") == "PONG"
    reader.join(60)
    assert received == [count * len(b"+OK\r\n")]
    assert server.raw().call("DBSIZE") == count


def test_slow_reader_does_not_hold_up_other_clients(server):
    # One client's replies (20 MB) wait for it to read them; the others are served meanwhile,
    # and the slow one still gets every byte once it reads.
    admin = server.raw()
    value = b"s" * (1024 * 1024)
    admin.call("SET", "big", value)
    slow = server.raw(timeout=30)
    slow.send(b"GET big\r\n" * 20)
    time.sleep(0.2)
    for i in range(50):
        assert admin.call("INCR", "served") == i + 1
    for _ in range(20):
        assert slow.read_reply() == value
    assert slow.call("PING") == "PONG"


def test_request_then_half_close_still_gets_its_reply(server):
    # A client that sends its last request and shuts down its sending side (SHUT_WR) gets the
    # reply before the server closes the connection, as with Redis.
    conn = server.raw()
    conn.send(b"SET half closed\r\nGET half\r\n")
    conn.sock.shutdown(socket.SHUT_WR)
    assert conn.read_until_closed(timeout=5) == b"+OK\r\n$6\r\nclosed\r\n"


def test_proto_max_bulk_len_set_live(server):
    conn = server.raw()
    assert conn.call_raw("CONFIG", "SET", "proto-max-bulk-len", "1mb") == b"+OK\r\n"
    # Same connection, next request: the new limit applies (Redis reads it per request).
    conn.send(b"*2\r\n$4\r\nECHO\r\n$2000000\r\n")
    assert conn.read_until_closed(timeout=5) == b"-ERR Protocol error: invalid bulk length\r\n"
    # Below the limit still works on a new connection.
    payload = b"z" * 1_000_000
    assert server.raw().call("ECHO", payload) == payload


def test_query_buffer_limit_closes_connection(server_factory):
    server = server_factory("--client-query-buffer-limit", "1mb")
    conn = server.raw()
    # A 2 MB bulk argument, sent without its last bytes: the command never completes, so only the
    # query buffer limit can end this.
    header = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (2 * 1024 * 1024)
    conn.send_ignoring_reset(header + b"x" * (2 * 1024 * 1024 - 10))
    assert conn.read_until_closed(timeout=5) == b""

    admin = server.raw()
    assert admin.call("EXISTS", "k") == 0
    stats = parse_info(admin.call("INFO", "stats"))["Stats"]
    if "client_query_buffer_limit_disconnections" in stats:  # Redis 7.0 lacks this field
        assert int(stats["client_query_buffer_limit_disconnections"]) == 1


def test_output_buffer_limit_disconnects_slow_reader(server):
    admin = server.raw()
    assert admin.call_raw("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0") == (
        b"+OK\r\n"
    )
    big = b"v" * (512 * 1024)
    admin.call("SET", "big", big)

    reader = server.raw()
    reader.send(b"GET big\r\n" * 100)  # ~50 MB of replies that this client never reads
    time.sleep(0.5)
    received = reader.read_until_closed(timeout=10)
    assert len(received) < 100 * len(big)

    stats = parse_info(admin.call("INFO", "stats"))["Stats"]
    if "client_output_buffer_limit_disconnections" in stats:
        assert int(stats["client_output_buffer_limit_disconnections"]) == 1
    assert admin.call_raw("PING") == b"+PONG\r\n"


def test_output_buffer_limit_counts_the_replies_after_an_earlier_write(server, real_redis):
    """The limit applies to each reply batch whatever was written before on the connection: a
    150 KB reply over a 100 KB limit disconnects, also right after a 90 KB one went out."""
    for target in (server, real_redis):
        with target.raw() as admin, config_set(admin, "client-output-buffer-limit",
                                               "normal 100kb 0 0"):
            for earlier in (None, "x" * 90_000):
                with target.raw() as client:
                    if earlier is not None:
                        assert client.call("ECHO", earlier) == earlier.encode()
                    client.send_command("ECHO", "y" * 150_000)
                    assert client.read_until_closed(timeout=10) == b""


class _TortureClient:
    """One connection of the randomized test below: what it still has to send, and the exact
    replies it still expects, in order."""

    def __init__(self, port: int, name: str, rng: random.Random):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.setblocking(False)
        self.name = name
        self.rng = rng
        self.mode = rng.choice(["fast", "slow", "fragmented", "reset"])
        self.out = b""
        self.expect: list[bytes] = []
        self.received = b""
        self.counter = 0

    def plan(self) -> None:
        for _ in range(self.rng.choice([1, 1, 2, 16, 100])):
            draw = self.rng.random()
            if draw < 0.6:
                self.counter += 1
                self.out += encode_command("INCR", f"{self.name}:c")
                self.expect.append(b":%d\r\n" % self.counter)
            elif draw < 0.8:
                size = self.rng.choice([10, 1000, 100_000, 700_000])
                self.out += encode_command("SET", f"{self.name}:v", b"x" * size)
                self.out += encode_command("STRLEN", f"{self.name}:v")
                self.expect += [b"+OK\r\n", b":%d\r\n" % size]
            else:
                size = self.rng.choice([10, 300_000])
                self.out += encode_command("SET", f"{self.name}:g", b"y" * size)
                self.out += encode_command("GET", f"{self.name}:g")
                self.expect += [b"+OK\r\n", b"$%d\r\n%s\r\n" % (size, b"y" * size)]

    def send_some(self) -> None:
        chunk = self.out
        if self.mode == "fragmented":
            chunk = self.out[: self.rng.choice([1, 7, 4096, 65536])]
        try:
            self.out = self.out[self.sock.send(chunk):]
        except BlockingIOError:
            pass

    def receive_some(self) -> int:
        """Reads what arrived and checks it byte for byte; returns how many replies completed."""
        if self.mode == "slow" and self.rng.random() < 0.7:
            return 0  # Reads late: its replies pile up in the server.
        data = self.sock.recv(1 << 16)
        assert data, f"{self.name}: the server closed the connection"
        self.received += data
        completed = 0
        while self.expect and len(self.received) >= len(self.expect[0]):
            want = self.expect.pop(0)
            assert self.received[: len(want)] == want, (self.name, self.received[:80], want[:80])
            self.received = self.received[len(want):]
            completed += 1
        if self.expect:
            assert self.expect[0].startswith(self.received), (self.name, self.received[:80])
        return completed


def test_randomized_clients_with_resets_fragments_and_slow_readers(server):
    # 60 connections, each in one of four manners (plain, reading late, sending its requests in
    # fragments of 1 byte to 64 KiB, or being reset or closed mid-stream and replaced), send
    # pipelines of 1-100 requests whose replies range from 4 bytes to 700 KB. Every reply must
    # arrive exactly, in order, on its own connection; the server must stay up throughout.
    rng = random.Random(20261201)
    clients = [_TortureClient(server.port, f"t{i}", rng) for i in range(60)]
    completed = 0
    for round_index in range(8):
        for c in clients:
            if not c.expect and not c.out:
                c.plan()
        # Pump for a bounded number of select() passes (the round ends even if replies remain).
        for _ in range(200):
            readers = [c.sock for c in clients if c.expect]
            writers = [c.sock for c in clients if c.out]
            if not readers and not writers:
                break
            readable, writable, _ = select.select(readers, writers, [], 0.05)
            for c in clients:
                if c.sock in writable:
                    c.send_some()
                if c.sock in readable:
                    completed += c.receive_some()
        for i, c in enumerate(clients):
            if c.mode == "reset" and rng.random() < 0.3:
                if rng.random() < 0.5:  # An RST instead of a FIN.
                    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                c.sock.close()
                clients[i] = _TortureClient(server.port, f"t{i}r{round_index}", rng)
    assert completed > 1000
    for c in clients:
        c.sock.close()
    assert server.raw().call("PING") == "PONG"
