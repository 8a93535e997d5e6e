"""Pub/Sub end to end: scripts run on gigakv and on Debian's redis-server 7.0 side by side, every
frame each connection receives compared byte for byte, in RESP2 and RESP3; then the clients
people use (redis-py's PubSub, redis-cli) against gigakv.

A script is a list of steps (connection, command). After each step every connection's frames are
read: from redis-server until it has been quiet for QUIET_S (it writes all of a command's
consequences in one event-loop round), then as many from gigakv (each read waits up to the
socket timeout), and gigakv must then be quiet too. Steps marked unordered compare their frames
as sorted lists (Redis walks a hash table for UNSUBSCRIBE without arguments and PUBSUB CHANNELS).
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time

from pathlib import Path

import pytest

from differential import both_protocols
from e2e_support import encode_command, wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]

PUBSUB_LOAD = Path(os.environ.get(
    "GIGAKV_PUBSUB_LOAD", REPO_ROOT / "build" / "benchmarks" / "load" / "gigakv-pubsub-load"))

QUIET_S = 0.03
CONNECTIONS = ("sub1", "sub2", "pub")


def _frames(conn, quiet_s: float, count: int | None = None) -> list[bytes]:
    """Raw frames: `count` of them (each read bounded by the socket timeout), or all that come
    until the connection is quiet for quiet_s."""
    frames = []
    if count is not None:
        for _ in range(count):
            frames.append(conn.read_reply_raw()[1])
    while True:
        if conn._pos < len(conn._buf):  # noqa: SLF001 - already received, parse it
            frames.append(conn.read_reply_raw()[1])
            if count is not None:
                return frames + _frames(conn, quiet_s)  # extras: the caller reports them
            continue
        conn.sock.settimeout(quiet_s)
        try:
            chunk = conn.sock.recv(1 << 20)
        except socket.timeout:
            return frames
        finally:
            conn.sock.settimeout(conn.timeout)
        if not chunk:
            return frames
        conn._buf += chunk  # noqa: SLF001


def _unordered(frames: list[bytes]) -> list[bytes]:
    """Frames whose order is the hash table's: sorted, and inside an array of bulk strings (PUBSUB
    CHANNELS) its elements. An unsubscription's count follows the order, so the counts are kept
    apart, in the order they came (they count down either way)."""
    normalized, counts = [], []
    for frame in frames:
        header, _, body = frame.partition(b"\r\n")
        parts = body.split(b"\r\n")[:-1]
        if header[1:] == b"3" and parts[1].endswith(b"unsubscribe"):
            counts.append(parts[-1])
            frame = frame[: -len(parts[-1]) - 2]
        elif header[:1] == b"*" and all(p.startswith(b"$") for p in parts[0::2]):
            pairs = sorted(zip(parts[0::2], parts[1::2]))
            frame = header + b"\r\n" + b"".join(a + b"\r\n" + b + b"\r\n" for a, b in pairs)
        normalized.append(frame)
    return sorted(normalized) + counts


def _run_script(reference_server, candidate_server, protocol: int, script) -> list[str]:
    """Runs `script` on both servers; returns the differences found (empty when none)."""
    pairs = {}
    for name in CONNECTIONS:
        pairs[name] = (reference_server.raw(), candidate_server.raw())
        if protocol == 3:
            for conn in pairs[name]:
                assert isinstance(conn.call("HELLO", "3"), dict)
    problems = []
    try:
        for index, step in enumerate(script):
            name, args = step[0], step[1]
            unordered = len(step) > 2 and step[2] == "unordered"
            reference, candidate = pairs[name]
            reference.send(encode_command(*args))
            candidate.send(encode_command(*args))
            for other in CONNECTIONS:
                ref_conn, cand_conn = pairs[other]
                expected = _frames(ref_conn, QUIET_S)
                got = _frames(cand_conn, QUIET_S, count=len(expected))
                if unordered and other == name:
                    expected, got = _unordered(expected), _unordered(got)
                if expected != got:
                    problems.append(f"step {index} {name} {args!r}, on {other}:\n"
                                    f"  redis  {expected!r}\n  gigakv {got!r}")
    finally:
        for reference, candidate in pairs.values():
            reference.close()
            candidate.close()
    return problems


BINARY = b"a\r\nb\x00\xff"

SCRIPT = [
    ("sub1", ["SUBSCRIBE", "ch1", "ch2"]),
    ("sub2", ["PSUBSCRIBE", "ch*", "news.?"]),
    ("pub", ["PUBLISH", "ch1", "hello"]),
    ("pub", ["PUBLISH", "news.x", ""]),
    ("pub", ["PUBLISH", "other", "x"]),
    ("sub1", ["PING"]),
    ("sub1", ["PING", "hi"]),
    ("sub1", ["GET", "k"]),
    ("sub1", ["ECHO", "x"]),
    ("sub1", ["CONFIG", "GET", "maxmemory"]),
    ("sub1", ["SUBSCRIBE", "ch1"]),
    ("sub2", ["SUBSCRIBE", "ch1"]),
    ("pub", ["PUBLISH", "ch1", "m2"]),
    ("pub", ["PUBSUB", "NUMSUB", "ch1", "ch2", "nope"]),
    ("pub", ["PUBSUB", "NUMSUB"]),
    ("pub", ["pubsub", "numpat"]),
    ("pub", ["PUBSUB", "CHANNELS"], "unordered"),
    ("pub", ["PUBSUB", "CHANNELS", "*2"]),
    ("pub", ["PUBSUB", "CHANNELS", "a", "b"]),
    ("pub", ["PUBSUB", "NUMPAT", "x"]),
    ("pub", ["PUBSUB", "FOO"]),
    ("pub", ["PUBSUB"]),
    ("pub", ["pubsub", "help"]),
    ("pub", ["SUBSCRIBE"]),
    ("pub", ["PUBLISH", "ch1"]),
    ("pub", ["PUBLISH", BINARY, BINARY]),
    ("sub1", ["SUBSCRIBE", BINARY]),
    ("pub", ["PUBLISH", BINARY, BINARY]),
    ("sub1", ["UNSUBSCRIBE", "ch1", "never"]),
    ("pub", ["PUBLISH", "ch1", "only sub2"]),
    ("sub1", ["UNSUBSCRIBE"], "unordered"),
    ("sub1", ["UNSUBSCRIBE"]),
    ("sub1", ["PUNSUBSCRIBE"]),
    ("sub1", ["GET", "k"]),
    ("sub1", ["PING"]),
    ("sub2", ["PUNSUBSCRIBE", "news.?"]),
    ("sub2", ["PUNSUBSCRIBE"]),
    ("pub", ["PUBSUB", "NUMPAT"]),
    # Shard channels: apart from the others, no patterns.
    ("sub2", ["SSUBSCRIBE", "s1", "s2"]),
    ("pub", ["SPUBLISH", "s1", "x"]),
    ("pub", ["PUBLISH", "s1", "x"]),
    ("pub", ["SPUBLISH", "ch1", "x"]),
    ("pub", ["PUBSUB", "SHARDCHANNELS"], "unordered"),
    ("pub", ["PUBSUB", "SHARDCHANNELS", "*1"]),
    ("pub", ["PUBSUB", "SHARDNUMSUB", "s1", "s3"]),
    ("sub2", ["SUNSUBSCRIBE", "s1"]),
    ("sub2", ["SUNSUBSCRIBE"]),
    ("sub2", ["SUNSUBSCRIBE"]),
    ("sub2", ["UNSUBSCRIBE"]),
    # A transaction's messages, and a subscriber that resets or quits.
    ("sub1", ["SUBSCRIBE", "tx"]),
    ("pub", ["MULTI"]),
    ("pub", ["PUBLISH", "tx", "1"]),
    ("pub", ["SET", "k", "v"]),
    ("pub", ["PUBLISH", "tx", "2"]),
    ("pub", ["EXEC"]),
    ("pub", ["MULTI"]),
    ("pub", ["SSUBSCRIBE", "s9"]),
    ("pub", ["EXEC"]),
    ("sub1", ["RESET"]),
    ("pub", ["PUBLISH", "tx", "3"]),
    ("sub1", ["GET", "k"]),
    ("sub2", ["PSUBSCRIBE", "*"]),
    ("pub", ["PUBLISH", "tx", "4"]),
    ("sub2", ["QUIT"]),
]

# Confirmations ignore CLIENT REPLY OFF; EXEC's commands are not held to subscribed mode.
SCRIPT_EDGES = [
    ("sub1", ["CLIENT", "REPLY", "OFF"]),
    ("sub1", ["SUBSCRIBE", "r"]),
    ("pub", ["PUBLISH", "r", "x"]),
    ("sub1", ["UNSUBSCRIBE", "r"]),
    ("sub1", ["CLIENT", "REPLY", "ON"]),
    ("sub2", ["MULTI"]),
    ("sub2", ["SUBSCRIBE", "m"]),
    ("sub2", ["GET", "k"]),
    ("sub2", ["EXEC"]),
    ("pub", ["PUBLISH", "m", "y"]),
    ("sub2", ["UNSUBSCRIBE"]),
]

# RESP3 only: commands run alongside messages, and a publisher hears its own message first.
SCRIPT_RESP3 = [
    ("sub1", ["SUBSCRIBE", "c"]),
    ("sub1", ["SET", "k", "v"]),
    ("sub1", ["PUBLISH", "c", "self"]),
    ("pub", ["PUBLISH", "c", "other"]),
    ("sub1", ["GET", "k"]),
    ("sub1", ["PING"]),
    ("sub1", ["MULTI"]),
    ("sub1", ["PUBLISH", "c", "in exec"]),
    ("sub1", ["EXEC"]),
    ("sub1", ["UNSUBSCRIBE"]),
]


@both_protocols
def test_pubsub_frames_match_redis(server, real_redis, target, protocol):
    if target == "redis":
        pytest.skip("the server under test is redis-server itself")
    problems = _run_script(real_redis, server, protocol, SCRIPT)
    problems += _run_script(real_redis, server, protocol, SCRIPT_EDGES)
    if protocol == 3:
        problems += _run_script(real_redis, server, protocol, SCRIPT_RESP3)
    assert not problems, "\n".join(problems)


def test_info_and_client_list_count_subscriptions(server):
    with server.raw() as sub, server.raw() as other:
        sub.call("SUBSCRIBE", "a", "b")
        sub.read_reply()
        sub.send(encode_command("PSUBSCRIBE", "p*"))
        sub.read_reply()
        sub.send(encode_command("SSUBSCRIBE", "s"))
        sub.read_reply()
        info = other.call("INFO", "stats").decode()
        fields = dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)
        assert (fields["pubsub_channels"], fields["pubsub_patterns"],
                fields["pubsubshard_channels"]) == ("2", "1", "1")
        listing = other.call("CLIENT", "LIST", "TYPE", "pubsub").decode()
        assert listing.count("\n") == 1
        assert " flags=P " in listing and " sub=2 psub=1 ssub=1 " in listing
        assert other.call("CLIENT", "LIST", "TYPE", "normal").decode().count("\n") == 1
        assert other.call("CLIENT", "KILL", "TYPE", "pubsub") == 1
        assert sub.read_until_closed() == b""
        # The closed client left every channel.
        for _ in range(100):
            if other.call("PUBSUB", "NUMPAT") == 0:
                break
            time.sleep(0.01)
        assert other.call("PUBSUB", "NUMSUB", "a") == [b"a", 0]
        assert other.call("PUBSUB", "NUMPAT") == 0
        assert other.call("PUBSUB", "SHARDCHANNELS") == []


def test_client_pause_write_holds_publish(server):
    """PUBLISH is not a write, but Redis propagates it (may-replicate): a WRITE pause holds it."""
    with server.raw() as admin, server.raw() as publisher:
        assert admin.call("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        publisher.send(encode_command("PUBLISH", "c", "x"))
        publisher.sock.settimeout(0.2)
        try:
            with pytest.raises(socket.timeout):
                publisher.read_reply()
        finally:
            publisher.sock.settimeout(publisher.timeout)
        assert admin.call("CLIENT", "UNPAUSE") == "OK"
        assert publisher.read_reply() == 0


def test_redis_py_pubsub(server):
    client = server.client()
    pubsub = client.pubsub()
    pubsub.subscribe("news")
    pubsub.psubscribe("ev.*")
    assert pubsub.get_message(timeout=2)["type"] == "subscribe"
    assert pubsub.get_message(timeout=2)["type"] == "psubscribe"
    assert client.publish("news", "one") == 1
    assert client.publish("ev.a", "two") == 1
    message = pubsub.get_message(timeout=2)
    assert (message["type"], message["channel"], message["data"]) == ("message", b"news", b"one")
    message = pubsub.get_message(timeout=2)
    assert (message["type"], message["pattern"], message["channel"], message["data"]) == (
        "pmessage", b"ev.*", b"ev.a", b"two")
    # Handlers on a thread of redis-py's.
    received = []
    done = threading.Event()

    def handler(message):
        received.append(message["data"])
        if len(received) == 3:
            done.set()

    threaded = client.pubsub()
    threaded.subscribe(**{"jobs": handler})
    worker = threaded.run_in_thread(sleep_time=0.01, daemon=True)
    try:
        for _ in range(200):
            if client.pubsub_numsub("jobs") == [(b"jobs", 1)]:
                break
            time.sleep(0.01)
        for i in range(3):
            client.publish("jobs", f"j{i}")
        assert done.wait(5)
        assert received == [b"j0", b"j1", b"j2"]
    finally:
        worker.stop()
        worker.join(5)
        threaded.close()
    # listen() yields until unsubscribed; the connection then serves commands again.
    pubsub.unsubscribe("news")
    pubsub.punsubscribe("ev.*")
    kinds = [m["type"] for m in (pubsub.get_message(timeout=2), pubsub.get_message(timeout=2))]
    assert kinds == ["unsubscribe", "punsubscribe"]
    pubsub.close()


def _cli_output(port: int, args: list[str], publish_port: int) -> str:
    """redis-cli's output for a subscribing command that gets one message, then is stopped."""
    process = subprocess.Popen(["redis-cli", "-p", str(port), *args], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    try:
        with socket.create_connection(("127.0.0.1", publish_port), timeout=5) as conn:
            for _ in range(200):
                conn.sendall(encode_command("PUBLISH", "cli.1", "hi there"))
                if conn.recv(64).startswith(b":1"):
                    break
                time.sleep(0.01)
        time.sleep(0.1)
    finally:
        process.terminate()
        output = process.communicate(timeout=5)[0]
    return output.decode()


@pytest.mark.parametrize("args", [["subscribe", "cli.1"], ["psubscribe", "cli.*"],
                                  ["--csv", "subscribe", "cli.1"]], ids=["sub", "psub", "csv"])
def test_redis_cli_output_matches_redis(server, real_redis, target, args):
    if target == "redis":
        pytest.skip("the server under test is redis-server itself")
    ours = _cli_output(server.port, args, server.port)
    theirs = _cli_output(real_redis.port, args, real_redis.port)
    assert ours == theirs
    assert "hi there" in ours


def _stalled_subscriber(port: int, channel: str) -> socket.socket:
    """A subscriber that never reads, with a small receive buffer so that the server's output
    for it backs up soon."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(5)
    sock.connect(("127.0.0.1", port))
    sock.sendall(encode_command("SUBSCRIBE", channel))
    return sock


def _closed_by_server(sock: socket.socket, timeout: float = 5.0) -> bool:
    """Reads (and drops) what the server sent until it closes; False if still open at timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not sock.recv(1 << 20):
                return True
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True
    return False


def _disconnections(conn) -> int:
    info = conn.call("INFO", "stats").decode()
    fields = dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)
    return int(fields["client_output_buffer_limit_disconnections"])


def test_a_subscriber_that_never_reads_is_disconnected_at_its_hard_limit(server):
    payload = b"x" * 1024
    with server.raw() as admin, server.raw() as reader:
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0") == "OK"
        stalled = _stalled_subscriber(server.port, "feed")
        reader.call("SUBSCRIBE", "feed")
        for _ in range(200):
            if admin.call("PUBSUB", "NUMSUB", "feed") == [b"feed", 2]:
                break
            time.sleep(0.01)
        messages, got = 10_000, 0
        for i in range(messages):
            admin.send(encode_command("PUBLISH", "feed", payload))
            if i % 100 == 99:  # Bounded pipelining; the reader keeps up meanwhile.
                for _ in range(100):
                    admin.read_reply()
                for _ in range(100):
                    frame = reader.read_reply()
                    assert frame[0] == b"message" and frame[2] == payload
                    got += 1
        assert got == messages
        assert _closed_by_server(stalled)
        stalled.close()
        assert _disconnections(admin) >= 1
        assert admin.call("PUBSUB", "NUMSUB", "feed") == [b"feed", 1]


def test_the_soft_limit_disconnects_after_its_seconds(server):
    with server.raw() as admin:
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 64kb 1") == "OK"
        stalled = _stalled_subscriber(server.port, "slow")
        for _ in range(200):
            if admin.call("PUBSUB", "NUMSUB", "slow") == [b"slow", 1]:
                break
            time.sleep(0.01)
        before = _disconnections(admin)
        # Over the soft limit, then more output now and then until the server gives up on it
        # (each addition checks the limit, as in Redis); bounded at 10 s.
        for _ in range(100):
            for _ in range(2000):
                admin.send(encode_command("PUBLISH", "slow", b"y" * 512))
            for _ in range(2000):
                admin.read_reply()
            if admin.call("PUBSUB", "NUMSUB", "slow") == [b"slow", 0]:
                break
            time.sleep(0.1)
        assert admin.call("PUBSUB", "NUMSUB", "slow") == [b"slow", 0]
        assert _disconnections(admin) == before + 1
        assert _closed_by_server(stalled)
        stalled.close()


@pytest.mark.skipif(not os.access(PUBSUB_LOAD, os.X_OK), reason="gigakv-pubsub-load not built")
def test_a_thousand_subscribers_get_every_message_once_in_order(server):
    """1,000 subscribers spread over the I/O threads, 8 publishers: gigakv-pubsub-load --verify
    checks that every subscriber gets each publisher's messages exactly once, in order."""
    result = subprocess.run(
        [str(PUBSUB_LOAD), "-p", str(server.port), "-s", "1000", "-P", "8", "-n", "300",
         "-d", "32", "--verify", "--timeout", "60"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "published 2400 " in result.stdout
    with server.raw() as conn:
        wait_until(lambda: conn.call("PUBSUB", "NUMSUB", "gigakv-pubsub-load")[1] == 0, 10,
                   message="the subscribers to leave")
