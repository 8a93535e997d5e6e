"""GEOADD, GEOPOS, GEODIST and GEOHASH side by side with redis-server 7.0, byte for byte.

Points are stored as sorted-set scores (Redis's 52-bit geohash), so the cases compare the
scores too (ZSCORE, ZRANGE WITHSCORES), the coordinates GEOPOS reads back (cell centers in
Redis's text), distances in every unit, geohash strings, and the errors; in RESP2 and RESP3.
Random points cover the whole range, the poles' limits and the antimeridian.
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
]


@both_protocols
@pytest.mark.parametrize("case", CASES, ids=[name for name, _ in CASES])
def test_geo_replies_as_redis(server, real_redis, target, protocol, case):
    compare_case(server, real_redis, target, protocol, case)
