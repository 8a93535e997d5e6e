"""EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT side by side with redis-server 7.0, byte for byte.

Each case is a short session of commands sent to both servers on fresh connections (after
FLUSHALL and SCRIPT FLUSH), in RESP2 and in RESP3; every reply must be the same bytes. The cases
cover Redis's conversions both ways (replies to Lua values in redis.call, and a script's result
to a reply, also after redis.setresp(3)), error texts (compile errors, run-time errors, errors
raised by commands inside scripts, redis.call misuse), the sandbox (globals, removed functions),
the libraries (cjson, bit, math.random on Redis's generator), KEYS and ARGV, the script cache and
read-only scripts.
"""

from __future__ import annotations

import hashlib

import pytest

from differential import both_protocols, compare_case


def sha(body: str) -> str:
    return hashlib.sha1(body.encode()).hexdigest()


DEFINED = ("local a = redis.call('incrby', KEYS[1], ARGV[1]) "
           "local b = redis.call('incrby', KEYS[2], a) return {a, b}")

# Each case: a name and its commands (argument lists).
CASES = [
    ("integers and strings", [
        ["EVAL", "return 1", "0"],
        ["EVAL", "return 'hello'", "0"],
        ["EVAL", "return 3.99", "0"],
        ["EVAL", "return -3.99", "0"],
        ["EVAL", "return 1e20", "0"],
        ["EVAL", "return", "0"],
        ["EVALSHA", sha(""), "0"],
        ["EVAL", "", "0"],
        ["EVALSHA", sha(""), "0"],
        ["EVAL", "return nil", "0"],
        ["EVAL", "return true", "0"],
        ["EVAL", "return false", "0"],
        ["EVAL", "return {1, 2, {3, 'x'}, 'y'}", "0"],
        ["EVAL", "return {1, nil, 3}", "0"],
        ["EVAL", "return {}", "0"],
        ["EVAL", "return {1, 2, true, false, 'z'}", "0"],
    ]),
    ("tables with fields", [
        ["EVAL", "return {ok='FINE'}", "0"],
        ["EVAL", "return redis.status_reply('ALL GOOD')", "0"],
        ["EVAL", "return {err='MYERR something'}", "0"],
        ["EVAL", "return redis.error_reply('MYERR custom')", "0"],
        ["EVAL", "return redis.error_reply('no code here')", "0"],
        ["EVAL", "return redis.error_reply('NOPE')", "0"],
        ["EVAL", "return redis.error_reply('-X y')", "0"],
        ["EVAL", "return redis.error_reply('-LONE')", "0"],
        ["EVAL", "return redis.error_reply('trailing\\r\\n')", "0"],
        ["EVAL", "return redis.status_reply('ok\\r\\nthere')", "0"],
        ["EVAL", "return {err='-DASHED error'}", "0"],
        ["EVAL", "return {ok='x', 1, 2}", "0"],
        ["EVAL", "return {1, 2, ok='x'}", "0"],
        ["EVAL", "return {double=3.5}", "0"],
        ["EVAL", "return {big_number='123456789012345678901234567890'}", "0"],
        ["EVAL", "return {map={a=1}}", "0"],
        ["EVAL", "return {set={a=true}}", "0"],
        ["EVAL", "return {verbatim_string={format='txt', string='hi'}}", "0"],
    ]),
    ("keys and args", [
        ["EVAL", "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}", "2", "k1", "k2",
         "a1", "a2"],
        ["EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"],
        ["EVAL", "return redis.call('get', KEYS[1])", "1", "k"],
        ["EVAL", "return redis.call('get', 'missing')", "0"],
        ["EVAL", "return redis.call('incrby', 'n', 5)", "0"],
        ["EVAL", "return redis.call('set', 'f', 1.5)", "0"],
        ["EVAL", "return redis.call('get', 'f')", "0"],
        ["EVAL", "return redis.call('set', 'f', 0.1)", "0"],
        ["EVAL", "return redis.call('get', 'f')", "0"],
        ["EVAL", "redis.call('rpush', 'l', 'a', 'b', 'c'); return redis.call('lrange', 'l', 0, -1)",
         "0"],
        ["EVAL", "return redis.call('ping')", "0"],
        ["EVAL", "return type(redis.call('ping'))", "0"],
        ["EVAL", "return redis.call('ping')['ok']", "0"],
        ["EVAL", "return redis.call('exists', 'k', 'nope')", "0"],
        ["EVAL", "return 1", "-1"],
        ["EVAL", "return 1", "3", "a"],
        ["EVAL", "return 1", "x"],
        ["EVAL", "return 1"],
    ]),
    ("replies to lua in resp3", [
        ["HSET", "h", "f", "v"],
        ["EVAL", "redis.setresp(3); return redis.call('hgetall', 'h')", "0"],
        ["EVAL", "redis.setresp(3); local r = redis.call('hgetall', 'h'); return r['map']['f']",
         "0"],
        ["SADD", "s", "m"],
        ["EVAL", "redis.setresp(3); return redis.call('smembers', 's')", "0"],
        ["EVAL", "redis.setresp(3); return redis.call('get', 'nothing')", "0"],
        ["EVAL", "redis.setresp(3); return type(redis.call('get', 'nothing'))", "0"],
        ["ZADD", "z", "1.5", "a"],
        ["EVAL", "redis.setresp(3); return redis.call('zscore', 'z', 'a')", "0"],
        ["EVAL", "redis.setresp(3); return redis.call('zscore', 'z', 'a')['double']", "0"],
        ["EVAL", "redis.setresp(3); return true", "0"],
        ["EVAL", "redis.setresp(3); return false", "0"],
        ["EVAL", "redis.setresp(2); return redis.call('hgetall', 'h')", "0"],
        ["EVAL", "redis.setresp(4)", "0"],
    ]),
    ("errors", [
        ["EVAL", "return 1 +", "0"],
        ["EVAL", "local t = nil; return t.x", "0"],
        ["EVAL", "error('plain')", "0"],
        ["EVAL", "error({err='CUSTOM table error'})", "0"],
        ["EVAL", "return redis.call('nosuchcommand')", "0"],
        ["EVAL", "return redis.call()", "0"],
        ["EVAL", "return redis.call('get')", "0"],
        ["EVAL", "return redis.call('get', {})", "0"],
        ["EVAL", "return redis.call('get', nil)", "0"],
        ["SET", "str", "x"],
        ["EVAL", "return redis.call('incr', 'str')", "0"],
        ["EVAL", "return redis.call('lpush', 'str', 'a')", "0"],
        ["EVAL", "return redis.pcall('incr', 'str')", "0"],
        ["EVAL", "local r = redis.pcall('incr', 'str'); return r['err']", "0"],
        ["EVAL", "return redis.pcall('nosuchcommand')", "0"],
        ["EVAL", "return redis.call('eval', 'return 1', '0')", "0"],
        ["EVAL", "return redis.call('multi')", "0"],
        ["EVAL", "return redis.call('subscribe', 'ch')", "0"],
        ["EVAL", "return redis.call('set', 'k')", "0"],
        ["EVAL", "local ok, e = pcall(function() redis.call('incr', 'str') end); return e['err']",
         "0"],
    ]),
    ("sandbox", [
        ["EVAL", "a = 5", "0"],
        ["EVAL", "return undefined_global", "0"],
        ["EVAL", "return type(loadfile)", "0"],
        ["EVAL", "return type(dofile)", "0"],
        ["EVAL", "return type(os)", "0"],
        ["EVAL", "return type(io)", "0"],
        ["EVAL", "return type(require)", "0"],
        ["EVAL", "return type(unpack)", "0"],
        ["EVAL", "return type(table.getn)", "0"],
        ["EVAL", "local t = {1,2,3}; return table.getn(t)", "0"],
        ["EVAL", "return {unpack({1, 2, 3})}", "0"],
        ["EVAL", "return tostring(1/3)", "0"],
        ["EVAL", "return tostring(10/2)", "0"],
        ["EVAL", "return string.format('%d %s %5.2f', 7, 'x', 3.14159)", "0"],
        ["EVAL", "return tonumber('0x10')", "0"],
        ["EVAL", "return '10' + 5", "0"],
        ["EVAL", "return {loadstring('return 1 + 1')()}", "0"],
        ["EVAL", "return loadstring('x = 1')", "0"],
        ["EVAL", "return type(loadstring(string.dump(function() return 1 end)))", "0"],
        ["EVAL", "local _, t = pairs(redis); return rawequal(t, redis)", "0"],
        ["EVAL", "return getmetatable('').__index == string", "0"],
        ["EVAL", "getmetatable('').__index.upper = nil", "0"],
        ["EVAL", "return ('x'):upper()", "0"],
    ]),
    ("libraries", [
        ["EVAL", "return cjson.encode({1, 2, 3})", "0"],
        ["EVAL", "return cjson.encode({a=1})", "0"],
        ["EVAL", "return cjson.encode({a={b={1,'x',true}}})", "0"],
        ["EVAL", "return cjson.encode(0.1)", "0"],
        ["EVAL", "return cjson.encode(1/3)", "0"],
        ["EVAL", "return cjson.encode({})", "0"],
        ["EVAL", "return cjson.encode('quote\" slash/ tab\t')", "0"],
        ["EVAL", "return cjson.decode('[1,2,{\"a\":3}]')[3]['a']", "0"],
        ["EVAL", "return cjson.encode(cjson.decode('{\"x\":[1,2,null]}'))", "0"],
        ["EVAL", "return cjson.decode('{bad')", "0"],
        ["EVAL", "return bit.band(0xff, 0x0f)", "0"],
        ["EVAL", "return bit.tohex(65535)", "0"],
        ["EVAL", "return bit.bxor(5, 3)", "0"],
        ["EVAL", "return redis.sha1hex('')", "0"],
        ["EVAL", "return redis.sha1hex('return 1')", "0"],
        ["EVAL", "return {math.random(100), math.random(100), math.random(1000)}", "0"],
        ["EVAL", "return tostring(math.random())", "0"],
        ["EVAL", "math.randomseed(42); return {math.random(100), math.random(5, 10)}", "0"],
        ["EVAL", "return redis.REDIS_VERSION", "0"],
        ["EVAL", "return redis.REDIS_VERSION_NUM", "0"],
    ]),
    ("script cache", [
        ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"],
        ["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
        ["EVAL", "return 1", "0"],
        ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "ffff"],
        ["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
        ["EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"],
        ["SCRIPT", "LOAD", "return KEYS[1]"],
        ["EVALSHA", sha("return KEYS[1]"), "1", "key"],
        ["SCRIPT", "LOAD", "return +"],
        ["SCRIPT", "FLUSH"],
        ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"],
        ["SCRIPT", "FLUSH", "ASYNC"],
        ["SCRIPT", "FLUSH", "BOGUS"],
        ["SCRIPT", "HELP"],
        ["SCRIPT", "NOSUCH"],
        ["EVALSHA", "nope", "0"],
        ["EVAL", "return +", "0"],
        ["SCRIPT", "EXISTS", sha("return +")],
        ["EVAL", "return 1", "-1"],
        ["SCRIPT", "EXISTS", sha("return 1")],
        ["EVALSHA", sha("return 1"), "-1"],
        ["EVALSHA", sha("nothing"), "x"],
    ]),
    ("read-only scripts", [
        ["EVAL_RO", "return redis.call('get', 'k')", "0"],
        ["EVAL_RO", "return redis.call('set', 'k', 'v')", "0"],
        ["EVAL_RO", "return redis.pcall('set', 'k', 'v')", "0"],
        ["SCRIPT", "LOAD", "return redis.call('set', 'k', 'v')"],
        ["EVALSHA_RO", sha("return redis.call('set', 'k', 'v')"), "0"],
        ["EXISTS", "k"],
    ]),
    ("shebang flags", [
        ["EVAL", "#!lua\nreturn x", "0"],
        ["EVAL", "#!lua\nreturn redis.call('set', 'a', 'b')", "0"],
        ["EVAL", "#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')", "0"],
        ["EVAL", "#!lua flags=no-writes\nreturn redis.pcall('set', 'a', 'b')", "0"],
        ["EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'a')", "0"],
        ["EVAL", "#!lua flags=no-writes,bogus\nreturn 1", "0"],
        ["EVAL", "#!js\nreturn 1", "0"],
        ["EVAL", "#! lua\nreturn 1", "0"],
        ["EVAL", "#!lua foo=bar\nreturn 1", "0"],
        ["EVAL", "#!lua flags=\nreturn 1", "0"],
        ["EVAL", "#!lua", "0"],
        ["EVAL", "#!lua  flags=no-writes \nreturn 1", "0"],
        ["EVAL", "#!lua\tflags=no-writes\r\nreturn 1", "0"],
        ["EVAL", "#!lua flags=no-writes,\nreturn 1", "0"],
        ["EVAL", "#!lua flags=no-writes,,allow-oom\nreturn 1", "0"],
        ["EVAL", "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\n"
                 "return 1", "0"],
        ["EVAL_RO", "#!lua\nreturn 1", "0"],
        ["EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"],
        ["SCRIPT", "LOAD", "#!lua flags=bogus\nreturn 1"],
        ["SCRIPT", "EXISTS", sha("#!lua flags=bogus\nreturn 1")],
        ["SCRIPT", "LOAD", "#!lua\nreturn 1"],
        ["EVALSHA_RO", sha("#!lua\nreturn 1"), "0"],
    ]),
    ("databases", [
        ["SELECT", "3"],
        ["EVAL", "redis.call('set', 'in3', 'x'); redis.call('select', 5); "
                 "redis.call('set', 'in5', 'y'); return 1", "0"],
        ["EXISTS", "in3"],
        ["EXISTS", "in5"],
        ["SELECT", "5"],
        ["EXISTS", "in5"],
        ["SELECT", "0"],
    ]),
    # ioredis's defineCommand: EVALSHA first; on NOSCRIPT the same call as EVAL, which caches
    # the script for the EVALSHAs that follow.
    ("ioredis defineCommand", [
        ["EVALSHA", sha(DEFINED), "2", "{u}:a", "{u}:b", "5"],
        ["EVAL", DEFINED, "2", "{u}:a", "{u}:b", "5"],
        ["EVALSHA", sha(DEFINED), "2", "{u}:a", "{u}:b", "7"],
        ["EVALSHA", sha(DEFINED).upper(), "2", "{u}:a", "{u}:b", "1"],
        ["MGET", "{u}:a", "{u}:b"],
    ]),
    ("script debug", [
        ["SCRIPT", "DEBUG", "NO"],
        ["SCRIPT", "DEBUG", "no"],
        ["SCRIPT", "DEBUG", "maybe"],
        ["SCRIPT", "DEBUG"],
        ["SCRIPT", "DEBUG", "NO", "extra"],
    ]),
]


@both_protocols
@pytest.mark.parametrize("case", CASES, ids=[name for name, _ in CASES])
def test_scripts_reply_as_redis(server, real_redis, target, protocol, case):
    compare_case(server, real_redis, target, protocol, case,
                 reset=(("FLUSHALL",), ("SCRIPT", "FLUSH")))


def test_a_script_is_atomic_across_io_threads(server_factory, target):
    """A script incrementing keys on many shards, run by two clients, while two other clients
    on the other I/O thread read all the keys: every read sees them all equal, never a script
    half-done; at the end each key counts every script. (Without the exclusive gate the readers
    see torn states within a few hundred reads.)"""
    import threading

    if target == "redis":
        pytest.skip("gigakv's I/O threads")
    server = server_factory("--io-threads", "2")
    keys = [f"atomic:{i}" for i in range(64)]
    script = "for i = 1, #KEYS do redis.call('incr', KEYS[i]) end return #KEYS"
    runs_per_writer = 500
    torn = []
    reads = [0, 0]
    done = threading.Event()
    # Connections alternate between the two I/O threads: writer, reader, writer, reader.
    conns = [server.client() for _ in range(4)]
    for conn in conns:
        conn.ping()

    def writer(conn):
        for _ in range(runs_per_writer):
            assert conn.eval(script, len(keys), *keys) == len(keys)

    def reader(conn, index):
        while not done.is_set() and reads[index] < 200_000:
            values = conn.mget(keys)
            reads[index] += 1
            if len(set(values)) != 1:
                torn.append(values)
                return

    writers = [threading.Thread(target=writer, args=(conns[i],)) for i in (0, 2)]
    readers = [threading.Thread(target=reader, args=(conns[i], n)) for n, i in enumerate((1, 3))]
    for thread in readers + writers:
        thread.start()
    for thread in writers:
        thread.join(timeout=120)
    done.set()
    for thread in readers:
        thread.join(timeout=120)
    assert not torn, (reads, [sorted(set(v)) for v in torn[:2]])
    assert min(reads) > 0
    final = server.client().mget(keys)
    assert final == [str(2 * runs_per_writer).encode()] * len(keys)


def busy_script_session(start_server, *extra_args):
    """Runs the busy-script scenario on a fresh server; returns what the clients saw.

    A client runs an endless script; another gets BUSY (only once the threshold passed), stops
    it with SCRIPT KILL and finds the server serving normally. Then a script that wrote and
    loops: SCRIPT KILL is refused (UNKILLABLE) and SHUTDOWN NOSAVE ends the server.
    """
    import threading

    from e2e_support import wait_until

    srv = start_server("--busy-reply-threshold", "300", *extra_args)
    seen = {}
    other = srv.raw()
    seen["kill idle"] = other.call_raw("SCRIPT", "KILL")
    looping = srv.raw()
    result = {}

    def run(args, key):
        looping.send_command(*args)
        try:
            result[key] = looping.read_reply_raw()[1]
        except Exception as error:  # The server shut down under it (SHUTDOWN NOSAVE).
            result[key] = repr(type(error))

    runner = threading.Thread(target=run, args=(["EVAL", "local i = 0 while true do i = i + 1 end",
                                                 "0"], "loop"))
    runner.start()
    busy = wait_until(lambda: (lambda r: r if r.startswith(b"-BUSY") else None)(
        other.call_raw("PING")), 20, interval=0.05, message="BUSY")
    seen["busy"] = busy
    seen["get while busy"] = other.call_raw("GET", "k")
    seen["script kill"] = other.call_raw("SCRIPT", "KILL")
    runner.join(timeout=20)
    assert not runner.is_alive()
    seen["killed script"] = result["loop"]
    seen["after"] = [other.call_raw("SET", "k", "v"), other.call_raw("GET", "k"),
                     looping.call_raw("PING")]
    # A kill reaches a script that catches errors in a loop.
    runner = threading.Thread(target=run, args=(
        ["EVAL", "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end",
         "0"], "pcall loop"))
    runner.start()
    wait_until(lambda: other.call_raw("PING").startswith(b"-BUSY"), 20, interval=0.05,
               message="BUSY")
    seen["kill pcall loop"] = other.call_raw("SCRIPT", "KILL")
    runner.join(timeout=20)
    assert not runner.is_alive()
    seen["killed pcall loop"] = result["pcall loop"]
    # A script that wrote cannot be killed; SHUTDOWN NOSAVE still ends the server.
    runner = threading.Thread(target=run, args=(
        ["EVAL", "redis.call('set', 'w', '1') while true do end", "0"], "writer"))
    runner.start()
    wait_until(lambda: other.call_raw("PING").startswith(b"-BUSY"), 20, interval=0.05,
               message="BUSY")
    seen["kill a writer"] = other.call_raw("SCRIPT", "KILL")
    seen["shutdown saving"] = other.call_raw("SHUTDOWN")  # BUSY: only NOSAVE may end it.
    srv.expect_exit = True
    other.send_command("SHUTDOWN", "NOSAVE")
    assert srv.wait_exit(20) is not None
    runner.join(timeout=20)
    return seen


@pytest.mark.parametrize("io_threads", ["1", "2"])
def test_a_busy_script_answers_busy_and_stops_as_in_redis(server_factory, redis_factory, target,
                                                         io_threads):
    if target == "redis":
        pytest.skip("compares gigakv with redis-server")
    expected = busy_script_session(redis_factory)
    got = busy_script_session(server_factory, "--io-threads", io_threads)
    assert got == expected


def test_redis_py_lock(server):
    """redis-py's Lock runs its release, extend and reacquire as scripts (EVALSHA, with SCRIPT
    LOAD after NOSCRIPT): the lock works against gigakv as against Redis."""
    import redis as redis_py

    client = server.client()
    client.script_flush()
    lock = client.lock("resource", timeout=10)
    assert lock.acquire(blocking=False)
    other = server.client().lock("resource", timeout=10, blocking_timeout=0.2)
    assert not other.acquire()  # Held: the blocking attempt gives up after 0.2 s.
    assert lock.owned() and lock.locked()
    assert lock.extend(5)
    assert 10_000 < client.pttl("resource") <= 15_000
    assert lock.reacquire()
    assert 5_000 < client.pttl("resource") <= 10_000
    lock.release()
    assert not client.exists("resource")
    assert other.acquire()
    # A lock whose key now holds another owner's token: the release script refuses it.
    stale = client.lock("resource", timeout=10)
    stale.local.token = b"not-the-owner"
    with pytest.raises(redis_py.exceptions.LockNotOwnedError):
        stale.release()
    other.release()
    assert not client.exists("resource")


def test_registered_script_and_rate_limiter(server):
    """A registered script (EVALSHA, loaded on NOSCRIPT, as ioredis's defineCommand and
    redis-py's register_script do) implementing a sliding-window rate limiter on a sorted set."""
    client = server.client()
    client.script_flush()
    limiter = client.register_script("""
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count >= limit then
  return {0, count}
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return {1, count + 1}
""")
    allowed = [limiter(keys=["rl:user"], args=[1000 + i, 100, 5, f"req{i}"])[0] for i in range(8)]
    assert allowed == [1, 1, 1, 1, 1, 0, 0, 0]
    # 100 ms later the window has moved past the first requests.
    assert limiter(keys=["rl:user"], args=[1150, 100, 5, "late"]) == [1, 1]
    assert client.zcard("rl:user") == 1
    assert 0 < client.pttl("rl:user") <= 100
    assert client.script_exists(limiter.sha) == [True]


def test_errors_of_called_commands_count_once_as_in_redis(server, real_redis, target):
    """A command's error that a script passes on counts in errorstats once (as the command's),
    not again for the script's reply; the script's own errors count."""
    if target == "redis":
        pytest.skip("compares gigakv with redis-server")

    def stats(srv):
        conn = srv.client()
        conn.config_resetstat()
        conn.set("str", "x")
        for script in ["return redis.call('incr', 'str')", "return redis.pcall('incr', 'str')",
                       "redis.pcall('incr', 'str') return 1", "return redis.error_reply('E x')",
                       "error('boom')", "local ok, e = pcall(redis.call, 'incr', 'str') error(e)"]:
            try:
                conn.eval(script, 0)
            except Exception:
                pass
        errorstats = conn.info("errorstats")
        commandstats = conn.info("commandstats")
        return (errorstats, conn.info("stats")["total_error_replies"],
                {name: (stat["calls"], stat["failed_calls"])
                 for name, stat in commandstats.items() if name in ("cmdstat_incr", "cmdstat_eval")})

    assert stats(server) == stats(real_redis)


def test_script_debug_yes_is_refused_for_want_of_a_debugger(server, target):
    if target == "redis":
        pytest.skip("gigakv has no Lua debugger")
    conn = server.raw()
    for mode in ("YES", "SYNC"):
        assert conn.call_raw("SCRIPT", "DEBUG", mode) == (
            b"-ERR SCRIPT DEBUG YES and SYNC are not supported: gigakv has no Lua debugger\r\n")
    assert conn.call_raw("EVAL", "return 1", "0") == b":1\r\n"  # Scripts run as before.


def new_connections_while_busy_session(start_server, *extra_args):
    """While a script is busy, connections opened afterwards are accepted and served: PING gets
    BUSY, SCRIPT KILL from a new connection stops the script (as `redis-cli SCRIPT KILL` does)."""
    import threading

    from e2e_support import wait_until

    srv = start_server("--busy-reply-threshold", "200", *extra_args)
    watcher = srv.raw()
    looping = srv.raw()
    result = {}

    def run():
        looping.send_command("EVAL", "while true do end", "0")
        result["loop"] = looping.read_reply_raw()[1]

    runner = threading.Thread(target=run)
    runner.start()
    wait_until(lambda: watcher.call_raw("PING").startswith(b"-BUSY"), 20, interval=0.05,
               message="BUSY")
    seen = {"pings": [srv.raw().call_raw("PING") for _ in range(4)]}
    seen["kill"] = srv.raw().call_raw("SCRIPT", "KILL")
    runner.join(timeout=20)
    assert not runner.is_alive()
    seen["killed"] = result["loop"]
    seen["after"] = srv.raw().call_raw("PING")
    return seen


@pytest.mark.parametrize("io_threads", ["1", "2"])
def test_new_connections_are_served_while_a_script_is_busy(server_factory, redis_factory, target,
                                                          io_threads):
    if target == "redis":
        pytest.skip("compares gigakv with redis-server")
    expected = new_connections_while_busy_session(redis_factory)
    got = new_connections_while_busy_session(server_factory, "--io-threads", io_threads)
    assert got == expected
