#!/usr/bin/env python3
"""Prints server/redis_command_table.cc: every command of a running redis-server as its
COMMAND INFO and COMMAND DOCS report it (arity, flags, key positions, ACL categories, tips, key
specs, summary, since, group, complexity, doc flags, deprecation, history, argument tree), in the
text format described in server/command_metadata.h (RedisCommandTableText). gigakv's command
table takes all of a command's Redis-defined metadata from there.

The script starts no server. To regenerate, start Debian's redis-server 7.0 yourself:
    redis-server --port 6399 --save '' --appendonly no &
    scripts/gen-command-table.py --port 6399 > server/redis_command_table.cc
then stop that server by its PID (kill <pid>).

The output is already clang-format clean (the data is one raw string literal).
"""
import argparse
import socket
import sys


class Resp2:
    """The smallest blocking RESP2 client that COMMAND LIST, INFO and DOCS need."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rb")

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.sendall(b"".join(out))
        return self.read()

    def read(self):
        line = self.file.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            if int(rest) < 0:
                return None
            data = self.file.read(int(rest) + 2)[:-2]
            return data.decode()
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        raise RuntimeError("unexpected reply " + line.decode())


def pairs(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def word(value):
    """A value that must be one non-empty word (no spaces, no commas)."""
    value = str(value)
    if not value or " " in value or "," in value or "\n" in value:
        sys.exit("unencodable word %r" % value)
    return value


def word_list(values):
    """A comma-separated list; "-" is the empty list."""
    return ",".join(word(value) for value in values) if values else "-"


def text(value):
    """The rest of a line; quoted when its ends would be lost or misread."""
    if not value or "\n" in value or "\r" in value or ')"' in value:
        sys.exit("unencodable text %r" % value)
    if value != value.strip() or value.startswith('"'):
        return '"%s"' % value
    return value


def key_spec_line(spec):
    fields = pairs(spec)
    for key in fields:
        if key not in ("notes", "flags", "begin_search", "find_keys"):
            sys.exit("unknown key spec field " + key)
    begin = pairs(fields["begin_search"])
    begin_spec = pairs(begin["spec"] or [])
    if begin["type"] == "index":
        begin_words = ["index", str(begin_spec["index"])]
    elif begin["type"] == "keyword":
        begin_words = ["keyword", word(begin_spec["keyword"]), str(begin_spec["startfrom"])]
    elif begin["type"] == "unknown" and not begin_spec:
        begin_words = ["unknown"]
    else:
        sys.exit("unknown begin_search %r" % begin)
    find = pairs(fields["find_keys"])
    find_spec = pairs(find["spec"] or [])
    if find["type"] == "range":
        find_words = ["range"] + [str(find_spec[k]) for k in ("lastkey", "keystep", "limit")]
    elif find["type"] == "keynum":
        find_words = ["keynum"] + [str(find_spec[k]) for k in ("keynumidx", "firstkey", "keystep")]
    elif find["type"] == "unknown" and not find_spec:
        find_words = ["unknown"]
    else:
        sys.exit("unknown find_keys %r" % find)
    words = [word_list(fields["flags"])] + begin_words + find_words
    if "notes" in fields:
        words.append(text(fields["notes"]))
    if list(fields)[0] != "notes" and "notes" in fields:
        sys.exit("key spec notes not first")  # gigakv replies them first, as Redis 7.0 does.
    return "  key_spec: " + " ".join(words)


FLAG_SIGILS = {"optional": "?", "multiple": "*", "multiple_token": "+"}


def argument_lines(arguments, depth):
    for argument in arguments:
        fields = pairs(argument)
        words = [fields["name"], fields["type"]]
        for key in fields:
            if key not in ("name", "type", "key_spec_index", "token", "since",
                           "deprecated_since", "flags", "arguments"):
                sys.exit("unknown argument field " + key)
        if "key_spec_index" in fields:
            words.append("#%d" % fields["key_spec_index"])
        if "token" in fields:
            words.append("=" + fields["token"])
        if "since" in fields:
            words.append("^" + fields["since"])
        if "deprecated_since" in fields:
            words.append("!" + fields["deprecated_since"])
        words.extend(FLAG_SIGILS[flag] for flag in fields.get("flags", []))
        for each in words:
            if not each or " " in each:
                sys.exit("unencodable word %r" % each)
        if fields["name"].endswith(":"):
            sys.exit("argument name %r reads as a field" % fields["name"])
        yield "  " * depth + " ".join(words)
        yield from argument_lines(fields.get("arguments", []), depth + 1)


DOC_FIELDS = ("summary", "since", "group", "complexity", "doc_flags", "deprecated_since",
              "replaced_by", "history", "arguments", "subcommands")


def command_lines(name, info, docs):
    (info_name, arity, flags, first, last, step, categories, tips, key_specs,
     _subcommands) = info
    if info_name != name:
        sys.exit("COMMAND INFO %s answered %s" % (name, info_name))
    yield " ".join([word(name), str(arity), word_list(flags), str(first), str(last), str(step),
                    word_list(categories)])
    if tips:
        yield "  tips: " + word_list(tips)
    for spec in key_specs:
        yield key_spec_line(spec)
    for key in docs:
        if key not in DOC_FIELDS:
            sys.exit("unknown COMMAND DOCS field %s of %s" % (key, name))
    yield "  summary: " + text(docs["summary"])
    yield "  since: " + word(docs["since"])
    yield "  group: " + word(docs["group"])
    if "complexity" in docs:
        yield "  complexity: " + text(docs["complexity"])
    if "doc_flags" in docs:
        yield "  doc_flags: " + word_list(docs["doc_flags"])
    if "deprecated_since" in docs:
        yield "  deprecated_since: " + word(docs["deprecated_since"])
    if "replaced_by" in docs:
        yield "  replaced_by: " + text(docs["replaced_by"])
    for version, change in docs.get("history", []):
        yield "  history: %s %s" % (word(version), text(change))
    yield from argument_lines(docs.get("arguments", []), 1)


def generate(port):
    """The text of server/redis_command_table.cc, from the redis-server on 127.0.0.1:port."""
    conn = Resp2(port)
    version = pairs(conn.call("HELLO", "2"))["version"]
    lines = []
    for name in sorted(conn.call("COMMAND", "LIST")):
        [info] = conn.call("COMMAND", "INFO", name)
        docs = pairs(pairs(conn.call("COMMAND", "DOCS", name))[name])
        lines.extend(command_lines(name, info, docs))
    conn.sock.close()
    table = "\n".join(lines)
    return f"""// Generated by scripts/gen-command-table.py from redis-server {version}: every command's
// COMMAND INFO and COMMAND DOCS metadata, one entry per unindented line (format: see
// RedisCommandTableText in command_metadata.h). Checked against redis-server by
// tests/e2e/test_server_commands.py. Do not edit by hand: regenerate.
#include "server/command_metadata.h"

namespace gigakv::server {{

std::string_view RedisCommandTableText() {{
  static constexpr std::string_view kText = R"(
{table}
)";
  return kText;
}}

}}  // namespace gigakv::server
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    sys.stdout.write(generate(parser.parse_args().port))


if __name__ == "__main__":
    main()
