"""cmsgpack and struct, the Lua libraries Redis 7.0 gives scripts, side by side with redis-server.

gigakv has its own implementations (server/lua_cmsgpack.cc, server/lua_struct.cc) of Redis's
lua_cmsgpack.c and lua_struct.c; every script here must reply the same bytes as on Redis 7.0, in
RESP2 and in RESP3. Most scripts run a library call under pcall and return one string that shows
every result (numbers with 17 digits, strings in hex, tables with sorted keys) or the error's
text, so that a difference in any result, not only the first, shows; a few let the error or the
results reach the reply as they are.

Covered: integers at every width boundary, floats (float32 when exact, -0.0, infinities, NaN),
strings of every header length, booleans, nil and unpackable values, arrays (with holes, empty),
single-key maps, the 16-level nesting limit and cyclic tables, several values in one pack;
unpack, unpack_one and unpack_limit with their offsets and Redis's error texts (missing bytes,
bad tags, bad offsets, running out of stack); struct.pack/unpack/size over every option, sizes,
endianness and alignment, with the fixed bounds checks and their errors.

Not compared: the byte order of maps with several keys, which follows the Lua VM's table
iteration (Lua 5.1's in Redis, LuaJIT's in gigakv); such maps are compared after a round trip.

With GIGAKV_E2E_TARGET=redis the side-by-side test is skipped; the other tests still check that
every case runs on Redis (no compile error, no sandbox error) and the pinned encodings.
"""

from __future__ import annotations

import pytest

from differential import both_protocols, open_pair

# One line, so that errors name the same line numbers as the case's own text (line 1).
PRELUDE = (
    "local function hex(s) return (s:gsub('.', function(c) return string.format('%02x', "
    "c:byte()) end)) end "
    "local show show = function(v) local t = type(v) "
    "if t == 'number' then if v ~= v then return 'nan' elseif v == math.huge then return 'inf' "
    "elseif v == -math.huge then return '-inf' elseif v == 0 and 1 / v < 0 then return '-0' end "
    "return string.format('%.17g', v) "
    "elseif t == 'string' then return 's:' .. hex(v) "
    "elseif t == 'table' then local parts = {} for k, x in pairs(v) do "
    "parts[#parts + 1] = show(k) .. '=' .. show(x) end table.sort(parts) "
    "return '{' .. table.concat(parts, ',') .. '}' end return tostring(v) end "
    "local function cap(...) return {n = select('#', ...), ...} end "
    "local function try(f) local ok, r = pcall(f) if not ok then return 'error: ' .. tostring(r) "
    "end local out = {} for i = 1, r.n do out[#out + 1] = show(r[i]) end "
    "return table.concat(out, ' ') end "
)


def shown(expr: str, setup: str = "", args=()) -> tuple[str, list, list]:
    """A case returning `try` of `expr` (a call list, never in tail position) after `setup`."""
    return (PRELUDE + setup + " return try(function() return cap(" + expr + ") end)", [],
            list(args))


def raw(body: str, args=()) -> tuple[str, list, list]:
    """A case whose results or error reach the reply as they are."""
    return (body, [], list(args))


INTEGERS = ["0", "1", "127", "128", "255", "256", "65535", "65536", "4294967295", "4294967296",
            "-1", "-32", "-33", "-128", "-129", "-32768", "-32769", "-2147483648", "-2147483649",
            "2^53", "-2^53", "2^63 - 1024", "-2^63", "9007199254740993"]
FLOATS = ["0.5", "1.1", "-1.1", "0.1", "1e300", "-1e300", "-0.0", "1/0", "-1/0", "0/0", "1e-40",
          "1e-320", "3.4028234663852886e38", "1e39", "2^63", "2^64", "2^32 + 0.5", "16777217"]
STRING_LENGTHS = [0, 1, 31, 32, 255, 256, 65535, 65536, 100000]
TABLES = ["{}", "{{}}", "{1, 2, 3}", "{1, nil, 3}", "{nil, nil, 3}", "{[1] = 1, [2] = 2, [4] = 4}",
          "{a = 1}", "{[0] = 5}", "{[1.5] = 1}", "{[-1] = 1}", "{[2^31] = 1}",
          "{[2^31 - 1] = 1}", "{true}", "{[true] = 1}", "{[{}] = 1}", "{{1, {2, {3}}}}",
          "{['1'] = 1}", "{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}",
          "{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}", "{x = {y = {z = 'deep'}}}",
          "{1, 'two', {three = 3}, false, 4.5}"]
DEEP_ARRAY = "local t = {{}} local c = t for i = 1, {n} do c[1] = {{}} c = c[1] end c[1] = 'x'"
DEEP_MAP = "local t = {{}} local c = t for i = 1, {n} do c.k = {{}} c = c.k end c.k = 5"

# Tags and truncations for unpack: every byte form, each cut short, and the tags Redis refuses.
UNPACK_HEX = [
    "", "00", "7f", "80", "8f", "90", "9f", "a0", "bf", "c0", "c1", "c2", "c3", "c4", "c5", "c6",
    "c7", "c8", "c9", "d4", "d5", "d6", "d7", "d8", "e0", "ff",
    "ca", "ca3f800000", "ca7fc00000", "ca7f800000", "caff800000", "cb", "cb3ff0000000000000",
    "cbfff8000000000000", "cc", "ccff", "cd", "cdffff", "ce", "ceffffffff", "cf",
    "cfffffffffffffffff", "cf8000000000000000", "cf7fffffffffffffff", "cf0020000000000001",
    "d0", "d080", "d0ff", "d1", "d18000", "d1ff7f", "d2", "d280000000", "d2ffffffff", "d3",
    "d38000000000000000", "d3fffffffffffffffe", "d9", "d900", "d901", "d90141", "da", "da00",
    "da000141", "db", "db000000", "db0000000141", "dbffffffff41", "dc", "dc00", "dc0000",
    "dc000101", "dcffff", "dd", "dd00000000", "ddffffffff01", "de", "de0000", "de00010101", "df",
    "df0000000101", "dfffffffff", "9101", "91", "920102", "8101", "810102", "81c001",
    "81cb7ff8000000000000c0", "82010201", "8201020102", "0102", "01c1", "9192", "81a16b93c0c0c3",
    "a3616263", "a361", "a461626364ff", "9301c002", "93c0c0c0", "8301c00203c0c0",
]

PACK_FORMATS = ["b", "B", "h", "H", "l", "L", "T", "i", "I", "i1", "i3", "i7", "i8", "i9", "i16",
                "i32", "I9", "I32", "i0"]
PACK_VALUES = ["0", "1", "-1", "127", "128", "-129", "65535", "-32768", "2^31", "-2^31", "2^53",
               "2^63", "-2^63", "2^64", "-2^70", "1.7", "-1.7", "1/0", "-1/0", "0/0"]
UNPACK_DATA = ["00" * 32, "ff" * 32, "80" + "00" * 31, "7f" + "ff" * 31,
               "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20",
               "ff" * 7 + "7f80" + "00" * 23]
STRUCT_PACK = [
    "'c', 'a'", "'c3', 'abcdef'", "'c5', 'ab'", "'c0', 'hello'", "'c0', ''", "'s', 'hi'",
    "'s', 'a\\0b'", "'c2c2', 'ab', 'c'", "'x'", "'bxh', 1, 2", "'!bxh', 1, 2", "'!4bi', 1, 2",
    "'!2bi', 1, 2", "'!8bd', 1, 2", "'!16bd', 1, 2", "'!4bi3', 1, 2", "'!8bi5', 1, 2",
    "'!8bi7', 1, 2", "'!4bi16', 1, 2", "'!4bc3', 1, 'abc'", "'!4bsi', 1, 'ab', 3", "'!4bx'",
    "'!', 1", "'!3b', 1", "'!0b', 1", "'!64b', 1", "'!2147483648', 1", "'!1073741824bd', 1, 2",
    "'i33', 1", "'i2147483648', 1", "'c2147483647', 'a'", "'c99999999999999', 'a'", "'z', 1",
    "'=i', 1", "'5', 1", "'\\200', 1", "'<>b', 1", "'  b  ', 1", "'b'", "'i'", "'d'", "'s'",
    "'b', 'x'", "'b', '12'", "'c', 5", "'c0', 123", "'d', {}", "'', 1", "'b', nil", "'i', true",
    "'<f', 1.5", "'>f', 1e300", "'>f', 3.4028235677973366e38", "'>f', 0/0", "'<d', 0.1",
    "'>d', -0.0", "'c0i', string.rep('1', 9000)", "nil", "12, 1",
]
STRUCT_UNPACK = [
    "'b', ''", "'bb', 'a'", "'b', 'abc', 3", "'b', 'abc', 4", "'b', 'abc', 0", "'b', 'abc', -1",
    "'', 'abc', -5", "'', 'abc', 10", "'x', 'abc', 3", "'x', 'abc', 4", "'xb', 'abc'",
    "'c3', 'abc'", "'c4', 'abc'", "'c0', 'abc'", "'bc0', '\\2abc'", "'bc0', '\\4abc'",
    "'Bc0', '\\255abc'", "'c1c0', '3abcd'", "'c1c0', 'xabcd'", "'c2c0', '-1abc'",
    "'c4c0', '-0.5abc'", "'>Lc0', string.rep('\\255', 8) .. 'abc'", "'s', 'abc'",
    "'s', 'ab\\0c'", "'ss', 'a\\0b\\0c'", "'s', ''", "'sb', 'a\\0'",
    "'!4bi', '\\1\\0\\0\\0\\2\\0\\0\\0'", "'!4bi', '\\1\\0\\0\\0\\2\\0\\0'",
    "'!4bi', '\\1\\0\\0\\0\\2\\0\\0\\0', 2", "'!8bi7', string.rep('\\1', 16)", "'z', 'abc'",
    "'=b', 'a'", "'i33', 'a'", "'c99999999999999', 'a'", "'!3', 'a'", "'b', 'a', 'x'",
    "'b', 'a', '2'", "'b', 'a', 1.9", "'b'", "'b', 5", "'b', {}", "nil, 'a'",
    "'>ifd', '\\0\\0\\0\\7\\63\\128\\0\\0\\64\\0\\0\\0\\0\\0\\0\\0'", "'<I2>I2', '\\1\\2\\1\\2'",
    "'<f', '\\0\\0\\192\\127'", "'>d', '\\127\\240\\0\\0\\0\\0\\0\\0'",
]
STRUCT_SIZE = ["''", "'b'", "'bh'", "'!bh'", "'!bi'", "'!bd'", "'!4bd'", "'!bi3'", "'!4bxi3'",
               "'!8bi5'", "'c'", "'c10'", "'c0'", "'s'", "'x'", "'z'", "'bz5'", "'5'", "'='",
               "'\\200'", "'!3'", "'!'", "'i33'", "'i32'", "'c2147483647c2147483647'",
               "'c2147483648'", "'<>!2bhlLTiIfdxc3'", "'!4 b i'", "'!16bd'", "nil", "12"]


def _pack_cases():
    cases = []
    for n in INTEGERS + FLOATS:
        cases.append(shown(f"cmsgpack.pack({n}), cmsgpack.unpack(cmsgpack.pack({n}))"))
    for n in STRING_LENGTHS:
        cases.append(shown(f"cmsgpack.pack(string.rep('a', {n})):sub(1, 6), "
                           f"#cmsgpack.pack(string.rep('a', {n})), "
                           f"#cmsgpack.unpack(cmsgpack.pack(string.rep('b', {n})))"))
    for value in ["true", "false", "nil", "function() end", "coroutine.create(function() end)"]:
        cases.append(shown(f"cmsgpack.pack({value})"))
    for table in TABLES:
        cases.append(shown(f"cmsgpack.pack({table}), cmsgpack.unpack(cmsgpack.pack({table}))"))
    for n in [14, 15, 16, 17, 20]:
        cases.append(shown("cmsgpack.pack(t)", DEEP_ARRAY.format(n=n)))
        cases.append(shown("cmsgpack.pack(t)", DEEP_MAP.format(n=n)))
    cases += [
        shown("cmsgpack.pack(t)", "local t = {} t[1] = t"),
        shown("cmsgpack.pack(t)", "local t = {} t.self = t"),
        shown("#cmsgpack.pack(t), cmsgpack.pack(t):sub(1, 6)",
              "local t = {} for i = 1, 65536 do t[i] = i % 3 end"),
        shown("#cmsgpack.pack(t), cmsgpack.pack(t):sub(1, 5)",
              "local t = {} for i = 1, 70000 do t['k' .. i] = 0 end"),
        shown("cmsgpack.pack(t):sub(1, 3)", "local t = {} for i = 1, 16 do t['k' .. i] = 0 end"),
        shown("cmsgpack.pack(t)", "local t = {} for i = 1, 15 do t[i] = i end t[17] = 1"),
        shown("cmsgpack.pack(1, 'a', {2}, nil, true, {k = 'v'})"),
        shown("cmsgpack.pack(ARGV[1], tonumber(ARGV[2]))", args=[b"\x00\xff\r\n", "300"]),
        shown("cmsgpack.pack()"),
        shown("#cmsgpack.pack(unpack(t))", "local t = {} for i = 1, 3990 do t[i] = i end"),
        shown("#cmsgpack.pack(unpack(t))", "local t = {} for i = 1, 4000 do t[i] = {i} end"),
        shown("cmsgpack.pack(unpack(t))", "local t = {} for i = 1, 4001 do t[i] = i end"),
        shown("cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION"),
        shown("type(cmsgpack.pack), type(cmsgpack.unpack), type(cmsgpack.unpack_one), "
              "type(cmsgpack.unpack_limit), type(cmsgpack.cmsgpack_safe)"),
        # Maps of several keys: the same contents, whatever the order of their pairs.
        shown("cmsgpack.unpack(cmsgpack.pack({a = 1, b = {2, 3}, [5] = 'five', [1.5] = true}))"),
        shown("#cmsgpack.pack({name = 'n', age = 3, tags = {'a'}})"),
    ]
    return cases


def _unpack_cases():
    cases = []
    for data in UNPACK_HEX:
        arg = bytes.fromhex(data)
        cases.append(shown("cmsgpack.unpack(ARGV[1])", args=[arg]))
        cases.append(shown("cmsgpack.unpack_one(ARGV[1])", args=[arg]))
    for data in ["01020304", "93010203a16b", "c0c0c0"]:
        arg = bytes.fromhex(data)
        for offset in ["0", "1", "3", "4", "5", "6", "-1", "1.5", "'2'", "'x'", "nil", "2^31",
                       "2^32 + 1"]:
            cases.append(shown(f"cmsgpack.unpack_one(ARGV[1], {offset})", args=[arg]))
        for limit in ["0", "1", "2", "10", "-1", "1.9", "'x'"]:
            for offset in ["", ", 0", ", 1", ", 5", ", -2"]:
                cases.append(shown(f"cmsgpack.unpack_limit(ARGV[1], {limit}{offset})", args=[arg]))
    cases += [
        shown("cmsgpack.unpack()"),
        shown("cmsgpack.unpack(12)"),
        shown("cmsgpack.unpack({})"),
        shown("cmsgpack.unpack('\\1', 'b', 'c')"),
        shown("cmsgpack.unpack_one()"),
        shown("cmsgpack.unpack_limit('a')"),
        shown("cmsgpack.unpack(cmsgpack.pack(1, 2, 3, 'four', {5}))"),
        shown("cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 'four', {5}), 2, 1)"),
    ]
    # Running out of Lua stack: many values at once, or arrays and maps nested thousands deep.
    for n in [7998, 7999, 8000, 20000]:
        cases.append(shown(f"select('#', cmsgpack.unpack(string.rep('\\1', {n})))"))
        cases.append(shown(f"select('#', cmsgpack.unpack_limit(string.rep('\\1', {n}), {n}, 0))"))
    cases.append(shown("select('#', cmsgpack.unpack(string.rep('\\1', 7997), 'a', 'b', 'c'))"))
    for n in [3999, 4000, 100000]:
        for element in ["\\145", "\\129\\1", "\\129\\145", "\\220\\0\\1"]:
            cases.append(shown(f"type(cmsgpack.unpack(string.rep('{element}', {n}) .. '\\1'))"))
    return cases


def _struct_cases():
    cases = []
    for fmt in PACK_FORMATS:
        for endian in "<>":
            values = ", ".join(f"struct.pack('{endian}{fmt}', {v})" for v in PACK_VALUES)
            cases.append(shown(values))
            for data in UNPACK_DATA:
                cases.append(shown(f"struct.unpack('{endian}{fmt}', ARGV[1])",
                                   args=[bytes.fromhex(data)]))
    for arguments in STRUCT_PACK:
        cases.append(shown(f"struct.pack({arguments})"))
    for arguments in STRUCT_UNPACK:
        cases.append(shown(f"struct.unpack({arguments})"))
    for arguments in STRUCT_SIZE:
        cases.append(shown(f"struct.size({arguments})"))
    cases += [
        shown("struct.pack()"),
        shown("struct.unpack(struct.pack('>bHic0sd', -1, 65535, -7, 'abc', 'zz', 0.25))"),
        shown("select('#', struct.unpack(string.rep('b', 7997), string.rep('a', 8000)))"),
        shown("select('#', struct.unpack(string.rep('b', 7998), string.rep('a', 8000)))"),
        shown("select('#', struct.unpack(string.rep('x', 100000), string.rep('a', 100000)))"),
        shown("type(struct.pack), type(struct.unpack), type(struct.size)"),
    ]
    return cases


def _raw_cases():
    """Results and errors reaching the reply unchanged (calls not in tail position)."""
    return [
        raw("return cmsgpack.pack({1, 2, 3})"),
        raw("return cmsgpack.pack(ARGV[1], 1.5, -1)", args=[b"bin\x00ary"]),
        raw("return cmsgpack.unpack(ARGV[1])", args=[bytes.fromhex("93010203")]),
        raw("return cmsgpack.unpack(ARGV[1])", args=[bytes.fromhex("cb3ff8000000000000")]),
        raw("return cmsgpack.unpack(ARGV[1])", args=[bytes.fromhex("0102a3616263")]),
        raw("return cmsgpack.unpack_one(ARGV[1])", args=[bytes.fromhex("0102")]),
        raw("return {cmsgpack.unpack_limit(ARGV[1], 2)}", args=[bytes.fromhex("010203")]),
        raw("return struct.pack('>I2s', 258, 'x')"),
        raw("return {struct.unpack('>I2s', ARGV[1])}", args=[b"\x01\x02x\x00"]),
        raw("return struct.size('!4bi')"),
        raw("local v = cmsgpack.unpack(ARGV[1]) return v", args=[b"\xc1"]),
        raw("local v = cmsgpack.unpack(ARGV[1]) return v", args=[b"\xcd\x01"]),
        raw("local v = cmsgpack.unpack_one(ARGV[1], 9) return v", args=[b"\x01"]),
        raw("local v = cmsgpack.unpack(ARGV[1]) return v", args=[b"\x81\xc0\x01"]),
        raw("local v = cmsgpack.pack() return v"),
        raw("local v = struct.pack('i40', 1) return v"),
        raw("local v = struct.unpack('i', 'ab') return v"),
        raw("local v = struct.size('s') return v"),
        raw("local v = struct.pack('c5', 'ab') return v"),
    ]


CASES = [
    ("cmsgpack pack", _pack_cases()),
    ("cmsgpack unpack", _unpack_cases()),
    ("struct", _struct_cases()),
    ("replies and errors", _raw_cases()),
]

# Errors raised by a call in tail position (`return f(...)`): Redis names the script's line.
TAIL_ERRORS = [
    raw("return cmsgpack.pack()"),
    raw("return struct.pack('z')"),
    raw("return struct.size('s')"),
    raw("return cmsgpack.unpack(ARGV[1])", args=[b"\xc1"]),
    raw("return cmsgpack.unpack_one(ARGV[1], -1)", args=[b"\x01"]),
    raw("return struct.unpack('b', '')"),
]

# Encodings pinned from Redis 7.0.15, checked on the server under test (either target).
PINNED = [
    (shown("cmsgpack.pack(127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296)"),
     b"s:7f" b"cc80" b"ccff" b"cd0100" b"cdffff" b"ce00010000" b"ceffffffff" b"cf0000000100000000"),
    (shown("cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2^31, -2^31 - 1)"),
     b"s:ff" b"e0" b"d0df" b"d080" b"d1ff7f" b"d18000" b"d2ffff7fff" b"d280000000"
     b"d3ffffffff7fffffff"),
    # (Not -0.0 and 1/0 in one function: Lua 5.1 merges the constants 0 and -0.0, LuaJIT not.)
    (shown("cmsgpack.pack(0.5, 1.1, 1/0, 2^63, 1e300)"),
     b"s:ca3f000000" b"cb3ff199999999999a" b"ca7f800000" b"ca5f000000" b"cb7e37e43c8800759c"),
    (shown("cmsgpack.pack(-0.0)"), b"s:00"),
    (shown("cmsgpack.pack(string.rep('a', 32)):sub(1, 6), "
           "cmsgpack.pack(string.rep('a', 256)):sub(1, 6), "
           "cmsgpack.pack(string.rep('a', 65536)):sub(1, 10)"),
     b"s:d92061616161 s:da0100616161 s:db000100006161616161"),
    (shown("cmsgpack.pack({}, {1, nil, 3}, {[0] = 1}, true, false, nil)"),
     b"s:90" b"8201010303" b"810001" b"c3c2c0"),
    (shown("cmsgpack.pack(t)", DEEP_ARRAY.format(n=17)), b"s:" + b"91" * 16 + b"c0"),
    (shown("cmsgpack.unpack(ARGV[1])", args=[bytes.fromhex("cf8000000000000000")]),
     b"-9.2233720368547758e+18"),
    (shown("cmsgpack.unpack_limit(ARGV[1], 0)", args=[b"\x01\x02"]), b"1 2"),
    (shown("cmsgpack.unpack_limit(ARGV[1], 1, 1)", args=[b"\x01\x02\x03"]), b"2 2"),
    (shown("cmsgpack.unpack(ARGV[1])", args=[b"\xc1"]),
     b"error: user_script:1: Bad data format in input."),
    (shown("cmsgpack.unpack(ARGV[1])", args=[b"\xcd\x01"]),
     b"error: user_script:1: Missing bytes in input."),
    (shown("cmsgpack.unpack_one(ARGV[1], -1)", args=[b"ab"]),
     b"error: user_script:1: Invalid request to unpack with offset of -1 and limit of 2."),
    (shown("cmsgpack.unpack_one(ARGV[1], 3)", args=[b"ab"]),
     b"error: user_script:1: Start offset 3 greater than input length 2."),
    (shown("struct.pack('>i9', -1), struct.pack('<L', 0/0), struct.pack('>L', 2^64)"),
     b"s:00ffffffffffffffff s:0000000000000080 s:0000000000000000"),
    (shown("struct.unpack('>i9', ARGV[1])", args=[bytes.fromhex("010203040506070809")]),
     b"-119 10"),
    (shown("struct.pack('!4bi3', 1, 2), struct.size('!4bi3'), struct.size('z')"),
     b"s:010000020000 6 0"),
    (shown("struct.pack('c5', 'ab')"),
     b"error: user_script:1: bad argument #3 to 'pack' (string too short)"),
    (shown("struct.pack('b')"),
     b"error: user_script:1: bad argument #2 to 'pack' (number expected, got nil)"),
    (shown("struct.pack('i33', 1)"),
     b"error: user_script:1: integral size 33 is larger than limit of 32"),
    (shown("struct.pack('!3b', 1)"), b"error: user_script:1: alignment 3 is not a power of 2"),
    (shown("struct.pack('c2147483648', 'a')"), b"error: user_script:1: integral size overflow"),
    (shown("struct.unpack('=b', 'a')"),
     b"error: user_script:1: bad argument #1 to 'unpack' (invalid format option '=')"),
    (shown("struct.unpack('i', 'abc')"),
     b"error: user_script:1: bad argument #2 to 'unpack' (data string too short)"),
    (shown("struct.unpack('c0', 'abc')"),
     b"error: user_script:1: format 'c0' needs a previous size"),
    (shown("struct.unpack('s', 'abc')"), b"error: user_script:1: unfinished string in data"),
    (shown("struct.unpack('', 'abc', -5)"), b"-5"),
    (shown("struct.size('s')"),
     b"error: user_script:1: bad argument #1 to 'size' (option 's' has no fixed size)"),
]


def _bulk(payload: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(payload), payload)


def _eval(conn, case) -> bytes:
    script, keys, args = case
    return conn.call_raw("EVAL", script, str(len(keys)), *keys, *args)


@both_protocols
@pytest.mark.parametrize("group", CASES, ids=[name for name, _ in CASES])
def test_lua_libraries_reply_as_redis(server, real_redis, target, protocol, group):
    name, cases = group
    reference, candidate = open_pair(server, real_redis, protocol, target)
    mismatches = []
    for case in cases:
        expected = _eval(reference, case)
        got = _eval(candidate, case)
        if expected != got:
            shown_script = case[0][len(PRELUDE):] if case[0].startswith(PRELUDE) else case[0]
            mismatches.append(f"{shown_script} {case[2]!r}\n  redis:  {expected[:400]!r}\n"
                              f"  gigakv: {got[:400]!r}")
    assert not mismatches, f"{name} (RESP{protocol}), {len(mismatches)} of {len(cases)}:\n" + \
        "\n".join(mismatches[:20])


def test_errors_in_tail_position_name_the_line_as_redis(server, real_redis, target):
    """`return lib.f(...)` raising: Redis (Lua 5.1) keeps the script's frame under a tail-called
    C function, so the error names user_script:1 and the function; gigakv must do the same."""
    reference, candidate = open_pair(server, real_redis, 2, target)
    for case in TAIL_ERRORS:
        expected = _eval(reference, case)
        assert expected.startswith(b"-ERR user_script:1: "), expected
        assert _eval(candidate, case) == expected, case[0]


def test_cases_run_on_the_server_under_test(server):
    """Every case compiles and stays within the sandbox; the `try` cases answer one bulk string."""
    conn = server.raw()
    for _, cases in CASES:
        for case in cases:
            reply = _eval(conn, case)
            assert b"Error compiling script" not in reply, (case[0], reply)
            assert b"nonexistent global" not in reply, (case[0], reply)
            if case[0].startswith(PRELUDE):
                assert reply.startswith(b"$"), (case[0], reply)


def test_pinned_encodings(server):
    conn = server.raw()
    for case, expected in PINNED:
        assert _eval(conn, case) == _bulk(expected), case[0][len(PRELUDE):]
