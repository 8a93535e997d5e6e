"""Process lifecycle: clean shutdown on SIGTERM/SIGINT and SHUTDOWN, start-up errors, --version.

Every wait is bounded; only processes started by these tests are signalled.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time

import pytest

from e2e_support import LOCALHOST, RespConnection, free_port

EXIT_TIMEOUT = 10.0
EXIT_LOG = re.compile(r"ready to exit|exiting", re.IGNORECASE)


def _assert_port_closed(port: int) -> None:
    with pytest.raises(OSError):
        RespConnection(port, timeout=2).call("PING")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_shuts_down_cleanly(server, signum):
    conn = server.raw()
    conn.call("SET", "k", "v")
    started = time.monotonic()
    server.expect_exit = True
    server.proc.send_signal(signum)
    assert server.wait_exit(EXIT_TIMEOUT) == 0
    assert time.monotonic() - started < EXIT_TIMEOUT
    assert conn.read_until_closed(timeout=5) == b""
    _assert_port_closed(server.port)
    log = server.log_text()
    assert re.search(signum.name, log), log
    assert EXIT_LOG.search(log), f"no exit message in the log:\n{log}"


@pytest.mark.parametrize("args", [["SHUTDOWN"], ["SHUTDOWN", "NOSAVE"]], ids=" ".join)
def test_shutdown_command(server, args):
    conn = server.raw()
    server.expect_exit = True
    conn.send_command(*args)
    assert conn.read_until_closed(timeout=EXIT_TIMEOUT) == b""  # no reply on success
    assert server.wait_exit(EXIT_TIMEOUT) == 0
    assert EXIT_LOG.search(server.log_text())


def test_shutdown_syntax_error_keeps_running(server):
    conn = server.raw()
    assert conn.call_raw("SHUTDOWN", "BOGUS") == b"-ERR syntax error\r\n"
    assert conn.call_raw("PING") == b"+PONG\r\n"
    assert server.alive()


def _run_to_exit(argv, cwd, timeout=EXIT_TIMEOUT) -> subprocess.CompletedProcess:
    """Runs a server command line that is expected to exit by itself (bounded)."""
    return subprocess.run(
        argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False
    )


def test_bad_config_directive_stops_startup(server_binary, tmp_path):
    config = tmp_path / "bad.conf"
    port = free_port()
    config.write_text(f"port {port}\nbind {LOCALHOST}\nmaxclients abc\n")
    result = _run_to_exit([str(server_binary), str(config)], tmp_path)
    output = (result.stdout + result.stderr).decode(errors="replace")
    assert result.returncode != 0
    assert "maxclients abc" in output
    assert re.search(r"bad\.conf:3\b|at line 3\b", output), output
    assert "argument couldn't be parsed into an integer" in output


def test_unknown_command_line_directive_stops_startup(server_binary, tmp_path):
    result = _run_to_exit([str(server_binary), "--port", str(free_port()), "--nosuch", "1"],
                          tmp_path)
    output = (result.stdout + result.stderr).decode(errors="replace")
    assert result.returncode != 0
    assert "Bad directive or wrong number of arguments" in output


@pytest.mark.gigakv_only
def test_version_and_help(server_binary, tmp_path):
    version = _run_to_exit([str(server_binary), "--version"], tmp_path)
    assert version.returncode == 0
    assert b"redis_version=7.0.15" in version.stdout
    help_text = _run_to_exit([str(server_binary), "--help"], tmp_path)
    assert help_text.returncode == 0
    assert b"config-file" in help_text.stdout and b"--port" in help_text.stdout


def test_startup_log_banner(server):
    log = server.log_text()
    assert str(server.pid) in log
    assert str(server.port) in log
    assert re.search(r"ready to accept connections", log, re.IGNORECASE), log
