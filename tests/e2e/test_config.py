"""CONFIG GET/SET/REWRITE/RESETSTAT end to end, including a rewrite-and-restart round trip.

Error texts and reply shapes are Redis 7.0.15's.
"""

from __future__ import annotations

import fnmatch
import os
import signal
import subprocess
from pathlib import Path

import pytest

from e2e_support import (ConnectionClosed, ErrorReply, LOCALHOST, RespConnection, ServerProcess,
                         build_argv, free_port, parse_info, wait_until)


def _config_get(conn, *patterns) -> dict[bytes, bytes]:
    reply = conn.call("CONFIG", "GET", *patterns)
    assert isinstance(reply, list) and len(reply) % 2 == 0, reply
    return dict(zip(reply[0::2], reply[1::2]))


def _write_config(path, port, workdir):
    lines = [
        "# gigakv e2e test configuration",
        f"port {port}",
        f"bind {LOCALHOST}",
        f"dir {workdir}",
        "",
        "# limits",
        "maxclients 100",
        "timeout 0",
        "loglevel notice",
    ]
    path.write_text("\n".join(lines) + "\n")


def test_config_rewrite_round_trip(server_factory, tmp_path):
    port = free_port()
    config = tmp_path / "server.conf"
    _write_config(config, port, tmp_path)
    server = server_factory(config_file=config, listen_args=False, port=port)

    conn = server.raw()
    assert _config_get(conn, "maxclients") == {b"maxclients": b"100"}
    assert conn.call_raw(
        "CONFIG", "SET", "maxclients", "50", "timeout", "30", "loglevel", "warning"
    ) == b"+OK\r\n"
    assert conn.call_raw("CONFIG", "REWRITE") == b"+OK\r\n"

    text = config.read_text()
    lines = text.splitlines()
    assert "# gigakv e2e test configuration" in lines  # comments survive a rewrite
    assert "# limits" in lines
    for directive, value in (("maxclients", "50"), ("timeout", "30"), ("loglevel", "warning")):
        matching = [line for line in lines if line.split(" ", 1)[0] == directive]
        assert matching == [f"{directive} {value}"], text
    assert f"port {port}" in lines

    conn.close()
    assert server.stop() == 0
    restarted = server_factory(config_file=config, listen_args=False, port=port)
    conn = restarted.raw()
    assert _config_get(conn, "maxclients", "timeout", "loglevel") == {
        b"maxclients": b"50",
        b"timeout": b"30",
        b"loglevel": b"warning",
    }
    info = parse_info(conn.call("INFO", "server"))["Server"]
    assert info["config_file"] == str(config)


def test_config_rewrite_without_config_file(server):
    assert server.raw().call("CONFIG", "REWRITE") == ErrorReply(
        "ERR The server is running without a config file"
    )


def test_config_get_glob_patterns(server):
    conn = server.raw()
    everything = _config_get(conn, "*")
    assert len(everything) >= 20
    for name in (b"port", b"bind", b"maxclients", b"timeout", b"databases", b"requirepass",
                 b"dir", b"loglevel", b"proto-max-bulk-len", b"client-query-buffer-limit",
                 b"maxmemory", b"hz", b"io-threads", b"tcp-keepalive", b"tcp-backlog"):
        assert name in everything, name
    assert everything[b"port"] == str(server.port).encode()
    assert everything[b"databases"] == b"16"

    max_star = _config_get(conn, "max*")
    assert {b"maxclients", b"maxmemory", b"maxmemory-policy"} <= set(max_star)
    assert all(fnmatch.fnmatchcase(name.decode(), "max*") for name in max_star)
    assert {name: everything[name] for name in max_star} == max_star

    assert _config_get(conn, "maxclient?") == {b"maxclients": everything[b"maxclients"]}
    assert _config_get(conn, "*-max-*-len") == {
        b"proto-max-bulk-len": everything[b"proto-max-bulk-len"]
    }
    assert _config_get(conn, "port", "bind", "nosuch") == {
        b"port": everything[b"port"],
        b"bind": everything[b"bind"],
    }
    assert _config_get(conn, "nosuch*") == {}
    # Exact (non-glob) names are matched case-insensitively and echoed as given.
    assert _config_get(conn, "MAXCLIENTS") == {b"MAXCLIENTS": everything[b"maxclients"]}


def test_config_set_several_pairs_and_get(server):
    conn = server.raw()
    assert conn.call_raw("CONFIG", "SET", "timeout", "7", "maxclients", "77", "hz", "20") == (
        b"+OK\r\n"
    )
    assert _config_get(conn, "timeout", "maxclients", "hz") == {
        b"timeout": b"7",
        b"maxclients": b"77",
        b"hz": b"20",
    }
    assert conn.call_raw("CONFIG", "SET", "TIMEOUT", "8") == b"+OK\r\n"
    assert _config_get(conn, "timeout") == {b"timeout": b"8"}
    assert conn.call_raw("CONFIG", "SET", "maxmemory", "1gb") == b"+OK\r\n"
    assert _config_get(conn, "maxmemory") == {b"maxmemory": b"1073741824"}


# (CONFIG arguments, the exact error reply)
CONFIG_SET_ERRORS = [
    (("SET", "foo", "bar"), "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"),
    (("SET", "maxclients", "abc"),
     "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be "
     "parsed into an integer"),
    (("SET", "loglevel", "bogus"),
     "ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one "
     "of the following: debug, verbose, notice, warning"),
    (("SET", "timeout", "1", "timeout", "2"),
     "ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter"),
    (("SET", "daemonize", "yes"),
     "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable "
     "config"),
    (("SET", "proto-max-bulk-len", "1000"),
     "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument "
     "must be between 1048576 and 9223372036854775807 inclusive"),
    (("SET", "maxclients", "5", "timeout"), "ERR syntax error"),
    (("SET", "maxclients"), "ERR wrong number of arguments for 'config|set' command"),
    (("RESETSTAT", "x"), "ERR wrong number of arguments for 'config|resetstat' command"),
]


def test_config_set_errors(server):
    conn = server.raw()
    for args, error in CONFIG_SET_ERRORS:
        assert conn.call("CONFIG", *args) == ErrorReply(error), args


def test_config_set_is_atomic(server):
    conn = server.raw()
    before = _config_get(conn, "maxclients", "timeout")
    reply = conn.call("CONFIG", "SET", "maxclients", "50", "timeout", "9", "loglevel", "bogus")
    assert isinstance(reply, ErrorReply)
    assert _config_get(conn, "maxclients", "timeout") == before


def test_config_set_port_rebinds_live(server):
    # Redis 7.0 lets CONFIG SET change the listening port.
    conn = server.raw()
    new_port = free_port()
    assert conn.call_raw("CONFIG", "SET", "port", str(new_port)) == b"+OK\r\n"
    with RespConnection(new_port) as moved:
        assert moved.call_raw("PING") == b"+PONG\r\n"
    assert conn.call_raw("PING") == b"+PONG\r\n"  # existing connections are kept
    with pytest.raises(OSError):
        RespConnection(server.port, timeout=2).call("PING")
    server.port = new_port  # so teardown and later checks use the new port


def test_config_resetstat(server):
    conn = server.raw()
    for _ in range(5):
        conn.call("PING")
    conn.call("nosuchcommand")
    stats = parse_info(conn.call("INFO", "stats"))["Stats"]
    assert int(stats["total_commands_processed"]) >= 6
    assert int(stats["total_error_replies"]) >= 1
    assert conn.call_raw("CONFIG", "RESETSTAT") == b"+OK\r\n"
    stats = parse_info(conn.call("INFO", "stats"))["Stats"]
    assert int(stats["total_error_replies"]) == 0
    assert int(stats["total_commands_processed"]) <= 1
    commandstats = parse_info(conn.call("INFO", "commandstats")).get("Commandstats", {})
    assert set(commandstats) <= {"cmdstat_info", "cmdstat_config|resetstat"}


# Values that differ from redis-server's on purpose or by the way the tests start each server.
_DIFFERENT_ON_PURPOSE = {
    b"port", b"dir",           # each server has its own
    b"io-threads",             # gigakv: one I/O thread per core by default
    b"save",                   # the reference redis-server runs with save "" (checked below)
}
# gigakv's own directives (docs in server/config.cc).
_GIGAKV_ONLY = {b"shards", b"set-max-listpack-entries", b"set-max-listpack-value"}


def test_config_get_lists_every_redis_directive_with_its_default(server, real_redis):
    """Every directive Redis 7.0 has is known to gigakv, with Redis's default value, so that a
    redis.conf loads unchanged and tools reading CONFIG GET * find what they expect."""
    ours = _config_get(server.raw(), "*")
    theirs = _config_get(real_redis.raw(), "*")
    assert set(theirs) - set(ours) == set()
    assert set(ours) - set(theirs) <= _GIGAKV_ONLY
    different = {name: (ours[name], theirs[name]) for name in theirs
                 if name not in _DIFFERENT_ON_PURPOSE and ours[name] != theirs[name]}
    assert different == {}
    # Redis 7.0's compiled-in save points (the reference server is started without them).
    assert ours[b"save"] == b"3600 1 300 100 60 10000"


# (directive, bad value) pairs whose CONFIG SET error must read as Redis's.
_BAD_VALUES = [
    ("active-expire-effort", "11"), ("active-expire-effort", "x"), ("activedefrag", "maybe"),
    ("appendfsync", "sometimes"), ("repl-backlog-size", "lots"), ("hz", "0x10"),
    ("notify-keyspace-events", "KQ"), ("latency-tracking-info-percentiles", "101"),
    ("latency-tracking-info-percentiles", "x"), ("maxmemory-clients", "101%"),
    ("maxmemory-clients", "-1"), ("oom-score-adj-values", "1 2 3000"),
    ("cluster-announce-hostname", "a_b"), ("lfu-log-factor", "-1"), ("tls-auth-clients", "x"),
    ("unixsocketperm", "700"), ("cluster-enabled", "no"), ("replicaof", "no one"),
    ("shutdown-on-sigterm", "later"), ("acl-pubsub-default", "x"),
    ("notify-keyspace-events", "K E"), ("cluster-announce-hostname", "a b"), ("hz", "-1"),
    ("maxmemory-samples", "0"), ("save", "100"), ("save", "100 x"), ("save", "0 1"),
    ("save", "1 -1"), ("save", "1 2 3"), ("save", "100  1"), ("save", " 100 1"),
    ("save", "100 1 "),
]


def test_config_set_bad_values_fail_like_redis(server, real_redis):
    conn, reference = server.raw(), real_redis.raw()
    for name, value in _BAD_VALUES:
        expected = reference.call("CONFIG", "SET", name, value)
        assert isinstance(expected, ErrorReply), (name, value)
        assert conn.call("CONFIG", "SET", name, value) == expected, (name, value)


def test_failed_config_set_leaves_save_as_it_was_like_redis(server, real_redis):
    for conn in (server.raw(), real_redis.raw()):
        for before in ("100 1 200 2", ""):
            assert conn.call("CONFIG", "SET", "save", before) == "OK"
            reply = conn.call("CONFIG", "SET", "save", "10 1", "maxmemory-policy", "bogus")
            assert isinstance(reply, ErrorReply)
            assert _config_get(conn, "save") == {b"save": before.encode()}
        assert conn.call("CONFIG", "SET", "save", "") == "OK"


def test_config_set_normalizes_values_like_redis(server, real_redis):
    conn, reference = server.raw(), real_redis.raw()
    for name, value in [("notify-keyspace-events", "KEA"), ("notify-keyspace-events", "Kn$l"),
                        ("latency-tracking-info-percentiles", "50.0 99.99999"),
                        ("maxmemory-clients", "5%"), ("maxmemory-clients", "1mb"),
                        ("repl-backlog-size", "2mb"), ("lfu-decay-time", "3"),
                        ("oom-score-adj-values", "+5 007 -0"), ("maxmemory-clients", "0%"),
                        ("maxmemory-clients", ""), ("hz", "0"), ("hz", "501"), ("hz", "10"),
                        ("maxmemory-samples", "1000"), ("maxmemory-samples", "5"),
                        ("save", "+5 007 60 0"), ("save", "99999999999999999999 4294967297"),
                        ("save", "")]:
        assert conn.call("CONFIG", "SET", name, value) == reference.call("CONFIG", "SET", name,
                                                                          value)
        assert _config_get(conn, name) == _config_get(reference, name), (name, value)


def test_debian_redis_conf_loads(server_factory, tmp_path):
    """Debian's own redis.conf starts gigakv, once the paths of this machine are swapped for the
    test's: the directives it holds are all known."""
    stock = Path("/etc/redis/redis.conf")
    if not stock.is_file():
        pytest.skip("redis-server's /etc/redis/redis.conf is not installed")
    machine_specific = ("dir", "daemonize", "logfile", "pidfile", "port", "bind", "supervised",
                        "unixsocket", "include")
    lines = [line for line in stock.read_text().splitlines()
             if not line.strip().startswith(machine_specific)]
    port = free_port()
    config = tmp_path / "redis.conf"
    config.write_text("\n".join(lines + [f"port {port}", f"bind {LOCALHOST}",
                                         f"dir {tmp_path}"]) + "\n")
    server = server_factory(config_file=config, listen_args=False, port=port)
    conn = server.raw()
    assert conn.call("SET", "k", "v") == "OK"
    assert _config_get(conn, "hz", "lazyfree-lazy-user-del") == {
        b"hz": b"10", b"lazyfree-lazy-user-del": b"no"}


def test_daemonize_runs_in_the_background(server_binary, tmp_path):
    """daemonize yes: the launcher exits at once with 0, the daemon writes its pidfile and
    serves until SHUTDOWN."""
    port = free_port()
    pidfile = tmp_path / "gigakv.pid"
    launcher = subprocess.run(
        [str(server_binary), "--port", str(port), "--bind", LOCALHOST, "--dir", str(tmp_path),
         "--daemonize", "yes", "--pidfile", str(pidfile), "--logfile", str(tmp_path / "log")],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    assert launcher.returncode == 0, launcher.stderr
    pid = int(wait_until(lambda: pidfile.is_file() and pidfile.read_text().strip(), timeout=10))
    assert pid > 0
    try:
        conn = RespConnection(port)
        assert conn.call("PING") == "PONG"
        assert _config_get(conn, "daemonize") == {b"daemonize": b"yes"}
        assert os.getsid(pid) == pid  # leads its own session
        try:
            conn.call("SHUTDOWN")
        except (ConnectionClosed, OSError):
            pass  # The server closes the connection as it exits.
        wait_until(lambda: not _alive(pid), timeout=10, message="the daemon to exit")
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by init) counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_lazyfree_lazy_user_flush_makes_flushall_free_in_the_background(server):
    conn = server.raw()

    def lazyfreed():
        return int(parse_info(conn.call("INFO", "memory"))["Memory"]["lazyfreed_objects"])

    def fill():
        for i in range(100):
            conn.call("SET", f"k{i}", "v")

    fill()
    assert conn.call("FLUSHALL") == "OK"  # lazyfree-lazy-user-flush no: freed before the reply.
    assert conn.call("FLUSHDB") == "OK"
    assert lazyfreed() == 0
    assert conn.call("CONFIG", "SET", "lazyfree-lazy-user-flush", "yes") == "OK"
    fill()
    assert conn.call("FLUSHALL") == "OK"
    wait_until(lambda: lazyfreed() >= 100, 10, message="the flushed keys to be freed lazily")
    assert conn.call("DBSIZE") == 0
    before = lazyfreed()
    fill()
    assert conn.call("FLUSHDB", "SYNC") == "OK"  # An explicit mode wins.
    assert lazyfreed() == before


def test_supervised_systemd_notifies_readiness(server_binary, tmp_path):
    """supervised systemd: once serving, a READY=1 datagram reaches $NOTIFY_SOCKET (what a
    Type=notify unit waits for), and INFO says process_supervised:systemd."""
    import socket
    notify_path = str(tmp_path / "notify.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(notify_path)
    listener.settimeout(10)
    port = free_port()
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    with open(tmp_path / "log", "wb") as log:
        proc = subprocess.Popen(
            [str(server_binary), "--port", str(port), "--bind", LOCALHOST, "--dir", str(tmp_path),
             "--supervised", "systemd"], env=env, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT)
    try:
        messages = [listener.recv(4096)]
        while b"READY=1" not in messages[-1] and len(messages) < 10:
            messages.append(listener.recv(4096))  # Status lines may come first.
        assert b"READY=1" in messages[-1], messages
        conn = RespConnection(port)
        info = parse_info(conn.call("INFO", "server"))["Server"]
        assert info["process_supervised"] == "systemd"
        assert _config_get(conn, "supervised") == {b"supervised": b"systemd"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        listener.close()


def test_io_threads_default_follows_the_cpus_the_process_may_use(gigakv_binary, tmp_path, target):
    """Started under `taskset -c 0`, gigakv defaults to one I/O thread (two threads on one core
    would only take turns) and says so in its start-up line."""
    if target == "redis":
        pytest.skip("gigakv's own default")
    port = free_port()
    argv = ["taskset", "-c", "0", *build_argv(gigakv_binary, port, tmp_path, ["--save", ""])]
    server = ServerProcess(argv, port, tmp_path, tmp_path / "server.log")
    server.start()
    try:
        with server.raw() as conn:
            assert conn.call("CONFIG", "GET", "io-threads") == [b"io-threads", b"1"]
        assert "io-threads=1 (1 CPUs usable)" in server.log_text()
    finally:
        server.stop()
