#include <random>
#include <string>

#include "gigakv/large_buffer.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

class StringCommandsTest : public CommandTest {};

TEST_F(StringCommandsTest, GetSet) {
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");
  EXPECT_EQ(Reply({"SET", "k", "v"}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "\"v\"");
  EXPECT_EQ(Reply({"SET", "k", ""}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "\"\"");
  EXPECT_EQ(RunRaw({"GET", "missing"}), "$-1\r\n");
  UseResp(3);
  EXPECT_EQ(RunRaw({"GET", "missing"}), "_\r\n");
}

TEST_F(StringCommandsTest, LargeValueRoundTrip) {
  std::string value(1 << 20, 'q');
  EXPECT_EQ(Reply({"SET", "big", value}), "+OK");
  EXPECT_EQ(Run({"GET", "big"}).str, value);
  EXPECT_EQ(Reply({"SET", "big", "small"}), "+OK");
  EXPECT_EQ(Reply({"GET", "big"}), "\"small\"");
}

TEST_F(StringCommandsTest, SetNxXx) {
  EXPECT_EQ(Reply({"SET", "k", "1", "XX"}), "(nil)");
  EXPECT_EQ(Reply({"SET", "k", "1", "NX"}), "+OK");
  EXPECT_EQ(Reply({"SET", "k", "2", "NX"}), "(nil)");
  EXPECT_EQ(Reply({"SET", "k", "3", "xx"}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "\"3\"");
  EXPECT_EQ(Reply({"SET", "k", "4", "NX", "XX"}), "-ERR syntax error");
}

TEST_F(StringCommandsTest, SetGetOption) {
  EXPECT_EQ(Reply({"SET", "k", "a", "GET"}), "(nil)");
  EXPECT_EQ(Reply({"SET", "k", "b", "GET"}), "\"a\"");
  EXPECT_EQ(Reply({"SET", "k", "c", "NX", "GET"}), "\"b\"");  // Not set, old value returned.
  EXPECT_EQ(Reply({"GET", "k"}), "\"b\"");
}

TEST_F(StringCommandsTest, SetExpiryOptions) {
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "10"}), "+OK");
  clock_.AdvanceMs(9999);
  EXPECT_EQ(Reply({"GET", "k"}), "\"v\"");
  clock_.AdvanceMs(1);
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");

  EXPECT_EQ(Reply({"SET", "k", "v", "PX", "100"}), "+OK");
  EXPECT_EQ(Reply({"SET", "k", "w", "KEEPTTL"}), "+OK");
  clock_.AdvanceMs(100);
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");

  int64_t now = clock_.NowMs();
  EXPECT_EQ(Reply({"SET", "k", "v", "PXAT", std::to_string(now + 50)}), "+OK");
  EXPECT_EQ(Reply({"SET", "j", "v", "EXAT", std::to_string(now / 1000 + 100)}), "+OK");
  clock_.AdvanceMs(50);
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");
  EXPECT_EQ(Reply({"GET", "j"}), "\"v\"");
  // A plain SET clears the TTL.
  EXPECT_EQ(Reply({"SET", "j", "v2"}), "+OK");
  clock_.AdvanceMs(200'000);
  EXPECT_EQ(Reply({"GET", "j"}), "\"v2\"");
}

TEST_F(StringCommandsTest, SetOptionErrors) {
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "0"}), "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(Reply({"SET", "k", "v", "PX", "-5"}), "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "9223372036854775807"}),
            "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "abc"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"SET", "k", "v", "EX"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "1", "PX", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SET", "k", "v", "KEEPTTL", "EX", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SET", "k", "v", "BOGUS"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SET", "k"}), "-ERR wrong number of arguments for 'set' command");
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");  // Nothing was set by the failed commands.
}

TEST_F(StringCommandsTest, IncrDecr) {
  EXPECT_EQ(Reply({"INCR", "n"}), ":1");
  EXPECT_EQ(Reply({"INCRBY", "n", "41"}), ":42");
  EXPECT_EQ(Reply({"DECR", "n"}), ":41");
  EXPECT_EQ(Reply({"DECRBY", "n", "-9"}), ":50");
  EXPECT_EQ(Reply({"GET", "n"}), "\"50\"");
  EXPECT_EQ(Reply({"SET", "n", "9223372036854775807"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "n"}), "-ERR increment or decrement would overflow");
  EXPECT_EQ(Reply({"SET", "n", "-9223372036854775808"}), "+OK");
  EXPECT_EQ(Reply({"DECR", "n"}), "-ERR increment or decrement would overflow");
  EXPECT_EQ(Reply({"DECRBY", "n", "-9223372036854775808"}), "-ERR decrement would overflow");
  EXPECT_EQ(Reply({"SET", "s", "12a"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "s"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"SET", "s", " 1"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "s"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"INCRBY", "s", "x"}), "-ERR value is not an integer or out of range");
}

// Increments that keep the digit count rewrite the value in place; the others re-store it. Both
// must give the same value, encoding and TTL.
TEST_F(StringCommandsTest, IncrInPlaceAndAcrossDigitCounts) {
  EXPECT_EQ(Reply({"SET", "n", "8", "PX", "100000"}), "+OK");
  for (const char* expected : {":9", ":10", ":11"}) EXPECT_EQ(Reply({"INCR", "n"}), expected);
  EXPECT_EQ(Reply({"INCRBY", "n", "88"}), ":99");
  EXPECT_EQ(Reply({"INCR", "n"}), ":100");
  EXPECT_EQ(Reply({"DECRBY", "n", "110"}), ":-10");
  EXPECT_EQ(Reply({"INCR", "n"}), ":-9");
  EXPECT_EQ(Reply({"GET", "n"}), "\"-9\"");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "n"}), "\"int\"");
  protocol::RespValue ttl = Run({"PTTL", "n"});
  EXPECT_GT(ttl.integer, 0);
  EXPECT_LE(ttl.integer, 100000);

  // A raw string of digits (APPEND makes it raw) becomes an int again, as in Redis.
  EXPECT_EQ(Reply({"SET", "r", "1"}), "+OK");
  EXPECT_EQ(Reply({"APPEND", "r", "0"}), ":2");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "r"}), "\"raw\"");
  EXPECT_EQ(Reply({"INCR", "r"}), ":11");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "r"}), "\"int\"");

  // Seeded random deltas against a model, crossing digit counts and signs.
  std::mt19937_64 rng(11);
  int64_t model = 0;
  for (int i = 0; i < 3000; ++i) {
    int64_t delta = static_cast<int64_t>(rng() % 2001) - 1000;
    if (i % 100 == 0) delta *= 1000003;
    model += delta;
    EXPECT_EQ(Reply({"INCRBY", "m", std::to_string(delta)}), ":" + std::to_string(model));
  }
  EXPECT_EQ(Reply({"GET", "m"}), "\"" + std::to_string(model) + "\"");
}

// INCR and DECR that change only the last digit work on the stored text; every other step
// (a carry, a borrow, signs, 19 digits) takes the general path. A seeded walk of single steps
// across 0 and digit-count boundaries, and the largest values, against a model.
TEST_F(StringCommandsTest, SingleStepsOnTheStoredDigits) {
  std::mt19937_64 rng(20261201);
  for (int64_t start : {int64_t{-25}, int64_t{95}, int64_t{999995}, int64_t{999999999999999990},
                        int64_t{9223372036854775790}}) {
    int64_t model = start;
    EXPECT_EQ(Reply({"SET", "w", std::to_string(model), "PX", "100000"}), "+OK");
    for (int i = 0; i < 400; ++i) {
      bool up = rng() % 3 != 0;  // Drifts upwards, across the next boundary.
      if (up && model == INT64_MAX) up = false;
      model += up ? 1 : -1;
      EXPECT_EQ(Reply({up ? "INCR" : "DECR", "w"}), ":" + std::to_string(model)) << i;
    }
    EXPECT_EQ(Reply({"GET", "w"}), "\"" + std::to_string(model) + "\"");
    EXPECT_EQ(Reply({"OBJECT", "ENCODING", "w"}), "\"int\"");
    protocol::RespValue ttl = Run({"PTTL", "w"});
    EXPECT_GT(ttl.integer, 0);
  }
  EXPECT_EQ(Reply({"SET", "w", "1"}), "+OK");
  EXPECT_EQ(Reply({"DECR", "w"}), ":0");
  EXPECT_EQ(Reply({"DECR", "w"}), ":-1");
  EXPECT_EQ(Reply({"SET", "w", "999999999999999998"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "w"}), ":999999999999999999");
  EXPECT_EQ(Reply({"INCR", "w"}), ":1000000000000000000");
  EXPECT_EQ(Reply({"SET", "w", "9223372036854775806"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "w"}), ":9223372036854775807");
  EXPECT_EQ(Reply({"INCR", "w"}), "-ERR increment or decrement would overflow");
  // Digits stored as a raw string (APPEND) or with a sign are not the int encoding's text.
  EXPECT_EQ(Reply({"SET", "r", "1"}), "+OK");
  EXPECT_EQ(Reply({"APPEND", "r", "2"}), ":2");
  EXPECT_EQ(Reply({"INCR", "r"}), ":13");
  EXPECT_EQ(Reply({"SET", "r", "+5"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "r"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"SET", "r", "07"}), "+OK");
  EXPECT_EQ(Reply({"DECR", "r"}), "-ERR value is not an integer or out of range");
}

TEST_F(StringCommandsTest, IncrKeepsTtl) {
  EXPECT_EQ(Reply({"SET", "n", "1", "PX", "1000"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "n"}), ":2");
  clock_.AdvanceMs(1000);
  EXPECT_EQ(Reply({"GET", "n"}), "(nil)");
}

}  // namespace
}  // namespace gigakv::testing

namespace gigakv::testing {
namespace {

class MoreStringCommandsTest : public CommandTest {};

TEST_F(MoreStringCommandsTest, SetNxSetExPSetEx) {
  EXPECT_EQ(Reply({"SETNX", "k", "1"}), ":1");
  EXPECT_EQ(Reply({"SETNX", "k", "2"}), ":0");
  EXPECT_EQ(Reply({"SETEX", "k", "10", "v"}), "+OK");
  EXPECT_EQ(Reply({"PTTL", "k"}), ":10000");
  EXPECT_EQ(Reply({"PSETEX", "k", "1500", "v"}), "+OK");
  EXPECT_EQ(Reply({"PTTL", "k"}), ":1500");
  EXPECT_EQ(Reply({"SETEX", "k", "0", "v"}), "-ERR invalid expire time in 'setex' command");
  EXPECT_EQ(Reply({"PSETEX", "k", "-1", "v"}), "-ERR invalid expire time in 'psetex' command");
  EXPECT_EQ(Reply({"SETEX", "k", "x", "v"}), "-ERR value is not an integer or out of range");
}

TEST_F(MoreStringCommandsTest, GetSetGetDelGetEx) {
  EXPECT_EQ(Reply({"GETSET", "k", "a"}), "(nil)");
  Run({"EXPIRE", "k", "100"});
  EXPECT_EQ(Reply({"GETSET", "k", "b"}), "\"a\"");
  EXPECT_EQ(Reply({"TTL", "k"}), ":-1");  // GETSET clears the TTL.
  EXPECT_EQ(Reply({"GETEX", "k", "EX", "50"}), "\"b\"");
  EXPECT_EQ(Reply({"TTL", "k"}), ":50");
  EXPECT_EQ(Reply({"GETEX", "k", "PERSIST"}), "\"b\"");
  EXPECT_EQ(Reply({"TTL", "k"}), ":-1");
  EXPECT_EQ(Reply({"GETEX", "k", "PERSIST", "EX", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"GETEX", "k", "EX", "0"}), "-ERR invalid expire time in 'getex' command");
  EXPECT_EQ(Reply({"GETEX", "k", "PXAT", "1"}), "\"b\"");  // In the past: deleted.
  EXPECT_EQ(Reply({"EXISTS", "k"}), ":0");
  Run({"SET", "k", "c"});
  EXPECT_EQ(Reply({"GETDEL", "k"}), "\"c\"");
  EXPECT_EQ(Reply({"GETDEL", "k"}), "(nil)");
}

TEST_F(MoreStringCommandsTest, MultiKey) {
  EXPECT_EQ(Reply({"MSET", "a", "1", "b", "2", "{t}c", "3"}), "+OK");
  EXPECT_EQ(Reply({"MGET", "a", "b", "nope", "{t}c"}), "[\"1\", \"2\", (nil), \"3\"]");
  EXPECT_EQ(Reply({"MSET", "a", "1", "b"}), "-ERR wrong number of arguments for 'mset' command");
  EXPECT_EQ(Reply({"MSETNX", "x", "1", "a", "9"}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "x"}), ":0");  // All or nothing.
  EXPECT_EQ(Reply({"MSETNX", "x", "1", "y", "2"}), ":1");
  EXPECT_EQ(Reply({"MGET", "x", "y"}), "[\"1\", \"2\"]");
}

TEST_F(MoreStringCommandsTest, AppendStrlenRanges) {
  EXPECT_EQ(Reply({"APPEND", "s", "Hello"}), ":5");
  EXPECT_EQ(Reply({"APPEND", "s", " World"}), ":11");
  EXPECT_EQ(Reply({"STRLEN", "s"}), ":11");
  EXPECT_EQ(Reply({"STRLEN", "nope"}), ":0");
  EXPECT_EQ(Reply({"GETRANGE", "s", "0", "4"}), "\"Hello\"");
  EXPECT_EQ(Reply({"GETRANGE", "s", "-5", "-1"}), "\"World\"");
  EXPECT_EQ(Reply({"GETRANGE", "s", "-1", "-5"}), "\"\"");
  EXPECT_EQ(Reply({"GETRANGE", "s", "5", "100"}), "\" World\"");
  EXPECT_EQ(Reply({"SUBSTR", "s", "0", "0"}), "\"H\"");
  EXPECT_EQ(Reply({"GETRANGE", "nope", "0", "10"}), "\"\"");
  EXPECT_EQ(Reply({"SETRANGE", "s", "6", "Redis"}), ":11");
  EXPECT_EQ(Reply({"GET", "s"}), "\"Hello Redis\"");
  EXPECT_EQ(Reply({"SETRANGE", "p", "3", "x"}), ":4");
  EXPECT_EQ(Run({"GET", "p"}).str, std::string("\0\0\0x", 4));
  EXPECT_EQ(Reply({"SETRANGE", "q", "0", ""}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "q"}), ":0");
  EXPECT_EQ(Reply({"SETRANGE", "s", "-1", "x"}), "-ERR offset is out of range");
  EXPECT_EQ(Reply({"SETRANGE", "s", "536870911", "xx"}),
            "-ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "s"}), "\"raw\"");
}

// Large strings are patched and appended in place: a seeded mix of APPEND and SETRANGE (inside,
// at the end, past the end) on long values, with TTLs, checked against a std::string model.
TEST_F(MoreStringCommandsTest, AppendAndSetRangeOnLargeStringsMatchAModel) {
  std::mt19937_64 rng(20261205);
  std::string model;
  EXPECT_EQ(Reply({"SET", "big", std::string(100, 'a'), "EX", "1000"}), "+OK");
  model.assign(100, 'a');
  for (int step = 0; step < 400; ++step) {
    std::string patch(rng() % 300, static_cast<char>('b' + rng() % 20));
    if (rng() % 2 == 0) {
      model += patch;
      ASSERT_EQ(Reply({"APPEND", "big", patch}), ":" + std::to_string(model.size()));
    } else {
      const size_t offset = rng() % (model.size() + 500);
      if (!patch.empty()) {
        if (model.size() < offset + patch.size()) model.resize(offset + patch.size(), '\0');
        model.replace(offset, patch.size(), patch);
      }
      ASSERT_EQ(Reply({"SETRANGE", "big", std::to_string(offset), patch}),
                ":" + std::to_string(model.size()));
    }
  }
  EXPECT_EQ(Run({"GET", "big"}).str, model);
  EXPECT_EQ(Reply({"STRLEN", "big"}), ":" + std::to_string(model.size()));
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "big"}), "\"raw\"");
  const std::string ttl = Reply({"TTL", "big"});
  EXPECT_TRUE(ttl == ":1000" || ttl == ":999") << ttl;
  // A new key made by SETRANGE far out holds zeroes up to the patch.
  EXPECT_EQ(Reply({"SETRANGE", "far", "100000", "end"}), ":100003");
  EXPECT_EQ(Run({"GET", "far"}).str, std::string(100000, '\0') + "end");
  EXPECT_EQ(Reply({"SETRANGE", "far", "536870911", "xx"}),
            "-ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(Reply({"STRLEN", "far"}), ":100003");
}

// The same across the large-buffer threshold (gigakv/large_buffer.h): buffers of several MB are
// prefaulted when made or grown (SET, APPEND, SETRANGE, COPY, the GET reply); contents as a model.
TEST_F(MoreStringCommandsTest, MultiMegabyteStringsMatchAModel) {
  std::mt19937_64 rng(20261206);
  std::string model(kLargeBufferBytes - 1000, 'a');
  for (size_t i = 0; i < model.size(); i += 4093) model[i] = static_cast<char>(rng());
  EXPECT_EQ(Reply({"SET", "big", model}), "+OK");
  for (int step = 0; step < 12; ++step) {
    std::string patch(100'000 + rng() % 200'000, static_cast<char>('b' + step));
    if (step % 3 != 2) {
      model += patch;
      ASSERT_EQ(Reply({"APPEND", "big", patch}), ":" + std::to_string(model.size()));
    } else {
      const size_t offset = model.size() + rng() % kLargeBufferBytes;
      model.resize(offset + patch.size(), '\0');
      model.replace(offset, patch.size(), patch);
      ASSERT_EQ(Reply({"SETRANGE", "big", std::to_string(offset), patch}),
                ":" + std::to_string(model.size()));
    }
  }
  ASSERT_GT(model.size(), 3 * kLargeBufferBytes);
  EXPECT_EQ(Run({"GET", "big"}).str, model);
  EXPECT_EQ(Reply({"COPY", "big", "copy"}), ":1");
  EXPECT_EQ(Run({"GET", "copy"}).str, model);
  // A new key made far out by SETRANGE: zeroes, then the patch.
  const size_t far = 2 * kLargeBufferBytes + 17;
  EXPECT_EQ(Reply({"SETRANGE", "far", std::to_string(far), "end"}), ":" + std::to_string(far + 3));
  EXPECT_EQ(Run({"GET", "far"}).str, std::string(far, '\0') + "end");
}

TEST_F(MoreStringCommandsTest, IncrByFloat) {
  EXPECT_EQ(Reply({"INCRBYFLOAT", "f", "10.5"}), "\"10.5\"");
  EXPECT_EQ(Reply({"INCRBYFLOAT", "f", "0.1"}), "\"10.6\"");
  EXPECT_EQ(Reply({"INCRBYFLOAT", "f", "-5.6"}), "\"5\"");
  EXPECT_EQ(Reply({"SET", "f", "5.0e3"}), "+OK");
  EXPECT_EQ(Reply({"INCRBYFLOAT", "f", "2.0e2"}), "\"5200\"");
  EXPECT_EQ(Reply({"INCRBYFLOAT", "f", "abc"}), "-ERR value is not a valid float");
  EXPECT_EQ(Reply({"SET", "f", "x"}), "+OK");
  EXPECT_EQ(Reply({"INCRBYFLOAT", "f", "1"}), "-ERR value is not a valid float");
  Run({"SET", "f", "1"});
  EXPECT_EQ(Reply({"INCRBYFLOAT", "f", "inf"}), "-ERR increment would produce NaN or Infinity");
}

TEST_F(MoreStringCommandsTest, Lcs) {
  Run({"MSET", "a", "ohmytext", "b", "mynewtext"});
  EXPECT_EQ(Reply({"LCS", "a", "b"}), "\"mytext\"");
  EXPECT_EQ(Reply({"LCS", "a", "b", "LEN"}), ":6");
  EXPECT_EQ(Reply({"LCS", "a", "b", "IDX"}),
            "[\"matches\", [[[:4, :7], [:5, :8]], [[:2, :3], [:0, :1]]], \"len\", :6]");
  EXPECT_EQ(Reply({"LCS", "a", "b", "IDX", "MINMATCHLEN", "3", "WITHMATCHLEN"}),
            "[\"matches\", [[[:4, :7], [:5, :8], :4]], \"len\", :6]");
  EXPECT_EQ(Reply({"LCS", "a", "b", "LEN", "IDX"}),
            "-ERR If you want both the length and indexes, please just use IDX.");
  EXPECT_EQ(Reply({"LCS", "a", "missing"}), "\"\"");
}

// LCS looks both keys up (counting them) and checks their types before it reads its options, as
// Redis does: redis-server 7.0 gives the same replies and counts 8 hits and 2 misses.
TEST_F(MoreStringCommandsTest, LcsLooksUpBeforeParsingOptions) {
  Run({"RPUSH", "l", "a"});
  Run({"SET", "s", "hello"});
  server::Stats::Totals before = server_.stats().totals();
  EXPECT_EQ(Reply({"LCS", "l", "s", "bogus"}),
            "-ERR The specified keys must contain string values");
  EXPECT_EQ(Reply({"LCS", "s", "missing", "bogus"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"LCS", "s", "missing", "LEN", "IDX"}),
            "-ERR If you want both the length and indexes, please just use IDX.");
  EXPECT_EQ(Reply({"LCS", "s", "s", "MINMATCHLEN", "x"}),
            "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"LCS", "s", "l", "LEN", "IDX"}),
            "-ERR The specified keys must contain string values");
  server::Stats::Totals after = server_.stats().totals();
  EXPECT_EQ(after.keyspace_hits - before.keyspace_hits, 8u);
  EXPECT_EQ(after.keyspace_misses - before.keyspace_misses, 2u);
}

}  // namespace
}  // namespace gigakv::testing
