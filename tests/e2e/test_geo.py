"""The geo commands side by side with redis-server 7.0, byte for byte: GEOADD, GEOPOS, GEODIST,
GEOHASH, GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER (and _RO).

Points are stored as sorted-set scores (Redis's 52-bit geohash), so the cases compare the
scores too (ZSCORE, ZRANGE WITHSCORES), the coordinates GEOPOS reads back (cell centers in
Redis's text), distances in every unit, geohash strings, and the errors; in RESP2 and RESP3.
Random points cover the whole range, the poles' limits and the antimeridian; random searches
(centers anywhere, radii and boxes from meters to half the globe, every unit and option) run on
a small (listpack) and a large (skiplist) set, and on clusters of identical points, whose equal
distances make the order Redis's sorts leave among ties visible (COUNT's partial quicksort).
"""

from __future__ import annotations

import random

import pytest

from differential import both_protocols, compare_case

SICILY = ["13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]


def random_points(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    args = []
    for i in range(count):
        lon = rng.choice([rng.uniform(-180, 180), rng.choice([-180, 180, 0, -179.9999999])])
        lat = rng.choice([rng.uniform(-85.05112878, 85.05112878),
                          rng.choice([85.05112878, -85.05112878, 0, 85.0511287])])
        args += [repr(lon), repr(lat), f"p{i}"]
    return args


POINTS = random_points(7, 60)
MEMBERS = [POINTS[i + 2] for i in range(0, len(POINTS), 3)]


def clustered_points(seed: int, clusters: int, per_cluster: int) -> list[str]:
    """Members at a few identical points (ties) plus a spread around each."""
    rng = random.Random(seed)
    args = []
    for c in range(clusters):
        lon, lat = rng.uniform(-179, 179), rng.uniform(-80, 80)
        for i in range(per_cluster):
            jitter = 0 if i % 3 else rng.uniform(-0.01, 0.01)
            args += [repr(lon + jitter), repr(lat + jitter), f"c{c}-{i}"]
    return args


def random_searches(seed: int, key: str, members: list[str], count: int,
                    centers: list[tuple[float, float]] | None = None) -> list[list[str]]:
    """Random GEOSEARCH/GEORADIUS* commands on `key` (and stores into "dst")."""
    rng = random.Random(seed)
    commands = []
    units = ["m", "km", "mi", "ft", "KM", "Mi"]
    for _ in range(count):
        if centers and rng.random() < 0.7:
            lon, lat = rng.choice(centers)
            lon, lat = lon + rng.uniform(-0.02, 0.02), lat + rng.uniform(-0.02, 0.02)
        else:
            lon = rng.choice([rng.uniform(-180, 180), rng.choice([-180, 180, 179.99, -179.99])])
            lat = rng.choice([rng.uniform(-85.05, 85.05), rng.choice([85.05, -85.05, 0])])
        unit = rng.choice(units)
        per_meter = {"m": 1, "km": 1000, "mi": 1609.34, "ft": 0.3048}[unit.lower()]
        size = 10 ** rng.uniform(1, 7.3) / per_meter
        options = []
        if rng.random() < 0.5:
            options += ["COUNT", str(rng.choice([1, 2, 3, 5, 10, 50]))]
            if rng.random() < 0.3:
                options.append("ANY")
        if rng.random() < 0.5:
            options.append(rng.choice(["ASC", "DESC"]))
        store = rng.random() < 0.2
        if not store:
            for option in ("WITHDIST", "WITHHASH", "WITHCOORD"):
                if rng.random() < 0.4:
                    options.append(option)
        kind = rng.randrange(4)
        box = rng.random() < 0.4
        if kind <= 1:  # GEOSEARCH / GEOSEARCHSTORE
            source = (["FROMMEMBER", rng.choice(members)] if rng.random() < 0.3
                      else ["FROMLONLAT", repr(lon), repr(lat)])
            shape = (["BYBOX", repr(size), repr(size * rng.uniform(0.2, 5)), unit] if box
                     else ["BYRADIUS", repr(size), unit])
            if store:
                extra = ["STOREDIST"] if rng.random() < 0.5 else []
                commands.append(["GEOSEARCHSTORE", "dst", key, *source, *shape, *options, *extra])
                commands.append(["ZRANGE", "dst", "0", "-1", "WITHSCORES"])
            else:
                commands.append(["GEOSEARCH", key, *source, *shape, *options])
        else:
            by_member = kind == 3
            name = "GEORADIUSBYMEMBER" if by_member else "GEORADIUS"
            center = [rng.choice(members)] if by_member else [repr(lon), repr(lat)]
            if store:
                options += [rng.choice(["STORE", "STOREDIST"]), "dst"]
            elif rng.random() < 0.5:
                name += "_RO"
            commands.append([name, key, *center, repr(size), unit, *options])
            if store:
                commands.append(["ZRANGE", "dst", "0", "-1", "WITHSCORES"])
    return commands


BIG_POINTS = random_points(11, 1000)
BIG_MEMBERS = [BIG_POINTS[i + 2] for i in range(0, len(BIG_POINTS), 3)]
CLUSTERS = clustered_points(5, 4, 90)
CLUSTER_MEMBERS = [CLUSTERS[i + 2] for i in range(0, len(CLUSTERS), 3)]
CLUSTER_CENTERS = [(float(CLUSTERS[i]), float(CLUSTERS[i + 1]))
                   for i in range(0, len(CLUSTERS), 3 * 90)]
SICILY_MORE = [*SICILY, "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2",
               "13.5", "38.1", "dup1", "13.5", "38.1", "dup2", "13.5", "38.1", "dup3"]

CASES = [
    ("sicily", [
        ["GEOADD", "Sicily", *SICILY],
        ["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"],
        ["GEOPOS", "Sicily", "Palermo", "Catania", "NonExisting"],
        ["GEODIST", "Sicily", "Palermo", "Catania"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "km"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "MI"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "ft"],
        ["GEODIST", "Sicily", "Palermo", "Palermo"],
        ["GEODIST", "Sicily", "Foo", "Bar"],
        ["GEODIST", "missing", "Foo", "Bar"],
        ["GEOHASH", "Sicily", "Palermo", "Catania", "x"],
        ["GEOHASH", "missing", "a"],
        ["GEOPOS", "missing", "a", "b"],
    ]),
    ("options", [
        ["GEOADD", "g", "NX", *SICILY],
        ["GEOADD", "g", "NX", "13", "38", "Palermo"],
        ["GEOADD", "g", "XX", "CH", "13", "38", "Palermo", "1", "1", "New"],
        ["GEOADD", "g", "CH", "14", "39", "Palermo"],
        ["GEOADD", "g", "CH", "XX", "14", "39", "Palermo"],
        ["ZRANGE", "g", "0", "-1", "WITHSCORES"],
        ["GEOADD", "g", "NX", "XX", "1", "1", "x"],
        ["GEOADD", "g", "1", "1"],
        ["GEOADD", "g", "1", "1", "a", "2"],
        ["GEOADD", "g", "GT", "1", "1", "a"],
    ]),
    ("errors", [
        ["GEOADD", "e", "181", "0", "a"],
        ["GEOADD", "e", "0", "85.06", "a"],
        ["GEOADD", "e", "-180.000001", "-85.05112879", "a"],
        ["GEOADD", "e", "x", "0", "a"],
        ["GEOADD", "e", "1e80", "0", "a"],
        ["GEOADD", "e", "-1.7e308", "inf", "a"],
        ["GEOADD", "e", "0", "nan", "a"],
        ["GEOADD", "e", "1", "1", "ok", "200", "1", "bad"],
        ["EXISTS", "e"],
        ["SET", "s", "v"],
        ["GEOADD", "s", "1", "1", "a"],
        ["GEOPOS", "s", "a"],
        ["GEODIST", "s", "a", "b"],
        ["GEOHASH", "s", "a"],
        ["GEOADD", "ok", "1", "1", "a", "2", "2", "b"],
        ["GEODIST", "ok", "a", "b", "yards"],
        ["GEODIST", "ok", "a", "b", "km", "extra"],
        ["ZADD", "z", "nan", "x"],
        ["ZADD", "z", "-1", "neg", "4503599627370496", "big", "inf", "huge"],
        ["GEOPOS", "z", "neg", "big", "huge"],
        ["GEOHASH", "z", "neg", "big"],
        ["GEODIST", "z", "neg", "big"],
    ]),
    ("random points", [
        ["GEOADD", "r", *POINTS],
        ["ZRANGE", "r", "0", "-1", "WITHSCORES"],
        ["GEOPOS", "r", *MEMBERS],
        ["GEOHASH", "r", *MEMBERS],
        *[["GEODIST", "r", MEMBERS[i], MEMBERS[-1 - i], unit]
          for i, unit in zip(range(12), ["m", "km", "mi", "ft"] * 3)],
    ]),
    ("search", [
        ["GEOADD", "Sicily", *SICILY_MORE],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD", "WITHDIST", "WITHHASH"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "COUNT", "1"],
        ["GEORADIUS", "Sicily", "15", "37", "400", "km", "ASC", "COUNT", "2"],
        ["GEORADIUS", "Sicily", "15", "37", "400", "km", "DESC"],
        ["georadius_ro", "Sicily", "15", "37", "400", "km", "desc", "withhash"],
        ["GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km"],
        ["GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "200", "km", "WITHCOORD"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC",
         "WITHCOORD", "WITHDIST"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "100", "km", "COUNT", "2",
         "ANY"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "300", "mi", "COUNT", "3",
         "DESC", "WITHDIST"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "13.5", "38.1", "BYRADIUS", "10", "km", "COUNT",
         "2"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "13.5", "38.1", "BYRADIUS", "500", "km", "COUNT",
         "4", "WITHDIST"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km"],
        ["GEORADIUS", "Sicily", "15", "37", "inf", "km", "COUNT", "3"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "0", "0", "BYBOX", "inf", "1", "m"],
        ["GEOSEARCH", "missing", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", "1", "km"],
        ["GEORADIUSBYMEMBER", "missing", "x", "y", "z"],
    ]),
    ("search store", [
        ["GEOADD", "Sicily", *SICILY_MORE],
        ["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km",
         "STOREDIST"],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["OBJECT", "ENCODING", "dst"],
        ["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km",
         "COUNT", "3"],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst2"],
        ["ZRANGE", "dst2", "0", "-1", "WITHSCORES"],
        ["SET", "str", "v"],
        ["EXPIRE", "dst2", "100"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "mi", "STOREDIST", "dst2"],
        ["TTL", "dst2"],
        ["ZRANGE", "dst2", "0", "-1", "WITHSCORES"],
        ["GEORADIUS", "Sicily", "15", "37", "0", "km", "STORE", "dst2"],
        ["EXISTS", "dst2"],
        ["GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "2", "DESC", "STORE", "x",
         "STOREDIST", "y"],
        ["ZRANGE", "y", "0", "-1", "WITHSCORES"],
        ["EXISTS", "x"],
        ["GEOSEARCHSTORE", "str", "Sicily", "FROMMEMBER", "Catania", "BYBOX", "1", "1", "km"],
        ["EXISTS", "str"],
        ["SET", "str", "v"],
        ["GEOSEARCHSTORE", "str", "missing", "FROMMEMBER", "Catania", "BYBOX", "1", "1", "km"],
        ["EXISTS", "str"],
        ["GEORADIUSBYMEMBER", "missing", "x", "1", "km", "STORE", "dst"],
        ["EXISTS", "dst"],
        ["GEOSEARCHSTORE", "Sicily", "Sicily", "FROMMEMBER", "Catania", "BYRADIUS", "1000", "km",
         "STOREDIST"],
        ["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"],
        ["COMMAND", "GETKEYS", "GEORADIUS", "k", "15", "37", "200", "km", "COUNT", "2", "STORE",
         "x", "STOREDIST", "y"],
        ["COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "k", "m", "200", "km", "STORE", "x"],
        ["COMMAND", "GETKEYS", "GEORADIUS", "k", "15", "37", "200", "km", "STORE"],
        ["COMMAND", "GETKEYS", "GEOSEARCHSTORE", "a", "b", "FROMMEMBER", "x", "BYRADIUS", "1",
         "km"],
    ]),
    ("search errors", [
        ["GEOADD", "Sicily", *SICILY],
        ["SET", "str", "x"],
        ["GEOSEARCH", "str", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "BADOPTION"],
        ["GEORADIUS", "str", "1000", "1", "-1", "km"],
        ["GEORADIUSBYMEMBER", "Sicily", "nosuch", "-1", "km"],
        ["GEORADIUSBYMEMBER", "Sicily", "Palermo", "-1", "km"],
        ["GEORADIUSBYMEMBER", "Sicily", "Palermo", "x", "km"],
        ["GEORADIUSBYMEMBER", "Sicily", "Palermo", "1", "parsec"],
        ["GEORADIUS", "Sicily", "200", "37", "1", "km"],
        ["GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT"],
        ["GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "x"],
        ["GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "0"],
        ["GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "-3"],
        ["GEORADIUS", "Sicily", "15", "37", "1", "km", "ANY"],
        ["GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE"],
        ["GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "d", "WITHDIST"],
        ["GEORADIUS_RO", "Sicily", "15", "37", "1", "km", "STORE", "d"],
        ["GEORADIUS", "Sicily", "15", "37", "1", "km", "FROMMEMBER", "Palermo"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STORE", "d"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STOREDIST"],
        ["GEOSEARCH", "Sicily", "BYRADIUS", "300", "mi", "WITHDIST"],
        ["geoSearch", "Sicily", "FROMLONLAT", "15", "37", "WITHDIST", "ASC"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "ANY"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "BYBOX", "1",
         "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "FROMMEMBER", "Palermo", "BYRADIUS",
         "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", "15", "37", "BYRADIUS",
         "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "nosuch", "BYRADIUS", "x", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "-1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "-1", "2", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "a", "2", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "b", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "2", "parsec"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "x", "BYBOX", "1", "2", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "2", "km", "COUNT", "1",
         "STOREDIST", "WITHHASH"],
        ["GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "2", "km",
         "WITHHASH"],
        ["GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "2", "km",
         "STORE", "e"],
        ["GEOSEARCHSTORE", "d", "str", "FROMLONLAT", "15", "37", "BYBOX", "1", "2", "km"],
        ["GEOSEARCHSTORE", "d", "missing", "FROMLONLAT", "15", "37"],
        ["GEORADIUS", "Sicily", "15", "37", "1"],
        ["GEOSEARCH", "Sicily"],
    ]),
    ("random searches", [
        ["GEOADD", "r", *POINTS],
        *random_searches(21, "r", MEMBERS, 150),
    ]),
    ("random searches large set", [
        ["GEOADD", "big", *BIG_POINTS],
        ["OBJECT", "ENCODING", "big"],
        *random_searches(22, "big", BIG_MEMBERS, 150),
    ]),
    ("random searches ties", [
        ["GEOADD", "ties", *CLUSTERS],
        *random_searches(23, "ties", CLUSTER_MEMBERS, 150, centers=CLUSTER_CENTERS),
        *[["GEOSEARCH", "ties", "FROMMEMBER", member, "BYRADIUS", "5", "km", "COUNT",
           str(count), order, "WITHDIST"]
          for member, count in zip(CLUSTER_MEMBERS[::37], [1, 2, 7, 8, 41, 60, 89, 3, 5, 10])
          for order in ("ASC", "DESC")],
    ]),
]


@both_protocols
@pytest.mark.parametrize("case", CASES, ids=[name for name, _ in CASES])
def test_geo_replies_as_redis(server, real_redis, target, protocol, case):
    compare_case(server, real_redis, target, protocol, case)
