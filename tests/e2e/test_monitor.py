"""MONITOR end to end: the lines a monitor gets, compared with redis-server's, and what a monitor
may still do. Every read has the connection's timeout; a run ends on a marker command (ECHO) the
test sends last, so no test waits for lines that never come.
"""

from __future__ import annotations

import re
import socket
import time

from e2e_support import ErrorReply, config_set, encode_command

LINE = re.compile(r"(\d+)\.(\d{6}) \[(\d+) (\S+)\] (.*)")


def _lines_until(monitor, marker: str) -> list[str]:
    """Monitor lines, as "[db] args", up to and including the ECHO of `marker` (bounded)."""
    lines = []
    for _ in range(10_000):
        line = monitor.read_reply()
        match = LINE.fullmatch(line)
        assert match, line
        lines.append(f"[{match.group(3)}] {match.group(5)}")
        if match.group(5) == f'"ECHO" "{marker}"':
            return lines
    raise AssertionError("marker never seen")


def _monitored(target) -> list[str]:
    with target.raw() as monitor, target.raw() as client:
        assert monitor.call("MONITOR") == "OK"
        client.call("SET", "k", b'a b\n"\\\x01\xff\r\t')
        client.call("SELECT", "3")
        client.call("GET", "k")
        client.call("SELECT", "0")
        client.call("AUTH", "secret")  # fails (no password set), still shown, redacted
        client.call("AUTH", "user", "secret")
        client.call("HELLO", "2", "AUTH", "default", "secret", "SETNAME", "app")
        client.call("AUTH", "a", "b", "c")  # a syntax error before Redis redacts: in clear
        client.call("HELLO", "9", "AUTH", "u", "p")  # NOPROTO before redacting: in clear
        client.call("CONFIG", "GET", "hz")  # admin: not shown
        client.call("MULTI")
        client.call("SET", "a", "1")
        client.call("INCR", "a")
        client.call("EXEC")
        client.call("GET")  # wrong arity: rejected, not shown
        client.call("LPUSH", "k", "x")  # WRONGTYPE: ran, shown
        client.call("BLPOP", "nolist", "0.01")
        # Scripts: EVAL first, then the commands it runs as [db lua], in the script's db.
        client.call("EVAL", "redis.call('set', 's', '1') return redis.call('get', 's')", "0")
        sha = client.call("SCRIPT", "LOAD", "return redis.call('incr', KEYS[1])")
        client.call("EVALSHA", sha, "1", "n")
        client.call("EVAL", "redis.call('select', 5) return redis.call('set', 'z', '1')", "0")
        try:
            client.call("EVAL", "return 1", "-1")  # refused, still shown first
        except ErrorReply:
            pass
        client.call("ECHO", "end")
        return _lines_until(monitor, "end")


def test_monitor_lines_are_redis_lines(server, real_redis):
    ours = _monitored(server)
    assert ours == _monitored(real_redis)
    assert ours[0] == r'[0] "SET" "k" "a b\n\"\\\x01\xff\r\t"'
    assert '[0] "AUTH" "(redacted)" "(redacted)"' in ours


def test_the_address_and_time_of_each_line(server):
    with server.raw() as monitor, server.raw() as client:
        assert monitor.call("MONITOR") == "OK"
        client_addr = [line for line in client.call("CLIENT", "INFO").decode().split()
                       if line.startswith("addr=")][0][len("addr="):]
        client.call("ECHO", "end")
        server_time = int(client.call("TIME")[0])
        lines = []
        while not lines or '"ECHO" "end"' not in lines[-1]:
            lines.append(monitor.read_reply())
        match = LINE.fullmatch(lines[-1])
        assert match.group(4) == client_addr
        assert abs(int(match.group(1)) - server_time) <= 2


def test_a_monitor_may_not_touch_keys_and_reset_ends_it(server, real_redis):
    for target in (server, real_redis):
        with target.raw() as monitor, target.raw() as client:
            assert monitor.call("MONITOR") == "OK"
            # MONITOR again is ignored without a reply; the monitor sees its own commands.
            monitor.send(encode_command("MONITOR") + encode_command("PING"))
            assert monitor.read_reply() == "PONG"
            assert monitor.read_reply().endswith('"PING"')
            assert monitor.call("GET", "k") == ErrorReply(
                "ERR Replica can't interact with the keyspace")
            assert " flags=O " in monitor.call("CLIENT", "LIST").decode()  # admin: no line
            assert monitor.call("RESET") == "RESET"
            client.call("SET", "after", "reset")
            assert monitor.call("GET", "after") == b"reset"  # no line came in between
            assert " flags=O " not in client.call("CLIENT", "LIST").decode()


def test_monitor_inside_multi_is_refused(server, real_redis):
    for target in (server, real_redis):
        with target.raw() as conn:
            assert conn.call("MULTI") == "OK"
            assert conn.call("MONITOR") == "QUEUED"
            assert conn.call("EXEC") == [ErrorReply(
                "ERR MONITOR isn't allowed for DENY BLOCKING client")]
            assert conn.call("PING") == "PONG"


def test_commands_from_every_io_thread_reach_the_monitor(server_factory):
    server = server_factory("--io-threads", "4")
    clients = [server.raw() for _ in range(8)]
    with server.raw() as monitor:
        assert monitor.call("MONITOR") == "OK"
        for n, conn in enumerate(clients):
            conn.send(b"".join(encode_command("SET", f"c{n}", str(i)) for i in range(100)))
        for conn in clients:
            for _ in range(100):
                assert conn.read_reply() == "OK"
        clients[0].call("ECHO", "end")
        lines = _lines_until(monitor, "end")
    assert len(lines) == 801
    for n in range(8):  # each client's commands in its order
        values = [line.split('"')[-2] for line in lines if f'"SET" "c{n}"' in line]
        assert values == [str(i) for i in range(100)]
    # The server goes on after the monitor left while lines were on their way.
    assert clients[1].call("SET", "x", "y") == "OK"
    for conn in clients:
        conn.close()


def test_own_lines_follow_their_replies_and_none_after_reset(server, real_redis):
    """A monitor's line for its own command comes right behind that command's reply, and RESET
    ends the lines before its own reply, as in Redis."""
    for target in (server, real_redis):
        with target.raw() as monitor:
            assert monitor.call("MONITOR") == "OK"
            monitor.send(encode_command("PING") + encode_command("ECHO", "a") +
                         encode_command("RESET") + encode_command("ECHO", "b"))
            assert monitor.read_reply() == "PONG"
            assert monitor.read_reply().endswith('"PING"')
            assert monitor.read_reply() == b"a"
            assert monitor.read_reply().endswith('"ECHO" "a"')
            assert monitor.read_reply() == "RESET"
            assert monitor.read_reply() == b"b"


def test_client_reply_off_stops_the_lines(server, real_redis):
    for target in (server, real_redis):
        with target.raw() as monitor, target.raw() as client:
            monitor_id = monitor.call("CLIENT", "ID")
            assert monitor.call("MONITOR") == "OK"
            monitor.send(encode_command("CLIENT", "REPLY", "OFF"))
            for _ in range(500):  # until the monitor ran it (CLIENT LIST, admin, shows no line)
                entry = next(line for line in client.call("CLIENT", "LIST").decode().splitlines()
                             if line.startswith(f"id={monitor_id} "))
                if "cmd=client|reply" in entry:
                    break
            else:
                raise AssertionError("CLIENT REPLY OFF never ran")
            client.call("SET", "while", "off")
            client.call("ECHO", "off")
            time.sleep(0.1)  # lets the lines reach the monitor, if any were sent
            assert monitor.call("CLIENT", "REPLY", "ON") == "OK"
            client.call("ECHO", "on")
            assert monitor.read_reply().endswith('"CLIENT" "REPLY" "ON"')
            assert monitor.read_reply().endswith('"ECHO" "on"')


def test_monitors_never_time_out(server, real_redis):
    for target in (server, real_redis):
        with target.raw() as monitor, target.raw() as idle:
            assert monitor.call("CONFIG", "SET", "timeout", "1") == "OK"
            try:
                assert monitor.call("MONITOR") == "OK"
                time.sleep(2.5)  # idle longer than the timeout
                assert monitor.call("PING") == "PONG"
                assert idle.read_until_closed() == b""  # an ordinary idle client is closed
            finally:
                with target.raw() as admin:
                    admin.call("CONFIG", "SET", "timeout", "0")


def test_a_monitor_that_does_not_read_is_disconnected_at_the_output_limit(server, real_redis):
    for target in (server, real_redis):
        with target.raw() as admin, config_set(admin, "client-output-buffer-limit",
                                               "normal 1mb 0 0"):
            monitor = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            monitor.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            monitor.settimeout(10)
            monitor.connect(("127.0.0.1", target.port))
            monitor.sendall(encode_command("MONITOR"))
            acknowledged = b""
            while acknowledged != b"+OK\r\n":  # a monitor before the first SET
                chunk = monitor.recv(5 - len(acknowledged))
                assert chunk, "closed before MONITOR's reply"
                acknowledged += chunk
            value = "v" * 100_000
            for _ in range(100):  # 10 MB of lines, which the monitor does not read
                assert admin.call("SET", "k", value) == "OK"
            received = 0
            while True:  # what the socket buffers held, then the close
                chunk = monitor.recv(1 << 20)
                if not chunk:
                    break
                received += len(chunk)
            assert received < 9_000_000
            monitor.close()
