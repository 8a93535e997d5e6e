#!/usr/bin/env python3
"""Summary of benchmarks/aof_throughput.sh: reads DIR/CONFIG-rROUND.csv (compare.sh --raw files,
CONFIG = none, everysec or always) and prints medians per configuration, test and pipeline depth,
then per test the ceiling the request path sets on gigakv's logged ratio. Standard library only."""

import csv
import os
import re
import statistics
import sys

CONFIGS = ("none", "everysec", "always")
OTHER_WARN = 10  # % of a core used by other processes above which rps figures are suspect


def number(row, column):
    value = (row.get(column) or "").strip()
    return float(value) if value else None


def load(directory):
    """{(config, server, test, pipeline, round): row} and the (test, pipeline) pairs in order."""
    runs, keys = {}, {}
    for name in sorted(os.listdir(directory)):
        match = re.fullmatch(r"(none|everysec|always)-r(\d+)\.csv", name)
        if not match:
            continue
        config, rnd = match.group(1), int(match.group(2))
        with open(os.path.join(directory, name), newline="") as f:
            for row in csv.DictReader(f):
                key = (row["test"], int(row["pipeline"]))
                keys.setdefault(key, None)
                runs[(config, row["server"], *key, rnd)] = row
    return runs, sorted(keys, key=lambda k: (k[1], list(keys).index(k)))


def per_round(runs, config, server, test, p, column):
    """{round: value} of one CSV column over the rounds that have it."""
    return {k[4]: number(row, column) for k, row in runs.items()
            if k[:4] == (config, server, test, p) and number(row, column) is not None}


def quotients(top, bottom):
    """Per-round top/bottom over the rounds both have."""
    return [top[r] / bottom[r] for r in sorted(top) if r in bottom and bottom[r] > 0]


def med(values, spec):
    return format(statistics.median(values), spec) if values else "-"


def spread(values):
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: aof_throughput.py DIR")
    runs, keys = load(sys.argv[1])
    if not runs:
        sys.exit(f"aof_throughput.py: no CONFIG-rROUND.csv files in {sys.argv[1]}")
    rounds = len({k[4] for k in runs})

    header = (f"{'config':<9} {'test':<12} {'P':>3} {'gigakv_rps':>11} {'redis_rps':>11} "
              f"{'ratio (min-max)':>18} {'gk_us/req':>9} {'rd_us/req':>9} {'cli%gk':>6} "
              f"{'cli%rd':>6}")
    print()
    print(header)
    print("-" * len(header))
    rps = {}
    for config in CONFIGS:
        for test, p in keys:
            g = per_round(runs, config, "gigakv", test, p, "rps")
            r = per_round(runs, config, "redis", test, p, "rps")
            rps[config, test, p] = (g, r)
            cpu = [med(list(per_round(runs, config, s, test, p, "cpu_s_per_Mreq").values()), ".3f")
                   for s in ("gigakv", "redis")]
            cli = [med(list(per_round(runs, config, s, test, p, "client_busy_pct").values()), ".0f")
                   for s in ("gigakv", "redis")]
            print(f"{config:<9} {test:<12} {p:>3} {med(list(g.values()), '.0f'):>11} "
                  f"{med(list(r.values()), '.0f'):>11} {spread(quotients(g, r)):>18} "
                  f"{cpu[0]:>9} {cpu[1]:>9} {cli[0]:>6} {cli[1]:>6}")

    print()
    print("ceiling = gigakv rps without persistence / redis rps with the log, same round "
          "(median, min-max)")
    for test, p in keys:
        g_none, r_none = rps["none", test, p]
        for config in ("always", "everysec"):
            g, r = rps[config, test, p]
            kept = [med(quotients(g, g_none), ".0%"), med(quotients(r, r_none), ".0%")]
            print(f"  {test:<12} -P {p:<3} {config:<8}  measured {spread(quotients(g, r)):<18} "
                  f"ceiling {spread(quotients(g_none, r)):<18} "
                  f"(rps kept vs none: gigakv {kept[0]}, redis {kept[1]})")

    errors = sorted({f"  {k[0]} {k[1]} {k[2]} -P {k[3]}: {row['error'][:100]}"
                     for k, row in runs.items() if row.get("error")})
    if errors:
        print("\nerror replies (run skipped):")
        print("\n".join(errors))
    other = max((number(row, "other_busy_pct") or 0 for row in runs.values()), default=0)
    if other > OTHER_WARN:
        print(f"\nWARNING: other processes used up to {other:.0f}% of a core during some runs; "
              "the rps figures are unreliable.")

    print(f"""
rps = median over {rounds} round(s); ratio = gigakv/redis per round (median, min-max).
*_us/req = server CPU microseconds (user+sys, all threads) per request; cli% = the client's own
CPU use during that server's runs.
The ceiling is the highest logged ratio gigakv could reach if its log cost nothing: durability
cannot make a server faster than the same server without it, so (up to noise) the measured ratio
stays below it, and measured/ceiling is the share of its unlogged speed gigakv keeps against the
same redis. A ceiling near the measured ratio means the request path (parsing, executing, the
kernel's socket work), not the log, limits the ratio. With the client on its own core its CPU
(cli% near 100) may cap both servers; that pushes ratio and ceiling towards 1.0 (lower bounds),
while the us/req columns are unaffected.""")


if __name__ == "__main__":
    main()
