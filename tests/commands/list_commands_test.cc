// List family. Expected replies follow redis-server 7.0.15 (error texts checked by hand, replies
// by tests/e2e/test_differential_list.py on random mixes); contents are checked against a
// std::deque model. Every content test runs with several node bounds (list-max-listpack-size) and
// list lengths, so lists of one node and of many nodes (split and merged) go through the same
// body.
#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::string_view kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value";
constexpr std::string_view kNotInteger = "-ERR value is not an integer or out of range";
constexpr std::string_view kSyntax = "-ERR syntax error";

struct ListShape {
  int64_t node_bound;  // list-max-listpack-size
  int length;          // Elements pushed by Fill().
};

std::string PrintShape(const ::testing::TestParamInfo<ListShape>& info) {
  std::string bound = info.param.node_bound < 0 ? "Kib" + std::to_string(-info.param.node_bound)
                                                : "Entries" + std::to_string(info.param.node_bound);
  return bound + "Len" + std::to_string(info.param.length);
}

class ListCommandsTest : public CommandTest {
 protected:
  // The model's rendering of a list as Reply() prints LRANGE 0 -1.
  static std::string Render(const std::deque<std::string>& items) {
    std::string text = "[";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) text += ", ";
      text += "\"" + items[i] + "\"";
    }
    return text + "]";
  }
  std::string Contents(const std::string& key) { return Reply({"LRANGE", key, "0", "-1"}); }
};

class ListShapesTest : public ListCommandsTest, public ::testing::WithParamInterface<ListShape> {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        Reply({"CONFIG", "SET", "list-max-listpack-size", std::to_string(GetParam().node_bound)}),
        "+OK");
  }
  // RPUSHes `length` elements (a mix of integers, short and longer strings, with repeats) to
  // `key` and returns the model.
  std::deque<std::string> Fill(const std::string& key) {
    std::deque<std::string> model;
    std::vector<std::string> args = {"RPUSH", key};
    for (int i = 0; i < GetParam().length; ++i) {
      std::string value = i % 3 == 0   ? std::to_string(i * 7 - 50)
                          : i % 3 == 1 ? "v" + std::to_string(i % 5)
                                       : std::string(20 + i % 40, static_cast<char>('a' + i % 7));
      args.push_back(value);
      model.push_back(value);
    }
    EXPECT_EQ(Reply(args), ":" + std::to_string(model.size()));
    return model;
  }
  int length() const { return GetParam().length; }
};

INSTANTIATE_TEST_SUITE_P(Shapes, ListShapesTest,
                         ::testing::Values(ListShape{-2, 6}, ListShape{-2, 400}, ListShape{4, 6},
                                           ListShape{4, 400}, ListShape{1, 9}, ListShape{-1, 150},
                                           // Many full nodes: stored compressed (quicklist.h).
                                           ListShape{-2, 3000}, ListShape{-1, 1500}),
                         PrintShape);

TEST_P(ListShapesTest, PushesAndRanges) {
  std::deque<std::string> model = Fill("l");
  if (length() >= 1000) {  // Full nodes are compressed: the list takes less than its elements.
    size_t element_bytes = 0;
    for (const std::string& element : model) element_bytes += element.size();
    std::string usage = Reply({"MEMORY", "USAGE", "l"});
    ASSERT_EQ(usage[0], ':');
    EXPECT_LT(std::stoul(usage.substr(1)), element_bytes / 2);
  }
  EXPECT_EQ(Reply({"LPUSH", "l", "h1", "h2"}), ":" + std::to_string(length() + 2));
  model.push_front("h1");
  model.push_front("h2");
  EXPECT_EQ(Contents("l"), Render(model));
  EXPECT_EQ(Reply({"LLEN", "l"}), ":" + std::to_string(model.size()));
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "l"}), "\"quicklist\"");
  auto n = static_cast<int64_t>(model.size());
  for (int64_t start : std::vector<int64_t>{-n - 5, -n, -3, 0, 1, n / 2, n - 1, n, n + 3}) {
    for (int64_t stop : std::vector<int64_t>{-n - 1, -2, -1, 0, 2, n / 2, n - 1, n + 10}) {
      int64_t from = start < 0 ? std::max<int64_t>(start + n, 0) : start;
      int64_t to = std::min(stop < 0 ? stop + n : stop, n - 1);
      std::deque<std::string> expected;
      for (int64_t i = from; i <= to; ++i) expected.push_back(model[i]);
      EXPECT_EQ(Reply({"LRANGE", "l", std::to_string(start), std::to_string(stop)}),
                Render(expected))
          << start << " " << stop;
    }
  }
  for (int64_t index = -n - 1; index <= n; ++index) {
    bool in_range = index >= -n && index < n;
    EXPECT_EQ(Reply({"LINDEX", "l", std::to_string(index)}),
              in_range ? "\"" + model[index < 0 ? index + n : index] + "\"" : "(nil)");
  }
}

TEST_P(ListShapesTest, PopsFromBothEnds) {
  std::deque<std::string> model = Fill("l");
  EXPECT_EQ(Reply({"LPOP", "l"}), "\"" + model.front() + "\"");
  model.pop_front();
  EXPECT_EQ(Reply({"RPOP", "l"}), "\"" + model.back() + "\"");
  model.pop_back();
  EXPECT_EQ(Reply({"LPOP", "l", "0"}), "[]");
  std::deque<std::string> expected(model.begin(),
                                   model.begin() + std::min<size_t>(3, model.size()));
  EXPECT_EQ(Reply({"LPOP", "l", "3"}), Render(expected));
  for (size_t i = 0; i < expected.size(); ++i) model.pop_front();
  std::deque<std::string> tail;
  for (size_t i = 0; i < 2 && !model.empty(); ++i) {
    tail.push_back(model.back());
    model.pop_back();
  }
  EXPECT_EQ(Reply({"RPOP", "l", "2"}), Render(tail));  // Tail first, as Redis.
  EXPECT_EQ(Contents("l"), Render(model));
  // Popping more than there is empties and deletes the key (already gone if the pops above
  // took everything).
  EXPECT_EQ(
      Reply({"RPOP", "l", "100000"}),
      model.empty() ? "(nil)" : Render(std::deque<std::string>(model.rbegin(), model.rend())));
  EXPECT_EQ(Reply({"EXISTS", "l"}), ":0");
  EXPECT_EQ(Reply({"LPOP", "l"}), "(nil)");
}

TEST_P(ListShapesTest, SetTrimRemoveInsert) {
  std::deque<std::string> model = Fill("l");
  auto n = static_cast<int64_t>(model.size());
  std::string big(5000, 'B');  // Larger than a 4 KiB node: gets a node of its own.
  for (int64_t index : {int64_t{0}, n / 2, n - 1, int64_t{-1}, -n}) {
    EXPECT_EQ(Reply({"LSET", "l", std::to_string(index), big}), "+OK");
    model[index < 0 ? index + n : index] = big;
    EXPECT_EQ(Reply({"LSET", "l", std::to_string(index), "s" + std::to_string(index)}), "+OK");
    model[index < 0 ? index + n : index] = "s" + std::to_string(index);
  }
  EXPECT_EQ(Reply({"LSET", "l", std::to_string(n), "x"}), "-ERR index out of range");
  EXPECT_EQ(Reply({"LSET", "l", std::to_string(-n - 1), "x"}), "-ERR index out of range");
  EXPECT_EQ(Contents("l"), Render(model));

  // LINSERT before/after the first match of a pivot.
  std::string pivot = model[model.size() / 2];
  auto it = std::find(model.begin(), model.end(), pivot);
  model.insert(it + 1, "after");
  EXPECT_EQ(Reply({"LINSERT", "l", "AFTER", pivot, "after"}), ":" + std::to_string(model.size()));
  it = std::find(model.begin(), model.end(), pivot);
  model.insert(it, "before");
  EXPECT_EQ(Reply({"LINSERT", "l", "before", pivot, "before"}), ":" + std::to_string(model.size()));
  EXPECT_EQ(Reply({"LINSERT", "l", "BEFORE", "no such pivot", "x"}), ":-1");
  EXPECT_EQ(Contents("l"), Render(model));

  // LREM from the head, from the tail, all.
  for (auto [count, value] : std::vector<std::pair<int64_t, std::string>>{
           {2, "v1"}, {-1, "v2"}, {0, "v3"}, {0, "absent"}, {-100, "v4"}}) {
    size_t removed = 0;
    size_t limit = count == 0 ? SIZE_MAX : static_cast<size_t>(std::abs(count));
    if (count >= 0) {
      for (auto i = model.begin(); i != model.end() && removed < limit;) {
        if (*i == value) {
          i = model.erase(i);
          ++removed;
        } else {
          ++i;
        }
      }
    } else {
      for (size_t i = model.size(); i-- > 0 && removed < limit;) {
        if (model[i] == value) {
          model.erase(model.begin() + static_cast<int64_t>(i));
          ++removed;
        }
      }
    }
    EXPECT_EQ(Reply({"LREM", "l", std::to_string(count), value}), ":" + std::to_string(removed));
  }
  EXPECT_EQ(Contents("l"), Render(model));

  // LTRIM keeps [start, stop].
  n = static_cast<int64_t>(model.size());
  int64_t start = n > 3 ? 1 : 0, stop = -2;
  EXPECT_EQ(Reply({"LTRIM", "l", std::to_string(start), std::to_string(stop)}), "+OK");
  model = std::deque<std::string>(model.begin() + start, model.end() - 1);
  EXPECT_EQ(Contents("l"), Render(model));
  EXPECT_EQ(Reply({"LTRIM", "l", "5", "2"}), "+OK");  // Empty range: the key goes.
  EXPECT_EQ(Reply({"EXISTS", "l"}), ":0");
}

TEST_P(ListShapesTest, Lpos) {
  std::deque<std::string> model = Fill("l");
  auto n = static_cast<int64_t>(model.size());
  auto positions = [&](const std::string& value) {
    std::vector<int64_t> found;
    for (int64_t i = 0; i < n; ++i) {
      if (model[i] == value) found.push_back(i);
    }
    return found;
  };
  std::vector<int64_t> v1 = positions("v1");
  ASSERT_FALSE(v1.empty());
  EXPECT_EQ(Reply({"LPOS", "l", "v1"}), ":" + std::to_string(v1.front()));
  EXPECT_EQ(Reply({"LPOS", "l", "v1", "RANK", "-1"}), ":" + std::to_string(v1.back()));
  EXPECT_EQ(Reply({"LPOS", "l", "v1", "RANK", "2"}),
            v1.size() >= 2 ? ":" + std::to_string(v1[1]) : "(nil)");
  std::string all = "[";
  for (size_t i = 0; i < v1.size(); ++i) all += (i ? ", :" : ":") + std::to_string(v1[i]);
  all += "]";
  EXPECT_EQ(Reply({"LPOS", "l", "v1", "COUNT", "0"}), all);
  std::string reversed = "[";
  for (size_t i = v1.size(); i-- > 0;) {
    reversed += (i + 1 < v1.size() ? ", :" : ":") + std::to_string(v1[i]);
  }
  reversed += "]";
  EXPECT_EQ(Reply({"LPOS", "l", "v1", "RANK", "-1", "COUNT", "0"}), reversed);
  EXPECT_EQ(Reply({"LPOS", "l", "v1", "COUNT", "1"}), "[:" + std::to_string(v1.front()) + "]");
  // MAXLEN limits the comparisons: v1 first appears at index 1.
  EXPECT_EQ(Reply({"LPOS", "l", "v1", "MAXLEN", "1"}), "(nil)");
  EXPECT_EQ(Reply({"LPOS", "l", "v1", "MAXLEN", "2"}), ":" + std::to_string(v1.front()));
  EXPECT_EQ(Reply({"LPOS", "l", "absent"}), "(nil)");
  EXPECT_EQ(Reply({"LPOS", "l", "absent", "COUNT", "0"}), "[]");
}

TEST_P(ListShapesTest, MovesAndRotation) {
  std::deque<std::string> model = Fill("src");
  std::deque<std::string> dst;
  struct Move {
    const char* from;
    const char* to;
  };
  for (Move move : {Move{"LEFT", "LEFT"}, Move{"LEFT", "RIGHT"}, Move{"RIGHT", "LEFT"},
                    Move{"RIGHT", "RIGHT"}}) {
    bool from_left = std::string_view(move.from) == "LEFT";
    std::string value = from_left ? model.front() : model.back();
    from_left ? model.pop_front() : model.pop_back();
    std::string_view(move.to) == "LEFT" ? dst.push_front(value) : dst.push_back(value);
    EXPECT_EQ(Reply({"LMOVE", "src", "dst", move.from, move.to}), "\"" + value + "\"");
  }
  EXPECT_EQ(Contents("src"), Render(model));
  EXPECT_EQ(Contents("dst"), Render(dst));
  // Same source and destination rotates.
  std::string last = model.back();
  model.pop_back();
  model.push_front(last);
  EXPECT_EQ(Reply({"RPOPLPUSH", "src", "src"}), "\"" + last + "\"");
  EXPECT_EQ(Reply({"LMOVE", "src", "src", "LEFT", "RIGHT"}), "\"" + model.front() + "\"");
  model.push_back(model.front());
  model.pop_front();
  EXPECT_EQ(Contents("src"), Render(model));
  // Draining the source deletes it.
  while (!model.empty()) {
    EXPECT_EQ(Reply({"RPOPLPUSH", "src", "dst"}), "\"" + model.back() + "\"");
    dst.push_front(model.back());
    model.pop_back();
  }
  EXPECT_EQ(Reply({"EXISTS", "src"}), ":0");
  EXPECT_EQ(Contents("dst"), Render(dst));
  EXPECT_EQ(Reply({"LMOVE", "src", "dst", "LEFT", "LEFT"}), "(nil)");
}

TEST_P(ListShapesTest, MultiPop) {
  std::deque<std::string> model = Fill("b");
  EXPECT_EQ(Reply({"LMPOP", "2", "a", "b", "LEFT"}), "[\"b\", [\"" + model.front() + "\"]]");
  model.pop_front();
  std::deque<std::string> popped;
  for (int i = 0; i < 3 && !model.empty(); ++i) {
    popped.push_back(model.back());
    model.pop_back();
  }
  EXPECT_EQ(Reply({"LMPOP", "3", "a", "b", "c", "RIGHT", "COUNT", "3"}),
            "[\"b\", " + Render(popped) + "]");
  EXPECT_EQ(Reply({"LMPOP", "1", "b", "left", "count", "1000000"}),
            "[\"b\", " + Render(model) + "]");
  EXPECT_EQ(Reply({"EXISTS", "b"}), ":0");
  EXPECT_EQ(RunRaw({"LMPOP", "2", "a", "b", "LEFT"}), "*-1\r\n");
  UseResp(3);
  EXPECT_EQ(RunRaw({"LMPOP", "2", "a", "b", "LEFT"}), "_\r\n");
}

TEST_P(ListShapesTest, BlockingCommandsServeAtOnce) {
  std::deque<std::string> model = Fill("b");
  EXPECT_EQ(Reply({"BLPOP", "a", "b", "0"}), "[\"b\", \"" + model.front() + "\"]");
  model.pop_front();
  EXPECT_EQ(Reply({"BRPOP", "a", "b", "1.5"}), "[\"b\", \"" + model.back() + "\"]");
  model.pop_back();
  if (model.size() >= 2) {
    EXPECT_EQ(Reply({"BLMOVE", "b", "d", "LEFT", "RIGHT", "0"}), "\"" + model.front() + "\"");
    model.pop_front();
    EXPECT_EQ(Reply({"BRPOPLPUSH", "b", "d", "0"}), "\"" + model.back() + "\"");
    model.pop_back();
  }
  if (!model.empty()) {
    EXPECT_EQ(Reply({"BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "1"}),
              "[\"b\", [\"" + model.front() + "\"]]");
    model.pop_front();
  }
  EXPECT_EQ(Contents("b"), Render(model));
}

TEST_P(ListShapesTest, NodeBoundChangesKeepContents) {
  std::deque<std::string> model = Fill("l");
  // Lists keep the bound they were created with; new ones take the new bound. Both must work.
  ASSERT_EQ(Reply({"CONFIG", "SET", "list-max-listpack-size", "2"}), "+OK");
  std::deque<std::string> second = Fill("m");
  EXPECT_EQ(Reply({"RPUSH", "l", "tail"}), ":" + std::to_string(model.size() + 1));
  model.push_back("tail");
  EXPECT_EQ(Contents("l"), Render(model));
  EXPECT_EQ(Contents("m"), Render(second));
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "m"}), "\"quicklist\"");
}

// --- Fixed cases: missing keys, WRONGTYPE, argument errors, reply shapes, effects ------------

TEST_F(ListCommandsTest, MissingKeys) {
  EXPECT_EQ(Reply({"LLEN", "none"}), ":0");
  EXPECT_EQ(Reply({"LINDEX", "none", "0"}), "(nil)");
  EXPECT_EQ(Reply({"LINDEX", "none", "abc"}), "(nil)");  // The key is looked at first.
  EXPECT_EQ(Reply({"LRANGE", "none", "0", "-1"}), "[]");
  EXPECT_EQ(Reply({"LPOP", "none"}), "(nil)");
  EXPECT_EQ(RunRaw({"LPOP", "none"}), "$-1\r\n");
  EXPECT_EQ(RunRaw({"LPOP", "none", "0"}), "*-1\r\n");
  EXPECT_EQ(RunRaw({"RPOP", "none", "2"}), "*-1\r\n");
  EXPECT_EQ(Reply({"LSET", "none", "0", "x"}), "-ERR no such key");
  EXPECT_EQ(Reply({"LTRIM", "none", "0", "1"}), "+OK");
  EXPECT_EQ(Reply({"LREM", "none", "0", "x"}), ":0");
  EXPECT_EQ(Reply({"LINSERT", "none", "BEFORE", "p", "x"}), ":0");
  EXPECT_EQ(Reply({"LPOS", "none", "x"}), "(nil)");
  EXPECT_EQ(Reply({"LPOS", "none", "x", "COUNT", "2"}), "[]");
  EXPECT_EQ(Reply({"LPUSHX", "none", "x"}), ":0");
  EXPECT_EQ(Reply({"RPUSHX", "none", "x", "y"}), ":0");
  EXPECT_EQ(Reply({"LMOVE", "none", "dst", "LEFT", "RIGHT"}), "(nil)");
  EXPECT_EQ(Reply({"RPOPLPUSH", "none", "dst"}), "(nil)");
  EXPECT_EQ(Reply({"EXISTS", "none", "dst"}), ":0");
  UseResp(3);
  EXPECT_EQ(RunRaw({"LPOP", "none"}), "_\r\n");
  EXPECT_EQ(RunRaw({"LPOP", "none", "1"}), "_\r\n");
  EXPECT_EQ(RunRaw({"LINDEX", "none", "0"}), "_\r\n");
  EXPECT_EQ(RunRaw({"LPOS", "none", "x"}), "_\r\n");
  EXPECT_EQ(RunRaw({"LMOVE", "none", "dst", "LEFT", "RIGHT"}), "_\r\n");
}

TEST_P(ListShapesTest, KeyspaceCommandsOnLists) {
  std::deque<std::string> model = Fill("l");
  EXPECT_EQ(Reply({"TYPE", "l"}), "+list");
  EXPECT_EQ(Reply({"COPY", "l", "c"}), ":1");
  EXPECT_EQ(Reply({"LSET", "c", "0", "changed"}), "+OK");  // The copy is deep.
  EXPECT_EQ(Contents("l"), Render(model));
  model[0] = "changed";
  EXPECT_EQ(Contents("c"), Render(model));
  EXPECT_EQ(Reply({"RENAME", "c", "r"}), "+OK");
  EXPECT_EQ(Contents("r"), Render(model));
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "r"}), "\"quicklist\"");
  EXPECT_EQ(Reply({"PEXPIRE", "r", "100"}), ":1");
  clock_.AdvanceMs(100);
  EXPECT_EQ(Reply({"LLEN", "r"}), ":0");  // Expired lists are gone.
  EXPECT_EQ(Reply({"RPUSHX", "r", "x"}), ":0");
  EXPECT_EQ(Reply({"DEL", "l", "r"}), ":1");
  EXPECT_EQ(Reply({"EXISTS", "l"}), ":0");
}

TEST_F(ListCommandsTest, PushXOnExistingLists) {
  EXPECT_EQ(Reply({"RPUSH", "l", "a"}), ":1");
  EXPECT_EQ(Reply({"LPUSHX", "l", "b", "c"}), ":3");
  EXPECT_EQ(Reply({"RPUSHX", "l", "d"}), ":4");
  EXPECT_EQ(Contents("l"), "[\"c\", \"b\", \"a\", \"d\"]");
  EXPECT_EQ(Reply({"TYPE", "l"}), "+list");
}

TEST_F(ListCommandsTest, WrongType) {
  EXPECT_EQ(Reply({"SET", "s", "v"}), "+OK");
  EXPECT_EQ(Reply({"RPUSH", "l", "a"}), ":1");
  const std::vector<std::vector<std::string>> commands = {
      {"LPUSH", "s", "x"},
      {"RPUSH", "s", "x"},
      {"LPUSHX", "s", "x"},
      {"RPUSHX", "s", "x"},
      {"LPOP", "s"},
      {"RPOP", "s", "2"},
      {"LLEN", "s"},
      {"LINDEX", "s", "0"},
      {"LSET", "s", "0", "x"},
      {"LRANGE", "s", "0", "-1"},
      {"LTRIM", "s", "0", "1"},
      {"LREM", "s", "0", "x"},
      {"LINSERT", "s", "AFTER", "p", "x"},
      {"LPOS", "s", "x"},
      {"LMOVE", "s", "l", "LEFT", "LEFT"},
      {"LMOVE", "l", "s", "LEFT", "LEFT"},
      {"RPOPLPUSH", "s", "l"},
      {"RPOPLPUSH", "l", "s"},
      {"LMPOP", "2", "s", "l", "LEFT"},
      {"BLPOP", "s", "l", "0"},
      {"BRPOP", "s", "0"},
      {"BLMOVE", "l", "s", "LEFT", "LEFT", "0"},
      {"BRPOPLPUSH", "s", "l", "0"},
      {"BLMPOP", "0", "1", "s", "RIGHT"},
  };
  for (const auto& command : commands) EXPECT_EQ(Reply(command), kWrongType) << command[0];
  // Nothing moved: the list and the string are intact.
  EXPECT_EQ(Contents("l"), "[\"a\"]");
  EXPECT_EQ(Reply({"GET", "s"}), "\"v\"");
  // A missing source wins over a wrong-type destination; a served earlier key wins over a
  // wrong-type later one.
  EXPECT_EQ(Reply({"LMOVE", "none", "s", "LEFT", "LEFT"}), "(nil)");
  EXPECT_EQ(Reply({"LMPOP", "2", "l", "s", "LEFT"}), "[\"l\", [\"a\"]]");
}

TEST_F(ListCommandsTest, ArgumentErrors) {
  EXPECT_EQ(Reply({"RPUSH", "l", "a", "b", "a"}), ":3");
  EXPECT_EQ(Reply({"LPUSH", "l"}), "-ERR wrong number of arguments for 'lpush' command");
  EXPECT_EQ(Reply({"LPOP", "l", "1", "2"}), "-ERR wrong number of arguments for 'lpop' command");
  EXPECT_EQ(Reply({"LPOP", "l", "-1"}), "-ERR value is out of range, must be positive");
  EXPECT_EQ(Reply({"RPOP", "l", "abc"}), "-ERR value is out of range, must be positive");
  EXPECT_EQ(Reply({"LPOP", "none", "-1"}), "-ERR value is out of range, must be positive");
  EXPECT_EQ(Reply({"LINDEX", "l", "abc"}), kNotInteger);
  EXPECT_EQ(Reply({"LSET", "l", "abc", "x"}), kNotInteger);
  EXPECT_EQ(Reply({"LSET", "l", "3", "x"}), "-ERR index out of range");
  EXPECT_EQ(Reply({"LRANGE", "none", "a", "1"}), kNotInteger);  // Parsed before the lookup.
  EXPECT_EQ(Reply({"LRANGE", "l", "0", "1.5"}), kNotInteger);
  EXPECT_EQ(Reply({"LTRIM", "none", "0", "x"}), kNotInteger);
  EXPECT_EQ(Reply({"LREM", "none", "x", "a"}), kNotInteger);
  EXPECT_EQ(Reply({"LINSERT", "l", "MIDDLE", "a", "x"}), kSyntax);
  EXPECT_EQ(Reply({"LINSERT", "none", "MIDDLE", "a", "x"}), kSyntax);
  EXPECT_EQ(Reply({"LPOS", "l", "a", "RANK", "0"}),
            "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
  EXPECT_EQ(Reply({"LPOS", "l", "a", "RANK", "x"}), kNotInteger);
  EXPECT_EQ(Reply({"LPOS", "l", "a", "COUNT", "-1"}), "-ERR COUNT can't be negative");
  EXPECT_EQ(Reply({"LPOS", "l", "a", "COUNT", "x"}), "-ERR COUNT can't be negative");
  EXPECT_EQ(Reply({"LPOS", "l", "a", "MAXLEN", "-1"}), "-ERR MAXLEN can't be negative");
  EXPECT_EQ(Reply({"LPOS", "l", "a", "RANK"}), kSyntax);
  EXPECT_EQ(Reply({"LPOS", "l", "a", "BOGUS", "1"}), kSyntax);
  EXPECT_EQ(Reply({"LPOS", "l", "a", "RANK", "-9223372036854775808"}), ":2");
  EXPECT_EQ(Reply({"LPOS", "l", "a", "RANK", "-9223372036854775808", "COUNT", "1"}),
            "[:2, :0]");  // As Redis, whose COUNT test overflows for this rank.
  EXPECT_EQ(Reply({"LMOVE", "l", "d", "UP", "LEFT"}), kSyntax);
  EXPECT_EQ(Reply({"LMOVE", "l", "d", "LEFT", "DOWN"}), kSyntax);
  EXPECT_EQ(Reply({"LMPOP", "0", "l", "LEFT"}), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(Reply({"LMPOP", "abc", "l", "LEFT"}), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(Reply({"LMPOP", "2", "l", "LEFT"}), kSyntax);
  EXPECT_EQ(Reply({"LMPOP", "9223372036854775807", "l", "LEFT"}), kSyntax);
  EXPECT_EQ(Reply({"LMPOP", "1", "l", "MIDDLE"}), kSyntax);
  EXPECT_EQ(Reply({"LMPOP", "1", "l", "LEFT", "COUNT", "0"}),
            "-ERR count should be greater than 0");
  EXPECT_EQ(Reply({"LMPOP", "1", "l", "LEFT", "COUNT", "1", "COUNT", "1"}), kSyntax);
  EXPECT_EQ(Reply({"LMPOP", "1", "l", "LEFT", "COUNT"}), kSyntax);
  // Blocking commands: timeout errors, in Redis's order of checks.
  EXPECT_EQ(Reply({"BLPOP", "l", "abc"}), "-ERR timeout is not a float or out of range");
  EXPECT_EQ(Reply({"BRPOP", "l", "-1"}), "-ERR timeout is negative");
  EXPECT_EQ(Reply({"BLMOVE", "l", "d", "UP", "LEFT", "abc"}), kSyntax);
  EXPECT_EQ(Reply({"BLMOVE", "l", "d", "LEFT", "LEFT", "abc"}),
            "-ERR timeout is not a float or out of range");
  EXPECT_EQ(Reply({"BRPOPLPUSH", "l", "d", "-2"}), "-ERR timeout is negative");
  EXPECT_EQ(Reply({"BLMPOP", "abc", "1", "l", "LEFT"}),
            "-ERR timeout is not a float or out of range");
  EXPECT_EQ(Reply({"BLMPOP", "0", "abc", "l", "LEFT"}), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(Reply({"BLMPOP", "abc", "1", "l", "LEFT", "COUNT", "0"}),
            "-ERR count should be greater than 0");  // Before the timeout.
  EXPECT_EQ(Reply({"BLMPOP", "0", "1", "l", "LEFT", "COUNT", "x"}),
            "-ERR count should be greater than 0");
  EXPECT_EQ(Reply({"BLMPOP", "0", "1"}), "-ERR wrong number of arguments for 'blmpop' command");
  // None of the failed commands changed the list.
  EXPECT_EQ(Contents("l"), "[\"a\", \"b\", \"a\"]");
}

TEST_F(ListCommandsTest, BlockingTimeoutReply) {
  // Nothing to serve: the client gets the timeout reply (null array).
  EXPECT_EQ(RunRaw({"BLPOP", "a", "b", "0.01"}), "*-1\r\n");
  EXPECT_EQ(RunRaw({"BRPOP", "a", "0.01"}), "*-1\r\n");
  EXPECT_EQ(RunRaw({"BLMOVE", "a", "b", "LEFT", "LEFT", "0.01"}), "*-1\r\n");
  EXPECT_EQ(RunRaw({"BRPOPLPUSH", "a", "b", "0.01"}), "*-1\r\n");
  EXPECT_EQ(RunRaw({"BLMPOP", "0.01", "2", "a", "b", "LEFT"}), "*-1\r\n");
  UseResp(3);
  EXPECT_EQ(RunRaw({"BLPOP", "a", "0.01"}), "_\r\n");
  EXPECT_EQ(RunRaw({"BLMPOP", "0.01", "1", "a", "RIGHT", "COUNT", "2"}), "_\r\n");
  EXPECT_EQ(Reply({"EXISTS", "a", "b"}), ":0");
  EXPECT_THAT(effects_.Take(), IsEmpty());
}

TEST_F(ListCommandsTest, ReplyShapesResp3) {
  UseResp(3);
  EXPECT_EQ(RunRaw({"RPUSH", "l", "a", "1", "b"}), ":3\r\n");
  EXPECT_EQ(RunRaw({"LRANGE", "l", "0", "-1"}), "*3\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n");
  EXPECT_EQ(RunRaw({"LPOS", "l", "x"}), "_\r\n");
  EXPECT_EQ(RunRaw({"LPOS", "l", "1", "COUNT", "0"}), "*1\r\n:1\r\n");
  EXPECT_EQ(RunRaw({"LPOP", "l", "0"}), "*0\r\n");
  EXPECT_EQ(RunRaw({"LMPOP", "1", "l", "RIGHT"}), "*2\r\n$1\r\nl\r\n*1\r\n$1\r\nb\r\n");
  EXPECT_EQ(RunRaw({"BLPOP", "l", "0"}), "*2\r\n$1\r\nl\r\n$1\r\na\r\n");
  EXPECT_EQ(RunRaw({"LINDEX", "l", "5"}), "_\r\n");
  EXPECT_EQ(RunRaw({"RPOP", "l"}), "$1\r\n1\r\n");
  EXPECT_EQ(RunRaw({"RPOP", "l"}), "_\r\n");
}

TEST_F(ListCommandsTest, EffectsAreDeterministic) {
  EXPECT_EQ(Reply({"RPUSH", "l", "a", "b", "c", "d"}), ":4");
  EXPECT_EQ(Reply({"LPOP", "l", "10"}), "[\"a\", \"b\", \"c\", \"d\"]");
  EXPECT_THAT(effects_.Take(), ElementsAre("0: RPUSH l a b c d", "0: LPOP l 4"));
  EXPECT_EQ(Reply({"rpush", "l", "a", "b", "c"}), ":3");
  EXPECT_EQ(Reply({"RPOP", "l"}), "\"c\"");
  EXPECT_EQ(Reply({"LMOVE", "l", "m", "left", "Right"}), "\"a\"");
  EXPECT_EQ(Reply({"RPOPLPUSH", "l", "m"}), "\"b\"");
  EXPECT_THAT(effects_.Take(), ElementsAre("0: RPUSH l a b c", "0: RPOP l",
                                           "0: LMOVE l m LEFT RIGHT", "0: RPOPLPUSH l m"));
  EXPECT_EQ(Reply({"BLPOP", "x", "m", "0"}), "[\"m\", \"b\"]");
  EXPECT_EQ(Reply({"BLMOVE", "m", "n", "RIGHT", "LEFT", "0"}), "\"a\"");
  EXPECT_EQ(Reply({"RPUSH", "m", "1", "2", "3"}), ":3");
  EXPECT_EQ(Reply({"BRPOPLPUSH", "m", "n", "0"}), "\"3\"");
  EXPECT_EQ(Reply({"BLMPOP", "0", "1", "m", "RIGHT", "COUNT", "9"}), "[\"m\", [\"2\", \"1\"]]");
  EXPECT_THAT(effects_.Take(), ElementsAre("0: LPOP m", "0: LMOVE m n RIGHT LEFT",
                                           "0: RPUSH m 1 2 3", "0: RPOPLPUSH m n", "0: RPOP m 2"));
  EXPECT_EQ(Reply({"LSET", "n", "0", "z"}), "+OK");
  EXPECT_EQ(Reply({"LINSERT", "n", "BEFORE", "z", "y"}), ":3");
  EXPECT_EQ(Reply({"LREM", "n", "0", "nothing"}), ":0");
  EXPECT_EQ(Reply({"LREM", "n", "-1", "y"}), ":1");
  // Removes nothing, yet logged: Redis counts it as a change for WATCH.
  EXPECT_EQ(Reply({"LTRIM", "n", "0", "-1"}), "+OK");
  EXPECT_EQ(Reply({"LTRIM", "n", "1", "-1"}), "+OK");
  EXPECT_EQ(Reply({"LTRIM", "none", "1", "-1"}), "+OK");  // No list: nothing logged.
  EXPECT_EQ(Reply({"LPUSHX", "none", "a"}), ":0");
  EXPECT_THAT(effects_.Take(), ElementsAre("0: LSET n 0 z", "0: LINSERT n BEFORE z y",
                                           "0: LREM n -1 y", "0: LTRIM n 0 -1", "0: LTRIM n 1 -1"));
  EXPECT_EQ(Contents("n"), "[\"a\"]");
}

}  // namespace
}  // namespace gigakv::testing
