"""Connection-level behaviour: AUTH, SELECT, QUIT, RESET, CLIENT LIST/KILL/SETNAME, maxclients,
idle timeout, and command errors (unknown command, arity) that leave the connection usable.

Error texts are Redis 7.0.15's exact words.
"""

from __future__ import annotations

import time

import pytest
import redis

from e2e_support import ErrorReply, Verbatim, parse_client_list, wait_until

NOAUTH = ErrorReply("NOAUTH Authentication required.")
WRONGPASS = ErrorReply("WRONGPASS invalid username-password pair or user is disabled.")
NOAUTH_HELLO = ErrorReply(
    "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
    "HELLO AUTH <user> <pass> option can be used to authenticate the client and select the "
    "RESP protocol version at the same time"
)


# AUTH --------------------------------------------------------------------------------------------


@pytest.fixture
def auth_server(server_factory):
    return server_factory("--requirepass", "s3cret")


def test_auth_required_before_commands(auth_server):
    conn = auth_server.raw()
    assert conn.call("GET", "k") == NOAUTH
    assert conn.call("PING") == NOAUTH
    assert conn.call("SET", "k", "v") == NOAUTH
    assert conn.call("AUTH", "wrong") == WRONGPASS
    assert conn.call("AUTH", "default", "wrong") == WRONGPASS
    assert conn.call("AUTH", "nobody", "s3cret") == WRONGPASS
    assert conn.call("GET", "k") == NOAUTH
    assert conn.call_raw("AUTH", "s3cret") == b"+OK\r\n"
    assert conn.call_raw("SET", "k", "v") == b"+OK\r\n"
    assert conn.call("GET", "k") == b"v"


def test_auth_with_username_default(auth_server):
    conn = auth_server.raw()
    assert conn.call_raw("AUTH", "default", "s3cret") == b"+OK\r\n"
    assert conn.call_raw("PING") == b"+PONG\r\n"


def test_hello_auth(auth_server):
    conn = auth_server.raw()
    assert conn.call("HELLO", "3") == NOAUTH_HELLO
    assert conn.call("HELLO") == NOAUTH_HELLO
    assert conn.call("HELLO", "3", "AUTH", "default", "wrong") == WRONGPASS
    conn.send_command("HELLO", "3", "AUTH", "default", "s3cret")
    hello, raw = conn.read_reply_raw()
    assert raw.startswith(b"%7\r\n")
    assert hello[b"proto"] == 3
    assert conn.call_raw("GET", "missing") == b"_\r\n"


def test_reset_drops_authentication(auth_server):
    conn = auth_server.raw()
    conn.call("AUTH", "s3cret")
    assert conn.call_raw("RESET") == b"+RESET\r\n"
    assert conn.call("PING") == NOAUTH


def test_redis_py_auth(auth_server):
    assert auth_server.client(password="s3cret").ping() is True
    with pytest.raises(redis.AuthenticationError):
        auth_server.client().get("k")
    # redis-py 4.3 maps NOAUTH to AuthenticationError but leaves WRONGPASS a ResponseError.
    with pytest.raises(redis.ResponseError, match="^WRONGPASS invalid username-password pair"):
        auth_server.client(password="wrong").ping()


def test_auth_errors_without_requirepass(server):
    conn = server.raw()
    assert conn.call("AUTH", "x") == ErrorReply(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?"
    )
    assert conn.call("AUTH") == ErrorReply("ERR wrong number of arguments for 'auth' command")
    assert conn.call("AUTH", "a", "b", "c") == ErrorReply("ERR syntax error")
    assert conn.call_raw("PING") == b"+PONG\r\n"


def test_config_set_requirepass_applies_to_new_connections(server):
    admin = server.raw()
    assert admin.call_raw("CONFIG", "SET", "requirepass", "later") == b"+OK\r\n"
    assert admin.call_raw("PING") == b"+PONG\r\n"  # already-connected clients stay logged in
    fresh = server.raw()
    assert fresh.call("PING") == NOAUTH
    assert fresh.call_raw("AUTH", "later") == b"+OK\r\n"


# SELECT ------------------------------------------------------------------------------------------


def test_select_isolates_databases(server):
    conn = server.raw()
    conn.call("SET", "k", "in-db0")
    assert conn.call_raw("SELECT", "1") == b"+OK\r\n"
    assert conn.call("GET", "k") is None
    assert conn.call("DBSIZE") == 0
    conn.call("SET", "k", "in-db1")
    conn.call("SET", "other", "x")
    assert conn.call("DBSIZE") == 2
    assert conn.call_raw("SELECT", "15") == b"+OK\r\n"
    assert conn.call("EXISTS", "k") == 0
    assert conn.call_raw("SELECT", "0") == b"+OK\r\n"
    assert conn.call("GET", "k") == b"in-db0"
    assert conn.call("DBSIZE") == 1
    assert server.client(db=1).get("k") == b"in-db1"
    # FLUSHDB only empties the selected database.
    assert conn.call_raw("FLUSHDB") == b"+OK\r\n"
    assert server.client(db=1).dbsize() == 2


def test_select_errors(server):
    conn = server.raw()
    conn.call("SELECT", "3")
    assert conn.call("SELECT", "16") == ErrorReply("ERR DB index is out of range")
    assert conn.call("SELECT", "-1") == ErrorReply("ERR DB index is out of range")
    # Redis 7.0.15 answers non-integers with the generic integer error (older Redis said
    # "ERR invalid DB index").
    assert conn.call("SELECT", "abc") == ErrorReply("ERR value is not an integer or out of range")
    assert conn.call("SELECT", "1.5") == ErrorReply("ERR value is not an integer or out of range")
    assert conn.call("SELECT") == ErrorReply("ERR wrong number of arguments for 'select' command")
    # A failed SELECT keeps the current database.
    assert parse_client_list(conn.call("CLIENT", "INFO"))[0]["db"] == "3"


def test_databases_directive(server_factory):
    server = server_factory("--databases", "4")
    conn = server.raw()
    assert conn.call_raw("SELECT", "3") == b"+OK\r\n"
    assert conn.call("SELECT", "4") == ErrorReply("ERR DB index is out of range")


# QUIT and RESET ----------------------------------------------------------------------------------


def test_quit_replies_ok_and_closes(server):
    conn = server.raw()
    conn.send(b"SET before 1\r\nQUIT\r\nSET after 1\r\n")
    assert conn.read_until_closed(timeout=5) == b"+OK\r\n+OK\r\n"
    check = server.raw()
    assert check.call("EXISTS", "before", "after") == 1


def test_reset_restores_connection_defaults(server):
    conn = server.raw()
    conn.call("SELECT", "2")
    conn.call("CLIENT", "SETNAME", "named")
    conn.call("HELLO", "3")
    assert conn.call_raw("RESET") == b"+RESET\r\n"
    assert conn.call_raw("GET", "missing") == b"$-1\r\n"  # back to RESP2
    assert conn.call("CLIENT", "GETNAME") is None
    info = parse_client_list(conn.call("CLIENT", "INFO"))[0]
    assert info["db"] == "0" and info["resp"] == "2" and info["name"] == ""


# Command errors ----------------------------------------------------------------------------------


def test_unknown_command_error_text(server):
    conn = server.raw()
    expected = ErrorReply("ERR unknown command 'foo', with args beginning with: 'a' 'b' ")
    assert conn.call("foo", "a", "b") == expected
    conn.send(b"foo a b\r\n")
    assert conn.read_reply() == expected
    assert conn.call("foo") == ErrorReply("ERR unknown command 'foo', with args beginning with: ")
    assert conn.call_raw("PING") == b"+PONG\r\n"


def test_unknown_command_error_truncates_long_arguments(server):
    conn = server.raw()
    # Redis quotes arguments while the list is shorter than 128 bytes, each cut to fit.
    reply = conn.call("nosuchcommand", "x" * 100, "y" * 100, "z")
    assert reply == ErrorReply(
        "ERR unknown command 'nosuchcommand', with args beginning with: "
        f"'{'x' * 100}' '{'y' * 25}' "
    )
    assert conn.call("c" * 200) == ErrorReply(
        f"ERR unknown command '{'c' * 128}', with args beginning with: "
    )


@pytest.mark.parametrize(
    "command, name",
    [
        (["GET"], "get"),
        (["GET", "a", "b"], "get"),
        (["set", "k"], "set"),
        (["ECHO"], "echo"),
        (["PING", "a", "b"], "ping"),
        (["INCRBY", "k"], "incrby"),
        (["DEL"], "del"),
        (["EXISTS"], "exists"),
        (["DBSIZE", "x"], "dbsize"),
        (["CONFIG", "GET"], "config|get"),
        (["CONFIG", "SET", "maxclients"], "config|set"),
        (["CLIENT", "SETNAME"], "client|setname"),
        (["CONFIG"], "config"),
    ],
)
def test_wrong_arity_error_text(server, command, name):
    conn = server.raw()
    assert conn.call(*command) == ErrorReply(f"ERR wrong number of arguments for '{name}' command")
    assert conn.call_raw("PING") == b"+PONG\r\n"


def test_unknown_subcommand_error_text(server):
    conn = server.raw()
    assert conn.call("CONFIG", "FOO") == ErrorReply(
        "ERR unknown subcommand 'FOO'. Try CONFIG HELP."
    )
    assert conn.call("CLIENT", "foo") == ErrorReply(
        "ERR unknown subcommand 'foo'. Try CLIENT HELP."
    )
    assert conn.call_raw("PING") == b"+PONG\r\n"


def test_connection_stays_usable_after_errors(server):
    client = server.client()
    client.set("k", "v")
    for bad in (["nosuch"], ["GET"], ["INCR", "k"], ["SET", "k", "v", "EX", "0"], ["SELECT", "99"]):
        with pytest.raises(redis.ResponseError):
            client.execute_command(*bad)
        assert client.get("k") == b"v"
    assert client.ping() is True


# CLIENT ------------------------------------------------------------------------------------------


def _client_ids(admin) -> set[int]:
    return {int(entry["id"]) for entry in parse_client_list(admin.call("CLIENT", "LIST"))}


def test_client_setname_shows_in_client_list(server):
    named = server.client()
    assert named.client_setname("alpha") is True
    assert named.client_getname() == "alpha"
    admin = server.raw()
    entries = {int(e["id"]): e for e in parse_client_list(admin.call("CLIENT", "LIST"))}
    entry = entries[named.client_id()]
    assert entry["name"] == "alpha"
    assert entry["addr"].startswith("127.0.0.1:")
    assert entry["laddr"] == f"127.0.0.1:{server.port}"
    assert admin.call("CLIENT", "SETNAME", "a b") == ErrorReply(
        "ERR Client names cannot contain spaces, newlines or special characters."
    )


def test_client_list_fields_and_filters(server):
    admin = server.raw()
    admin.call("SELECT", "5")
    own = parse_client_list(admin.call("CLIENT", "INFO"))[0]
    for field in ("id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "cmd", "resp"):
        assert field in own
    assert own["db"] == "5"
    assert own["cmd"] == "client|info"
    other = server.raw()
    other_id = other.call("CLIENT", "ID")
    listed = parse_client_list(admin.call("CLIENT", "LIST", "ID", other_id))
    assert [int(entry["id"]) for entry in listed] == [other_id]
    normal = parse_client_list(admin.call("CLIENT", "LIST", "TYPE", "normal"))
    normal_ids = {int(entry["id"]) for entry in normal}
    assert {int(own["id"]), other_id} <= normal_ids
    assert admin.call("CLIENT", "LIST", "TYPE", "pubsub") in (b"", Verbatim(b""))


def test_client_kill_by_id(server):
    admin = server.raw()
    # A bare redis-py Connection: a Redis client's pool would silently reconnect instead.
    victim = redis.Connection(host="127.0.0.1", port=server.port, socket_timeout=10)
    victim.send_command("CLIENT", "ID")
    victim_id = victim.read_response()
    bystander = server.client()
    assert bystander.ping() is True

    assert admin.call("CLIENT", "KILL", "ID", victim_id) == 1
    wait_until(
        lambda: victim_id not in _client_ids(admin), 5, message="victim to leave CLIENT LIST"
    )
    with pytest.raises(redis.ConnectionError):
        victim.send_command("PING")
        victim.read_response()
    victim.disconnect()
    assert bystander.ping() is True
    assert admin.call("CLIENT", "KILL", "ID", victim_id) == 0


def test_client_kill_by_addr(server):
    admin = server.raw()
    new_style = server.raw()
    old_style = server.raw()
    new_id = new_style.call("CLIENT", "ID")
    old_id = old_style.call("CLIENT", "ID")
    addrs = {int(e["id"]): e["addr"] for e in parse_client_list(admin.call("CLIENT", "LIST"))}

    assert admin.call("CLIENT", "KILL", "ADDR", addrs[new_id]) == 1
    assert new_style.read_until_closed(timeout=5) == b""
    assert admin.call_raw("CLIENT", "KILL", addrs[old_id]) == b"+OK\r\n"  # pre-2.8.12 form
    assert old_style.read_until_closed(timeout=5) == b""
    assert admin.call("CLIENT", "KILL", addrs[old_id]) == ErrorReply("ERR No such client")
    assert admin.call("CLIENT", "KILL", "ADDR", "1.2.3.4:5") == 0


def test_client_kill_skips_self_by_default(server):
    conn = server.raw()
    own_id = conn.call("CLIENT", "ID")
    assert conn.call("CLIENT", "KILL", "ID", own_id) == 0
    assert conn.call_raw("PING") == b"+PONG\r\n"
    assert conn.call("CLIENT", "KILL", "ID", own_id, "SKIPME", "no") == 1
    assert conn.read_until_closed(timeout=5) == b""


def test_client_kill_errors(server):
    conn = server.raw()
    assert conn.call("CLIENT", "KILL", "ID", "0") == ErrorReply(
        "ERR client-id should be greater than 0"
    )
    assert conn.call("CLIENT", "KILL", "FOO", "bar") == ErrorReply("ERR syntax error")
    assert conn.call_raw("PING") == b"+PONG\r\n"


# Limits ------------------------------------------------------------------------------------------


def test_maxclients(server_factory):
    server = server_factory("--maxclients", "3")
    first = server.raw()
    # Wait until the start-up PING probe's connection is gone, so only ours count.
    wait_until(
        lambda: len(parse_client_list(first.call("CLIENT", "LIST"))) == 1,
        5,
        message="only one client connected",
    )
    others = [server.raw(), server.raw()]
    for conn in others:
        assert conn.call_raw("PING") == b"+PONG\r\n"

    refused = server.raw()
    assert refused.read_until_closed(timeout=5) == b"-ERR max number of clients reached\r\n"
    # redis-py turns the error into a ConnectionError. Read it without sending anything: a request
    # sent to the closed socket could draw a reset that discards the error before it is read.
    refused_py = redis.Connection(host="127.0.0.1", port=server.port, socket_timeout=10)
    refused_py.connect()
    with pytest.raises(redis.ConnectionError, match="^max number of clients reached$"):
        refused_py.read_response()
    refused_py.disconnect()

    others[0].close()
    wait_until(
        lambda: len(parse_client_list(first.call("CLIENT", "LIST"))) == 2,
        5,
        message="the closed client to be released",
    )
    assert server.raw().call_raw("PING") == b"+PONG\r\n"
    assert first.call("CONFIG", "GET", "maxclients") == [b"maxclients", b"3"]


def test_idle_timeout_closes_idle_clients_only(server_factory):
    server = server_factory("--timeout", "1")
    idle = server.raw()
    busy = server.raw()
    started = time.monotonic()
    deadline = started + 6
    idle.sock.settimeout(0.3)
    closed_after = None
    while time.monotonic() < deadline and closed_after is None:
        assert busy.call_raw("PING") == b"+PONG\r\n"
        try:
            if idle.sock.recv(16) == b"":
                closed_after = time.monotonic() - started
        except TimeoutError:
            pass
    assert closed_after is not None, "idle client was not closed within 6 s with timeout 1"
    assert closed_after >= 0.9
    assert busy.call_raw("PING") == b"+PONG\r\n"


def _query_buffer(client, name):
    """(qbuf, qbuf-free, argv-mem) of the connection called `name`, from CLIENT LIST."""
    for entry in parse_client_list(client.execute_command("CLIENT", "LIST")):
        if entry["name"] == name:
            return int(entry["qbuf"]), int(entry["qbuf-free"]), int(entry["argv-mem"])
    raise AssertionError(f"no client named {name}")


@pytest.mark.parametrize("command", [("CLIENT", "LIST"), ("CLIENT", "INFO")])
def test_running_command_shows_its_query_buffer_as_redis(server, real_redis, command):
    # The running command is still in the buffer: qbuf counts its 26 bytes, argv-mem its
    # arguments; the free space is the allocation's (sizes differ between allocators).
    for target in (server, real_redis):
        reply = target.client().execute_command(*command)
        text = reply if isinstance(reply, str) else reply.decode()
        fields = dict(item.split("=", 1) for item in text.split() if "=" in item)
        assert (fields["qbuf"], fields["argv-mem"]) == ("26", "10"), target
        assert int(fields["qbuf-free"]) >= 16384 - 26


def test_query_buffer_is_freed_after_two_idle_seconds(server):
    # Redis's querybuf test: 16 KB (at most 32 KB) after a read, nothing once idle for 2 s.
    watcher, idle = server.client(), server.client()
    idle.execute_command("CLIENT", "SETNAME", "idle")
    qbuf, free, argv = _query_buffer(watcher, "idle")
    assert (qbuf, argv) == (0, 0)
    assert 16384 <= qbuf + free < 32768
    wait_until(lambda: sum(_query_buffer(watcher, "idle")) == 0, 10,
               message="the idle client's query buffer to be freed")


def test_big_query_buffer_shrinks_while_busy(server):
    # Redis's querybuf test: a 400 KB request grows the buffer; later small requests need far
    # less, and the buffer shrinks to their peak (not to nothing) while the client stays busy.
    watcher, busy = server.client(), server.client()
    busy.execute_command("CLIENT", "SETNAME", "busy")
    busy.set("x", "A" * 400_000)
    grown = sum(_query_buffer(watcher, "busy"))
    assert grown > 32768

    def shrunk():
        busy.set("x", "A" * 100)
        return 0 < sum(_query_buffer(watcher, "busy")) < grown

    wait_until(shrunk, 10, interval=0.01, message="the busy client's query buffer to shrink")
