#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

using protocol::RespValue;

// Which encoding the sets of a test body end up in: the body runs once per encoding, with the
// limits lowered by CONFIG SET for the large one.
struct EncodingParam {
  const char* name;
  const char* intset_entries;
  const char* listpack_entries;
  const char* int_encoding;     // OBJECT ENCODING of a set of a few integers.
  const char* string_encoding;  // ... of a set of a few strings.
};

class SetCommandsTest : public CommandTest, public ::testing::WithParamInterface<EncodingParam> {
 protected:
  void SetUp() override {
    ASSERT_EQ(Reply({"CONFIG", "SET", "set-max-intset-entries", GetParam().intset_entries}), "+OK");
    ASSERT_EQ(Reply({"CONFIG", "SET", "set-max-listpack-entries", GetParam().listpack_entries}),
              "+OK");
    effects_.Take();
  }

  // The elements of an array/set reply, sorted (set replies are unordered).
  std::vector<std::string> SortedElements(const std::vector<std::string>& args) {
    RespValue value = Run(args);
    EXPECT_TRUE(value.type == RespValue::Type::kArray || value.type == RespValue::Type::kSet)
        << value.DebugString();
    std::vector<std::string> out;
    for (const RespValue& e : value.elements) out.push_back(e.str);
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::string> Members(const std::string& key) {
    return SortedElements({"SMEMBERS", key});
  }
  std::string Encoding(const std::string& key) { return Run({"OBJECT", "ENCODING", key}).str; }
  void Fill(const std::string& key, const std::vector<std::string>& members) {
    std::vector<std::string> args = {"SADD", key};
    args.insert(args.end(), members.begin(), members.end());
    Run(args);
  }
  // In both protocols: the reply's first byte.
  char Shape(const std::vector<std::string>& args) { return RunRaw(args)[0]; }
};

static const char kWrongType[] =
    "-WRONGTYPE Operation against a key holding the wrong kind of value";

TEST_P(SetCommandsTest, AddRemoveCardinalityMembership) {
  EXPECT_EQ(Reply({"SADD", "s", "a", "b", "a"}), ":2");
  EXPECT_EQ(Reply({"SADD", "s", "b", "c"}), ":1");
  EXPECT_EQ(Reply({"SADD", "s", "c"}), ":0");
  EXPECT_EQ(Reply({"TYPE", "s"}), "+set");
  EXPECT_EQ(Encoding("s"), GetParam().string_encoding);
  EXPECT_EQ(Reply({"SCARD", "s"}), ":3");
  EXPECT_EQ(Reply({"SISMEMBER", "s", "a"}), ":1");
  EXPECT_EQ(Reply({"SISMEMBER", "s", "z"}), ":0");
  EXPECT_EQ(Reply({"SMISMEMBER", "s", "a", "z", "c"}), "[:1, :0, :1]");
  EXPECT_EQ(Members("s"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: SADD s a b a", "0: SADD s b c"}));
  EXPECT_EQ(Reply({"SREM", "s", "a", "z"}), ":1");
  EXPECT_EQ(Reply({"SREM", "s", "z"}), ":0");
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: SREM s a z"}));
  EXPECT_EQ(Reply({"SREM", "s", "b", "c", "d"}), ":2");
  EXPECT_EQ(Reply({"EXISTS", "s"}), ":0");  // Emptied sets are deleted.
  EXPECT_EQ(Reply({"SCARD", "s"}), ":0");
}

TEST_P(SetCommandsTest, IntegerMembers) {
  EXPECT_EQ(Reply({"SADD", "n", "3", "1", "2", "-7", "9223372036854775807"}), ":5");
  EXPECT_EQ(Encoding("n"), GetParam().int_encoding);
  EXPECT_EQ(Reply({"SISMEMBER", "n", "2"}), ":1");
  EXPECT_EQ(Reply({"SISMEMBER", "n", "02"}), ":0");  // Not the same string.
  EXPECT_EQ(Reply({"SADD", "n", "02", "-0"}), ":2");
  EXPECT_EQ(Members("n"),
            (std::vector<std::string>{"-0", "-7", "02", "1", "2", "3", "9223372036854775807"}));
}

// SADD of members all present answers 0 and changes nothing: not the members, the encoding, the
// TTL, nor the log; a new member among them is still added.
TEST_P(SetCommandsTest, AddingOnlyPresentMembersChangesNothing) {
  Fill("n", {"1", "2", "3"});
  Fill("s", {"a", "b", "7"});
  EXPECT_EQ(Reply({"PEXPIRE", "s", "100000"}), ":1");
  effects_.Take();
  for (const char* key : {"n", "s"}) {
    std::string encoding = Encoding(key);
    std::vector<std::string> members = Members(key);
    EXPECT_EQ(Reply({"SADD", key, members[0], members[1], members[0]}), ":0");
    EXPECT_EQ(Reply({"SADD", key, members[2]}), ":0");
    EXPECT_EQ(Encoding(key), encoding);
    EXPECT_EQ(Members(key), members);
  }
  EXPECT_EQ(Reply({"SADD", "n", "02"}), ":1");  // Not the integer 2.
  EXPECT_EQ(Reply({"SADD", "s", "b", "c"}), ":1");
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: SADD n 02", "0: SADD s b c"}));
  EXPECT_GT(Run({"PTTL", "s"}).integer, 0);
  EXPECT_EQ(Reply({"SADD", "s", "a", "zz"}), ":1");
  EXPECT_EQ(Reply({"SET", "str", "x"}), "+OK");
  EXPECT_EQ(Reply({"SADD", "str", "x"}), kWrongType);
}

TEST_P(SetCommandsTest, ReplyShapesInBothProtocols) {
  Fill("s", {"a", "b"});
  for (int resp : {2, 3}) {
    UseResp(resp);
    char set_shape = resp == 3 ? '~' : '*';
    EXPECT_EQ(Shape({"SMEMBERS", "s"}), set_shape);
    EXPECT_EQ(Shape({"SMEMBERS", "missing"}), set_shape);
    EXPECT_EQ(Shape({"SINTER", "s"}), set_shape);
    EXPECT_EQ(Shape({"SUNION", "s"}), set_shape);
    EXPECT_EQ(Shape({"SDIFF", "s"}), set_shape);
    EXPECT_EQ(Shape({"SPOP", "missing", "2"}), set_shape);
    EXPECT_EQ(Shape({"SRANDMEMBER", "s", "5"}), '*');
    EXPECT_EQ(Shape({"SRANDMEMBER", "s", "-5"}), '*');
    EXPECT_EQ(Shape({"SMISMEMBER", "s", "a"}), '*');
    EXPECT_EQ(Shape({"SSCAN", "s", "0"}), '*');
    EXPECT_EQ(RunRaw({"SPOP", "missing"}), resp == 3 ? "_\r\n" : "$-1\r\n");
    EXPECT_EQ(RunRaw({"SRANDMEMBER", "missing"}), resp == 3 ? "_\r\n" : "$-1\r\n");
    EXPECT_EQ(RunRaw({"SRANDMEMBER", "missing", "3"}), "*0\r\n");
    EXPECT_EQ(RunRaw({"SSCAN", "missing", "0"}), "*2\r\n$1\r\n0\r\n*0\r\n");
  }
}

TEST_P(SetCommandsTest, MissingKeys) {
  EXPECT_EQ(Reply({"SCARD", "m"}), ":0");
  EXPECT_EQ(Reply({"SISMEMBER", "m", "a"}), ":0");
  EXPECT_EQ(Reply({"SMISMEMBER", "m", "a", "b"}), "[:0, :0]");
  EXPECT_EQ(Reply({"SMEMBERS", "m"}), "[]");
  EXPECT_EQ(Reply({"SREM", "m", "a"}), ":0");
  EXPECT_EQ(Reply({"SPOP", "m"}), "(nil)");
  EXPECT_EQ(Reply({"SPOP", "m", "3"}), "[]");
  EXPECT_EQ(Reply({"SRANDMEMBER", "m"}), "(nil)");
  EXPECT_EQ(Reply({"SRANDMEMBER", "m", "-3"}), "[]");
  EXPECT_EQ(Reply({"SMOVE", "m", "d", "a"}), ":0");
  EXPECT_EQ(Reply({"SINTER", "m"}), "[]");
  EXPECT_EQ(Reply({"SINTERCARD", "1", "m"}), ":0");
  EXPECT_EQ(Reply({"SUNION", "m", "m2"}), "[]");
  EXPECT_EQ(Reply({"SDIFF", "m", "m2"}), "[]");
  EXPECT_EQ(Reply({"SINTERSTORE", "d", "m"}), ":0");
  EXPECT_EQ(Reply({"SUNIONSTORE", "d", "m"}), ":0");
  EXPECT_EQ(Reply({"SDIFFSTORE", "d", "m"}), ":0");
  EXPECT_EQ(Reply({"SSCAN", "m", "0", "COUNT", "0"}), "[\"0\", []]");  // Options unchecked.
  EXPECT_EQ(Reply({"DBSIZE"}), ":0");
  EXPECT_TRUE(effects_.Take().empty());
}

TEST_P(SetCommandsTest, WrongTypeEverywhere) {
  Fill("s", {"a", "1"});
  EXPECT_EQ(Reply({"SET", "str", "v"}), "+OK");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"SADD", "str", "a"},
           {"SREM", "str", "a"},
           {"SCARD", "str"},
           {"SISMEMBER", "str", "a"},
           {"SMISMEMBER", "str", "a"},
           {"SMEMBERS", "str"},
           {"SPOP", "str"},
           {"SPOP", "str", "2"},
           {"SPOP", "str", "0"},  // The key is checked before a zero count.
           {"SRANDMEMBER", "str"},
           {"SRANDMEMBER", "str", "2"},
           {"SMOVE", "str", "s", "a"},
           {"SMOVE", "s", "str", "a"},
           {"SMOVE", "s", "str", "zz"},  // Type checked before membership.
           {"SINTER", "s", "str"},
           {"SINTER", "missing", "str"},  // Every key is checked, even after a missing one.
           {"SINTERCARD", "2", "s", "str"},
           {"SINTERSTORE", "d", "s", "str"},
           {"SUNION", "s", "str"},
           {"SUNIONSTORE", "d", "str"},
           {"SDIFF", "missing", "str"},
           {"SDIFFSTORE", "d", "s", "str"},
           {"SSCAN", "str", "0"},
       }) {
    EXPECT_EQ(Reply(args), kWrongType) << args[0];
  }
  EXPECT_EQ(Reply({"SMOVE", "missing", "str", "a"}), ":0");  // Missing source wins.
  EXPECT_EQ(Reply({"GET", "str"}), "\"v\"");
  EXPECT_EQ(Members("s"), (std::vector<std::string>{"1", "a"}));
  // The destination of a *STORE is overwritten whatever it held.
  EXPECT_EQ(Reply({"SUNIONSTORE", "str", "s"}), ":2");
  EXPECT_EQ(Reply({"TYPE", "str"}), "+set");
  EXPECT_EQ(Reply({"GET", "str"}), kWrongType);
}

TEST_P(SetCommandsTest, BadArguments) {
  Fill("s", {"a", "b", "c"});
  effects_.Take();
  EXPECT_EQ(Reply({"SADD", "s"}), "-ERR wrong number of arguments for 'sadd' command");
  EXPECT_EQ(Reply({"SREM", "s"}), "-ERR wrong number of arguments for 'srem' command");
  EXPECT_EQ(Reply({"SCARD"}), "-ERR wrong number of arguments for 'scard' command");
  EXPECT_EQ(Reply({"SISMEMBER", "s"}), "-ERR wrong number of arguments for 'sismember' command");
  EXPECT_EQ(Reply({"SMISMEMBER", "s"}), "-ERR wrong number of arguments for 'smismember' command");
  EXPECT_EQ(Reply({"SMOVE", "s", "d"}), "-ERR wrong number of arguments for 'smove' command");
  EXPECT_EQ(Reply({"SINTERCARD", "1"}), "-ERR wrong number of arguments for 'sintercard' command");
  EXPECT_EQ(Reply({"SSCAN", "s"}), "-ERR wrong number of arguments for 'sscan' command");
  EXPECT_EQ(Reply({"SPOP", "s", "-1"}), "-ERR value is out of range, must be positive");
  EXPECT_EQ(Reply({"SPOP", "s", "abc"}), "-ERR value is out of range, must be positive");
  EXPECT_EQ(Reply({"SPOP", "missing", "abc"}), "-ERR value is out of range, must be positive");
  EXPECT_EQ(Reply({"SPOP", "s", "1", "2"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SRANDMEMBER", "s", "abc"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"SRANDMEMBER", "s", "-9223372036854775808"}),
            "-ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807");
  EXPECT_EQ(Reply({"SRANDMEMBER", "s", "1", "2"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SINTERCARD", "0", "s"}), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(Reply({"SINTERCARD", "abc", "s"}), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(Reply({"SINTERCARD", "2", "s"}),
            "-ERR Number of keys can't be greater than number of args");
  EXPECT_EQ(Reply({"SINTERCARD", "1", "s", "LIMIT", "-1"}), "-ERR LIMIT can't be negative");
  EXPECT_EQ(Reply({"SINTERCARD", "1", "s", "LIMIT", "x"}), "-ERR LIMIT can't be negative");
  EXPECT_EQ(Reply({"SINTERCARD", "1", "s", "LIMIT"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SINTERCARD", "1", "s", "FOO", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SSCAN", "s", "x"}), "-ERR invalid cursor");
  EXPECT_EQ(Reply({"SSCAN", "s", " 1"}), "-ERR invalid cursor");
  EXPECT_EQ(Reply({"SSCAN", "s", "0", "COUNT", "0"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SSCAN", "s", "0", "COUNT", "x"}),
            "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"SSCAN", "s", "0", "MATCH"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SSCAN", "s", "0", "TYPE", "set"}), "-ERR syntax error");
  EXPECT_EQ(Members("s"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(effects_.Take().empty());
}

TEST_P(SetCommandsTest, SpopCountRulesAndEffects) {
  std::vector<std::string> all;
  for (int i = 0; i < 20; ++i) all.push_back("m" + std::to_string(i));
  Fill("s", all);
  effects_.Take();
  EXPECT_EQ(Reply({"SPOP", "s", "0"}), "[]");
  std::vector<std::string> popped = SortedElements({"SPOP", "s", "5"});
  ASSERT_EQ(popped.size(), 5u);
  EXPECT_EQ(std::set<std::string>(popped.begin(), popped.end()).size(), 5u);
  std::vector<std::string> effects = effects_.Take();
  ASSERT_EQ(effects.size(), 1u);
  // The effect is SREM of exactly the popped members.
  std::vector<std::string> logged;
  std::string line = effects[0];
  ASSERT_EQ(line.rfind("0: SREM s ", 0), 0u) << line;
  std::string rest = line.substr(10);
  for (size_t start = 0; start <= rest.size();) {
    size_t space = rest.find(' ', start);
    if (space == std::string::npos) space = rest.size();
    logged.push_back(rest.substr(start, space - start));
    start = space + 1;
  }
  std::sort(logged.begin(), logged.end());
  EXPECT_EQ(logged, popped);
  for (const std::string& m : popped) EXPECT_EQ(Reply({"SISMEMBER", "s", m}), ":0");
  EXPECT_EQ(Reply({"SCARD", "s"}), ":15");
  RespValue one = Run({"SPOP", "s"});
  ASSERT_EQ(one.type, RespValue::Type::kBulk);
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: SREM s " + one.str}));
  // A count past the size takes everything and deletes the key.
  EXPECT_EQ(SortedElements({"SPOP", "s", "100"}).size(), 14u);
  EXPECT_EQ(Reply({"EXISTS", "s"}), ":0");
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: DEL s"}));
  Fill("t", {"x"});
  EXPECT_EQ(Reply({"SPOP", "t"}), "\"x\"");
  EXPECT_EQ(Reply({"EXISTS", "t"}), ":0");
}

TEST_P(SetCommandsTest, SrandmemberCountRules) {
  std::vector<std::string> all;
  for (int i = 0; i < 10; ++i) all.push_back(std::to_string(i * 3));
  Fill("s", all);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(Reply({"SRANDMEMBER", "s", "0"}), "[]");
  for (int count : {1, 3, 9}) {
    std::vector<std::string> got = SortedElements({"SRANDMEMBER", "s", std::to_string(count)});
    ASSERT_EQ(got.size(), static_cast<size_t>(count));
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size());
    for (const std::string& m : got) EXPECT_TRUE(std::binary_search(all.begin(), all.end(), m));
  }
  EXPECT_EQ(SortedElements({"SRANDMEMBER", "s", "10"}), all);
  EXPECT_EQ(SortedElements({"SRANDMEMBER", "s", "1000"}), all);
  std::vector<std::string> repeats = SortedElements({"SRANDMEMBER", "s", "-30"});
  ASSERT_EQ(repeats.size(), 30u);
  EXPECT_LT(std::set<std::string>(repeats.begin(), repeats.end()).size(), 30u);
  for (const std::string& m : repeats) EXPECT_TRUE(std::binary_search(all.begin(), all.end(), m));
  RespValue single = Run({"SRANDMEMBER", "s"});
  EXPECT_TRUE(std::binary_search(all.begin(), all.end(), single.str));
  EXPECT_EQ(Reply({"SCARD", "s"}), ":10");  // Nothing removed.
}

TEST_P(SetCommandsTest, Smove) {
  Fill("src", {"a", "b"});
  Fill("dst", {"c"});
  effects_.Take();
  EXPECT_EQ(Reply({"SMOVE", "src", "dst", "a"}), ":1");
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: SMOVE src dst a"}));
  EXPECT_EQ(Reply({"SMOVE", "src", "dst", "zz"}), ":0");
  EXPECT_EQ(Members("dst"), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Reply({"SMOVE", "src", "src", "b"}), ":1");
  EXPECT_EQ(Reply({"SMOVE", "src", "src", "zz"}), ":0");
  // Moving the last member deletes the source and creates the destination.
  EXPECT_EQ(Reply({"SMOVE", "src", "new", "b"}), ":1");
  EXPECT_EQ(Reply({"EXISTS", "src"}), ":0");
  EXPECT_EQ(Members("new"), (std::vector<std::string>{"b"}));
  // Moving a member the destination already has still removes it from the source.
  Fill("x", {"c", "q"});
  EXPECT_EQ(Reply({"SMOVE", "x", "dst", "c"}), ":1");
  EXPECT_EQ(Members("x"), (std::vector<std::string>{"q"}));
  EXPECT_EQ(Members("dst"), (std::vector<std::string>{"a", "c"}));
  EXPECT_TRUE(effects_.Take().size() >= 2);
}

TEST_P(SetCommandsTest, AlgebraAndStore) {
  Fill("a", {"1", "2", "3", "x"});
  Fill("b", {"2", "3", "4", "y"});
  Fill("c", {"3", "x", "y", "z"});
  EXPECT_EQ(SortedElements({"SINTER", "a", "b"}), (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(SortedElements({"SINTER", "a", "b", "c"}), (std::vector<std::string>{"3"}));
  EXPECT_EQ(SortedElements({"SINTER", "a", "a"}), Members("a"));
  EXPECT_EQ(SortedElements({"SINTER", "a", "b", "missing"}), std::vector<std::string>{});
  EXPECT_EQ(Reply({"SINTERCARD", "2", "a", "b"}), ":2");
  EXPECT_EQ(Reply({"SINTERCARD", "2", "a", "b", "LIMIT", "1"}), ":1");
  EXPECT_EQ(Reply({"SINTERCARD", "2", "a", "b", "limit", "0"}), ":2");
  EXPECT_EQ(Reply({"SINTERCARD", "1", "a"}), ":4");
  EXPECT_EQ(SortedElements({"SUNION", "a", "b", "missing"}),
            (std::vector<std::string>{"1", "2", "3", "4", "x", "y"}));
  EXPECT_EQ(SortedElements({"SDIFF", "a", "b"}), (std::vector<std::string>{"1", "x"}));
  EXPECT_EQ(SortedElements({"SDIFF", "a", "b", "c"}), (std::vector<std::string>{"1"}));
  EXPECT_EQ(SortedElements({"SDIFF", "a", "missing"}), Members("a"));
  EXPECT_EQ(SortedElements({"SDIFF", "a", "a"}), std::vector<std::string>{});
  effects_.Take();

  EXPECT_EQ(Reply({"SINTERSTORE", "d", "a", "b"}), ":2");
  EXPECT_EQ(Members("d"), (std::vector<std::string>{"2", "3"}));
  std::vector<std::string> effects = effects_.Take();
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(effects[0].rfind("0: SADD d ", 0), 0u);
  EXPECT_EQ(Reply({"SUNIONSTORE", "d", "a", "b"}), ":6");
  effects = effects_.Take();
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_EQ(effects[0], "0: DEL d");
  EXPECT_EQ(Reply({"SDIFFSTORE", "d", "a", "b", "c"}), ":1");
  EXPECT_EQ(Members("d"), (std::vector<std::string>{"1"}));
  // The destination may be a source.
  EXPECT_EQ(Reply({"SUNIONSTORE", "a", "a", "c"}), ":6");
  EXPECT_EQ(Members("a"), (std::vector<std::string>{"1", "2", "3", "x", "y", "z"}));
  effects_.Take();
  // An empty result deletes the destination.
  EXPECT_EQ(Reply({"SINTERSTORE", "d", "a", "missing"}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "d"}), ":0");
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: DEL d"}));
  EXPECT_EQ(Reply({"SDIFFSTORE", "d", "a", "a"}), ":0");
  EXPECT_TRUE(effects_.Take().empty());
  // Integer results stay intsets when the limits allow.
  Fill("i1", {"1", "2", "3"});
  Fill("i2", {"2", "3", "4"});
  EXPECT_EQ(Reply({"SINTERSTORE", "ints", "i1", "i2"}), ":2");
  EXPECT_EQ(Encoding("ints"), GetParam().int_encoding);
}

TEST_P(SetCommandsTest, SscanFullIteration) {
  std::vector<std::string> all;
  for (int i = 0; i < 300; ++i) all.push_back((i % 2 ? "odd:" : "even:") + std::to_string(i));
  Fill("s", all);
  std::sort(all.begin(), all.end());
  for (const char* count : {"1", "7", "1000"}) {
    std::multiset<std::string> seen;
    std::string cursor = "0";
    int calls = 0;
    do {
      RespValue reply = Run({"SSCAN", "s", cursor, "COUNT", count});
      ASSERT_EQ(reply.elements.size(), 2u) << reply.DebugString();
      cursor = reply.elements[0].str;
      for (const RespValue& m : reply.elements[1].elements) seen.insert(m.str);
      ASSERT_LT(++calls, 10000);
    } while (cursor != "0");
    EXPECT_EQ(std::vector<std::string>(seen.begin(), seen.end()), all) << count;
  }
  std::multiset<std::string> odd;
  std::string cursor = "0";
  do {
    RespValue reply = Run({"SSCAN", "s", cursor, "MATCH", "odd:*", "COUNT", "20"});
    cursor = reply.elements[0].str;
    for (const RespValue& m : reply.elements[1].elements) odd.insert(m.str);
  } while (cursor != "0");
  EXPECT_EQ(odd.size(), 150u);
  for (const std::string& m : odd) EXPECT_EQ(m.rfind("odd:", 0), 0u);
}

TEST_P(SetCommandsTest, CopyRenameAndDelete) {
  Fill("s", {"a", "b", "7"});
  EXPECT_EQ(Reply({"COPY", "s", "c"}), ":1");
  EXPECT_EQ(Reply({"SREM", "s", "a"}), ":1");
  EXPECT_EQ(Members("c"), (std::vector<std::string>{"7", "a", "b"}));
  EXPECT_EQ(Reply({"RENAME", "c", "r"}), "+OK");
  EXPECT_EQ(Members("r"), (std::vector<std::string>{"7", "a", "b"}));
  EXPECT_EQ(Reply({"DEL", "r", "s"}), ":2");
  EXPECT_EQ(Reply({"DBSIZE"}), ":0");
}

INSTANTIATE_TEST_SUITE_P(
    Encodings, SetCommandsTest,
    ::testing::Values(EncodingParam{"compact", "512", "128", "intset", "listpack"},
                      EncodingParam{"hashtable", "0", "0", "hashtable", "hashtable"}),
    [](const auto& info) { return std::string(info.param.name); });

// Conversions at the configured thresholds.
class SetConversionTest : public CommandTest {
 protected:
  std::string Encoding(const std::string& key) { return Run({"OBJECT", "ENCODING", key}).str; }
};

TEST_F(SetConversionTest, IntsetToHashtableAtTheEntryLimit) {
  ASSERT_EQ(Reply({"CONFIG", "SET", "set-max-intset-entries", "4"}), "+OK");
  EXPECT_EQ(Reply({"SADD", "s", "1", "2", "3", "4"}), ":4");
  EXPECT_EQ(Encoding("s"), "intset");
  EXPECT_EQ(Reply({"SADD", "s", "5"}), ":1");
  EXPECT_EQ(Encoding("s"), "hashtable");
  EXPECT_EQ(Reply({"SREM", "s", "1", "2", "3"}), ":3");
  EXPECT_EQ(Encoding("s"), "hashtable");  // No conversion back.
  // A first SADD with more integers than the limit starts as a listpack (Redis 7.2's
  // setTypeCreate; 7.0 would say hashtable).
  EXPECT_EQ(Reply({"SADD", "t", "1", "2", "3", "4", "5"}), ":5");
  EXPECT_EQ(Encoding("t"), "listpack");
}

TEST_F(SetConversionTest, IntsetToListpackOnAString) {
  ASSERT_EQ(Reply({"CONFIG", "SET", "set-max-listpack-entries", "3"}), "+OK");
  EXPECT_EQ(Reply({"SADD", "s", "1", "2"}), ":2");
  EXPECT_EQ(Reply({"SADD", "s", "a"}), ":1");
  EXPECT_EQ(Encoding("s"), "listpack");
  EXPECT_EQ(Reply({"SADD", "s", "b"}), ":1");
  EXPECT_EQ(Encoding("s"), "hashtable");
  EXPECT_EQ(Reply({"SADD", "u", "1", "2", "3"}), ":3");
  EXPECT_EQ(Reply({"SADD", "u", "a"}), ":1");  // 4 members exceed the listpack limit.
  EXPECT_EQ(Encoding("u"), "hashtable");
}

TEST_F(SetConversionTest, ListpackToHashtableOnALongMember) {
  ASSERT_EQ(Reply({"CONFIG", "SET", "set-max-listpack-value", "5"}), "+OK");
  EXPECT_EQ(Reply({"SADD", "s", "abcde"}), ":1");
  EXPECT_EQ(Encoding("s"), "listpack");
  EXPECT_EQ(Reply({"SADD", "s", "abcdef"}), ":1");
  EXPECT_EQ(Encoding("s"), "hashtable");
  EXPECT_EQ(Reply({"SADD", "n", "1"}), ":1");
  EXPECT_EQ(Reply({"SADD", "n", "123456"}), ":1");
  EXPECT_EQ(Encoding("n"), "intset");  // Integers are not bound by the value limit.
  EXPECT_EQ(Reply({"SADD", "n", "x"}), ":1");
  EXPECT_EQ(Encoding("n"), "hashtable");  // 123456 is longer than 5 bytes.
}

TEST_F(SetConversionTest, SpopTakingMostMembersRebuildsTheSet) {
  std::vector<std::string> args = {"SADD", "s"};
  for (int i = 0; i < 600; ++i) args.push_back(std::to_string(i));
  EXPECT_EQ(Reply(args), ":600");
  EXPECT_EQ(Encoding("s"), "hashtable");
  EXPECT_EQ(Reply({"PEXPIRE", "s", "100000"}), ":1");
  effects_.Take();
  // 50 stay, 550 go: Redis rebuilds the set from the 50, which fit an intset again.
  RespValue popped = Run({"SPOP", "s", "550"});
  ASSERT_EQ(popped.elements.size(), 550u);
  EXPECT_EQ(Reply({"SCARD", "s"}), ":50");
  EXPECT_EQ(Encoding("s"), "intset");
  EXPECT_EQ(Reply({"PTTL", "s"}), ":100000");  // The key keeps its TTL.
  std::set<std::string> seen;
  for (const RespValue& m : popped.elements) {
    EXPECT_EQ(Reply({"SISMEMBER", "s", m.str}), ":0");
    seen.insert(m.str);
  }
  EXPECT_EQ(seen.size(), 550u);
  std::vector<std::string> effects = effects_.Take();
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(effects[0].rfind("0: SREM s ", 0), 0u);
  // 10 stay, 90 go, strings: the rebuilt set is a listpack.
  args = {"SADD", "t"};
  for (int i = 0; i < 200; ++i) args.push_back("m" + std::to_string(i));
  EXPECT_EQ(Reply(args), ":200");
  EXPECT_EQ(Encoding("t"), "hashtable");
  EXPECT_EQ(Run({"SPOP", "t", "190"}).elements.size(), 190u);
  EXPECT_EQ(Encoding("t"), "listpack");
  EXPECT_EQ(Reply({"SCARD", "t"}), ":10");
}

TEST_F(SetConversionTest, StoreResultsFollowTheLimits) {
  ASSERT_EQ(Reply({"CONFIG", "SET", "set-max-intset-entries", "2"}), "+OK");
  EXPECT_EQ(Reply({"SADD", "a", "1", "2"}), ":2");
  EXPECT_EQ(Reply({"SADD", "b", "3"}), ":1");
  EXPECT_EQ(Reply({"SUNIONSTORE", "d", "a"}), ":2");
  EXPECT_EQ(Encoding("d"), "intset");
  EXPECT_EQ(Reply({"SUNIONSTORE", "d", "a", "b"}), ":3");
  EXPECT_EQ(Encoding("d"), "hashtable");
}

}  // namespace
}  // namespace gigakv::testing
