#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;
using Type = protocol::RespValue::Type;

struct Encoding {
  const char* name;
  const char* max_entries;  // hash-max-listpack-entries for the test.
};

// Every test body runs with hashes in the listpack encoding and again in the hashtable one (all
// hashes convert at their first field when hash-max-listpack-entries is 0).
class HashCommandsTest : public CommandTest, public ::testing::WithParamInterface<Encoding> {
 protected:
  void SetUp() override {
    EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-entries", GetParam().max_entries}), "+OK");
  }

  std::string ExpectedEncoding() const {
    return std::string(GetParam().max_entries) == "0" ? "\"hashtable\"" : "\"listpack\"";
  }

  // The bulk strings of an array reply.
  static std::vector<std::string> Strings(const protocol::RespValue& value) {
    std::vector<std::string> out;
    for (const auto& element : value.elements) out.push_back(element.str);
    return out;
  }

  // An HGETALL-like reply as a map (flat array in RESP2, map in RESP3).
  static std::map<std::string, std::string> Pairs(const protocol::RespValue& value) {
    std::map<std::string, std::string> out;
    for (size_t i = 0; i + 1 < value.elements.size(); i += 2) {
      out[value.elements[i].str] = value.elements[i + 1].str;
    }
    return out;
  }

  // Runs HSCAN to the end; fails on a field returned twice.
  std::map<std::string, std::string> ScanAll(const std::string& key,
                                             std::vector<std::string> options = {}) {
    std::map<std::string, std::string> seen;
    std::string cursor = "0";
    int calls = 0;
    do {
      std::vector<std::string> args = {"HSCAN", key, cursor};
      args.insert(args.end(), options.begin(), options.end());
      protocol::RespValue reply = Run(args);
      EXPECT_EQ(reply.type, Type::kArray);
      if (reply.elements.size() != 2) {
        ADD_FAILURE() << reply.DebugString();
        break;
      }
      cursor = reply.elements[0].str;
      const auto& items = reply.elements[1].elements;
      EXPECT_EQ(items.size() % 2, 0u);
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        EXPECT_TRUE(seen.emplace(items[i].str, items[i + 1].str).second) << items[i].str;
      }
    } while (cursor != "0" && ++calls < 100000);
    return seen;
  }
};

TEST_P(HashCommandsTest, SetAndGet) {
  EXPECT_EQ(Reply({"HSET", "h", "f1", "v1", "f2", "v2"}), ":2");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), ExpectedEncoding());
  EXPECT_EQ(Reply({"TYPE", "h"}), "+hash");
  EXPECT_EQ(Reply({"HSET", "h", "f1", "x", "f3", "y"}), ":1");
  EXPECT_EQ(Reply({"HSET", "h", "f1", "z", "f1", "w"}), ":0");  // The last value wins.
  EXPECT_EQ(Reply({"HGET", "h", "f1"}), "\"w\"");
  EXPECT_EQ(Reply({"HGET", "h", "f3"}), "\"y\"");
  EXPECT_EQ(Reply({"HGET", "h", "nope"}), "(nil)");
  EXPECT_EQ(Reply({"HGET", "missing", "f1"}), "(nil)");
  EXPECT_EQ(Reply({"HLEN", "h"}), ":3");
  EXPECT_EQ(Reply({"HLEN", "missing"}), ":0");
  EXPECT_EQ(Reply({"HEXISTS", "h", "f2"}), ":1");
  EXPECT_EQ(Reply({"HEXISTS", "h", "nope"}), ":0");
  EXPECT_EQ(Reply({"HEXISTS", "missing", "f2"}), ":0");
  EXPECT_EQ(Reply({"HMGET", "h", "f1", "nope", "f2"}), "[\"w\", (nil), \"v2\"]");
  EXPECT_EQ(Reply({"HMGET", "missing", "a", "b"}), "[(nil), (nil)]");
  // Integer-looking and empty values come back byte for byte.
  EXPECT_EQ(Reply({"HSET", "h", "n", "-0", "m", "0012", "e", "", "i", "-123456789012"}), ":4");
  EXPECT_EQ(Reply({"HMGET", "h", "n", "m", "e", "i"}),
            "[\"-0\", \"0012\", \"\", \"-123456789012\"]");
  EXPECT_EQ(Reply({"HSTRLEN", "h", "i"}), ":13");
  EXPECT_EQ(Reply({"HSTRLEN", "h", "e"}), ":0");
  EXPECT_EQ(Reply({"HSTRLEN", "h", "nope"}), ":0");
  EXPECT_EQ(Reply({"HSTRLEN", "missing", "f"}), ":0");
  UseResp(3);
  EXPECT_EQ(RunRaw({"HGET", "h", "nope"}), "_\r\n");
  EXPECT_EQ(RunRaw({"HMGET", "h", "nope", "f3"}), "*2\r\n_\r\n$1\r\ny\r\n");
}

TEST_P(HashCommandsTest, HmsetAndArity) {
  EXPECT_EQ(Reply({"HMSET", "h", "a", "1", "b", "2"}), "+OK");
  EXPECT_EQ(Reply({"HGET", "h", "b"}), "\"2\"");
  EXPECT_EQ(Reply({"HSET", "h", "a"}), "-ERR wrong number of arguments for 'hset' command");
  EXPECT_EQ(Reply({"HSET", "h", "a", "1", "b"}),
            "-ERR wrong number of arguments for 'hset' command");
  EXPECT_EQ(Reply({"HMSET", "h", "a", "1", "b"}),
            "-ERR wrong number of arguments for 'hmset' command");
  EXPECT_EQ(Reply({"HGET", "h"}), "-ERR wrong number of arguments for 'hget' command");
  EXPECT_EQ(Reply({"HSETNX", "h", "a"}), "-ERR wrong number of arguments for 'hsetnx' command");
  EXPECT_EQ(Reply({"HDEL", "h"}), "-ERR wrong number of arguments for 'hdel' command");
  EXPECT_EQ(Reply({"HLEN", "h", "x"}), "-ERR wrong number of arguments for 'hlen' command");
  EXPECT_EQ(Reply({"HSCAN", "h"}), "-ERR wrong number of arguments for 'hscan' command");
  EXPECT_EQ(Reply({"HRANDFIELD"}), "-ERR wrong number of arguments for 'hrandfield' command");
  // Nothing else changed.
  EXPECT_EQ(Pairs(Run({"HGETALL", "h"})),
            (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
}

TEST_P(HashCommandsTest, SetNx) {
  EXPECT_EQ(Reply({"HSETNX", "h", "f", "1"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), ExpectedEncoding());
  EXPECT_EQ(Reply({"HSETNX", "h", "f", "2"}), ":0");
  EXPECT_EQ(Reply({"HGET", "h", "f"}), "\"1\"");
  EXPECT_EQ(Reply({"HSETNX", "h", "g", "3"}), ":1");
  EXPECT_EQ(Reply({"HLEN", "h"}), ":2");
}

TEST_P(HashCommandsTest, Del) {
  EXPECT_EQ(Reply({"HDEL", "missing", "f"}), ":0");
  EXPECT_EQ(Reply({"HSET", "h", "a", "1", "b", "2", "c", "3"}), ":3");
  EXPECT_EQ(Reply({"HDEL", "h", "a", "nope", "a"}), ":1");
  EXPECT_EQ(Reply({"HLEN", "h"}), ":2");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), ExpectedEncoding());
  EXPECT_EQ(Reply({"HDEL", "h", "b", "c", "b"}), ":2");
  // An emptied hash is deleted.
  EXPECT_EQ(Reply({"EXISTS", "h"}), ":0");
  EXPECT_EQ(Reply({"TYPE", "h"}), "+none");
}

TEST_P(HashCommandsTest, IncrBy) {
  EXPECT_EQ(Reply({"HINCRBY", "h", "n", "5"}), ":5");  // Creates key and field.
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), ExpectedEncoding());
  EXPECT_EQ(Reply({"HINCRBY", "h", "n", "-15"}), ":-10");
  EXPECT_EQ(Reply({"HGET", "h", "n"}), "\"-10\"");
  EXPECT_EQ(Reply({"HINCRBY", "h", "n", "x"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"HINCRBY", "h", "n", "1.5"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"HSET", "h", "s", "abc", "f", "1.0", "sp", " 1", "big", "9223372036854775807",
                   "small", "-9223372036854775808"}),
            ":5");
  EXPECT_EQ(Reply({"HINCRBY", "h", "s", "1"}), "-ERR hash value is not an integer");
  EXPECT_EQ(Reply({"HINCRBY", "h", "f", "1"}), "-ERR hash value is not an integer");
  EXPECT_EQ(Reply({"HINCRBY", "h", "sp", "1"}), "-ERR hash value is not an integer");
  EXPECT_EQ(Reply({"HINCRBY", "h", "big", "1"}), "-ERR increment or decrement would overflow");
  EXPECT_EQ(Reply({"HINCRBY", "h", "small", "-1"}), "-ERR increment or decrement would overflow");
  EXPECT_EQ(Reply({"HINCRBY", "h", "big", "-1"}), ":9223372036854775806");
  EXPECT_EQ(Reply({"HINCRBY", "h", "small", "9223372036854775807"}), ":-1");
  EXPECT_EQ(Reply({"HGET", "h", "big"}), "\"9223372036854775806\"");
  EXPECT_EQ(Reply({"HGET", "h", "s"}), "\"abc\"");  // Failed increments change nothing.
}

TEST_P(HashCommandsTest, IncrByFloat) {
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "x", "10.5"}), "\"10.5\"");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), ExpectedEncoding());
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "x", "0.1"}), "\"10.6\"");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "x", "-5e0"}), "\"5.6\"");
  EXPECT_EQ(Reply({"HSET", "h", "e", "5.0e3", "i", "3", "s", "abc", "hex", "0x10"}), ":4");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "e", "1"}), "\"5001\"");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "i", "1.25"}), "\"4.25\"");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "hex", "1"}), "\"17\"");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "s", "1"}), "-ERR hash value is not a float");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "i", "abc"}), "-ERR value is not a valid float");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "i", "inf"}), "-ERR value is NaN or Infinity");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "i", "-inf"}), "-ERR value is NaN or Infinity");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "i", "nan"}), "-ERR value is not a valid float");
  EXPECT_EQ(Reply({"HGET", "h", "i"}), "\"4.25\"");
  // The result is stored as text and HINCRBY then refuses it.
  EXPECT_EQ(Reply({"HINCRBY", "h", "i", "1"}), "-ERR hash value is not an integer");
}

TEST_P(HashCommandsTest, GetAllKeysVals) {
  EXPECT_EQ(Reply({"HGETALL", "missing"}), "[]");
  EXPECT_EQ(Reply({"HKEYS", "missing"}), "[]");
  EXPECT_EQ(Reply({"HVALS", "missing"}), "[]");
  EXPECT_EQ(Reply({"HSET", "h", "a", "1", "b", "2", "c", "3"}), ":3");
  std::map<std::string, std::string> expected = {{"a", "1"}, {"b", "2"}, {"c", "3"}};
  protocol::RespValue all = Run({"HGETALL", "h"});
  EXPECT_EQ(all.type, Type::kArray);
  EXPECT_EQ(all.elements.size(), 6u);
  EXPECT_EQ(Pairs(all), expected);
  EXPECT_THAT(Strings(Run({"HKEYS", "h"})), UnorderedElementsAre("a", "b", "c"));
  EXPECT_THAT(Strings(Run({"HVALS", "h"})), UnorderedElementsAre("1", "2", "3"));
  // HKEYS and HVALS list in the same order as HGETALL.
  std::vector<std::string> keys = Strings(Run({"HKEYS", "h"}));
  std::vector<std::string> vals = Strings(Run({"HVALS", "h"}));
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(all.elements[2 * i].str, keys[i]);
    EXPECT_EQ(all.elements[2 * i + 1].str, vals[i]);
  }
  UseResp(3);
  all = Run({"HGETALL", "h"});
  EXPECT_EQ(all.type, Type::kMap);
  EXPECT_EQ(Pairs(all), expected);
  EXPECT_EQ(RunRaw({"HGETALL", "missing"}), "%0\r\n");
  EXPECT_EQ(Run({"HKEYS", "h"}).type, Type::kArray);
  EXPECT_EQ(Run({"HVALS", "h"}).type, Type::kArray);
}

TEST_P(HashCommandsTest, RandField) {
  EXPECT_EQ(Reply({"HRANDFIELD", "missing"}), "(nil)");
  EXPECT_EQ(Reply({"HRANDFIELD", "missing", "3"}), "[]");
  EXPECT_EQ(Reply({"HRANDFIELD", "missing", "-3", "WITHVALUES"}), "[]");
  std::map<std::string, std::string> model;
  std::vector<std::string> hset = {"HSET", "h"};
  for (int i = 0; i < 20; ++i) {
    model["f" + std::to_string(i)] = "v" + std::to_string(i);
    hset.push_back("f" + std::to_string(i));
    hset.push_back("v" + std::to_string(i));
  }
  EXPECT_EQ(Reply(hset), ":20");
  EXPECT_TRUE(model.count(Run({"HRANDFIELD", "h"}).str));
  EXPECT_EQ(Reply({"HRANDFIELD", "h", "0"}), "[]");
  for (int count : {1, 5, 7, 19, 20, 21, 100}) {
    std::vector<std::string> fields = Strings(Run({"HRANDFIELD", "h", std::to_string(count)}));
    EXPECT_EQ(fields.size(), static_cast<size_t>(std::min(count, 20)));
    EXPECT_EQ(std::set<std::string>(fields.begin(), fields.end()).size(), fields.size());
    for (const std::string& field : fields) EXPECT_TRUE(model.count(field)) << field;
    // Negative counts allow repeats and return exactly |count|.
    fields = Strings(Run({"HRANDFIELD", "h", std::to_string(-count)}));
    EXPECT_EQ(fields.size(), static_cast<size_t>(count));
    for (const std::string& field : fields) EXPECT_TRUE(model.count(field)) << field;
  }
  for (int version : {2, 3}) {
    UseResp(version);
    for (const char* count : {"7", "-30", "50"}) {
      protocol::RespValue reply = Run({"HRANDFIELD", "h", count, "withvalues"});
      ASSERT_EQ(reply.type, Type::kArray);
      size_t pairs = std::string(count) == "7" ? 7 : std::string(count) == "-30" ? 30 : 20;
      std::vector<std::pair<std::string, std::string>> got;
      if (version == 2) {
        ASSERT_EQ(reply.elements.size(), 2 * pairs);
        for (size_t i = 0; i < reply.elements.size(); i += 2) {
          got.emplace_back(reply.elements[i].str, reply.elements[i + 1].str);
        }
      } else {
        ASSERT_EQ(reply.elements.size(), pairs);
        for (const auto& pair : reply.elements) {
          ASSERT_EQ(pair.type, Type::kArray);
          ASSERT_EQ(pair.elements.size(), 2u);
          got.emplace_back(pair.elements[0].str, pair.elements[1].str);
        }
      }
      for (const auto& [field, value] : got) EXPECT_EQ(model[field], value) << field;
    }
  }
  UseResp(2);
  EXPECT_EQ(Reply({"HRANDFIELD", "h", "x"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"HRANDFIELD", "h", "1", "withscores"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"HRANDFIELD", "h", "1", "withvalues", "x"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"HRANDFIELD", "missing", "1", "bogus"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"HRANDFIELD", "h", "-9223372036854775808"}),
            "-ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807");
  EXPECT_EQ(Reply({"HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"}),
            "-ERR value is out of range");
  EXPECT_EQ(Reply({"HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"}),
            "-ERR value is out of range");
}

TEST_P(HashCommandsTest, Scan) {
  EXPECT_EQ(Reply({"HSCAN", "missing", "0"}), "[\"0\", []]");
  EXPECT_EQ(Reply({"HSCAN", "missing", "0", "bogus"}), "[\"0\", []]");  // Options unchecked.
  EXPECT_EQ(Reply({"HSCAN", "missing", "x"}), "-ERR invalid cursor");
  std::map<std::string, std::string> model;
  for (int i = 0; i < 100; ++i) {
    std::string field = (i % 2 ? "odd:" : "even:") + std::to_string(i);
    model[field] = std::to_string(i * 7);
    EXPECT_EQ(Reply({"HSET", "h", field, model[field]}), ":1");
  }
  EXPECT_EQ(ScanAll("h"), model);
  EXPECT_EQ(ScanAll("h", {"COUNT", "3"}), model);
  std::map<std::string, std::string> odd;
  for (const auto& [field, value] : model) {
    if (field.starts_with("odd:")) odd[field] = value;
  }
  EXPECT_EQ(ScanAll("h", {"MATCH", "odd:*", "COUNT", "7"}), odd);
  EXPECT_EQ(ScanAll("h", {"match", "*"}), model);
  EXPECT_EQ(Reply({"HSCAN", "h", "0", "COUNT", "0"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"HSCAN", "h", "0", "COUNT", "x"}),
            "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"HSCAN", "h", "0", "MATCH"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"HSCAN", "h", "0", "NOVALUES"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"HSCAN", "h", " 1"}), "-ERR invalid cursor");
  EXPECT_EQ(Reply({"HSCAN", "h", "18446744073709551616"}), "-ERR invalid cursor");
  // A small hash answers everything at once with cursor 0, like Redis's listpack.
  EXPECT_EQ(Reply({"HSET", "small", "a", "1"}), ":1");
  EXPECT_EQ(Reply({"HSCAN", "small", "0"}), "[\"0\", [\"a\", \"1\"]]");
  UseResp(3);
  protocol::RespValue reply = Run({"HSCAN", "small", "0"});
  EXPECT_EQ(reply.type, Type::kArray);
  EXPECT_EQ(reply.DebugString(), "[\"0\", [\"a\", \"1\"]]");
}

TEST_P(HashCommandsTest, WrongType) {
  EXPECT_EQ(Reply({"SET", "s", "v"}), "+OK");
  const std::string kWrongType =
      "-WRONGTYPE Operation against a key holding the wrong kind of value";
  for (std::vector<std::string> command : std::vector<std::vector<std::string>>{
           {"HSET", "s", "f", "v"},
           {"HMSET", "s", "f", "v"},
           {"HSETNX", "s", "f", "v"},
           {"HGET", "s", "f"},
           {"HMGET", "s", "f"},
           {"HDEL", "s", "f"},
           {"HLEN", "s"},
           {"HSTRLEN", "s", "f"},
           {"HEXISTS", "s", "f"},
           {"HINCRBY", "s", "f", "1"},
           {"HINCRBYFLOAT", "s", "f", "1"},
           {"HKEYS", "s"},
           {"HVALS", "s"},
           {"HGETALL", "s"},
           {"HRANDFIELD", "s"},
           {"HRANDFIELD", "s", "0"},
           {"HRANDFIELD", "s", "2", "WITHVALUES"},
           {"HSCAN", "s", "0"},
           {"HSCAN", "s", "0", "bogus"},
       }) {
    EXPECT_EQ(Reply(command), kWrongType) << command[0];
  }
  EXPECT_EQ(Reply({"GET", "s"}), "\"v\"");
  // Argument errors come before the type check, as in Redis.
  EXPECT_EQ(Reply({"HINCRBY", "s", "f", "x"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"HSCAN", "s", "x"}), "-ERR invalid cursor");
  // And the other way round: string commands on a hash.
  EXPECT_EQ(Reply({"HSET", "h", "f", "v"}), ":1");
  EXPECT_EQ(Reply({"GET", "h"}), kWrongType);
  EXPECT_EQ(Reply({"APPEND", "h", "x"}), kWrongType);
}

TEST_P(HashCommandsTest, KeyspaceCommandsOnHashes) {
  EXPECT_EQ(Reply({"HSET", "h", "a", "1", "b", "2"}), ":2");
  EXPECT_EQ(Reply({"COPY", "h", "c"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "c"}), ExpectedEncoding());
  EXPECT_EQ(Reply({"HSET", "c", "a", "changed"}), ":0");
  EXPECT_EQ(Reply({"HGET", "h", "a"}), "\"1\"");  // A deep copy.
  EXPECT_EQ(Reply({"HGET", "c", "a"}), "\"changed\"");
  EXPECT_EQ(Reply({"RENAME", "c", "d"}), "+OK");
  EXPECT_EQ(Reply({"HGET", "d", "b"}), "\"2\"");
  EXPECT_EQ(Reply({"EXPIRE", "h", "10"}), ":1");
  clock_.AdvanceMs(10'000);
  EXPECT_EQ(Reply({"HGET", "h", "a"}), "(nil)");
  EXPECT_EQ(Reply({"HLEN", "h"}), ":0");
  EXPECT_EQ(Reply({"DEL", "d"}), ":1");
  EXPECT_EQ(Reply({"HGETALL", "d"}), "[]");
}

TEST_P(HashCommandsTest, Effects) {
  effects_.Take();
  EXPECT_EQ(Reply({"HSET", "h", "a", "1", "b", "2"}), ":2");
  EXPECT_EQ(Reply({"HMSET", "h", "a", "3"}), "+OK");
  EXPECT_EQ(Reply({"HSETNX", "h", "a", "9"}), ":0");
  EXPECT_EQ(Reply({"HSETNX", "h", "c", "4"}), ":1");
  EXPECT_EQ(Reply({"HINCRBY", "h", "c", "10"}), ":14");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "h", "c", "0.5"}), "\"14.5\"");
  EXPECT_EQ(Reply({"HDEL", "h", "x", "a", "y"}), ":1");
  EXPECT_EQ(Reply({"HDEL", "h", "x"}), ":0");
  EXPECT_EQ(Reply({"HINCRBY", "h", "b", "x"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Pairs(Run({"HGETALL", "h"})),
            (std::map<std::string, std::string>{{"b", "2"}, {"c", "14.5"}}));
  EXPECT_THAT(effects_.Take(), ElementsAre("0: HSET h a 1 b 2", "0: HSET h a 3", "0: HSET h c 4",
                                           "0: HSET h c 14", "0: HSET h c 14.5", "0: HDEL h a"));
}

// HSET of the values already there answers 0 and keeps the fields, the encoding and the TTL
// but, as in Redis, still counts as a write: logged (which also fails a WATCH) and dirty.
TEST_P(HashCommandsTest, SettingTheValuesAlreadyThere) {
  EXPECT_EQ(Reply({"HSET", "h", "a", "1", "b", "text", "c", ""}), ":3");
  EXPECT_EQ(Reply({"PEXPIRE", "h", "100000"}), ":1");
  effects_.Take();
  uint64_t dirty = server_.stats().totals().dirty;
  EXPECT_EQ(Reply({"HSET", "h", "a", "1", "c", ""}), ":0");
  EXPECT_EQ(Reply({"HMSET", "h", "b", "text"}), "+OK");
  EXPECT_EQ(server_.stats().totals().dirty, dirty + 3);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), ExpectedEncoding());
  EXPECT_GT(Run({"PTTL", "h"}).integer, 0);
  // Another value, an integer-looking text of another form, or a new field do change it.
  EXPECT_EQ(Reply({"HSET", "h", "a", "01"}), ":0");
  EXPECT_EQ(Reply({"HSET", "h", "b", "text", "d", "4"}), ":1");
  EXPECT_EQ(Pairs(Run({"HGETALL", "h"})), (std::map<std::string, std::string>{
                                              {"a", "01"}, {"b", "text"}, {"c", ""}, {"d", "4"}}));
  EXPECT_THAT(effects_.Take(), ElementsAre("0: HSET h a 1 c ", "0: HSET h b text", "0: HSET h a 01",
                                           "0: HSET h b text d 4"));
  EXPECT_GT(Run({"PTTL", "h"}).integer, 0);
}

INSTANTIATE_TEST_SUITE_P(Encodings, HashCommandsTest,
                         ::testing::Values(Encoding{"Listpack", "128"}, Encoding{"Hashtable", "0"}),
                         [](const auto& info) { return std::string(info.param.name); });

class HashConversionTest : public CommandTest {
 protected:
  std::string EncodingOf(const std::string& key) { return Run({"OBJECT", "ENCODING", key}).str; }
};

TEST_F(HashConversionTest, ConvertsPastTheEntryLimit) {
  EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-entries", "4"}), "+OK");
  EXPECT_EQ(Reply({"HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"}), ":4");
  EXPECT_EQ(EncodingOf("h"), "listpack");
  EXPECT_EQ(Reply({"HSET", "h", "a", "updated"}), ":0");
  EXPECT_EQ(EncodingOf("h"), "listpack");
  EXPECT_EQ(Reply({"HSETNX", "h", "e", "5"}), ":1");
  EXPECT_EQ(EncodingOf("h"), "hashtable");
  // One way: shrinking does not convert back.
  EXPECT_EQ(Reply({"HDEL", "h", "a", "b", "c", "d"}), ":4");
  EXPECT_EQ(EncodingOf("h"), "hashtable");
  EXPECT_EQ(Reply({"HGETALL", "h"}), "[\"e\", \"5\"]");
  // Lowering the limit below the hash's size converts it at its next HSET, even one that
  // only updates a field or writes the value already there (Redis's hashTypeSet).
  EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-entries", "128"}), "+OK");
  for (const char* key : {"same", "other"}) {
    EXPECT_EQ(Reply({"HSET", key, "a", "1", "b", "2", "c", "3"}), ":3");
  }
  EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-entries", "2"}), "+OK");
  EXPECT_EQ(Reply({"HSET", "same", "a", "1"}), ":0");
  EXPECT_EQ(Reply({"HSET", "other", "a", "2"}), ":0");
  EXPECT_EQ(EncodingOf("same"), "hashtable");
  EXPECT_EQ(EncodingOf("other"), "hashtable");
  EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-entries", "4"}), "+OK");
  // HINCRBY adding a field converts too.
  EXPECT_EQ(Reply({"HSET", "i", "a", "1", "b", "2", "c", "3", "d", "4"}), ":4");
  EXPECT_EQ(Reply({"HINCRBY", "i", "e", "1"}), ":1");
  EXPECT_EQ(EncodingOf("i"), "hashtable");
}

TEST_F(HashConversionTest, ConvertsForALongFieldOrValue) {
  std::string limit(64, 'x'), over(65, 'x');
  EXPECT_EQ(Reply({"HSET", "h", limit, limit}), ":1");
  EXPECT_EQ(EncodingOf("h"), "listpack");
  EXPECT_EQ(Reply({"HSET", "v", "f", over}), ":1");
  EXPECT_EQ(EncodingOf("v"), "hashtable");
  EXPECT_EQ(Reply({"HSET", "f", over, "v"}), ":1");
  EXPECT_EQ(EncodingOf("f"), "hashtable");
  EXPECT_EQ(Run({"HGET", "v", "f"}).str, over);
  // HSETNX on an existing field stores nothing and does not convert (Redis 7.0.15).
  EXPECT_EQ(Reply({"HSETNX", "h", limit, over}), ":0");
  EXPECT_EQ(EncodingOf("h"), "listpack");
  // A float result longer than the limit converts.
  EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-value", "3"}), "+OK");
  EXPECT_EQ(Reply({"HSET", "n", "x", "1"}), ":1");
  EXPECT_EQ(Reply({"HINCRBYFLOAT", "n", "x", "0.25"}), "\"1.25\"");
  EXPECT_EQ(EncodingOf("n"), "hashtable");
  // Writing a value already there that is now over the limit converts too, as in Redis.
  EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-value", "64"}), "+OK");
  EXPECT_EQ(Reply({"HSET", "w", "f", "long-value"}), ":1");
  EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-value", "4"}), "+OK");
  EXPECT_EQ(Reply({"HSET", "w", "f", "long-value"}), ":0");
  EXPECT_EQ(EncodingOf("w"), "hashtable");
}

TEST_F(HashConversionTest, LargeHashScansCompletelyWhileItGrows) {
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(Reply({"HSET", "h", "f" + std::to_string(i), std::to_string(i)}), ":1");
  }
  EXPECT_EQ(EncodingOf("h"), "hashtable");
  std::set<std::string> seen;
  std::string cursor = "0";
  int added = 0;
  do {
    protocol::RespValue reply = Run({"HSCAN", "h", cursor, "COUNT", "20"});
    ASSERT_EQ(reply.elements.size(), 2u);
    cursor = reply.elements[0].str;
    for (size_t i = 0; i < reply.elements[1].elements.size(); i += 2) {
      EXPECT_TRUE(seen.insert(reply.elements[1].elements[i].str).second);
    }
    // Grow the hash between calls so that it resizes mid-iteration.
    for (int j = 0; j < 50; ++j, ++added) {
      Reply({"HSET", "h", "new" + std::to_string(added), "x"});
    }
  } while (cursor != "0");
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.count("f" + std::to_string(i))) << i;
}

}  // namespace
}  // namespace gigakv::testing
