"""CONFIG GET/SET/REWRITE/RESETSTAT end to end, including a rewrite-and-restart round trip.

Error texts and reply shapes are Redis 7.0.15's.
"""

from __future__ import annotations

import fnmatch

import pytest

from e2e_support import ErrorReply, LOCALHOST, RespConnection, free_port, parse_info


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
