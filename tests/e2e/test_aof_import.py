"""Moving from Redis's append-only files to gigakv: a Redis 7.0 appendonlydir (RDB or RESP base,
RESP incremental logs, with and without timestamp annotations) and a Redis 6 style single
appendonly.aof (RESP, with or without an RDB preamble), both written by Debian's redis-server in
the test, load into gigakv with the contents Redis had; gigakv appends its own log next to
Redis's files and converts everything on its first rewrite. Damage is handled as Redis handles
it: a truncated tail (or an unfinished MULTI) is cut at the same offset, anything else stops
start-up."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from e2e_support import ServerProcess, dump_dataset, exercise_every_effect, wait_until

pytestmark = pytest.mark.gigakv_only

AOF_DIR = "appendonlydir"
REDIS_CHECK_AOF = shutil.which("redis-check-aof") or "/usr/bin/redis-check-aof"


def _wait_rewrite_done(client) -> None:
    def done():
        info = client.info("persistence")
        return info["aof_rewrite_in_progress"] == 0 and info["aof_rewrite_scheduled"] == 0

    wait_until(done, 60, message="the AOF rewrite to finish")


def _redis_history(redis_factory, *args: str) -> tuple[ServerProcess, dict]:
    """Debian's redis-server writes a dataset into its appendonlydir: every effect, a rewrite
    (so the base holds data), then more writes (in the new incremental log). Returns the stopped
    server and the dataset it had."""
    redis = redis_factory("--appendonly", "yes", "--appendfsync", "always", *args)
    client = redis.client()
    exercise_every_effect(client)
    client.persist("gone-later")
    client.bgrewriteaof()
    _wait_rewrite_done(client)
    client.execute_command("SELECT", 5)
    client.incrby("after-rewrite", 7)
    client.rpush("after-rewrite-list", "x", "y")
    client.execute_command("SELECT", 0)
    pipe = client.pipeline(transaction=True)
    pipe.hset("tx:hash", "f", "v")
    pipe.expire("tx:hash", 5000)
    pipe.zadd("tx:zset", {"m": 3})
    pipe.execute()
    client.delete("set")
    client.sadd("intset", 99)
    before = dump_dataset(client)
    redis.stop()
    return redis, before


def _files(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def _start_on(server: ServerProcess, populate) -> None:
    """Stops `server`, empties its directory's AOF files, lets `populate(workdir)` put Redis's
    there, and starts it again."""
    server.stop()
    shutil.rmtree(server.workdir / AOF_DIR, ignore_errors=True)
    populate(server.workdir)
    server.expect_exit = False
    server.start()


def _restart(server: ServerProcess) -> None:
    server.stop()
    server.expect_exit = False
    server.start()


@pytest.mark.parametrize("preamble,timestamps", [("yes", "no"), ("no", "yes")])
def test_redis7_appendonlydir_loads_and_converts_on_rewrite(
    server_factory, redis_factory, preamble, timestamps
):
    redis, before = _redis_history(
        redis_factory, "--aof-use-rdb-preamble", preamble, "--aof-timestamp-enabled", timestamps
    )
    redis_files = _files(redis.workdir / AOF_DIR)
    base_suffix = ".base.rdb" if preamble == "yes" else ".base.aof"
    assert any(name.endswith(base_suffix) for name in redis_files), redis_files
    assert any(name.endswith(".incr.aof") for name in redis_files), redis_files

    server = server_factory("--appendonly", "yes")
    _start_on(server, lambda workdir: shutil.copytree(redis.workdir / AOF_DIR, workdir / AOF_DIR))
    client = server.client()
    assert dump_dataset(client) == before

    # gigakv appends its own log after Redis's, in the same manifest.
    client.set("written-by-gigakv", "1")
    after = dict(before)
    after[(0, b"written-by-gigakv")] = ("string", b"1", -1)
    ours = _files(server.workdir / AOF_DIR)
    assert set(redis_files) <= set(ours)
    assert any(name.endswith(".incr.gkv") for name in ours), ours
    _restart(server)
    client = server.client()
    assert dump_dataset(client) == after

    # The first rewrite converts: only gigakv's base and log remain.
    client.bgrewriteaof()
    _wait_rewrite_done(client)
    converted = _files(server.workdir / AOF_DIR)
    assert not any(name.endswith(".aof") for name in converted), converted
    assert any(name.endswith(".base.rdb") for name in converted), converted
    _restart(server)
    assert dump_dataset(server.client()) == after


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_redis6_single_appendonly_aof_is_moved_in_and_loaded(
    server_factory, redis_factory, preamble
):
    redis, before = _redis_history(redis_factory, "--aof-use-rdb-preamble", preamble)
    # A Redis 6 file is the base followed by the commands after it: RDB preamble + RESP, or
    # RESP only. Redis's own checker must take the file as a sound single AOF.
    directory = redis.workdir / AOF_DIR
    manifest = (directory / "appendonly.aof.manifest").read_text().split("\n")
    names = [line.split()[1] for line in manifest if line.startswith("file ")]
    single = redis.workdir / "appendonly.aof"
    with single.open("wb") as out:
        for name in names:
            out.write((directory / name).read_bytes())
    checked = subprocess.run(
        [REDIS_CHECK_AOF, str(single)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert ("RDB preamble" in checked.stdout) == (preamble == "yes"), checked.stdout

    server = server_factory("--appendonly", "yes")
    _start_on(server, lambda workdir: shutil.copy(single, workdir / "appendonly.aof"))
    assert dump_dataset(server.client()) == before
    assert not (server.workdir / "appendonly.aof").exists()
    assert (server.workdir / AOF_DIR / "appendonly.aof").exists()
    ours = (server.workdir / AOF_DIR / "appendonly.aof.manifest").read_text()
    assert "file appendonly.aof seq 1 type b\n" in ours, ours
    assert "Successfully migrated an old-style AOF file" in server.log_text()
    _restart(server)
    assert dump_dataset(server.client()) == before


def _damage_last_incr(workdir: Path, how: str) -> None:
    directory = workdir / AOF_DIR
    incr = sorted(p for p in directory.iterdir() if p.name.endswith(".incr.aof"))[-1]
    data = incr.read_bytes()
    if how == "truncated":
        incr.write_bytes(data[:-5])
    elif how == "open-multi":
        incr.write_bytes(
            data + b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$6\r\nhalfTx\r\n$1\r\n1\r\n"
        )
    else:  # bad-format: a byte in the middle of the file that is not RESP.
        middle = data.index(b"\r\n*", len(data) // 2) + 2
        incr.write_bytes(data[:middle] + b"?" + data[middle + 1 :])


@pytest.mark.parametrize("how", ["truncated", "open-multi"])
def test_truncated_redis_log_is_cut_where_redis_cuts_it(server_factory, redis_factory, how):
    source, _ = _redis_history(redis_factory)
    sizes, datasets = [], []
    for start in (lambda: redis_factory("--appendonly", "yes"),
                  lambda: server_factory("--appendonly", "yes")):
        srv = start()

        def populate(workdir: Path) -> None:
            shutil.copytree(source.workdir / AOF_DIR, workdir / AOF_DIR)
            _damage_last_incr(workdir, how)

        _start_on(srv, populate)
        datasets.append(dump_dataset(srv.client()))
        sizes.append(
            {p.name: p.stat().st_size for p in (srv.workdir / AOF_DIR).glob("*.incr.aof")}
        )
        assert "!!! Truncating the AOF" in srv.log_text()
    assert datasets[0] == datasets[1]
    assert sizes[0] == sizes[1]
    assert (0, b"halfTx") not in datasets[1]


def test_damaged_redis_log_stops_start_up(server_factory, redis_factory):
    source, _ = _redis_history(redis_factory)
    server = server_factory("--appendonly", "yes")
    server.stop()
    shutil.rmtree(server.workdir / AOF_DIR)
    shutil.copytree(source.workdir / AOF_DIR, server.workdir / AOF_DIR)
    _damage_last_incr(server.workdir, "bad-format")
    server.expect_exit = True
    with pytest.raises(Exception):
        server.start(ready_timeout=10)
    server.wait_exit(10)
    log = server.log_text()
    assert "Bad file format reading the append only file appendonly.aof." in log, log[-2000:]
    assert "expected '*'" in log and "at offset" in log


def test_check_aof_checks_and_fixes_redis_files_as_redis_check_aof(
    redis_factory, check_aof_binary, tmp_path
):
    redis, _ = _redis_history(redis_factory, "--aof-timestamp-enabled", "yes")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for copy in (ours, theirs):
        shutil.copytree(redis.workdir / AOF_DIR, copy)
    manifest = "appendonly.aof.manifest"

    def check(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(check_aof_binary), *args, str(ours / manifest)],
            capture_output=True, text=True, timeout=60,
        )

    sound = check("--stats")
    assert sound.returncode == 0, sound.stdout
    assert "All AOF files and manifest are valid" in sound.stdout
    assert "INCR AOF appendonly.aof.2.incr.aof is valid" in sound.stdout
    assert any(line.split() == ["HSET", "1"] for line in sound.stdout.splitlines()), sound.stdout
    for copy in (ours, theirs):
        incr = sorted(p for p in copy.iterdir() if p.name.endswith(".incr.aof"))[-1]
        incr.write_bytes(incr.read_bytes()[:-5])
    broken = check()
    assert broken.returncode == 1 and "truncated at offset" in broken.stdout, broken.stdout
    fixed = check("--fix", "--yes")
    assert fixed.returncode == 0, fixed.stdout
    reference = subprocess.run(
        [REDIS_CHECK_AOF, "--fix", str(theirs / manifest)],
        input="y\n", capture_output=True, text=True, timeout=60,
    )
    assert reference.returncode == 0, reference.stdout + reference.stderr
    sizes = [
        {p.name: p.stat().st_size for p in copy.iterdir() if p.name.endswith(".aof")}
        for copy in (ours, theirs)
    ]
    assert sizes[0] == sizes[1]
    assert check().returncode == 0
