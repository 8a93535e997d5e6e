"""pytest fixtures for gigakv's end-to-end tier: the real binary on 127.0.0.1.

Fixtures:
- `server_factory(*args, config_file=None, listen_args=True)` starts the server under test on a
  free 127.0.0.1 port in a fresh temp dir and returns a `ServerProcess` (see e2e_support.py),
  which offers `client()` (redis-py, RESP2; RESP3 via `client(protocol=3)` only when redis-py
  >= 5 is installed) and `raw()` (a raw-socket RESP2/RESP3 connection; Debian 12's redis-py
  4.3.4 has no RESP3, so RESP3 tests send HELLO 3 over `raw()`).
- `server`: one default server; `client`: a redis-py client for it.
- `redis_factory` / `real_redis`: Debian's redis-server 7.0 started the same way
  (`--save '' --appendonly no`), for differential tests; skipped if it is not installed.

Every server is stopped by PID at teardown (SIGTERM, SIGKILL after a bounded wait).  A server that
died on its own during a test (a crash) makes the test error at teardown, with its log tail.

Environment:
- GIGAKV_SERVER: the gigakv-server binary (default: <repo>/build/gigakv-server).
- GIGAKV_CHECK_RDB: the gigakv-check-rdb binary (default: next to the gigakv-server binary).
- GIGAKV_CHECK_AOF: the gigakv-check-aof binary (default: next to the gigakv-server binary).
- GIGAKV_FIXTURES_DIR: the shared test data (default: <repo>/../shared/fixtures); tests that read
  it are skipped, saying so, when it is absent.
- GIGAKV_E2E_TARGET=redis: run the suite against Debian's redis-server instead of gigakv, to check
  that the tests themselves encode real Redis 7.0 behaviour.  Tests marked `gigakv_only` (gigakv
  extensions such as INFO gigakv_version) are skipped then.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from e2e_support import ServerProcess, ServerStartError, build_argv, free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
# Real redis-server needs these to behave like a plain in-memory server with DEBUG available.
REDIS_BASE_ARGS = ("--save", "", "--appendonly", "no", "--enable-debug-command", "yes")
# gigakv refuses DEBUG by default too (enable-debug-command no, as Redis).
GIGAKV_BASE_ARGS = ("--enable-debug-command", "yes")
START_ATTEMPTS = 3  # a free port can be taken by someone else before the server binds it


def _target() -> str:
    target = os.environ.get("GIGAKV_E2E_TARGET", "gigakv")
    if target not in ("gigakv", "redis"):
        raise pytest.UsageError(f"GIGAKV_E2E_TARGET must be 'gigakv' or 'redis', not {target!r}")
    return target


def pytest_collection_modifyitems(config, items):
    if _target() != "redis":
        return
    skip = pytest.mark.skip(reason="gigakv-only behaviour; GIGAKV_E2E_TARGET=redis")
    for item in items:
        if "gigakv_only" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def target() -> str:
    """'gigakv' or 'redis': which server the suite is testing."""
    return _target()


@pytest.fixture(scope="session")
def gigakv_binary() -> Path:
    path = Path(os.environ.get("GIGAKV_SERVER", REPO_ROOT / "build" / "gigakv-server"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"gigakv-server binary not found at {path}; build it or set GIGAKV_SERVER")
    return path


def _tool_binary(gigakv_binary, name: str, variable: str) -> Path:
    """A tool built next to gigakv-server (or where `variable` says)."""
    path = Path(os.environ.get(variable, Path(gigakv_binary).parent / name))
    if not os.access(path, os.X_OK):
        pytest.fail(f"{name} binary not found at {path}; build it or set {variable}")
    return path


@pytest.fixture(scope="session")
def check_rdb_binary(gigakv_binary) -> Path:
    """gigakv-check-rdb, built next to gigakv-server."""
    return _tool_binary(gigakv_binary, "gigakv-check-rdb", "GIGAKV_CHECK_RDB")


@pytest.fixture(scope="session")
def check_aof_binary(gigakv_binary) -> Path:
    """gigakv-check-aof, built next to gigakv-server."""
    return _tool_binary(gigakv_binary, "gigakv-check-aof", "GIGAKV_CHECK_AOF")


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The shared test data (Redis snapshot files); skips the test when it is absent."""
    path = Path(os.environ.get("GIGAKV_FIXTURES_DIR", REPO_ROOT.parent / "shared" / "fixtures"))
    if not (path / "redis-rdb" / "README.md").is_file():
        pytest.skip(f"no shared fixtures at {path} (set GIGAKV_FIXTURES_DIR)")
    return path


class ServerPool:
    """Starts servers of one kind in fresh temp dirs and stops them all at teardown."""

    def __init__(self, tmp_path_factory, binary, base_args, name):
        self._tmp_path_factory = tmp_path_factory
        self._binary = binary
        self._base_args = tuple(base_args)
        self._name = name
        self._servers: list[ServerProcess] = []

    def start(self, *extra_args, config_file=None, listen_args=True, port=None) -> ServerProcess:
        """Starts a server; with `listen_args=False` the config file sets port/bind/dir."""
        workdir = Path(self._tmp_path_factory.mktemp(self._name))
        last_error = None
        for _ in range(START_ATTEMPTS):
            chosen = port if port is not None else free_port()
            argv = build_argv(
                self._binary,
                chosen if listen_args else None,
                workdir,
                extra_args,
                config_file=config_file,
                base_args=self._base_args,
            )
            server = ServerProcess(argv, chosen, workdir, workdir / "server.log")
            self._servers.append(server)
            try:
                server.start()
                return server
            except ServerStartError as error:
                last_error = error
                if port is not None or not listen_args:
                    break  # the port was not ours to pick: retrying cannot help
        raise last_error

    def stop_all(self) -> None:
        """Stops every server; fails if one had died on its own (a crash) during the test."""
        crashed = []
        for server in self._servers:
            exited = server.proc is not None and server.proc.poll() is not None
            died_by_itself = exited and not server.expect_exit
            code = server.stop()
            if died_by_itself:
                crashed.append(
                    f"{server.argv} exited with {code} during the test:\n" + server.log_tail()
                )
        self._servers.clear()
        if crashed:
            pytest.fail("\n\n".join(crashed), pytrace=False)


@pytest.fixture(scope="session")
def server_binary(target, request) -> Path:
    """The binary under test: gigakv-server, or redis-server with GIGAKV_E2E_TARGET=redis."""
    if target == "redis":
        return Path(REDIS_SERVER)
    return request.getfixturevalue("gigakv_binary")


def _pool_fixture(tmp_path_factory, binary, base_args, name):
    """The body of a server-starting fixture: yields `ServerPool.start`, stops all at teardown."""
    pool = ServerPool(tmp_path_factory, binary, base_args, name)
    yield pool.start
    pool.stop_all()


@pytest.fixture
def server_factory(tmp_path_factory, target, server_binary):
    """Starts servers under test (gigakv-server, or redis-server with GIGAKV_E2E_TARGET=redis)."""
    base_args = REDIS_BASE_ARGS if target == "redis" else GIGAKV_BASE_ARGS
    yield from _pool_fixture(tmp_path_factory, server_binary, base_args, "srv")


@pytest.fixture
def server(server_factory) -> ServerProcess:
    return server_factory()


@pytest.fixture
def client(server):
    return server.client()


@pytest.fixture
def redis_factory(tmp_path_factory):
    """Starts Debian's redis-server (the reference) the same way as the server under test."""
    if not os.access(REDIS_SERVER, os.X_OK):
        pytest.skip("redis-server is not installed")
    yield from _pool_fixture(tmp_path_factory, REDIS_SERVER, REDIS_BASE_ARGS, "redis")


@pytest.fixture
def real_redis(redis_factory) -> ServerProcess:
    return redis_factory()
