"""CLIENT PAUSE and CLIENT UNPAUSE end to end, each scenario run against gigakv and redis-server.

Pauses are long (10 s) and ended by CLIENT UNPAUSE, or short (300 ms) and simply waited out by
reading the reply; nothing asserts how long anything took. Every read has the connection's
timeout.
"""

from __future__ import annotations

import time

from e2e_support import ErrorReply, encode_command, parse_info


def _blocked_clients(conn) -> int:
    info = conn.call("INFO", "clients").decode()
    return int(next(line for line in info.splitlines()
                    if line.startswith("blocked_clients:")).split(":")[1])


def _wait_blocked(conn, count: int) -> None:
    for _ in range(500):
        if _blocked_clients(conn) == count:
            return
    raise AssertionError(f"blocked_clients never reached {count}")


def _write_pause_scenario(target) -> list:
    seen = []
    with target.raw() as writer, target.raw() as admin:
        assert admin.call("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        try:
            # Reads run; the SET waits, and so does the GET pipelined behind it.
            writer.send(encode_command("GET", "k") + encode_command("SET", "k", "v") +
                        encode_command("GET", "k"))
            seen.append(writer.read_reply())
            _wait_blocked(admin, 1)
            line = [entry for entry in admin.call("CLIENT", "LIST").decode().splitlines()
                    if "cmd=set" in entry]
            seen.append(len(line) == 1 and " flags=b " in line[0])
            seen.append(admin.call("GET", "k"))  # the SET has not run
            # MULTI runs; a queued write waits like any write.
            with target.raw() as transaction:
                transaction.send(encode_command("MULTI") + encode_command("SET", "m", "1"))
                seen.append(transaction.read_reply())
                _wait_blocked(admin, 2)
                assert admin.call("CLIENT", "UNPAUSE") == "OK"
                seen.append(transaction.read_reply())
                seen.append(transaction.call("EXEC"))
            seen.append(writer.read_reply())
            seen.append(writer.read_reply())
            seen.append(_blocked_clients(admin))
        finally:
            admin.call("CLIENT", "UNPAUSE")
    return seen


def test_write_pause_holds_writes_until_unpause(server, real_redis):
    ours = _write_pause_scenario(server)
    assert ours == _write_pause_scenario(real_redis)
    assert ours == [None, True, None, "OK", "QUEUED", ["OK"], "OK", b"v", 0]


def test_all_pause_holds_every_command_until_it_ends(server, real_redis):
    for target in (server, real_redis):
        with target.raw() as client, target.raw() as admin:
            assert admin.call("CLIENT", "PAUSE", "300") == "OK"  # ALL by default
            # Both wait for the pause's end, CLIENT UNPAUSE included.
            client.send_command("PING")
            admin.send_command("CLIENT", "UNPAUSE")
            assert client.read_reply() == "PONG"
            assert admin.read_reply() == "OK"
            assert admin.call("CLIENT", "PAUSE", "0", "ALL") == "OK"  # pauses nothing
            assert client.call("SET", "after", "pause") == "OK"


def test_a_client_that_leaves_while_paused_is_forgotten(server, real_redis):
    for target in (server, real_redis):
        with target.raw() as admin:
            assert admin.call("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
            try:
                with target.raw() as leaving:
                    leaving.send(encode_command("SET", "gone", "1"))
                    _wait_blocked(admin, 1)
                _wait_blocked(admin, 0)
            finally:
                assert admin.call("CLIENT", "UNPAUSE") == "OK"
            assert admin.call("EXISTS", "gone") == 0


def test_client_pause_errors_are_redis_errors(server, real_redis):
    for target in (server, real_redis):
        with target.raw() as conn:
            for args, error in [
                (("abc",), "ERR timeout is not an integer or out of range"),
                (("-1",), "ERR timeout is negative"),
                (("10", "FOO"), "ERR CLIENT PAUSE mode must be WRITE or ALL"),
                (("abc", "FOO"), "ERR CLIENT PAUSE mode must be WRITE or ALL"),
                (("10", "WRITE", "extra"), "ERR unknown subcommand or wrong number of arguments "
                                           "for 'PAUSE'. Try CLIENT HELP."),
                ((), "ERR wrong number of arguments for 'client|pause' command"),
            ]:
                assert conn.call("CLIENT", "PAUSE", *args) == ErrorReply(error), args
            assert conn.call("CLIENT", "UNPAUSE", "x") == ErrorReply(
                "ERR wrong number of arguments for 'client|unpause' command")
            assert conn.call("SET", "still", "writable") == "OK"


def _expiry_during_pause(target) -> list:
    seen = []
    with target.raw() as conn:
        conn.call("FLUSHALL")
        assert conn.call("SET", "short", "v", "PX", "50") == "OK"
        expired_before = parse_info(conn.call("INFO", "stats"))["Stats"]["expired_keys"]
        assert conn.call("CLIENT", "PAUSE", "10000", "WRITE") == "OK"
        try:
            time.sleep(0.3)  # past the key's TTL, during the pause
            seen.append(conn.call("GET", "short"))  # reads as missing...
            seen.append(conn.call("DBSIZE"))  # ...but stays, as Redis deletes nothing paused
            seen.append(parse_info(conn.call("INFO", "stats"))["Stats"]["expired_keys"] ==
                        expired_before)
        finally:
            assert conn.call("CLIENT", "UNPAUSE") == "OK"
        seen.append(conn.call("GET", "short"))
        for _ in range(500):  # deleted once the pause is over (lazily or actively)
            if conn.call("DBSIZE") == 0:
                break
            time.sleep(0.01)
        seen.append(conn.call("DBSIZE"))
    return seen


def test_keys_do_not_expire_during_a_pause(server, real_redis):
    ours = _expiry_during_pause(server)
    assert ours == _expiry_during_pause(real_redis)
    assert ours == [None, 1, True, None, 0]


def test_a_request_with_the_wrong_arity_is_refused_at_once_during_a_pause(server_factory,
                                                                          redis_factory):
    """Arity is checked before the pause holds a request. Each server gets a pause longer than
    the connection's timeout, so a held request would fail the read; the server is stopped
    afterwards instead of unpaused."""
    for target in (server_factory(), redis_factory()):
        with target.raw() as conn:
            assert conn.call("CLIENT", "PAUSE", "100000") == "OK"
            assert conn.call("CLIENT", "SETNAME") == ErrorReply(
                "ERR wrong number of arguments for 'client|setname' command")
        target.stop()
