"""HELLO and RESP3 reply types on the wire (raw sockets: Debian's redis-py 4.3.4 has no RESP3).

Checks the exact type bytes Redis 7.0 uses after HELLO 3 (map `%`, null `_`, verbatim `=`) and
that HELLO 2 switches back to the RESP2 shapes.
"""

from __future__ import annotations

from e2e_support import ErrorReply, RespMap, Verbatim, parse_client_list, parse_info

HELLO_FIELDS = [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]


def _check_hello_fields(fields: dict, proto: int, client_id: int) -> None:
    assert list(fields) == HELLO_FIELDS
    assert fields[b"server"] == b"redis"
    assert fields[b"version"] == b"7.0.15"
    assert fields[b"proto"] == proto
    assert fields[b"id"] == client_id
    assert fields[b"mode"] == b"standalone"
    assert fields[b"role"] == b"master"
    assert fields[b"modules"] == []


def test_hello_3_replies_with_a_resp3_map(server):
    conn = server.raw()
    client_id = conn.call("CLIENT", "ID")
    conn.send_command("HELLO", "3")
    hello, raw = conn.read_reply_raw()
    assert raw.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n")
    assert isinstance(hello, RespMap)
    _check_hello_fields(hello, 3, client_id)


def test_resp3_reply_types(server):
    conn = server.raw()
    conn.call("HELLO", "3")
    assert conn.call_raw("GET", "missing") == b"_\r\n"
    assert conn.call_raw("SET", "missing", "v", "NX", "GET") == b"_\r\n"
    assert conn.call_raw("SET", "k", "v") == b"+OK\r\n"
    assert conn.call_raw("GET", "k") == b"$1\r\nv\r\n"
    assert conn.call_raw("INCR", "n") == b":1\r\n"
    assert conn.call_raw("EXISTS", "k", "n", "nope") == b":2\r\n"
    assert conn.call_raw("CONFIG", "GET", "maxclients") == (
        b"%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n"
    )
    assert conn.call_raw("PING") == b"+PONG\r\n"
    assert conn.call_raw("ECHO", "hi") == b"$2\r\nhi\r\n"


def test_resp3_verbatim_strings_for_info_and_client_info(server):
    conn = server.raw()
    conn.call("HELLO", "3")
    conn.send_command("CLIENT", "INFO")
    client_info, raw = conn.read_reply_raw()
    assert raw.startswith(b"=") and raw[raw.index(b"\r\n") + 2 :].startswith(b"txt:")
    assert isinstance(client_info, Verbatim) and client_info.fmt == "txt"
    assert parse_client_list(client_info)[0]["resp"] == "3"

    conn.send_command("INFO", "server")
    info, raw = conn.read_reply_raw()
    assert raw.startswith(b"=")
    assert isinstance(info, Verbatim) and info.fmt == "txt"
    assert parse_info(info)["Server"]["redis_version"] == "7.0.15"


def test_hello_2_switches_back_to_resp2(server):
    conn = server.raw()
    client_id = conn.call("CLIENT", "ID")
    conn.call("HELLO", "3")
    assert conn.call_raw("GET", "missing") == b"_\r\n"
    conn.send_command("HELLO", "2")
    hello, raw = conn.read_reply_raw()
    assert raw.startswith(b"*14\r\n$6\r\nserver\r\n")
    _check_hello_fields(dict(zip(hello[0::2], hello[1::2])), 2, client_id)
    assert conn.call_raw("GET", "missing") == b"$-1\r\n"
    assert conn.call_raw("CONFIG", "GET", "maxclients") == (
        b"*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n"
    )
    assert conn.call_raw("CLIENT", "INFO").startswith(b"$")


def test_hello_without_version_keeps_protocol(server):
    conn = server.raw()
    hello = conn.call("HELLO")
    assert isinstance(hello, list) and hello[hello.index(b"proto") + 1] == 2
    conn.call("HELLO", "3")
    hello = conn.call("HELLO")
    assert isinstance(hello, RespMap) and hello[b"proto"] == 3


def test_hello_setname_and_errors(server):
    conn = server.raw()
    conn.call("HELLO", "3", "SETNAME", "resp3-client")
    assert conn.call("CLIENT", "GETNAME") == b"resp3-client"
    assert conn.call("HELLO", "4") == ErrorReply("NOPROTO unsupported protocol version")
    assert conn.call("HELLO", "1") == ErrorReply("NOPROTO unsupported protocol version")
    # A failed HELLO leaves the protocol alone.
    assert conn.call_raw("GET", "missing") == b"_\r\n"
