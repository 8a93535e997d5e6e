"""RDB snapshots end to end: SAVE/BGSAVE/SHUTDOWN/SIGTERM write dump.rdb, start-up loads it, files
move between gigakv and redis-server 7.0 both ways with identical contents (keys, types, values,
expiry times to the millisecond, 16 databases), redis-check-rdb accepts gigakv's files, a BGSAVE
holds the dataset as of its start while clients write, and the errors (-LOADING, -MISCONF,
"Background save already in progress") read as Redis's."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from e2e_support import (ServerProcess, build_argv, dump_dataset, fill_every_type, parse_info,
                         wait_until)

REDIS_CHECK_RDB = shutil.which("redis-check-rdb")


def _encodings(client, keys) -> dict:
    return {key: client.object("encoding", key) for key in keys}


_ENCODED_KEYS = ["list", "biglist", "intset", "set", "zset", "bigzset", "hash", "bighash", "int",
                 "bin"]


def _persistence(client) -> dict:
    return {name: str(value) for name, value in client.info("persistence").items()}


def _wait_bgsave_done(client, timeout=60.0):
    wait_until(lambda: _persistence(client)["rdb_bgsave_in_progress"] == "0", timeout,
               message="background save to finish")


def _restart(server: ServerProcess) -> None:
    server.stop()
    server.expect_exit = False
    server.start()


def test_shutdown_saves_and_start_loads_everything(server_factory):
    server = server_factory()
    client = server.client()
    fill_every_type(client)
    before = dump_dataset(client)
    encodings = _encodings(client, _ENCODED_KEYS)
    _restart(server)  # SIGTERM with the default save points: the final save
    client = server.client()
    assert dump_dataset(client) == before
    assert _encodings(client, _ENCODED_KEYS) == encodings
    info = _persistence(client)
    assert int(info["rdb_last_load_keys_loaded"]) == len(before)
    assert info["rdb_changes_since_last_save"] == "0"
    log = server.log_text()
    assert "Saving the final RDB snapshot before exiting." in log
    assert "Done loading RDB, keys loaded: %d" % len(before) in log


def test_gigakv_file_loads_into_redis_and_passes_redis_check_rdb(server_factory, redis_factory):
    server = server_factory()
    client = server.client()
    fill_every_type(client)
    before = dump_dataset(client)
    assert client.save()
    path = server.workdir / "dump.rdb"
    if REDIS_CHECK_RDB:
        check = subprocess.run([REDIS_CHECK_RDB, str(path)], capture_output=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
        assert b"RDB looks OK" in check.stdout
    redis = redis_factory("--dbfilename", "from-gigakv.rdb")
    redis.stop()  # (without save points: saves nothing)
    redis.expect_exit = False
    shutil.copy(path, redis.workdir / "from-gigakv.rdb")
    redis.start()
    theirs = redis.client()
    assert dump_dataset(theirs) == before
    assert _encodings(theirs, _ENCODED_KEYS) == _encodings(client, _ENCODED_KEYS)


@pytest.mark.parametrize("compression", ["yes", "no"])
def test_redis_file_loads_into_gigakv(server_factory, redis_factory, compression):
    redis = redis_factory("--rdbcompression", compression)
    theirs = redis.client()
    fill_every_type(theirs)
    before = dump_dataset(theirs)
    assert theirs.save()
    server = server_factory("--dbfilename", "from-redis.rdb")
    server.stop()
    server.expect_exit = False
    shutil.copy(redis.workdir / "dump.rdb", server.workdir / "from-redis.rdb")
    server.start()
    ours = server.client()
    assert dump_dataset(ours) == before
    assert _encodings(ours, _ENCODED_KEYS) == _encodings(theirs, _ENCODED_KEYS)


def test_shutdown_nosave_save_and_no_save_points(server_factory):
    server = server_factory()
    client = server.client()
    client.set("a", "1")
    assert client.save()
    client.set("b", "2")
    conn = server.raw()
    conn.send_command("SHUTDOWN", "NOSAVE")
    assert conn.read_until_closed() == b""
    server.wait_exit(30)
    server.expect_exit = False
    server.start()
    client = server.client()
    assert client.get("a") == b"1" and client.get("b") is None

    bare = server_factory("--save", "")
    bare_client = bare.client()
    bare_client.set("k", "v")
    _restart(bare)  # No save points: SIGTERM saves nothing.
    assert not (bare.workdir / "dump.rdb").exists()
    bare_client = bare.client()
    bare_client.set("k", "v")
    conn = bare.raw()
    conn.send_command("SHUTDOWN", "SAVE")
    conn.read_until_closed()
    bare.wait_exit(30)
    assert (bare.workdir / "dump.rdb").exists()
    bare.expect_exit = False
    bare.start()
    assert bare.client().get("k") == b"v"


def test_shutdown_argument_errors_match_redis(server_factory, redis_factory):
    ours, theirs = server_factory().raw(), redis_factory().raw()
    for args in (["SHUTDOWN", "SAVE", "NOSAVE"], ["SHUTDOWN", "ABORT", "NOW"], ["SHUTDOWN", "x"],
                 ["SHUTDOWN", "ABORT"], ["BGSAVE", "x"], ["BGSAVE", "SCHEDULE", "x"],
                 ["DEBUG", "RELOAD", "x"]):
        assert ours.call_raw(*args) == theirs.call_raw(*args), args


def test_corrupt_file_stops_start_up_naming_file_and_offset(server_factory, tmp_path):
    server = server_factory()
    client = server.client()
    fill_every_type(client)
    assert client.save()
    server.stop()
    path = server.workdir / "dump.rdb"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    proc = subprocess.run(server.argv, cwd=server.workdir, capture_output=True, timeout=60)
    assert proc.returncode != 0
    text = (proc.stdout + proc.stderr).decode(errors="replace")
    assert str(path) in text and "offset" in text, text
    assert "Terminating server after rdb file reading failure." in text


def test_clients_get_loading_while_the_file_loads(server_factory):
    server = server_factory()
    client = server.client()
    client.execute_command("DEBUG", "POPULATE", 4000)
    assert client.save()
    server.stop()
    argv = server.argv + ["--key-load-delay", "1000"]  # about 4 s of loading
    loading = ServerProcess(argv, server.port, server.workdir, server.workdir / "loading.log")
    log = open(loading.log_path, "ab")
    loading.proc = subprocess.Popen(argv, cwd=server.workdir, stdout=log, stderr=subprocess.STDOUT)
    try:
        def connect():
            try:
                return loading.raw()
            except OSError:
                return None
        conn = wait_until(connect, 30, message="the listener")
        assert conn.call_raw("PING") == b"-LOADING Redis is loading the dataset in memory\r\n"
        assert conn.call_raw("GET", "key:1") == (
            b"-LOADING Redis is loading the dataset in memory\r\n")
        info = parse_info(conn.call("INFO", "persistence"))["Persistence"]
        assert info["loading"] == "1"
        assert 0.0 <= float(info["loading_loaded_perc"]) <= 100.0
        assert int(info["loading_total_bytes"]) == (server.workdir / "dump.rdb").stat().st_size
        wait_until(lambda: conn.call_raw("PING") == b"+PONG\r\n", 60, message="the load to end")
        assert conn.call("DBSIZE") == 4000
        assert parse_info(conn.call("INFO", "persistence"))["Persistence"]["loading"] == "0"
    finally:
        loading.stop()
        log.close()


def test_bgsave_replies_while_one_runs_and_flushall_stops_it(server_factory):
    server = server_factory("--rdb-key-save-delay", "200")
    client = server.client()
    client.execute_command("DEBUG", "POPULATE", 20000)
    conn = server.raw()
    assert conn.call_raw("BGSAVE") == b"+Background saving started\r\n"
    busy = b"-ERR Background save already in progress\r\n"
    assert conn.call_raw("BGSAVE") == busy
    assert conn.call_raw("BGSAVE", "SCHEDULE") == busy
    assert conn.call_raw("SAVE") == busy
    info = _persistence(client)
    assert info["rdb_bgsave_in_progress"] == "1"
    assert info["current_save_keys_total"] == "20000"
    assert int(info["rdb_current_bgsave_time_sec"]) >= 0
    assert conn.call_raw("FLUSHALL") == b"+OK\r\n"  # stops it, then saves the empty dataset
    assert _persistence(client)["rdb_bgsave_in_progress"] == "0"
    assert not list(server.workdir.glob("temp-*.rdb"))
    assert "Background saving terminated by request" in server.log_text()
    assert client.config_set("rdb-key-save-delay", 0)
    # Inside EXEC Redis only schedules a BGSAVE; the cron starts it.
    assert conn.call_raw("MULTI") == b"+OK\r\n"
    conn.call_raw("BGSAVE")
    assert conn.call_raw("EXEC") == b"*1\r\n+Background saving scheduled\r\n"
    wait_until(lambda: int(_persistence(client)["rdb_saves"]) >= 3, 30,
               message="the scheduled save")
    _wait_bgsave_done(client)
    assert _persistence(client)["rdb_last_bgsave_status"] == "ok"


def test_multi_bgsave_matches_redis(server_factory, redis_factory):
    for srv in (server_factory(), redis_factory()):
        conn = srv.raw()
        conn.call("MULTI")
        conn.call("BGSAVE")
        assert conn.call_raw("EXEC") == b"*1\r\n+Background saving scheduled\r\n"


def _start_on_its_file(server_factory, server: ServerProcess) -> ServerProcess:
    """A fresh gigakv started on a copy of `server`'s dump.rdb."""
    reader = server_factory("--save", "")
    reader.stop()
    reader.expect_exit = False
    shutil.copy(server.workdir / "dump.rdb", reader.workdir / "dump.rdb")
    reader.start()
    return reader


def test_bgsave_file_holds_the_dataset_as_of_its_start(server_factory):
    """Writes, deletes and new keys while the save runs (slowed per key) are not in the file."""
    server = server_factory("--rdb-key-save-delay", "50", "--save", "")
    client = server.client()
    client.execute_command("DEBUG", "POPULATE", 30000, "k", 20)
    client.hset("h", mapping={f"f{i}": i for i in range(1000)})
    client.rpush("l", *range(1000))
    before = dump_dataset(client)
    assert client.bgsave()
    pipe = client.pipeline(transaction=False)
    for i in range(0, 30000, 3):
        pipe.set(f"k:{i}", "changed")
        pipe.delete(f"k:{i + 1}")
        pipe.set(f"new:{i}", "n")
    pipe.hset("h", "f1", "changed")
    pipe.rpush("l", "more")
    pipe.execute()
    assert _persistence(client)["rdb_bgsave_in_progress"] == "1", "the save ended too soon"
    _wait_bgsave_done(client)
    info = _persistence(client)
    assert info["rdb_last_bgsave_status"] == "ok"
    # 3 writes per 3 keys plus the two collections, counted after the save's instant.
    assert int(info["rdb_changes_since_last_save"]) == 30000 + 2
    assert dump_dataset(_start_on_its_file(server_factory, server).client()) == before


def test_bgsave_of_a_million_keys_holds_exactly_the_dataset_as_of_its_start(server_factory):
    """1M keys; while the BGSAVE runs (slowed to a few seconds), a third of the first 300,000
    keys is overwritten, a third deleted, and new keys added: the file holds exactly the
    1M original keys and values."""
    keys = 1_000_000
    # Slow enough to outlast the writes on any build; set to 0 once they are done.
    server = server_factory("--rdb-key-save-delay", "100", "--save", "")
    client = server.client()
    client.execute_command("DEBUG", "POPULATE", keys)  # key:N -> value:N
    assert client.bgsave()
    pipe = client.pipeline(transaction=False)
    for i in range(0, 300_000, 3):
        pipe.set(f"key:{i}", "changed")
        pipe.delete(f"key:{i + 1}")
        pipe.set(f"new:{i}", "n")
        if len(pipe) >= 30_000:
            pipe.execute()
    pipe.execute()
    assert _persistence(client)["rdb_bgsave_in_progress"] == "1", "the save ended too soon"
    client.config_set("rdb-key-save-delay", 0)
    _wait_bgsave_done(client, timeout=120)
    assert _persistence(client)["rdb_last_bgsave_status"] == "ok"
    loaded = _start_on_its_file(server_factory, server).client()
    assert loaded.dbsize() == keys
    chunk = 20_000
    for start in range(0, keys, chunk):
        names = [f"key:{i}" for i in range(start, start + chunk)]
        want = [f"value:{i}".encode() for i in range(start, start + chunk)]
        assert loaded.mget(names) == want, start


def test_failed_bgsave_refuses_writes_with_misconf_as_redis(server_factory, redis_factory):
    results = []
    protected = ("--enable-protected-configs", "yes")
    for srv in (server_factory(*protected), redis_factory("--save", "3600 1", *protected)):
        (srv.workdir / "blocked.rdb").mkdir()  # a rename onto a directory fails
        client = srv.client()
        conn = srv.raw()
        replies = [conn.call_raw("CONFIG", "SET", "dbfilename", "blocked.rdb"),
                   conn.call_raw("SAVE"), conn.call_raw("SET", "k", "v")]
        conn.call_raw("BGSAVE")
        _wait_bgsave_done(client)
        replies.append(_persistence(client)["rdb_last_bgsave_status"].encode())
        for args in (["SET", "k", "v"], ["PING"], ["GET", "k"], ["DEL", "k"]):
            replies.append(conn.call_raw(*args))
        conn.call_raw("MULTI")
        replies.append(conn.call_raw("INCR", "n"))
        replies.append(conn.call_raw("EXEC"))
        replies.append(conn.call_raw("CONFIG", "SET", "stop-writes-on-bgsave-error", "no"))
        replies.append(conn.call_raw("SET", "k", "v2"))
        replies.append(conn.call_raw("CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"))
        replies.append(conn.call_raw("SET", "k", "v3"))
        replies.append(conn.call_raw("CONFIG", "SET", "dbfilename", "good.rdb"))
        conn.call_raw("BGSAVE")
        _wait_bgsave_done(client)
        replies.append(conn.call_raw("SET", "k", "v4"))
        replies.append(conn.call_raw("CONFIG", "SET", "dbfilename", "a/b.rdb"))
        results.append(replies)
    assert results[0] == results[1]
    assert results[0][4].startswith(b"-MISCONF ")


def test_dir_and_dbfilename_are_protected_configs_as_in_redis(server_factory, redis_factory):
    replies = []
    for srv in (server_factory(), redis_factory()):
        conn = srv.raw()
        replies.append([conn.call_raw("CONFIG", "SET", "dbfilename", "x.rdb"),
                        conn.call_raw("CONFIG", "SET", "dir", "/tmp"),
                        conn.call_raw("CONFIG", "SET", "maxmemory", "1", "dir", "/tmp")])
    assert replies[0] == replies[1]
    assert b"can't set protected config" in replies[0][0]


def test_save_points_start_a_background_save(server_factory):
    server = server_factory("--save", "1 1")
    client = server.client()
    client.set("k", "v")
    wait_until(lambda: _persistence(client)["rdb_changes_since_last_save"] == "0", 30,
               message="the save point's background save")
    _wait_bgsave_done(client)
    assert "1 changes in 1 seconds. Saving..." in server.log_text()
    assert (server.workdir / "dump.rdb").exists()


def test_debug_reload_and_lastsave(server_factory):
    server = server_factory()
    client = server.client()
    fill_every_type(client)
    before = dump_dataset(client)
    first = client.lastsave()
    assert client.execute_command("DEBUG", "RELOAD") == b"OK"
    assert dump_dataset(client) == before
    assert client.lastsave() >= first
    client.set("extra", "1")
    assert client.execute_command("DEBUG", "RELOAD", "NOSAVE") == b"OK"
    assert client.get("extra") is None
