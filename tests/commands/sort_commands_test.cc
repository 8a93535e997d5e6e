// SORT / SORT_RO. Expected replies were taken from redis-server 7.0.
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

class SortCommandsTest : public CommandTest {
 protected:
  void LoadFixture() {
    Run({"RPUSH", "l", "3", "1", "2", "10"});
    Run({"MSET", "w_1", "c", "w_2", "a", "w_3", "b", "w_10", "d"});
    Run({"HSET", "h_1", "f", "30"});
    Run({"HSET", "h_2", "f", "20"});
  }
};

TEST_F(SortCommandsTest, NumericAlphaAndLimit) {
  LoadFixture();
  EXPECT_EQ(Reply({"SORT", "l"}), "[\"1\", \"2\", \"3\", \"10\"]");
  EXPECT_EQ(Reply({"SORT", "l", "DESC"}), "[\"10\", \"3\", \"2\", \"1\"]");
  EXPECT_EQ(Reply({"SORT", "l", "ALPHA"}), "[\"1\", \"10\", \"2\", \"3\"]");
  EXPECT_EQ(Reply({"SORT", "l", "LIMIT", "1", "2"}), "[\"2\", \"3\"]");
  EXPECT_EQ(Reply({"SORT", "l", "LIMIT", "-1", "2"}), "[\"1\", \"2\"]");
  EXPECT_EQ(Reply({"SORT", "l", "LIMIT", "0", "-5"}), "[\"1\", \"2\", \"3\", \"10\"]");
  EXPECT_EQ(Reply({"SORT", "l", "LIMIT", "10", "5"}), "[]");
  EXPECT_EQ(Reply({"SORT_RO", "l", "DESC", "ASC"}), "[\"1\", \"2\", \"3\", \"10\"]");
}

TEST_F(SortCommandsTest, NoSortKeepsListAndSortedSetOrder) {
  LoadFixture();
  EXPECT_EQ(Reply({"SORT", "l", "BY", "nosort", "DESC"}), "[\"10\", \"2\", \"1\", \"3\"]");
  EXPECT_EQ(Reply({"SORT", "l", "BY", "nosort", "LIMIT", "1", "2"}), "[\"1\", \"2\"]");
  Run({"ZADD", "z", "3", "a", "1", "b", "2", "c"});
  EXPECT_EQ(Reply({"SORT", "z", "BY", "nosort"}), "[\"b\", \"c\", \"a\"]");
  EXPECT_EQ(Reply({"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2"}), "[\"a\", \"c\"]");
  EXPECT_EQ(Reply({"SORT", "z", "ALPHA", "DESC"}), "[\"c\", \"b\", \"a\"]");
}

TEST_F(SortCommandsTest, ByAndGetPatterns) {
  LoadFixture();
  EXPECT_EQ(Reply({"SORT", "l", "BY", "w_*", "ALPHA"}), "[\"2\", \"3\", \"1\", \"10\"]");
  EXPECT_EQ(Reply({"SORT", "l", "BY", "w_*"}),
            "-ERR One or more scores can't be converted into double");
  EXPECT_EQ(Reply({"SORT", "l", "GET", "w_*", "GET", "#"}),
            "[\"c\", \"1\", \"a\", \"2\", \"b\", \"3\", \"d\", \"10\"]");
  // Missing BY values weigh 0; ties are broken by the elements ("10" < "3" byte-wise).
  EXPECT_EQ(Reply({"SORT", "l", "BY", "h_*->f", "GET", "h_*->f"}),
            "[(nil), (nil), \"20\", \"30\"]");
  EXPECT_EQ(Reply({"SORT", "l", "GET", "nostar"}), "[(nil), (nil), (nil), (nil)]");
}

TEST_F(SortCommandsTest, SetsSortAndAlphaErrors) {
  Run({"SADD", "s", "x", "b"});
  EXPECT_EQ(Reply({"SORT", "s"}), "-ERR One or more scores can't be converted into double");
  EXPECT_EQ(Reply({"SORT", "s", "ALPHA"}), "[\"b\", \"x\"]");
  // Stored sets are sorted ALPHA even with BY nosort, so the stored list is deterministic.
  EXPECT_EQ(Reply({"SORT", "s", "BY", "nosort", "STORE", "dst"}), ":2");
  EXPECT_EQ(Reply({"LRANGE", "dst", "0", "-1"}), "[\"b\", \"x\"]");
}

TEST_F(SortCommandsTest, StoreReplacesOrDeletesTheDestination) {
  LoadFixture();
  Run({"SET", "dst", "old"});
  Run({"EXPIRE", "dst", "100"});
  EXPECT_EQ(Reply({"SORT", "l", "STORE", "dst"}), ":4");
  EXPECT_EQ(Reply({"LRANGE", "dst", "0", "-1"}), "[\"1\", \"2\", \"3\", \"10\"]");
  EXPECT_EQ(Reply({"TTL", "dst"}), ":-1");
  EXPECT_EQ(Reply({"SORT", "l", "GET", "nostar", "STORE", "dst2"}), ":4");
  EXPECT_EQ(Reply({"LRANGE", "dst2", "0", "-1"}), "[\"\", \"\", \"\", \"\"]");
  effects_.Take();
  EXPECT_EQ(Reply({"SORT", "l", "LIMIT", "0", "2", "STORE", "dst"}), ":2");
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: DEL dst", "0: RPUSH dst 1 2"}));
  EXPECT_EQ(Reply({"SORT", "missing", "STORE", "dst"}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "dst"}), ":0");
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: DEL dst"}));
}

TEST_F(SortCommandsTest, Errors) {
  LoadFixture();
  EXPECT_EQ(Reply({"SORT", "l", "LIMIT", "a", "b"}),
            "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"SORT", "l", "foo"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SORT", "l", "LIMIT", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SORT_RO", "l", "STORE", "x"}), "-ERR syntax error");
  Run({"SET", "str", "v"});
  EXPECT_EQ(Reply({"SORT", "str"}),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(Reply({"SORT", "missing"}), "[]");
  EXPECT_EQ(Reply({"SORT"}), "-ERR wrong number of arguments for 'sort' command");
}

TEST_F(SortCommandsTest, Resp3ShapesMatchResp2) {
  LoadFixture();
  UseResp(3);
  EXPECT_EQ(RunRaw({"SORT", "l", "LIMIT", "0", "2"}), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
  EXPECT_EQ(RunRaw({"SORT", "l", "GET", "nostar", "LIMIT", "0", "1"}), "*1\r\n_\r\n");
}

}  // namespace
}  // namespace gigakv::testing
