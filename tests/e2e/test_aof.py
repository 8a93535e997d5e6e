"""The append-only log end to end: with `appendonly yes` a restart -- after SHUTDOWN, SIGTERM or
SIGKILL -- gives back the dataset as it was (every type, TTLs to the millisecond, 16 databases,
transactions, random and blocking effects, flushes, SWAPDB, MOVE, COPY, RENAME, expiry); under
`appendfsync always` every acknowledged write survives SIGKILL from many writers on every I/O
thread and no transaction is half applied; the directory reads as Redis 7 lays it out; a torn
tail is cut and damage stops start-up with the file and offset."""

from __future__ import annotations

import random
import signal
import subprocess
import threading
import time

import pytest
import redis

from e2e_support import (
    ServerProcess,
    dump_dataset,
    exercise_every_effect,
    fill_every_type,
    wait_until,
)

AOF_ARGS = ("--appendonly", "yes", "--save", "")


def _kill(server: ServerProcess) -> None:
    """SIGKILL: no chance to flush anything."""
    server.expect_exit = True
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=10)
    for client in server._clients:
        try:
            client.close()
        except Exception:  # the server is gone; closing may fail
            pass
    server._clients.clear()


def _start_again(server: ServerProcess) -> None:
    server.expect_exit = False
    server.start()


@pytest.mark.parametrize("fsync", ["always", "everysec"])
def test_dataset_survives_sigkill_and_shutdown(server_factory, fsync):
    server = server_factory(*AOF_ARGS, "--appendfsync", fsync)
    client = server.client()
    exercise_every_effect(client)
    before = dump_dataset(client)
    # Replayed with the key in place (it had not expired when APPEND ran), then expired.
    assert before.pop((0, b"gone-later"))[1] == b"xy"
    if fsync == "everysec":
        time.sleep(0.2)  # Written (SIGKILL spares the page cache; fsync is for power loss).
    _kill(server)
    _start_again(server)
    client = server.client()
    after = dump_dataset(client)
    after.pop((0, b"gone-later"), None)
    assert after == before
    wait_until(lambda: client.exists("gone-later") == 0, 5, message="gone-later to expire")
    after = dump_dataset(client)
    server.expect_exit = True
    with pytest.raises(redis.ConnectionError):
        client.execute_command("SHUTDOWN")
    server.proc.wait(timeout=10)
    _start_again(server)
    assert dump_dataset(server.client()) == after
    log = server.log_text()
    assert "Creating AOF base file appendonly.aof.1.base.rdb on server start" in log
    assert "DB loaded from append only file" in log


def test_evictions_and_active_expiry_are_logged(server_factory):
    """Keys evicted under maxmemory and keys removed by active expiry are removals in the log:
    after SIGKILL and a restart (with more room, so nothing is evicted at load) the dataset is
    the one the server had, not the one the writes alone would give."""
    server = server_factory(*AOF_ARGS, "--maxmemory-policy", "allkeys-lru", "--hz", "100")
    client = server.client()
    if client.info("memory")["mem_allocator"] != "libc":
        pytest.skip("used_memory is the resident size here (a sanitizer's allocator): evicting "
                    "does not lower it")
    # 12 MB of room above what the server itself takes (more under a sanitizer).
    client.config_set("maxmemory", client.info("memory")["used_memory"] + (12 << 20))
    value = "v" * 1000
    for start in range(0, 40000, 500):
        pipe = client.pipeline(transaction=False)
        for i in range(start, start + 500):
            pipe.set(f"key:{i}", value)
        pipe.execute()
    stats = client.info("stats")
    assert stats["evicted_keys"] > 0
    pipe = client.pipeline(transaction=False)
    for i in range(200):
        pipe.set(f"short:{i}", "x", px=20)
    pipe.execute()
    # Active expiry, not lookups, removes them: wait until no key in db 0 has a TTL.
    wait_until(
        lambda: client.info("keyspace")["db0"]["expires"] == 0, 10, message="active expiry"
    )
    assert client.info("stats")["expired_keys"] > 0
    # Reading the dataset must not evict more of it meanwhile.
    client.config_set("maxmemory", "0")
    before = dump_dataset(client)
    assert 0 < len(before) < 40000
    assert not any(key.startswith(b"short:") for _, key in before)
    _kill(server)
    _start_again(server)
    assert dump_dataset(server.client()) == before


def test_directory_layout_and_info(server_factory):
    server = server_factory(*AOF_ARGS, "--appendfsync", "always")
    client = server.client()
    client.set("k", "v")
    directory = server.workdir / "appendonlydir"
    assert sorted(p.name for p in directory.iterdir()) == [
        "appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.gkv", "appendonly.aof.manifest"]
    assert (directory / "appendonly.aof.manifest").read_text() == (
        "file appendonly.aof.1.base.rdb seq 1 type b\n"
        "file appendonly.aof.1.incr.gkv seq 1 type i\n")
    assert (directory / "appendonly.aof.1.incr.gkv").read_bytes()[:8] == b"GKVLOG\r\n"
    info = {name: str(value) for name, value in client.info("persistence").items()}
    assert info["aof_enabled"] == "1"
    assert info["aof_last_write_status"] == "ok"
    # The bytes written: the log's file is longer by the space reserved ahead of its writes.
    size = (directory / "appendonly.aof.1.base.rdb").stat().st_size + \
        len(_written_bytes(directory / "appendonly.aof.1.incr.gkv"))
    assert int(info["aof_current_size"]) == size
    assert int(info["aof_base_size"]) == (directory / "appendonly.aof.1.base.rdb").stat().st_size
    # dump.rdb is not what a server with the log loads (as Redis).
    client.set("only-in-rdb", "x")
    client.save()
    client.delete("only-in-rdb")
    _kill(server)
    _start_again(server)
    assert server.client().get("only-in-rdb") is None


def _writer(port, index, stop, acked, errors):
    """Writes until told to stop; records the last value each key was acknowledged with."""
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
    counter = f"counter:{index}"
    value = 0
    try:
        while not stop.is_set():
            value += 1
            if value % 5 == 0:
                pipe = client.pipeline(transaction=True)
                pipe.incr(f"tx:{index}:a")
                pipe.incr(f"tx:{index}:b")
                pipe.execute()
                acked[f"tx:{index}"] = acked.get(f"tx:{index}", 0) + 1
            client.set(counter, value)
            acked[counter] = value
    except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError):
        pass  # The server was killed.
    except Exception as error:  # anything else is a real failure
        errors.append(error)
    finally:
        client.close()


def test_every_acknowledged_write_survives_twenty_sigkills(server_factory):
    server = server_factory(*AOF_ARGS, "--appendfsync", "always", "--io-threads", "2")
    rng = random.Random(7)
    expected: dict[str, int] = {}
    for round_number in range(20):
        stop = threading.Event()
        acked: dict[str, int] = {}
        errors: list = []
        threads = [threading.Thread(target=_writer, args=(server.port, i, stop, acked, errors))
                   for i in range(6)]
        for thread in threads:
            thread.start()
        time.sleep(0.15 + rng.random() * 0.2)
        _kill(server)
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        assert not errors, errors
        _start_again(server)
        client = server.client()
        for i in range(6):
            counter = f"counter:{i}"
            stored = int(client.get(counter) or 0)
            # At least what was acknowledged (a write in flight may have landed too).
            assert stored >= acked.get(counter, expected.get(counter, 0)), (round_number, i)
            expected[counter] = stored
            a = int(client.get(f"tx:{i}:a") or 0)
            b = int(client.get(f"tx:{i}:b") or 0)
            assert a == b, f"round {round_number}: transaction {i} half applied ({a} vs {b})"
        # Writers continue from the stored values next round.
        for i in range(6):
            client.set(f"counter:{i}", 0)
            expected[f"counter:{i}"] = 0


def _written_bytes(path) -> bytes:
    """A log's bytes without the space the server reserved ahead of its writes (zeros that a
    SIGKILL leaves after the last record; start-up takes them for the end of the log). Walks
    the fragments (docs/log-format.md): the written part ends where a block offers no room for
    a header or where a header is all zeros (a real fragment's type is never 0)."""
    data = path.read_bytes()
    header, block, fragment_header = 16, 32768, 7
    at = header
    while at < len(data):
        left = block - (at - header) % block
        if left < fragment_header:
            # A trailer is written only in front of the next record, in the next block.
            following = data[at + left:at + left + fragment_header]
            if len(following) < fragment_header or following == bytes(fragment_header):
                break
            at += left
            continue
        if at + fragment_header > len(data) or data[at:at + fragment_header] == bytes(7):
            break
        at += fragment_header + int.from_bytes(data[at + 4:at + 6], "little")
    written = data[:min(at, len(data))]
    assert not any(data[len(written):]), "bytes after the log's end are not all zeros"
    return written


def _incr_file(server: ServerProcess):
    return server.workdir / "appendonlydir" / "appendonly.aof.1.incr.gkv"


def test_torn_tail_is_cut_and_damage_stops_startup(server_factory):
    server = server_factory(*AOF_ARGS, "--appendfsync", "always")
    client = server.client()
    pipe = client.pipeline(transaction=False)
    for i in range(5000):
        pipe.set(f"k{i}", "v" * 20)
    pipe.execute()
    _kill(server)
    path = _incr_file(server)
    whole = _written_bytes(path)
    assert len(whole) > 3 * 32768
    # A record cut short at the end: loaded, cut, with Redis's warning.
    path.write_bytes(whole[:-5])
    _start_again(server)
    client = server.client()
    assert client.dbsize() == 4999
    assert "!!! Warning: short read while loading the AOF file appendonly.aof.1.incr.gkv!!!" \
        in server.log_text()
    assert path.stat().st_size < len(whole) - 5
    _kill(server)
    # A flipped byte in the middle: start-up stops and says where.
    data = bytearray(path.read_bytes())
    data[40000] ^= 0x01
    path.write_bytes(bytes(data))
    server.expect_exit = True
    with pytest.raises(Exception):
        server.start()
    log = server.log_text()
    assert "Bad file format reading the append only file appendonly.aof.1.incr.gkv" in log
    assert "Terminating server after append only file reading failure." in log


def test_torn_tail_with_aof_load_truncated_no_refuses_to_start(server_factory):
    server = server_factory(*AOF_ARGS, "--appendfsync", "always", "--aof-load-truncated", "no")
    client = server.client()
    client.set("a", "1")
    client.set("b", "2")
    _kill(server)
    path = _incr_file(server)
    path.write_bytes(_written_bytes(path)[:-2])
    server.expect_exit = True
    with pytest.raises(Exception):
        server.start()
    assert "Unexpected end of file reading the append only file" in server.log_text()


def _rewrite_done(client) -> bool:
    info = client.info("persistence")
    return info["aof_rewrite_in_progress"] == 0 and info["aof_rewrite_scheduled"] == 0


def test_rewrite_keeps_the_dataset_and_replaces_the_files(server_factory):
    server = server_factory(*AOF_ARGS, "--appendfsync", "always")
    client = server.client()
    exercise_every_effect(client)
    client.config_set("rdb-key-save-delay", "500")  # Writes land while the base is written.
    assert client.bgrewriteaof() in (True, b"Background append only file rewriting started")
    for i in range(200):
        client.set(f"during:{i}", i)
    client.delete("s0:1")
    client.rpush("renamed", "tail")
    client.config_set("rdb-key-save-delay", "0")
    wait_until(lambda: _rewrite_done(client), 60, message="the rewrite to finish")
    info = client.info("persistence")
    assert info["aof_last_bgrewrite_status"] == "ok"
    assert info["aof_rewrites"] == 1
    directory = server.workdir / "appendonlydir"
    assert sorted(p.name for p in directory.iterdir()) == [
        "appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.gkv", "appendonly.aof.manifest"]
    client.set("after", "rewrite")
    before = dump_dataset(client)
    before.pop((0, b"gone-later"), None)
    _kill(server)
    _start_again(server)
    after = dump_dataset(server.client())
    after.pop((0, b"gone-later"), None)
    assert after == before


def test_sigkill_during_a_rewrite_loses_nothing_acknowledged(server_factory):
    server = server_factory(*AOF_ARGS, "--appendfsync", "always")
    client = server.client()
    fill_every_type(client)
    client.config_set("rdb-key-save-delay", "2000")  # About 2 s for the ~900 keys.
    client.bgrewriteaof()
    for i in range(100):
        client.set(f"during:{i}", i)
    assert client.info("persistence")["aof_rewrite_in_progress"] == 1
    before = dump_dataset(client)
    _kill(server)
    directory = server.workdir / "appendonlydir"
    names = sorted(p.name for p in directory.iterdir())
    # The old base and log, the new log (already in the manifest), the unfinished base.
    assert "appendonly.aof.2.incr.gkv" in names and "appendonly.aof.1.base.rdb" in names
    _start_again(server)
    assert dump_dataset(server.client()) == before
    assert not [p.name for p in directory.iterdir() if p.name.startswith("temp-")]


def test_config_set_appendonly_turns_the_log_on_and_off(server_factory):
    server = server_factory("--save", "", "--appendfsync", "always")
    client = server.client()
    fill_every_type(client)
    assert client.config_set("appendonly", "yes")
    client.set("right-after", "1")
    wait_until(lambda: _rewrite_done(client), 60, message="the base to be written")
    info = client.info("persistence")
    assert info["aof_enabled"] == 1 and info["aof_last_bgrewrite_status"] == "ok"
    directory = server.workdir / "appendonlydir"
    assert (directory / "appendonly.aof.manifest").read_text() == (
        "file appendonly.aof.1.base.rdb seq 1 type b\n"
        "file appendonly.aof.1.incr.gkv seq 1 type i\n")
    client.set("later", "2")
    before = dump_dataset(client)
    _kill(server)
    server.argv += ["--appendonly", "yes"]
    _start_again(server)
    client = server.client()
    assert dump_dataset(client) == before
    assert client.config_set("appendonly", "no")
    assert client.info("persistence")["aof_enabled"] == 0


def test_check_aof_reports_dumps_counts_and_fixes(server_factory, check_aof_binary):
    server = server_factory(*AOF_ARGS, "--appendfsync", "always")
    client = server.client()
    client.set("a", "hello world")
    client.rpush("l", "x", "y")
    client.mset({"m1": "1", "m2": "2"})
    _kill(server)
    manifest = server.workdir / "appendonlydir" / "appendonly.aof.manifest"

    def check(*args):
        return subprocess.run([str(check_aof_binary), *args, str(manifest)], capture_output=True,
                              text=True, timeout=60)

    result = check("--dump", "--stats")
    assert result.returncode == 0, result.stdout
    assert 'db 0: SET a "hello world"' in result.stdout
    assert "MULTI\ndb 0: SET m1 1\ndb 0: SET m2 2\nEXEC\n" in result.stdout
    assert "All AOF files and manifest are valid" in result.stdout
    assert "SET                  3" in result.stdout
    log = server.workdir / "appendonlydir" / "appendonly.aof.1.incr.gkv"
    log.write_bytes(_written_bytes(log)[:-3])
    result = check()
    assert result.returncode == 1
    assert "AOF appendonly.aof.1.incr.gkv: torn tail at offset" in result.stdout
    result = check("--fix", "--yes")
    assert result.returncode == 0, result.stdout
    assert "Successfully cut appendonly.aof.1.incr.gkv" in result.stdout
    assert check().returncode == 0
    _start_again(server)
    client = server.client()
    assert client.get("a") == b"hello world"
    assert client.lrange("l", 0, -1) == [b"x", b"y"]
    assert client.exists("m1", "m2") == 0  # The cut record: the whole MSET, as one.


def test_concurrent_rewrites_and_quick_toggles_neither_hang_nor_lose_the_log(server_factory):
    server = server_factory(*AOF_ARGS, "--appendfsync", "always", "--io-threads", "2")
    fill_every_type(server.client())
    stop = threading.Event()
    replies: list = []

    def hammer():
        client = redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=10)
        try:
            while not stop.is_set():
                try:
                    replies.append(client.bgrewriteaof())
                except redis.ResponseError as error:
                    replies.append(str(error))
        finally:
            client.close()

    threads = [threading.Thread(target=hammer) for _ in range(6)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "BGREWRITEAOF hung"
    client = server.client()
    assert client.ping()
    assert any("already in progress" in str(reply) for reply in replies)
    wait_until(lambda: _rewrite_done(client), 60, message="the last rewrite to finish")
    # Off, on, off, on in one pipeline: the log ends up on, and stays on.
    pipe = client.pipeline(transaction=False)
    for value in ("no", "yes", "no", "yes"):
        pipe.config_set("appendonly", value)
    pipe.execute()
    wait_until(lambda: _rewrite_done(client), 60, message="the turn-on rewrite to finish")
    time.sleep(0.5)  # A cron tick or more.
    assert client.info("persistence")["aof_enabled"] == 1
    client.set("last", "write")
    before = dump_dataset(client)
    _kill(server)
    _start_again(server)
    assert dump_dataset(server.client()) == before


def _fill(client, count: int) -> None:
    pipe = client.pipeline(transaction=False)
    for i in range(count):
        pipe.set(f"k{i}", i)
    pipe.execute()


def test_shutdown_while_the_initial_aof_is_written_is_refused_unless_forced(
    server_factory, redis_factory
):
    """While CONFIG SET appendonly yes writes its base no file holds the dataset: SHUTDOWN is
    refused as Redis refuses it, SHUTDOWN FORCE exits."""
    for srv in (server_factory("--save", ""), redis_factory()):
        client = srv.client()
        _fill(client, 2000)
        client.config_set("rdb-key-save-delay", "5000")  # About 10 s for the base.
        assert client.config_set("appendonly", "yes")
        conn = srv.raw()
        assert conn.call("SHUTDOWN") == "ERR Errors trying to SHUTDOWN. Check logs."
        assert conn.call("PING") == "PONG"
        wait_until(lambda: "Writing initial AOF, can't exit." in srv.log_text(), 5,
                   message="the refusal in the log")
        srv.expect_exit = True
        conn.send_command("SHUTDOWN", "FORCE")
        assert conn.read_until_closed() == b""
        srv.wait_exit(30)
        assert "Writing initial AOF. Exit anyway." in srv.log_text()


def test_appendonly_yes_during_bgsave_is_scheduled_as_in_redis(server_factory, redis_factory):
    """CONFIG SET appendonly yes while a BGSAVE runs answers OK and writes the base once the
    save ends, on both servers."""
    for srv in (server_factory("--save", ""), redis_factory()):
        client = srv.client()
        _fill(client, 300)
        client.config_set("rdb-key-save-delay", "3000")  # About 1 s for the snapshot.
        assert client.bgsave()
        assert client.config_set("appendonly", "yes")
        assert client.info("persistence")["aof_rewrite_scheduled"] == 1
        client.config_set("rdb-key-save-delay", "0")
        def base_written() -> bool:
            info = client.info("persistence")
            directory = srv.workdir / "appendonlydir"
            return (
                info["aof_rewrite_in_progress"] == 0
                and info["aof_rewrite_scheduled"] == 0
                and directory.is_dir()
                and any(".base." in p.name for p in directory.iterdir())
            )

        wait_until(base_written, 30, message="the scheduled base")
        assert client.info("persistence")["aof_rewrites"] >= 1
        client.set("after", "1")
        srv.stop()
        srv.expect_exit = False
        srv.argv += ["--appendonly", "yes"]
        srv.start()
        again = srv.client()
        assert again.dbsize() == 301 and again.get("after") == b"1"
