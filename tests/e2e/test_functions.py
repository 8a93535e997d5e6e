"""FUNCTION and FCALL side by side with redis-server 7.0.

The differential cases send the same commands to both servers (after FUNCTION FLUSH and
FLUSHALL), in RESP2 and RESP3, and compare the replies byte for byte: loading libraries (their
first line, names, flags, descriptions, every error of redis.register_function, what a library's
code sees while it loads), calling functions (arguments, replies, errors naming the function,
read-only functions, upvalues kept between calls), FUNCTION LIST/STATS/DELETE/FLUSH/RESTORE/HELP
and their argument errors. Then DUMP/RESTORE across the two servers, libraries surviving a
restart through a snapshot and through the log, snapshots exchanged with redis-server, and a busy
function stopped by FUNCTION KILL as Redis stops it.
"""

from __future__ import annotations

import shutil
import threading

import pytest

from differential import both_protocols, compare_case
from e2e_support import wait_until

LIB = "#!lua name=lib\n"

COUNTER = LIB + """
local calls = 0
redis.register_function('count', function(keys, args) calls = calls + 1 return calls end)
redis.register_function{function_name='echo', callback=function(keys, args) return {keys, args} end,
  flags={'no-writes'}, description='returns its keys and arguments'}
redis.register_function('setter', function(keys, args) return redis.call('set', keys[1], args[1]) end)
"""

CASES = [
    ("load and call", [
        ["FUNCTION", "LOAD", COUNTER],
        ["FCALL", "count", "0"],
        ["FCALL", "COUNT", "0"],
        ["FCALL", "count", "0"],
        ["FCALL", "echo", "2", "k1", "k2", "a1", "a2", "a3"],
        ["FCALL", "echo", "0"],
        ["FCALL_RO", "echo", "1", "k", "v"],
        ["FCALL", "setter", "1", "key", "value"],
        ["GET", "key"],
        ["FCALL_RO", "setter", "1", "key", "value"],
        ["FUNCTION", "LIST", "LIBRARYNAME", "nomatch", "WITHCODE"],
        ["FUNCTION", "STATS"],
        ["FUNCTION", "LOAD", COUNTER],
        ["FUNCTION", "LOAD", "REPLACE", COUNTER],
        ["FCALL", "count", "0"],  # A replaced library starts over.
        ["FUNCTION", "DELETE", "lib"],
        ["FUNCTION", "DELETE", "lib"],
        ["FCALL", "count", "0"],
        ["FUNCTION", "STATS"],
    ]),
    ("replies and flags", [
        ["FUNCTION", "LOAD", LIB + """
redis.register_function('types', function()
  return {1, 'two', 3.7, true, false, nil, {ok='fine'}}
end)
redis.register_function('err', function() return redis.error_reply('MINE custom') end)
redis.register_function('resp3', function()
  redis.setresp(3)
  return redis.call('hgetall', 'nothing')
end)
redis.register_function{function_name='oom_ok', callback=function() return 2 end,
  flags={'allow-oom'}, description=''}
"""],
        ["FCALL", "types", "0"],
        ["FCALL", "err", "0"],
        ["FCALL", "resp3", "0"],
        ["FCALL_RO", "oom_ok", "0"],
        # (Redis lists a library's functions in its hash table's order: one per library here.)
        ["FUNCTION", "LOAD", "#!lua name=flagged\nredis.register_function{"
                             "function_name='all_flags', callback=function() return 1 end, "
                             "flags={'No-Writes', 'allow-oom', 'allow-stale', 'no-cluster', "
                             "'allow-cross-slot-keys'}}"],
        ["FCALL_RO", "all_flags", "0"],
        ["FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "flag*"],
        ["FUNCTION", "LIST", "LIBRARYNAME", "FLAGGED"],
        ["FUNCTION", "DELETE", "lib"],
        ["FUNCTION", "LIST"],
    ]),
    ("the first line", [
        ["FUNCTION", "LOAD", "lua name=x\nredis.register_function('f', function() end)"],
        ["FUNCTION", "LOAD", "#!lua name=x"],
        ["FUNCTION", "LOAD", "#!lua\nreturn 1"],
        ["FUNCTION", "LOAD", "#!lua name=a name=b\n"],
        ["FUNCTION", "LOAD", "#!lua foo=a\n"],
        ["FUNCTION", "LOAD", "#!lua NAME=upper\nredis.register_function('f', function() end)"],
        ["FUNCTION", "LOAD", "#!LUA name=quoted\nredis.register_function('g', function() end)"],
        ["FUNCTION", "LOAD", '#!lua name="q1"\nredis.register_function(\'h\', function() end)'],
        ["FUNCTION", "LOAD", '#!lua name="unbalanced\nreturn'],
        ["FUNCTION", "LOAD", "#!js name=a\n"],
        ["FUNCTION", "LOAD", "#!lua name=a-b\n"],
        ["FUNCTION", "LOAD", "#!lua name=\n"],
        ["FUNCTION", "LOAD", "#!lua name=empty\n"],
        ["FUNCTION", "LOAD", "#!lua name=empty\n-- only a comment"],
        ["FUNCTION", "LOAD", "#!lua name=bad\nredis.register_function('x'"],
        ["FUNCTION", "LOAD", "replace"],
        ["FUNCTION", "LOAD", "foo", "#!lua name=x\n"],
        ["FUNCTION", "LOAD", "REPLACE", "REPLACE", "#!lua name=x\n"],
        ["FCALL", "f", "0"],
        ["FCALL", "G", "0"],
    ]),
    ("register_function errors", [
        ["FUNCTION", "LOAD", LIB + "redis.register_function('a-b', function() end)"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function('', function() end)"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function('g', function() end)\n"
                                   "redis.register_function('g', function() end)"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function('g', function() end)\n"
                                   "redis.register_function('G', function() end)"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function{function_name='g', "
                                   "callback=function() end, flags={'bad'}}"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function{function_name='g', "
                                   "callback=function() end, flags='no-writes'}"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function{function_name='g', "
                                   "callback=function() end, flags={1}}"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function{function_name='g', "
                                   "callback=function() end, foo=1}"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function{function_name='g', callback=3}"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function{function_name={}, "
                                   "callback=function() end}"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function{function_name='g', "
                                   "callback=function() end, description={}}"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function{callback=function() end}"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function{function_name='g'}"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function('g')"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function()"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function('g', function() end, 3)"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function(function() end, 'g')"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function(12, function() return 12 end)"],
        ["FCALL", "12", "0"],
    ]),
    ("what loading code sees", [
        ["FUNCTION", "LOAD", LIB + "local n = string.len('abc')"],
        ["FUNCTION", "LOAD", LIB + "redis.call('set', 'x', 'y')"],
        ["FUNCTION", "LOAD", LIB + "redis.setresp(3)"],
        ["FUNCTION", "LOAD", LIB + "return math.pi"],
        ["FUNCTION", "LOAD", LIB + "global_var = 1"],
        ["FUNCTION", "LOAD", LIB + "redis.foo = 1"],
        ["FUNCTION", "LOAD", LIB + "local v = redis.REDIS_VERSION .. redis.REDIS_VERSION_NUM\n"
                                   "redis.log(redis.LOG_NOTICE, 'loading', v)\n"
                                   "redis.register_function('v', function() return v end)"],
        ["FCALL", "v", "0"],
        ["FUNCTION", "LOAD", LIB + "error('at load')"],
        ["FUNCTION", "LOAD", LIB + "error({err='CUSTOM at load'})"],
        ["FUNCTION", "LOAD", LIB + "local t = KEYS"],
        ["FUNCTION", "LOAD", LIB + "while true do end"],
        ["FUNCTION", "LOAD", LIB + "while true do pcall(function() while true do end end) end"],
    ]),
    ("run-time errors", [
        ["FUNCTION", "LOAD", LIB + """
redis.register_function('boom', function() error('boom') end)
redis.register_function('missing', function() return undefined_global end)
redis.register_function('keys_global', function() return KEYS end)
redis.register_function('new_global', function() new_one = 1 end)
redis.register_function('late_register', function()
  return redis.register_function('x', function() end)
end)
redis.register_function('bad_call', function() return redis.call('nosuchcommand') end)
redis.register_function('wrong_type', function(keys)
  redis.call('set', keys[1], 'v') return redis.call('lpush', keys[1], 'x')
end)
redis.register_function('pcall_type', function(keys)
  return redis.pcall('lpush', keys[1], 'x')
end)
redis.register_function('nested', function() return redis.call('fcall', 'boom', '0') end)
redis.register_function('eval_inside', function() return redis.call('eval', 'return 1', '0') end)
redis.register_function('load_inside', function()
  return redis.call('function', 'load', '#!lua name=z')
end)
redis.register_function{function_name='ro_writes', flags={'no-writes'},
  callback=function() return redis.call('set', 'k', 'v') end}
"""],
        ["FCALL", "boom", "0"],
        ["FCALL", "missing", "0"],
        ["FCALL", "keys_global", "0"],
        ["FCALL", "new_global", "0"],
        ["FCALL", "late_register", "0"],
        ["FCALL", "bad_call", "0"],
        ["FCALL", "wrong_type", "1", "str"],
        ["FCALL", "pcall_type", "1", "str"],
        ["FCALL", "nested", "0"],
        ["FCALL", "eval_inside", "0"],
        ["FCALL", "load_inside", "0"],
        ["FCALL", "ro_writes", "0"],
        ["FCALL_RO", "boom", "0"],
        ["EVAL", "return redis.call('fcall', 'boom', '0')", "0"],
        ["FCALL", "nosuch", "0"],
        ["FCALL", "boom", "x"],
        ["FCALL", "boom", "-1"],
        ["FCALL", "boom", "2", "a"],
        ["FCALL", "boom"],
    ]),
    ("collisions between libraries", [
        ["FUNCTION", "LOAD", "#!lua name=one\nredis.register_function('shared', function() "
                             "return 1 end)"],
        ["FUNCTION", "LOAD", "#!lua name=two\nredis.register_function('SHARED', function() "
                             "return 2 end)"],
        ["FUNCTION", "LOAD", "#!lua name=one\nredis.register_function('other', function() end)"],
        ["FUNCTION", "LOAD", "REPLACE", "#!lua name=one\nredis.register_function('shared', "
                                        "function() return 3 end)"],
        ["FCALL", "shared", "0"],
        ["FUNCTION", "STATS"],
    ]),
    ("argument errors and help", [
        ["FUNCTION", "LIST", "WITHCODE", "WITHCODE"],
        ["FUNCTION", "LIST", "LIBRARYNAME"],
        ["FUNCTION", "LIST", "foo"],
        ["FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b"],
        ["FUNCTION", "FLUSH", "now"],
        ["FUNCTION", "FLUSH", "SYNC", "ASYNC"],
        ["FUNCTION", "FLUSH", "ASYNC"],
        ["FUNCTION", "RESTORE", "junk"],
        ["FUNCTION", "RESTORE", "junk", "sideways"],
        ["FUNCTION", "RESTORE", "a", "b", "c"],
        ["FUNCTION", "DELETE"],
        ["FUNCTION", "KILL"],
        ["FUNCTION", "STATS", "extra"],
        ["FUNCTION", "DUMP", "extra"],
        ["FUNCTION", "NOSUCH"],
        ["FUNCTION", "HELP"],
        ["FUNCTION", "DUMP"],
    ]),
    ("over maxmemory", [
        ["FUNCTION", "LOAD", LIB + """
redis.register_function('w', function() return redis.call('set', 'k', 'v') end)
redis.register_function{function_name='oom_ok', flags={'allow-oom'},
  callback=function() return redis.call('set', 'k2', 'v') end}
redis.register_function{function_name='ro', flags={'no-writes'},
  callback=function() return redis.call('get', 'k') end}
"""],
        ["SET", "k", "v0"],
        ["CONFIG", "SET", "maxmemory", "1"],
        ["FCALL", "w", "0"],
        ["FCALL", "w", "x"],
        ["FCALL_RO", "w", "0"],
        ["FCALL", "oom_ok", "0"],
        ["FCALL", "ro", "0"],
        ["FCALL_RO", "ro", "0"],
        ["EVAL", "#!lua\nreturn redis.call('get', 'k')", "0"],
        ["EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", "0"],
        ["EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'k3', 'v')", "0"],
        ["EVAL", "return redis.call('set', 'k', 'z')", "0"],
        ["EVAL", "return redis.call('get', 'k')", "0"],
        ["MULTI"],
        ["FCALL", "ro", "0"],
        ["EXEC"],
        ["CONFIG", "SET", "maxmemory", "0"],
        ["GET", "k2"],
    ]),
    ("inside a transaction", [
        ["MULTI"],
        ["FUNCTION", "LOAD", LIB + "redis.register_function('f', function(keys) "
                                   "return redis.call('incr', keys[1]) end)"],
        ["FCALL", "f", "1", "counter"],
        ["FCALL", "f", "1", "counter"],
        ["FUNCTION", "DELETE", "lib"],
        ["FCALL", "f", "1", "counter"],
        ["EXEC"],
        ["GET", "counter"],
    ]),
]


@both_protocols
@pytest.mark.parametrize("case", CASES, ids=[name for name, _ in CASES])
def test_functions_reply_as_redis(server, real_redis, target, protocol, case):
    compare_case(server, real_redis, target, protocol, case,
                 reset=(("FLUSHALL",), ("FUNCTION", "FLUSH")))


def library_set(client) -> list:
    """FUNCTION LIST WITHCODE as comparable data, libraries and functions in name order."""
    libraries = []
    for library in client.execute_command("FUNCTION", "LIST", "WITHCODE"):
        fields = dict(zip(library[::2], library[1::2]))
        functions = sorted(
            (dict(zip(f[::2], [tuple(v) if isinstance(v, list) else v for v in f[1::2]]))
             for f in fields[b"functions"]),
            key=lambda f: f[b"name"])
        libraries.append((fields[b"library_name"], fields[b"library_code"],
                          tuple(tuple(sorted(f.items())) for f in functions)))
    return sorted(libraries)


TWO_LIBRARIES = [
    "#!lua name=alpha\nredis.register_function('a1', function() return 'a1' end)\n"
    "redis.register_function{function_name='a2', callback=function() return 'a2' end, "
    "flags={'no-writes'}, description='second'}",
    "#!lua name=beta\nredis.register_function('b1', function(keys, args) return #args end)",
]


def test_dump_and_restore_move_libraries_between_redis_and_gigakv(server, real_redis, target):
    if target == "redis":
        pytest.skip("compares gigakv with redis-server")
    ours, theirs = server.client(), real_redis.client()
    for client in (ours, theirs):
        client.execute_command("FUNCTION", "FLUSH")
    for code in TWO_LIBRARIES:
        theirs.execute_command("FUNCTION", "LOAD", code)
    payload = theirs.execute_command("FUNCTION", "DUMP")
    assert ours.execute_command("FUNCTION", "RESTORE", payload) == b"OK"
    assert library_set(ours) == library_set(theirs)
    assert ours.execute_command("FCALL", "b1", "0", "x", "y") == 2
    # APPEND (the default) refuses a library that exists, REPLACE replaces it, FLUSH starts over;
    # the same texts as Redis's.
    for client in (ours, theirs):
        client.execute_command("FUNCTION", "DELETE", "beta")
        client.execute_command("FUNCTION", "LOAD", "#!lua name=other\n"
                               "redis.register_function('b1', function() return 'clash' end)")
    outcomes = []
    for client in (theirs, ours):
        seen = []
        for policy in ([], ["APPEND"], ["REPLACE"]):
            try:
                seen.append(client.execute_command("FUNCTION", "RESTORE", payload, *policy))
            except Exception as error:  # redis-py raises the error reply
                seen.append(str(error))
        seen.append(client.execute_command("FUNCTION", "RESTORE", payload, "FLUSH"))
        seen.append(library_set(client))
        outcomes.append(seen)
    assert outcomes[0] == outcomes[1]
    # gigakv's payload restores into Redis.
    theirs.execute_command("FUNCTION", "FLUSH")
    ours.execute_command("FUNCTION", "LOAD", "#!lua name=gamma\n"
                         "redis.register_function('g1', function() return 'from gigakv' end)")
    mine = ours.execute_command("FUNCTION", "DUMP")
    assert theirs.execute_command("FUNCTION", "RESTORE", mine) == b"OK"
    assert library_set(theirs) == library_set(ours)
    assert theirs.execute_command("FCALL", "g1", "0") == b"from gigakv"
    # A payload with a bad checksum or of a key is refused as Redis refuses it.
    theirs.set("k", "v")
    key_payload = theirs.dump("k")
    for client in (ours, theirs):
        for bad in (mine[:-1] + bytes([mine[-1] ^ 1]), key_payload):
            with pytest.raises(Exception) as error:
                client.execute_command("FUNCTION", "RESTORE", bad)
            outcomes.append(str(error.value))
    assert outcomes[-4:-2] == outcomes[-2:]


def load_two_libraries(client):
    for code in TWO_LIBRARIES:
        client.execute_command("FUNCTION", "LOAD", code)


def test_libraries_survive_a_restart_through_the_snapshot(server_factory):
    server = server_factory()
    client = server.client()
    load_two_libraries(client)
    client.set("key", "value")
    before = library_set(client)
    server.stop()  # SIGTERM with the default save points: the final save.
    server.expect_exit = False
    server.start()
    client = server.client()
    assert library_set(client) == before
    assert client.execute_command("FCALL", "a1", "0") == b"a1"
    assert client.info("memory")["number_of_libraries"] == 2
    assert client.info("memory")["number_of_functions"] == 3


def test_libraries_survive_sigkill_through_the_log(server_factory):
    server = server_factory("--appendonly", "yes", "--appendfsync", "always", "--save", "")
    client = server.client()
    load_two_libraries(client)
    client.execute_command("FUNCTION", "LOAD", "#!lua name=gone\n"
                           "redis.register_function('g', function() end)")
    client.execute_command("FUNCTION", "DELETE", "gone")
    client.execute_command("FUNCTION", "LOAD", "REPLACE", TWO_LIBRARIES[1].replace("#args",
                                                                                   "#args * 10"))
    client.execute_command("FCALL", "b1", "0", "x")
    before = library_set(client)
    server.expect_exit = True
    server.proc.kill()
    server.proc.wait(timeout=10)
    server.expect_exit = False
    server.start()
    client = server.client()
    assert library_set(client) == before
    assert client.execute_command("FCALL", "b1", "0", "x") == 10
    # A rewrite keeps them in its base; FUNCTION FLUSH is logged too.
    client.bgrewriteaof()
    wait_until(lambda: client.info("persistence")["aof_rewrite_in_progress"] == 0, 60)
    client.execute_command("FUNCTION", "DELETE", "alpha")
    after = library_set(client)
    server.stop()
    server.expect_exit = False
    server.start()
    client = server.client()
    assert library_set(client) == after
    client.execute_command("FUNCTION", "FLUSH")
    server.stop()
    server.expect_exit = False
    server.start()
    assert server.client().execute_command("FUNCTION", "LIST") == []


def test_snapshots_with_libraries_load_in_both_directions(server_factory, redis_factory):
    ours_server = server_factory()
    ours = ours_server.client()
    load_two_libraries(ours)
    assert ours.save()
    redis = redis_factory("--dbfilename", "from-gigakv.rdb")
    redis.stop()
    redis.expect_exit = False
    shutil.copy(ours_server.workdir / "dump.rdb", redis.workdir / "from-gigakv.rdb")
    redis.start()
    theirs = redis.client()
    assert library_set(theirs) == library_set(ours)
    theirs.execute_command("FUNCTION", "LOAD", "#!lua name=from_redis\n"
                           "redis.register_function('r1', function() return 'r' end)")
    assert theirs.save()
    reader = server_factory("--dbfilename", "from-redis.rdb")
    reader.stop()
    reader.expect_exit = False
    shutil.copy(redis.workdir / "from-gigakv.rdb", reader.workdir / "from-redis.rdb")
    reader.start()
    assert library_set(reader.client()) == library_set(theirs)
    assert reader.client().execute_command("FCALL", "r1", "0") == b"r"


def busy_function_session(start_server, *extra_args):
    """A function loops; others see BUSY naming FUNCTION KILL, FUNCTION STATS shows it, SCRIPT
    KILL is refused, FUNCTION KILL stops it."""
    srv = start_server("--busy-reply-threshold", "300", *extra_args)
    other = srv.raw()
    other.call_raw("FUNCTION", "LOAD", "#!lua name=busy\n"
                   "redis.register_function('spin', function() while true do end end)")
    looping = srv.raw()
    result = {}

    def run():
        looping.send_command("FCALL", "spin", "1", "akey", "arg")
        result["spin"] = looping.read_reply_raw()[1]

    runner = threading.Thread(target=run)
    runner.start()
    seen = {"busy": wait_until(lambda: (lambda r: r if r.startswith(b"-BUSY") else None)(
        other.call_raw("PING")), 20, interval=0.05, message="BUSY")}
    stats = other.call("FUNCTION", "STATS")
    running = dict(zip(stats[1][::2], stats[1][1::2])) if stats[1] else None
    seen["stats"] = (running[b"name"], running[b"command"]) if running else None
    seen["script kill"] = other.call_raw("SCRIPT", "KILL")
    seen["load while busy"] = other.call_raw("FUNCTION", "LOAD", "#!lua name=more\n"
                                             "redis.register_function('m', function() end)")
    seen["delete while busy"] = other.call_raw("FUNCTION", "DELETE", "busy")
    seen["function kill"] = other.call_raw("FUNCTION", "KILL")
    runner.join(timeout=20)
    assert not runner.is_alive()
    seen["killed"] = result["spin"]
    seen["after"] = other.call_raw("PING")
    seen["stats after"] = other.call_raw("FUNCTION", "STATS")
    # An EVAL script cannot be stopped by FUNCTION KILL, and FUNCTION STATS answers BUSY.
    runner = threading.Thread(target=lambda: looping.call_raw("EVAL", "while true do end", "0"))
    runner.start()
    wait_until(lambda: other.call_raw("PING").startswith(b"-BUSY"), 20, interval=0.05,
               message="BUSY")
    seen["function kill of eval"] = other.call_raw("FUNCTION", "KILL")
    seen["stats of eval"] = other.call_raw("FUNCTION", "STATS")
    seen["script kill of eval"] = other.call_raw("SCRIPT", "KILL")
    runner.join(timeout=20)
    assert not runner.is_alive()
    return seen


@pytest.mark.parametrize("io_threads", ["1", "2"])
def test_a_busy_function_answers_busy_and_stops_as_in_redis(server_factory, redis_factory, target,
                                                           io_threads):
    if target == "redis":
        pytest.skip("compares gigakv with redis-server")
    expected = busy_function_session(redis_factory)
    got = busy_function_session(server_factory, "--io-threads", io_threads)
    assert got == expected


def debug_reload_session(start_server):
    """DEBUG RELOAD and DEBUG LOADAOF empty the libraries with the dataset and load them back
    from the file (as Redis's emptyData does), so loading does not trip over the libraries
    already there."""
    srv = start_server("--appendonly", "yes", "--save", "")
    client = srv.client()
    load_two_libraries(client)
    seen = {"reload": client.execute_command("DEBUG", "RELOAD")}
    seen["after reload"] = library_set(client)
    client.execute_command("FUNCTION", "LOAD", "#!lua name=later\n"
                           "redis.register_function('l1', function() return 'l' end)")
    client.bgrewriteaof()
    wait_until(lambda: client.info("persistence")["aof_rewrite_in_progress"] == 0, 60)
    client.execute_command("FUNCTION", "DELETE", "beta")
    seen["loadaof"] = client.execute_command("DEBUG", "LOADAOF")
    seen["after loadaof"] = library_set(client)
    seen["call"] = client.execute_command("FCALL", "l1", "0")
    return seen


def test_debug_reload_and_loadaof_keep_the_libraries_as_redis(server_factory, redis_factory,
                                                              target):
    if target == "redis":
        pytest.skip("compares gigakv with redis-server")
    expected = debug_reload_session(redis_factory)
    assert debug_reload_session(server_factory) == expected
