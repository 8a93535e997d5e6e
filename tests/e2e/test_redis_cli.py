"""Debian's redis-cli against the server: one-shot commands, RESP3 (-3), and an interactive
session in a pseudo-terminal, where redis-cli builds its argument hints from COMMAND DOCS.

Every redis-cli run has a timeout; the interactive one is killed by PID if it does not exit.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import termios
import time

import pytest

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
CLI_TIMEOUT = 20

pytestmark = pytest.mark.skipif(not os.access(REDIS_CLI, os.X_OK), reason="no redis-cli")


def _cli(server, *args: str, stdin: bytes | None = None) -> str:
    result = subprocess.run(
        [REDIS_CLI, "-h", "127.0.0.1", "-p", str(server.port), *args],
        input=stdin,
        capture_output=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.decode(errors="replace")


def test_one_shot_commands(server):
    assert _cli(server, "ping") == "PONG\n"
    assert _cli(server, "set", "greeting", "hello world") == "OK\n"
    assert _cli(server, "get", "greeting") == "hello world\n"
    assert _cli(server, "--no-raw", "get", "missing") == "(nil)\n"
    assert _cli(server, "incrby", "n", "5") == "5\n"
    assert "ERR unknown command 'nosuch'" in _cli(server, "nosuch")


def test_info(server):
    output = _cli(server, "info")
    assert "redis_version:7.0.15" in output
    assert "# Keyspace" in output


def test_resp3_hello(server):
    output = _cli(server, "-3", "--no-raw", "hello")
    assert '"server" => "redis"' in output
    assert '"proto" => (integer) 3' in output
    assert '"modules" => (empty array)' in output


def test_piped_commands(server):
    output = _cli(server, stdin=b"set a 1\nincr a\nget a\nselect 1\ndbsize\n")
    assert output.split("\n") == ["OK", "2", "2", "OK", "0", ""]


def _read_available(fd: int, seconds: float) -> bytes:
    data = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            data += chunk
    return data


def test_interactive_session_with_hints(server):
    pid, fd = pty.fork()
    if pid == 0:  # child: become redis-cli on the terminal
        try:
            os.environ["TERM"] = "xterm"
            os.execv(REDIS_CLI, [REDIS_CLI, "-h", "127.0.0.1", "-p", str(server.port)])
        finally:
            os._exit(127)
    try:
        # A window size, or linenoise asks the terminal for the cursor position and waits.
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        screen = _read_available(fd, 1.0)
        assert f"127.0.0.1:{server.port}>".encode() in screen
        os.write(fd, b"set ")
        hint = _read_available(fd, 0.5)
        os.write(fd, b"foo bar\r")
        screen = _read_available(fd, 0.5)
        os.write(fd, b"get foo\r")
        screen += _read_available(fd, 0.5)
        os.write(fd, b"quit\r")
        screen += _read_available(fd, 1.0)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    assert b"OK" in screen and b'"bar"' in screen
    assert b"ERR" not in screen
    # redis-cli 7.0 shows the argument syntax from COMMAND DOCS as a hint after "set ".
    assert b"key value" in hint, hint
