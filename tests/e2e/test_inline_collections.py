"""Small hashes, sets and sorted sets written by pipelined commands end up stored inline.

A connection stores the collections a batch of pipelined commands wrote back inline once, when
the batch ends. MEMORY USAGE tells the inline form from the object form: a collection written by
a pipeline must, once the batch is over, take exactly as much as the same collection written by
one command per round trip.
"""

from __future__ import annotations

import pytest

from e2e_support import encode_command

pytestmark = pytest.mark.gigakv_only  # MEMORY USAGE figures are gigakv's own.

CASES = [
    ("HSET", [["f%d" % i, "v%d" % i] for i in range(10)]),
    ("SADD", [["m%d" % i] for i in range(10)]),
    ("SADD", [["%d" % i] for i in range(10)]),  # intset
    ("ZADD", [["%d" % i, "m%d" % i] for i in range(10)]),
]


@pytest.mark.parametrize("command,items", CASES, ids=["hash", "set", "intset", "zset"])
def test_pipelined_writes_are_stored_back_inline(server, command, items):
    with server.raw() as conn:
        for item in items:  # One round trip per command.
            conn.call(command, "key:a", *item)
        batch = b"".join(encode_command(command, "key:b", *item) for item in items)
        conn.send(batch)  # One batch.
        for _ in items:
            conn.read_reply()
        assert conn.call("OBJECT", "ENCODING", "key:b") == conn.call("OBJECT", "ENCODING", "key:a")
        assert conn.call("MEMORY", "USAGE", "key:b") == conn.call("MEMORY", "USAGE", "key:a")
        # A write to a materialized collection in the same batch as the read of it.
        conn.send(encode_command(command, "key:b", *items[0]) + encode_command("MEMORY", "USAGE", "key:a"))
        conn.read_reply()
        conn.read_reply()
        assert conn.call("MEMORY", "USAGE", "key:b") == conn.call("MEMORY", "USAGE", "key:a")
