"""Server commands that clients and tools send: TIME, LASTSAVE, COMMAND *, MEMORY *, DEBUG subset,
FUNCTION/SCRIPT FLUSH, CLIENT REPLY/NO-EVICT/SETINFO.

Reply bytes and error texts are Redis 7.0.15's.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from e2e_support import ErrorReply, parse_client_list


def test_time(server):
    conn = server.raw()
    seconds, micros = conn.call("TIME")
    assert abs(int(seconds) - time.time()) < 5
    assert 0 <= int(micros) < 1_000_000


def test_lastsave(server):
    conn = server.raw()
    lastsave = conn.call("LASTSAVE")
    assert isinstance(lastsave, int) and lastsave <= time.time() + 1


def test_command_count_list_and_info(server):
    conn = server.raw()
    count = conn.call("COMMAND", "COUNT")
    assert len(conn.call("COMMAND")) == count
    names = conn.call("COMMAND", "LIST")  # top-level commands plus 'parent|sub' entries
    assert len([name for name in names if b"|" not in name]) == count
    assert {b"get", b"set", b"ping", b"command", b"config", b"client", b"info"} <= set(names)
    assert {b"config|get", b"client|kill"} <= set(names)

    get_info, set_info, missing = conn.call("COMMAND", "INFO", "get", "SET", "nosuch")
    assert get_info[:6] == [b"get", 2, ["readonly", "fast"], 1, 1, 1]
    assert set_info[0] == b"set" and set_info[1] == -3
    assert {"write", "denyoom"} <= set(set_info[2])
    assert set_info[3:6] == [1, 1, 1]
    assert missing is None
    # Unknown commands are a null bulk string in RESP2, exactly as Redis sends them.
    assert conn.call_raw("COMMAND", "INFO", "nosuch") == b"*1\r\n$-1\r\n"


def test_command_docs(server):
    conn = server.raw()
    docs = conn.call("COMMAND", "DOCS", "get")
    assert docs[0] == b"get"
    fields = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert fields[b"summary"]
    assert fields[b"since"] == b"1.0.0"
    assert fields[b"group"] == b"string"
    assert fields[b"complexity"] == b"O(1)"
    # redis-cli 7.0 builds its interactive hints from the argument descriptions.
    first_argument = dict(zip(fields[b"arguments"][0][0::2], fields[b"arguments"][0][1::2]))
    assert first_argument[b"name"] == b"key" and first_argument[b"type"] == b"key"


def test_command_getkeys(server):
    conn = server.raw()
    assert conn.call("COMMAND", "GETKEYS", "SET", "k", "v", "EX", "10") == [b"k"]
    assert conn.call("COMMAND", "GETKEYS", "DEL", "a", "b", "c") == [b"a", b"b", b"c"]
    assert conn.call("COMMAND", "GETKEYS", "PING", "hello") == ErrorReply(
        "ERR The command has no key arguments"
    )
    assert conn.call("COMMAND", "GETKEYS", "nosuch", "a") == ErrorReply(
        "ERR Invalid command specified"
    )
    assert conn.call("COMMAND", "GETKEYS", "GET", "a", "b") == ErrorReply(
        "ERR Invalid number of arguments specified for command"
    )
    # COMMAND GETKEYS takes at least the command and one argument (arity -4 in Redis 7.0).
    assert conn.call("COMMAND", "GETKEYS", "PING") == ErrorReply(
        "ERR wrong number of arguments for 'command|getkeys' command"
    )


def test_memory_usage(server):
    conn = server.raw()
    conn.call("SET", "small", "v")
    conn.call("SET", "big", "x" * 10_000)
    small = conn.call("MEMORY", "USAGE", "small")
    big = conn.call("MEMORY", "USAGE", "big", "SAMPLES", "5")
    assert isinstance(small, int) and small > 0
    assert 10_000 <= big < 20_000
    assert conn.call_raw("MEMORY", "USAGE", "missing") == b"$-1\r\n"
    assert conn.call("MEMORY", "USAGE", "big", "SAMPLES") == ErrorReply("ERR syntax error")
    assert conn.call("MEMORY", "FOO") == ErrorReply(
        "ERR unknown subcommand 'FOO'. Try MEMORY HELP."
    )


def test_memory_stats(server):
    conn = server.raw()
    for i in range(10):
        conn.call("SET", f"k{i}", "v")
    stats = conn.call("MEMORY", "STATS")
    fields = dict(zip(stats[0::2], stats[1::2]))
    for name in (b"peak.allocated", b"total.allocated", b"startup.allocated", b"keys.count",
                 b"keys.bytes-per-key", b"dataset.bytes", b"overhead.total"):
        assert name in fields, name
    assert fields[b"keys.count"] == 10
    assert fields[b"total.allocated"] > 0
    assert fields[b"peak.allocated"] >= fields[b"total.allocated"]


def test_function_and_script_flush(server):
    conn = server.raw()
    assert conn.call_raw("FUNCTION", "FLUSH") == b"+OK\r\n"
    assert conn.call_raw("SCRIPT", "FLUSH") == b"+OK\r\n"


def test_debug_subset(server):
    conn = server.raw()
    started = time.monotonic()
    assert conn.call_raw("DEBUG", "SLEEP", "0.2") == b"+OK\r\n"
    assert time.monotonic() - started >= 0.19
    assert conn.call_raw("DEBUG", "SET-ACTIVE-EXPIRE", "1") == b"+OK\r\n"
    assert conn.call("DEBUG", "FOO") == ErrorReply(
        "ERR unknown subcommand or wrong number of arguments for 'FOO'. Try DEBUG HELP."
    )
    assert conn.call_raw("PING") == b"+PONG\r\n"


def test_client_reply_off_and_skip(server):
    conn = server.raw()
    conn.send(
        b"CLIENT REPLY OFF\r\nSET a 1\r\nGET a\r\nCLIENT REPLY ON\r\nGET a\r\n"
        b"CLIENT REPLY SKIP\r\nSET b 2\r\nGET b\r\n"
    )
    assert conn.read_reply_raw()[1] == b"+OK\r\n"  # from CLIENT REPLY ON
    assert conn.read_reply_raw()[1] == b"$1\r\n1\r\n"
    assert conn.read_reply_raw()[1] == b"$1\r\n2\r\n"
    assert conn.call("CLIENT", "REPLY", "foo") == ErrorReply("ERR syntax error")


def test_client_no_evict_and_no_touch(server):
    conn = server.raw()
    assert conn.call_raw("CLIENT", "NO-EVICT", "on") == b"+OK\r\n"
    assert conn.call_raw("CLIENT", "NO-EVICT", "off") == b"+OK\r\n"
    assert conn.call("CLIENT", "NO-EVICT", "maybe") == ErrorReply("ERR syntax error")


@pytest.mark.gigakv_only  # CLIENT SETINFO and NO-TOUCH arrived in Redis 7.2
def test_client_setinfo_and_no_touch(server):
    conn = server.raw()
    assert conn.call_raw("CLIENT", "SETINFO", "LIB-NAME", "e2e-lib") == b"+OK\r\n"
    assert conn.call_raw("CLIENT", "SETINFO", "LIB-VER", "1.2.3") == b"+OK\r\n"
    info = parse_client_list(conn.call("CLIENT", "INFO"))[0]
    assert info["lib-name"] == "e2e-lib" and info["lib-ver"] == "1.2.3"
    assert conn.call_raw("CLIENT", "NO-TOUCH", "on") == b"+OK\r\n"
    assert conn.call_raw("CLIENT", "NO-TOUCH", "off") == b"+OK\r\n"


def test_command_info_flags_and_acl_categories_match_redis(server, real_redis):
    """Every command gigakv has (subcommands included) reports the same flags (movablekeys
    included), key positions and ACL categories, in the same order, as redis-server 7.0."""
    conn, reference = server.raw(), real_redis.raw()

    def walk(entries, out):
        for entry in entries:
            out.append(entry)
            if len(entry) > 9 and entry[9]:
                walk(entry[9], out)
        return out

    differences = []
    for entry in walk(conn.call("COMMAND"), []):
        name = entry[0]
        expected = reference.call("COMMAND", "INFO", name)[0]
        if expected is None:
            continue  # Not a Redis 7.0 command (CLIENT NO-TOUCH, CLIENT SETINFO).
        ours = [entry[1], [str(f) for f in entry[2]], entry[3:6], [str(c) for c in entry[6]]]
        theirs = [expected[1], [str(f) for f in expected[2]], expected[3:6],
                  [str(c) for c in expected[6]]]
        if ours != theirs:
            differences.append(f"{name!r}: gigakv {ours} redis {theirs}")
    assert not differences, "\n".join(differences)


@pytest.mark.parametrize("protocol", [2, 3])
def test_command_info_replies_are_byte_identical_to_redis(server, real_redis, protocol):
    """COMMAND INFO of every command and subcommand, tips and key specs included, is the very
    reply redis-server 7.0 sends, in RESP2 and RESP3. Containers (CLIENT, CONFIG...) are left
    out: Redis lists their subcommands in its hash table's order, and has more of them."""
    conn, reference = server.raw(), real_redis.raw()
    if protocol == 3:
        conn.call("HELLO", "3")
        reference.call("HELLO", "3")
    names = [name.decode() for name in conn.call("COMMAND", "LIST")]
    containers = {name.split("|")[0] for name in names if "|" in name}
    compared, differences = 0, []
    for name in names:
        if name in containers:
            # All but the subcommands: gigakv lists those it implements, in name order.
            [ours], [theirs] = conn.call("COMMAND", "INFO", name), reference.call(
                "COMMAND", "INFO", name)
            if ours[:9] != theirs[:9]:
                differences.append(f"{name}:\n  gigakv {ours[:9]!r}\n  redis  {theirs[:9]!r}")
            continue
        expected = reference.call_raw("COMMAND", "INFO", name)
        if expected in (b"*1\r\n$-1\r\n", b"*1\r\n_\r\n"):
            continue  # Not a Redis 7.0 command.
        compared += 1
        got = conn.call_raw("COMMAND", "INFO", name)
        if got != expected:
            differences.append(f"{name}:\n  gigakv {got!r}\n  redis  {expected!r}")
    assert compared > 150
    assert not differences, "\n".join(differences[:10])


ROOT = Path(__file__).resolve().parents[2]


def test_generated_command_table_is_redis_servers(real_redis):
    """server/redis_command_table.cc, where all of gigakv's Redis-defined command metadata comes
    from, is exactly what scripts/gen-command-table.py makes of this redis-server's COMMAND INFO
    and COMMAND DOCS: every command, implemented or not."""
    spec = importlib.util.spec_from_file_location(
        "gen_command_table", ROOT / "scripts" / "gen-command-table.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    expected = generator.generate(real_redis.port)
    assert (ROOT / "server" / "redis_command_table.cc").read_text() == expected


@pytest.mark.parametrize("command", [
    "set k v", "set k v NX", "set k v GET", "SET k v xx get ex 10", "set k get",
    "bitfield k GET u8 0", "bitfield k SET u8 0 1", "bitfield k INCRBY u8 0 1", "bitfield k",
    "bitfield k overflow sat", "bitfield k get u8 0 incrby u8 0 1", "bitfield k get u8",
    "bitfield k foo", "bitfield_ro k GET u8 0", "lmove a b LEFT RIGHT", "bitop and d a b",
    "sort k", "sort k BY w_* GET g_* STORE d store e", "sort_ro k GET #", "zunionstore d 2 a b",
    "zinter 2 a b", "lmpop 2 a b LEFT", "blmpop 0 2 a b LEFT", "mset a 1 b 2", "msetnx a 1 b 2",
    "object encoding k", "copy a b", "smove a b m", "zrangestore d s 0 1", "del a b",
    "getex k persist", "watch a b", "nosuch a", "ping x", "object nosuch k", "lmpop x a LEFT",
    "set k", "get", "eval x 1 k", "fcall_ro f 1 k", "eval_ro x 0", "xreadgroup GROUP g c STREAMS a >",
])
@pytest.mark.parametrize("protocol", [2, 3])
def test_command_getkeysandflags_matches_redis(server, real_redis, command, protocol):
    conn, reference = server.raw(), real_redis.raw()
    if protocol == 3:
        conn.call("HELLO", "3")
        reference.call("HELLO", "3")
    args = ["COMMAND", "GETKEYSANDFLAGS"] + command.split()
    assert conn.call_raw(*args) == reference.call_raw(*args)


@pytest.mark.parametrize("category", ["sortedset", "list", "write", "read", "fast", "keyspace"])
def test_command_list_filterby_aclcat_matches_redis(server, real_redis, category):
    ours = set(server.raw().call("COMMAND", "LIST", "FILTERBY", "ACLCAT", category))
    theirs = set(real_redis.raw().call("COMMAND", "LIST", "FILTERBY", "ACLCAT", category))
    names = set(server.raw().call("COMMAND", "LIST"))
    assert ours
    assert ours == theirs & names


@pytest.mark.parametrize("resp", [2, 3])
def test_command_docs_match_redis(server, real_redis, resp):
    """COMMAND DOCS of every command and subcommand Redis 7.0 also has, byte for byte: summary,
    since, group, complexity, doc flags, deprecation, replacement, history and the argument trees.
    A container (CLIENT, CONFIG...) is compared without its "subcommands" map, whose members
    differ (gigakv implements some subcommands only); each subcommand is compared on its own."""
    conn, reference = server.raw(), real_redis.raw()
    if resp == 3:
        conn.call("HELLO", "3")
        reference.call("HELLO", "3")
    names = [name.decode() for name in server.raw().call("COMMAND", "LIST")]
    compared, differences = 0, []
    for name in names:
        expected = reference.call_raw("COMMAND", "DOCS", name)
        if expected in (b"*0\r\n", b"%0\r\n"):
            continue  # Not a Redis 7.0 command.
        got = conn.call_raw("COMMAND", "DOCS", name)
        if b"subcommands" in expected:
            # The entry's fields are in the same order; the subcommands come last.
            got, expected = (reply[:reply.index(b"subcommands")] for reply in (got, expected))
        compared += 1
        if got != expected:
            differences.append(f"{name}:\n  gigakv {got[:300]!r}\n  redis  {expected[:300]!r}")
    assert compared > 190
    assert not differences, f"{len(differences)} differ:\n" + "\n".join(differences[:10])


def test_command_help_matches_redis(server, real_redis):
    assert server.raw().call_raw("COMMAND", "HELP") == real_redis.raw().call_raw("COMMAND", "HELP")


@pytest.mark.parametrize("command", [
    "zunionstore d 2 a b", "zinterstore d 1 a WEIGHTS 2", "zdiffstore d 1 a", "zunion 2 a b",
    "zinter 1 a", "zdiff 2 a b", "zintercard 2 a b LIMIT 1", "sintercard 1 s", "lmpop 2 a b LEFT",
    "zmpop 1 z MIN", "blmpop 0 2 a b LEFT", "bzmpop 1 1 z MIN", "sort k", "sort k STORE d",
    "sort k BY w_* LIMIT 0 1 GET g_* store d2 STORE d3", "sort_ro k GET #", "lmpop 0 a LEFT",
    "lmpop 5 a LEFT", "lmpop x a LEFT", "zunionstore d -1 a", "get k", "mset a 1 b 2",
    "object encoding k", "object freq k", "object nosuch k", "bitop or d a b c", "ping x",
    "echo a b", "client list", "eval x 0", "eval x 2 a b c", "eval x -1", "eval x 5 a",
    "eval x abc", "evalsha_ro x 1 a", "fcall f 1 a b", "fcall_ro f 2 a b",
    "xread COUNT 1 STREAMS a", "xread STREAMS a b c", "xreadgroup GROUP g c STREAMS a b",
    "xread STREAMS", "xinfo stream s", "xgroup create s g 0", "xautoclaim s g c 0 0",
    "georadius a 1 2 3 km STORE", "migrate h 1 k 0 5",
])
def test_command_getkeys_matches_redis(server, real_redis, command):
    args = ["COMMAND", "GETKEYS"] + command.split()
    assert server.raw().call_raw(*args) == real_redis.raw().call_raw(*args)


def _slowlog_without_times(conn, count="-1"):
    """SLOWLOG GET with the ids, timestamps, durations and client ports left out."""
    return [(entry[3], entry[4].rsplit(b":", 1)[0], entry[5])
            for entry in conn.call("SLOWLOG", "GET", count)]


def test_slowlog_matches_redis(server, real_redis):
    """With slowlog-log-slower-than 0 every command is logged; the entries (arguments as
    trimmed and redacted, client address and name), LEN, RESET, HELP and the errors read as
    Redis's."""
    conns = [server.raw(), real_redis.raw()]
    for conn in conns:
        assert conn.call("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
        conn.call("CLIENT", "SETNAME", "slowpoke")
        conn.call("SET", "k", "v" * 300)
        conn.call("RPUSH", "list", *[str(i) for i in range(40)])
        conn.call("AUTH", "user", "secret")
        conn.call("HELLO", "2", "AUTH", "user", "secret")
        conn.call("GET", "k")
    ours, theirs = (_slowlog_without_times(conn) for conn in conns)
    assert ours == theirs
    assert len(ours) == 7
    for args in (("GET", "2"), ("GET", "-2"), ("GET", "x"), ("GET", "1", "2"), ("LEN",),
                 ("LEN", "x"), ("HELP",), ("NOPE",)):
        replies = [conn.call_raw("SLOWLOG", *args) for conn in conns]
        if args[0] == "GET" and args[1] == "2":
            replies = [len(conn.call("SLOWLOG", "GET", "2")) for conn in conns]
        assert replies[0] == replies[1], args
    for conn in conns:
        assert conn.call("SLOWLOG", "RESET") == "OK"
        assert conn.call("SLOWLOG", "LEN") == 1  # The RESET itself, logged after it ran.
        assert conn.call("CONFIG", "SET", "slowlog-log-slower-than", "-1") == "OK"
        conn.call("KEYS", "*")
        # The RESET and the LEN after it: neither the CONFIG SET that turned logging off (the
        # threshold is read after the command, as Redis does) nor the KEYS after it.
        assert conn.call("SLOWLOG", "LEN") == 2
        assert conn.call("CONFIG", "SET", "slowlog-max-len", "1",
                         "slowlog-log-slower-than", "0") == "OK"
        conn.call("PING")
        assert [args for args, _, _ in _slowlog_without_times(conn)] == [[b"PING"]]
        # A CONFIG SET that turns the log on is logged: Redis compares the command's time with
        # the threshold it finds after running it.
        assert conn.call("CONFIG", "SET", "slowlog-max-len", "10",
                         "slowlog-log-slower-than", "-1") == "OK"
        assert conn.call("SLOWLOG", "RESET") == "OK"
        assert conn.call("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
        assert [args for args, _, _ in _slowlog_without_times(conn)] == [
            [b"CONFIG", b"SET", b"slowlog-log-slower-than", b"0"]]


def test_slowlog_logs_a_slow_command_at_the_default_threshold(server):
    """DEBUG SLEEP 0.02 takes at least the default 10 ms threshold; fast commands do not."""
    conn = server.raw()
    conn.call("SLOWLOG", "RESET")
    conn.call("SET", "k", "v")
    conn.call("DEBUG", "SLEEP", "0.02")
    entries = conn.call("SLOWLOG", "GET")
    assert [entry[3] for entry in entries] == [[b"DEBUG", b"SLEEP", b"0.02"]]
    assert entries[0][2] >= 20000


def test_role_matches_redis(server, real_redis):
    for resp in (2, 3):
        conns = [server.raw(), real_redis.raw()]
        if resp == 3:
            for conn in conns:
                conn.call("HELLO", "3")
        for args in (("ROLE",), ("ROLE", "x")):
            assert conns[0].call_raw(*args) == conns[1].call_raw(*args), (resp, args)


@pytest.mark.parametrize("setting, allowed", [("no", False), ("local", True), ("yes", True)])
def test_enable_debug_command_gates_debug(server_factory, setting, allowed):
    # The tests' servers start with `enable-debug-command yes`; a later argument overrides it.
    # Clients here connect from 127.0.0.1, which "local" allows.
    server = server_factory("--enable-debug-command", setting)
    conn = server.raw()
    if allowed:
        assert conn.call_raw("DEBUG", "SLEEP", "0") == b"+OK\r\n"
    else:
        assert conn.call_raw("DEBUG", "SLEEP", "0") == (
            b"-ERR DEBUG command not allowed. If the enable-debug-command option is set to "
            b"\"local\", you can run it from a local connection, otherwise you need to set this "
            b"option in the configuration file, and then restart the server.\r\n")
    assert conn.call_raw("CONFIG", "GET", "enable-debug-command") == (
        b"*2\r\n$20\r\nenable-debug-command\r\n$%d\r\n%s\r\n" % (len(setting), setting.encode()))
