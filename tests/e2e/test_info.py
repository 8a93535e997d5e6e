"""INFO end to end: the fields clients and tools read on connect, section filtering, and counters
that must move (keyspace, expired keys, dirty count, hits/misses, command and error stats).
"""

from __future__ import annotations

import re
import time

import pytest

from e2e_support import parse_info, wait_until

DEFAULT_SECTIONS = {
    "Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Cluster",
    "Keyspace",
}


def _info(conn, *sections) -> dict[str, dict[str, str]]:
    return parse_info(conn.call("INFO", *sections))


def test_info_fields_clients_rely_on(server):
    conn = server.raw()
    info = _info(conn)
    assert DEFAULT_SECTIONS <= set(info)
    fields = {field: value for section in info.values() for field, value in section.items()}

    assert fields["redis_version"] == "7.0.15"
    assert fields["redis_mode"] == "standalone"
    assert fields["arch_bits"] == "64"
    assert fields["os"].startswith("Linux")
    assert fields["process_id"] == str(server.pid)
    assert fields["tcp_port"] == str(server.port)
    assert int(fields["uptime_in_seconds"]) >= 0
    assert fields["mem_allocator"]
    assert fields["cluster_enabled"] == "0"
    assert fields["loading"] == "0"
    assert fields["blocked_clients"] == "0"
    assert int(fields["used_memory"]) > 0
    assert fields["expired_keys"] == "0"
    assert fields["rdb_changes_since_last_save"] == "0"
    assert fields["total_forks"] == "0"
    assert fields["role"] == "master"
    assert fields["connected_slaves"] == "0"
    assert int(fields["connected_clients"]) >= 1
    assert fields["maxclients"] == "10000"
    # Section placement matters to tools that ask for one section.
    assert "redis_version" in info["Server"]
    assert "used_memory" in info["Memory"]
    assert "role" in info["Replication"]
    assert "cluster_enabled" in info["Cluster"]
    assert "loading" in info["Persistence"]
    assert "expired_keys" in info["Stats"]


@pytest.mark.gigakv_only
def test_info_gigakv_version(server):
    server_section = _info(server.raw(), "server")["Server"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", server_section["gigakv_version"])


def test_info_section_filters(server):
    conn = server.raw()
    raw = conn.call("INFO", "server")
    assert raw.startswith(b"# Server\r\n")
    assert [line for line in raw.split(b"\r\n") if line.startswith(b"#")] == [b"# Server"]
    assert list(_info(conn, "server")) == ["Server"]
    assert list(_info(conn, "SERVER")) == ["Server"]
    assert list(_info(conn, "server", "clients")) == ["Server", "Clients"]
    assert list(_info(conn, "keyspace")) == ["Keyspace"]
    assert conn.call("INFO", "nosuchsection") == b""
    assert {"Commandstats", "Errorstats"} <= set(_info(conn, "all"))
    assert {"Commandstats", "Errorstats"} <= set(_info(conn, "everything"))
    assert "Commandstats" not in _info(conn)


def test_info_keyspace_after_writes(server):
    conn = server.raw()
    assert _info(conn, "keyspace") == {"Keyspace": {}}
    conn.call("SET", "a", "1")
    conn.call("SET", "b", "2")
    conn.call("SET", "c", "3", "EX", "1000")
    conn.call("SELECT", "2")
    conn.call("SET", "x", "1")
    keyspace = _info(conn, "keyspace")["Keyspace"]
    assert set(keyspace) == {"db0", "db2"}
    db0 = dict(item.split("=") for item in keyspace["db0"].split(","))
    assert db0["keys"] == "3" and db0["expires"] == "1"
    assert 0 <= int(db0["avg_ttl"]) <= 1_000_000  # Redis fills it in lazily (active expiry)
    assert keyspace["db2"] == "keys=1,expires=0,avg_ttl=0"
    conn.call("FLUSHALL")
    assert _info(conn, "keyspace") == {"Keyspace": {}}


def test_info_counters_move(server):
    conn = server.raw()
    stats_before = _info(conn, "stats")["Stats"]
    dirty_before = int(_info(conn, "persistence")["Persistence"]["rdb_changes_since_last_save"])

    for i in range(3):
        conn.call("SET", f"k{i}", "v")
    assert conn.call("GET", "k0") == b"v"
    assert conn.call("GET", "missing") is None
    stats = _info(conn, "stats")["Stats"]
    assert int(stats["keyspace_hits"]) - int(stats_before["keyspace_hits"]) == 1
    assert int(stats["keyspace_misses"]) - int(stats_before["keyspace_misses"]) == 1
    assert int(stats["total_commands_processed"]) > int(stats_before["total_commands_processed"])

    conn.call("SET", "short", "v", "PX", "1")
    wait_until(lambda: conn.call("EXISTS", "short") == 0, 2, message="'short' to expire")
    persistence = _info(conn, "persistence")["Persistence"]
    assert int(persistence["rdb_changes_since_last_save"]) - dirty_before == 4  # expiry: not dirty
    assert _info(conn, "stats")["Stats"]["expired_keys"] == "1"


def test_info_counters_sum_over_io_threads(server_factory):
    # Hits, misses and changes are kept per I/O thread; connections land on threads round robin.
    server = server_factory("--io-threads", "3")
    conns = [server.raw() for _ in range(6)]
    before_stats = _info(conns[0], "stats")["Stats"]
    before_dirty = int(_info(conns[0], "persistence")["Persistence"]["rdb_changes_since_last_save"])
    for n, conn in enumerate(conns):
        conn.call("MSET", f"a{n}", "1", f"b{n}", "2")  # 2 changes
        conn.call("INCR", f"a{n}")  # 1 change
        assert conn.call("GET", f"b{n}") == b"2"
        assert conn.call("GET", f"none{n}") is None
    stats = _info(conns[0], "stats")["Stats"]
    assert int(stats["keyspace_hits"]) - int(before_stats["keyspace_hits"]) == 6
    assert int(stats["keyspace_misses"]) - int(before_stats["keyspace_misses"]) == 6
    # Each connection sent its 4 commands (> 100 bytes) and got 4 replies (> 20 bytes).
    sent = int(stats["total_net_input_bytes"]) - int(before_stats["total_net_input_bytes"])
    received = int(stats["total_net_output_bytes"]) - int(before_stats["total_net_output_bytes"])
    assert sent > 6 * 100
    assert received > 6 * 20
    dirty = int(_info(conns[0], "persistence")["Persistence"]["rdb_changes_since_last_save"])
    assert dirty - before_dirty == 18
    assert conns[0].call("CONFIG", "RESETSTAT") == "OK"
    stats = _info(conns[0], "stats")["Stats"]
    assert (stats["keyspace_hits"], stats["keyspace_misses"]) == ("0", "0")


def test_info_connections_and_clients(server):
    admin = server.raw()
    received = int(_info(admin, "stats")["Stats"]["total_connections_received"])
    others = [server.raw() for _ in range(3)]
    for conn in others:
        conn.call("PING")
    stats = _info(admin, "stats")["Stats"]
    assert int(stats["total_connections_received"]) == received + 3
    assert _info(admin, "clients")["Clients"]["connected_clients"] == "4"


def test_info_commandstats_and_errorstats(server):
    conn = server.raw()
    conn.call("SET", "k", "v")
    conn.call("SET", "k", "v")
    conn.call("GET")  # rejected: wrong arity
    conn.call("INCR", "k")  # failed: not an integer
    conn.call("nosuchcommand")
    commandstats = _info(conn, "commandstats")["Commandstats"]
    set_stats = dict(item.split("=") for item in commandstats["cmdstat_set"].split(","))
    assert set_stats["calls"] == "2"
    assert set_stats["rejected_calls"] == "0" and set_stats["failed_calls"] == "0"
    assert set(set_stats) == {"calls", "usec", "usec_per_call", "rejected_calls", "failed_calls"}
    get_stats = dict(item.split("=") for item in commandstats["cmdstat_get"].split(","))
    assert get_stats["calls"] == "0" and get_stats["rejected_calls"] == "1"
    incr_stats = dict(item.split("=") for item in commandstats["cmdstat_incr"].split(","))
    assert incr_stats["calls"] == "1" and incr_stats["failed_calls"] == "1"
    errorstats = _info(conn, "errorstats")["Errorstats"]
    assert errorstats == {"errorstat_ERR": "count=3"}
    assert _info(conn, "stats")["Stats"]["total_error_replies"] == "3"


def test_commandstats_name_subcommands_like_redis(server, real_redis):
    """COMMAND COUNT counts as command|count (COMMAND also runs bare, as command); an unknown
    subcommand of a container is no command, so no counter moves."""
    names = {}
    for target in (server, real_redis):
        conn = target.raw()
        conn.call("CONFIG", "RESETSTAT")
        conn.call("COMMAND", "COUNT")
        conn.call("COMMAND", "COUNT", "extra")  # rejected: wrong arity of command|count
        conn.call("COMMAND", "GETKEYS", "SET", "a", "b")
        conn.call("COMMAND", "NOSUCH")
        conn.call("CONFIG", "NOSUCH")
        stats = _info(conn, "commandstats")["Commandstats"]
        names[target] = {name: dict(item.split("=") for item in value.split(","))["calls"]
                         for name, value in stats.items()}
    assert names[server] == names[real_redis] == {
        "cmdstat_config|resetstat": "1", "cmdstat_command|count": "1",
        "cmdstat_command|getkeys": "1"}


@pytest.mark.parametrize("slowlog_threshold", ["10000", "0", "-1"])
def test_commandstats_time_goes_to_the_command_that_took_it(server, slowlog_threshold):
    """Pipelined runs of one command are timed as a whole (one clock read per run), and the
    slow log times some commands one by one (all at threshold 0, none but admin ones while it
    is off); the time must still land on the right command: here 3 x DEBUG SLEEP 0.05 between
    runs of SET/GET mixed with HGETALL (never fast, so timed on its own when the log is on)."""
    conn = server.raw()
    assert conn.call("CONFIG", "SET", "slowlog-log-slower-than", slowlog_threshold) == "OK"
    conn.call("CONFIG", "RESETSTAT")
    pipeline = ([b"SET k v\r\n"] * 25 + [b"HGETALL h\r\n"] + [b"SET k v\r\n"] * 25 +
                [b"DEBUG SLEEP 0.05\r\n"] * 3 + [b"GET k\r\n", b"HGETALL h\r\n"] * 25)
    conn.send(b"".join(pipeline))
    for _ in range(len(pipeline)):
        conn.read_reply()
    commandstats = _info(conn, "commandstats")["Commandstats"]

    def stats(name):
        return dict(item.split("=") for item in commandstats[f"cmdstat_{name}"].split(","))

    assert stats("debug")["calls"] == "3"
    assert int(stats("debug")["usec"]) >= 150_000
    for name, calls in (("set", "50"), ("get", "25"), ("hgetall", "26")):
        assert stats(name)["calls"] == calls
        assert int(stats(name)["usec"]) < 50_000  # None of the sleeps.
    conn.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")


def test_info_latencystats_like_redis(server, real_redis):
    """INFO latencystats has a line per command that ran, with the configured percentiles in
    Redis's format; pipelined runs and commands run one by one both land on their command."""
    pipeline = ([b"SET k v\r\n"] * 20 + [b"GET k\r\n"] * 20 + [b"LPUSH k x\r\n"] +
                [b"DEBUG SLEEP 0.02\r\n"] + [b"GET k\r\n"] * 20)
    lines = {}
    for target in (server, real_redis):
        conn = target.raw()
        conn.call("CONFIG", "RESETSTAT")
        conn.send(b"".join(pipeline))
        for _ in range(len(pipeline)):
            conn.read_reply()
        stats = _info(conn, "latencystats")["Latencystats"]
        lines[target] = stats
        value = r"[0-9]+\.[0-9]{3}"
        for name, line in stats.items():
            assert re.fullmatch(rf"p50={value},p99={value},p99\.9={value}", line), (name, line)
        debug = dict(item.split("=") for item in stats["latency_percentiles_usec_debug"].split(","))
        assert float(debug["p50"]) >= 20_000  # the sleep, in µs
        assert conn.call("CONFIG", "SET", "latency-tracking-info-percentiles", "0 100 12.5") == "OK"
        line = _info(conn, "latencystats")["Latencystats"]["latency_percentiles_usec_get"]
        assert re.fullmatch(rf"p0={value},p100={value},p12\.5={value}", line), line
        assert conn.call("CONFIG", "SET", "latency-tracking", "no") == "OK"
        assert _info(conn, "latencystats")["Latencystats"] == {}
        assert conn.call("CONFIG", "SET", "latency-tracking", "yes") == "OK"
        assert conn.call("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9") == "OK"
    assert set(lines[server]) == set(lines[real_redis]) == {
        f"latency_percentiles_usec_{name}"
        for name in ("set", "get", "lpush", "debug", "config|resetstat")}


def test_used_memory_tracks_data(server):
    conn = server.raw()
    before = int(_info(conn, "memory")["Memory"]["used_memory"])
    conn.send(b"".join(b"SET key:%d %s\r\n" % (i, b"x" * 100) for i in range(10_000)))
    for _ in range(10_000):
        assert conn.read_reply() == "OK"
    after = int(_info(conn, "memory")["Memory"]["used_memory"])
    assert after - before >= 10_000 * 100


def _field_names(text: bytes) -> dict[str, list[str]]:
    """Section -> field names in order, from an INFO reply."""
    sections, current = {}, None
    for line in text.decode().splitlines():
        if line.startswith("# "):
            current = sections.setdefault(line[2:], [])
        elif line and current is not None:
            current.append(line.split(":", 1)[0])
    return sections


def test_info_has_every_redis_field_in_redis_order(server, real_redis):
    """Every field of Redis 7.0's INFO, in its section and in Redis's order, so that tools and
    exporters find each one where they look. gigakv's own fields may come in between."""
    ours = _field_names(server.raw().call("INFO", "everything"))
    theirs = _field_names(real_redis.raw().call("INFO", "everything"))
    for section, names in theirs.items():
        if section in ("Commandstats", "Errorstats", "Latencystats", "Keyspace"):
            continue  # One line per command, error, or database used: compared elsewhere.
        assert section in ours, section
        assert [name for name in ours[section] if name in names] == names, section


def test_info_io_and_lazyfree_counters_move(server):
    conn = server.raw()
    before = _info(conn, "stats")["Stats"]
    for i in range(50):
        conn.call("SET", f"k{i}", "v" * 100)
    stats = _info(conn, "stats")["Stats"]
    # Each request of this client is one read; each reply one write.
    assert int(stats["total_reads_processed"]) - int(before["total_reads_processed"]) >= 50
    assert int(stats["total_writes_processed"]) - int(before["total_writes_processed"]) >= 50

    def input_rate():
        conn.call("SET", "rate", "x" * 4096)
        return float(_info(conn, "stats")["Stats"]["instantaneous_input_kbps"]) > 0
    wait_until(input_rate, 10, message="instantaneous_input_kbps to rise")

    for i in range(2000):
        conn.call("SADD", f"s{i % 10}", f"m{i}")
    assert conn.call("FLUSHALL", "ASYNC") == "OK"
    wait_until(lambda: int(_info(conn, "memory")["Memory"]["lazyfreed_objects"]) > 0, 10,
               message="the background thread to free the flushed keys")


def test_config_resetstat_zeroes_the_io_counters_and_rates_recover(server):
    conn = server.raw()
    for i in range(20):
        conn.call("SET", f"k{i}", "v" * 1000)
    assert conn.call("CONFIG", "RESETSTAT") == "OK"
    stats = _info(conn, "stats")["Stats"]
    assert int(stats["total_reads_processed"]) <= 2  # The INFO itself, at most.
    assert int(stats["expire_cycle_cpu_milliseconds"]) == 0
    assert int(_info(conn, "memory")["Memory"]["lazyfreed_objects"]) == 0

    def sane_rates():
        stats = _info(conn, "stats")["Stats"]
        rates = (float(stats["instantaneous_input_kbps"]), float(stats["instantaneous_output_kbps"]),
                 int(stats["instantaneous_ops_per_sec"]))
        # A counter reset must not show as a huge (wrapped) rate.
        assert all(0 <= rate < 1e7 for rate in rates), rates
        return True
    for _ in range(20):  # About 2 s of cron ticks after the reset.
        sane_rates()
        time.sleep(0.1)
