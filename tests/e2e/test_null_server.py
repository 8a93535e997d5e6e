"""benchmarks' gigakv-null-server: the floor compare.sh measures servers against. Its CPU per
request means something only if it really reads every request and writes a reply for each, in
order, however the requests are split across reads and whatever the pipeline depth, and takes
the options compare.sh passes to every server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from e2e_support import RespConnection, ServerProcess, encode_command, free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD = REPO_ROOT / "build" / "benchmarks" / "load"
NULL_SERVER = Path(os.environ.get("GIGAKV_NULL_SERVER", BUILD / "gigakv-null-server"))
LOAD = Path(os.environ.get("GIGAKV_LOAD", BUILD / "gigakv-load"))

# Benchmarks are not built in sanitizer builds (GIGAKV_BUILD_BENCHMARKS=OFF).
pytestmark = pytest.mark.skipif(
    not os.access(NULL_SERVER, os.X_OK), reason="gigakv-null-server not built"
)


@pytest.fixture
def null_server(tmp_path):
    port = free_port()
    # The options compare.sh passes to every server it starts.
    argv = [str(NULL_SERVER), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path)]
    server = ServerProcess(argv, port, tmp_path, tmp_path / "null-server.log")
    server.start()
    yield server
    server.stop()


def test_fixed_replies(null_server):
    with RespConnection(null_server.port) as conn:
        assert conn.call("PING") == "PONG"
        assert conn.call("get", "anything") == b"xxx"
        assert conn.call("SET", "k", "v") == "OK"
        assert conn.call("CONFIG", "GET", "save") == []


def test_one_reply_per_request_in_order_across_split_reads(null_server):
    requests = []
    expected = []
    for i in range(500):
        if i % 3 == 0:
            requests.append(encode_command("GET", f"key:{i}"))
            expected.append(b"xxx")
        elif i % 3 == 1:
            requests.append(encode_command("SET", f"key:{i}", "v" * (i * 37)))
            expected.append("OK")
        else:
            requests.append(b"PING\r\n")  # inline, as redis-benchmark's ping_inline sends it
            expected.append("PONG")
    stream = b"".join(requests)
    with RespConnection(null_server.port) as conn:
        # Fragments of 1 to 1,000 bytes: requests and their length lines split at every place.
        pos, size = 0, 1
        while pos < len(stream):
            conn.send(stream[pos:pos + size])
            pos += size
            size = size * 7 % 1000 + 1
        assert [conn.read_reply() for _ in expected] == expected


def test_malformed_request_closes_the_connection(null_server):
    with RespConnection(null_server.port) as conn:
        conn.send(b"*1\r\n+PING\r\n")
        assert conn.read_until_closed() == b""
    with RespConnection(null_server.port) as conn:  # the server goes on serving
        assert conn.call("PING") == "PONG"


def test_a_slow_reader_gets_every_reply(null_server):
    # More replies than the server's send buffer can hold (tcp_wmem's maximum) while the client
    # does not read: the server must wait for writability, then resume.
    max_send_buffer = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    reply = b"$3\r\nxxx\r\n"
    count = 2 * max_send_buffer // len(reply)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        sock.settimeout(30)
        sock.connect(("127.0.0.1", null_server.port))
        sender = threading.Thread(target=sock.sendall, args=(encode_command("GET", "k") * count,))
        sender.start()
        sender.join(timeout=1.0)  # lets the buffers fill; the server stops reading meanwhile
        received = bytearray()
        while len(received) < count * len(reply):
            chunk = sock.recv(1 << 16)
            assert chunk, "connection closed early"
            received += chunk
        sender.join(timeout=30)
        assert not sender.is_alive()
        assert received == reply * count


def test_clients_that_close_before_reading_do_not_stop_it(null_server):
    # Replies to a closed connection fail with EPIPE; that must not end the server (SIGPIPE).
    for size in (1_000, 20_000, 100_000):
        with socket.create_connection(("127.0.0.1", null_server.port), timeout=10) as sock:
            sock.sendall(encode_command("GET", "k") * size)
    with RespConnection(null_server.port) as conn:
        assert conn.call("PING") == "PONG"
    assert null_server.alive()


@pytest.mark.skipif(not os.access(LOAD, os.X_OK), reason="gigakv-load not built")
def test_gigakv_load_runs_every_benchmarked_test_against_it(null_server):
    result = subprocess.run(
        [str(LOAD), "-p", str(null_server.port), "-c", "5", "-P", "16", "-n", "2000", "--csv",
         "-t", "ping_inline,set,get,incr,mset"],
        capture_output=True, timeout=60, check=False, text=True,
    )
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) == 6
