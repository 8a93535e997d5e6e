#include "server/command_docs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>

#include "gigakv/strings.h"

namespace gigakv::server {
namespace {

bool IsTokenWord(std::string_view word) {
  bool has_letter = false;
  for (char c : word) {
    if (std::islower(static_cast<unsigned char>(c))) return false;
    has_letter = has_letter || std::isupper(static_cast<unsigned char>(c));
  }
  return has_letter;
}

std::string TypeForName(std::string_view name) {
  if (name == "key" || name.ends_with("key") || name == "source" || name == "destination") {
    return "key";
  }
  if (name == "pattern") return "pattern";
  if (name.starts_with("unix-time")) return "unix-time";
  for (std::string_view word : {"seconds", "milliseconds", "count", "offset", "start", "end",
                                "index", "db", "decrement", "len", "id", "port", "numkeys",
                                "samples", "protover", "cursor", "maxage", "min-match-len"}) {
    if (name == word || name.ends_with(word)) return "integer";
  }
  if (name == "increment") return "integer";
  if (name == "float-increment" || name == "timeout") return "double";
  return "string";
}

class SyntaxParser {
 public:
  explicit SyntaxParser(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
      char c = text[i];
      if (c == ' ') {
        ++i;
      } else if (c == '[' || c == ']' || c == '{' || c == '}' || c == '|') {
        tokens_.emplace_back(1, c);
        ++i;
      } else if (text.substr(i, 3) == "...") {
        tokens_.emplace_back("...");
        i += 3;
      } else {
        size_t end = i;
        while (end < text.size() &&
               std::string_view(" []{}|").find(text[end]) == std::string_view::npos &&
               text.substr(end, 3) != "...") {
          ++end;
        }
        tokens_.emplace_back(text.substr(i, end - i));
        i = end;
      }
    }
  }

  std::vector<ArgumentDoc> ParseAll() { return ParseAlternatives(""); }

 private:
  // Parses until `close` (or the end); several alternatives become one "oneof" argument.
  std::vector<ArgumentDoc> ParseAlternatives(std::string_view close) {
    std::vector<std::vector<ArgumentDoc>> alternatives(1);
    while (pos_ < tokens_.size() && tokens_[pos_] != close) {
      if (tokens_[pos_] == "|") {
        ++pos_;
        alternatives.emplace_back();
        continue;
      }
      ParseItem(&alternatives.back());
    }
    if (pos_ < tokens_.size()) ++pos_;  // The closing bracket.
    if (alternatives.size() == 1) return std::move(alternatives[0]);
    ArgumentDoc oneof;
    oneof.type = "oneof";
    for (auto& alternative : alternatives)
      oneof.arguments.push_back(Collapse(std::move(alternative)));
    oneof.name = Join(oneof.arguments);
    return {std::move(oneof)};
  }

  static std::string Join(const std::vector<ArgumentDoc>& arguments) {
    std::string name;
    for (const ArgumentDoc& argument : arguments) {
      if (!name.empty()) name += "-";
      name += argument.name;
    }
    return name;
  }

  // A sequence of several arguments is one "block".
  static ArgumentDoc Collapse(std::vector<ArgumentDoc> sequence) {
    if (sequence.size() == 1) return std::move(sequence[0]);
    ArgumentDoc block;
    block.type = "block";
    block.name = Join(sequence);
    block.arguments = std::move(sequence);
    return block;
  }

  void ParseItem(std::vector<ArgumentDoc>* sequence) {
    const std::string& token = tokens_[pos_++];
    ArgumentDoc item;
    if (token == "[" || token == "{") {
      item = Collapse(ParseAlternatives(token == "[" ? "]" : "}"));
      item.optional = item.optional || token == "[";
    } else if (IsTokenWord(token)) {
      // "TOKEN name": one argument with a token; a lone TOKEN is a pure token.
      if (pos_ < tokens_.size() && !IsTokenWord(tokens_[pos_]) &&
          std::string_view("[]{}|...").find(tokens_[pos_]) == std::string_view::npos) {
        item.token = token;
        item.name = tokens_[pos_++];
        item.type = TypeForName(item.name);
      } else {
        item.name = token;
        std::transform(item.name.begin(), item.name.end(), item.name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        item.token = token;
        item.type = "pure-token";
      }
    } else {
      item.name = token;
      item.type = TypeForName(token);
    }
    if (item.type == "key") item.key_spec_index = 0;
    if (pos_ < tokens_.size() && tokens_[pos_] == "...") {
      item.multiple = true;
      ++pos_;
    }
    sequence->push_back(std::move(item));
  }

  std::vector<std::string> tokens_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<ArgumentDoc> ParseSyntax(std::string_view syntax) {
  return SyntaxParser(syntax).ParseAll();
}

absl::StatusOr<std::vector<std::pair<std::string, std::vector<ArgumentDoc>>>> ParseArgumentTrees(
    std::string_view text) {
  std::vector<std::pair<std::string, std::vector<ArgumentDoc>>> commands;
  // open[l] is the argument list that level-(l + 1) lines append to.
  std::vector<std::vector<ArgumentDoc>*> open;
  int line_number = 0;
  while (!text.empty()) {
    size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    ++line_number;
    if (line.empty()) continue;
    auto error = [&](std::string_view what) {
      return absl::InvalidArgumentError(StrCat("line ", line_number, ": ", what));
    };
    size_t spaces = line.find_first_not_of(' ');
    if (spaces == std::string_view::npos || spaces % 2 != 0) return error("bad indentation");
    size_t level = spaces / 2;
    std::vector<std::string_view> words;
    for (std::string_view rest = line.substr(spaces);;) {
      size_t space = rest.find(' ');
      words.push_back(rest.substr(0, space));
      if (space == std::string_view::npos) break;
      rest.remove_prefix(space + 1);
    }
    if (level == 0) {
      if (words.size() != 1) return error("a command line holds only the name");
      commands.emplace_back(std::string(words[0]), std::vector<ArgumentDoc>{});
      open.assign(1, &commands.back().second);
      continue;
    }
    if (level > open.size()) return error("argument without a parent");
    if (words.size() < 2 || words[0].empty() || words[1].empty()) {
      return error("an argument needs a name and a type");
    }
    ArgumentDoc argument;
    argument.name = std::string(words[0]);
    argument.type = std::string(words[1]);
    for (size_t i = 2; i < words.size(); ++i) {
      std::string_view word = words[i];
      if (word.empty()) return error("empty attribute");
      std::string_view value = word.substr(1);
      switch (word[0]) {
        case '#':
          if (value.empty() ||
              std::from_chars(value.data(), value.data() + value.size(), argument.key_spec_index)
                      .ptr != value.data() + value.size()) {
            return error("bad #index");
          }
          break;
        case '=':
          argument.token = std::string(value);
          break;
        case '^':
          argument.since = std::string(value);
          break;
        case '!':
          argument.deprecated_since = std::string(value);
          break;
        case '?':
        case '*':
        case '+':
          if (!value.empty()) return error("a flag takes no value");
          (word[0] == '?'   ? argument.optional
           : word[0] == '*' ? argument.multiple
                            : argument.multiple_token) = true;
          break;
        default:
          return error(StrCat("unknown attribute ", word));
      }
    }
    open.resize(level);  // Closes the deeper levels.
    std::vector<ArgumentDoc>* siblings = open.back();
    siblings->push_back(std::move(argument));
    open.push_back(&siblings->back().arguments);
  }
  return commands;
}

const std::vector<ArgumentDoc>* RedisArgumentsOf(std::string_view name) {
  using Trees = std::map<std::string, std::vector<ArgumentDoc>, std::less<>>;
  static const Trees* trees = [] {
    auto parsed = ParseArgumentTrees(RedisArgumentTreesText());
    // The text is generated and checked by a test: a parse error is a build defect.
    if (!parsed.ok()) std::abort();
    auto* map = new Trees();
    for (auto& [command, arguments] : *parsed) map->emplace(command, std::move(arguments));
    return map;
  }();
  auto it = trees->find(name);
  return it == trees->end() ? nullptr : &it->second;
}

void ReplyArguments(protocol::ReplyBuilder& reply, const std::vector<ArgumentDoc>& arguments) {
  reply.ArrayHeader(static_cast<int64_t>(arguments.size()));
  // Fields in Redis 7.0's order; absent ones are left out.
  for (const ArgumentDoc& argument : arguments) {
    int64_t flags = (argument.optional ? 1 : 0) + (argument.multiple ? 1 : 0) +
                    (argument.multiple_token ? 1 : 0);
    int64_t fields = 2 + (argument.key_spec_index >= 0 ? 1 : 0) + (argument.token.empty() ? 0 : 1) +
                     (argument.since.empty() ? 0 : 1) +
                     (argument.deprecated_since.empty() ? 0 : 1) + (flags > 0 ? 1 : 0) +
                     (argument.arguments.empty() ? 0 : 1);
    reply.MapHeader(fields);
    reply.Bulk("name");
    reply.Bulk(argument.name);
    reply.Bulk("type");
    reply.Bulk(argument.type);
    if (argument.key_spec_index >= 0) {
      reply.Bulk("key_spec_index");
      reply.Integer(argument.key_spec_index);
    }
    if (!argument.token.empty()) {
      reply.Bulk("token");
      reply.Bulk(argument.token);
    }
    if (!argument.since.empty()) {
      reply.Bulk("since");
      reply.Bulk(argument.since);
    }
    if (!argument.deprecated_since.empty()) {
      reply.Bulk("deprecated_since");
      reply.Bulk(argument.deprecated_since);
    }
    if (flags > 0) {
      reply.Bulk("flags");
      reply.SetHeader(flags);
      if (argument.optional) reply.SimpleString("optional");
      if (argument.multiple) reply.SimpleString("multiple");
      if (argument.multiple_token) reply.SimpleString("multiple_token");
    }
    if (!argument.arguments.empty()) {
      reply.Bulk("arguments");
      ReplyArguments(reply, argument.arguments);
    }
  }
}

const std::vector<CommandDoc>& AllCommandDocs() {
  static const std::vector<CommandDoc> kDocs = {
      // connection
      {"auth", "[username] password",
       "O(N) where N is the number of passwords defined for the user"},
      {"hello", "[{protover [AUTH username password] [SETNAME clientname]}]", "O(1)"},
      {"select", "index", "O(1)"},
      {"quit", "", "O(1)"},
      {"reset", "", "O(1)"},
      {"ping", "[message]", "O(1)"},
      {"echo", "message", "O(1)"},
      {"client", "", "Depends on subcommand."},
      {"client|id", "", "O(1)"},
      {"client|setname", "connection-name", "O(1)"},
      {"client|getname", "", "O(1)"},
      {"client|list", "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id...]",
       "O(N) where N is the number of client connections"},
      {"client|info", "", "O(1)"},
      {"client|kill",
       "ip:port|[ID client-id] [TYPE NORMAL|MASTER|SLAVE|REPLICA|PUBSUB] [USER username] [ADDR "
       "ip:port] [LADDR ip:port] [SKIPME YES|NO] [MAXAGE maxage]",
       "O(N) where N is the number of client connections"},
      {"client|setinfo", "LIB-NAME libname|LIB-VER libver", "O(1)"},
      {"client|pause", "timeout [WRITE|ALL]", "O(1)"},
      {"client|unpause", "", "O(N) Where N is the number of paused clients"},
      {"client|no-evict", "ON|OFF", "O(1)"},
      {"client|no-touch", "ON|OFF", "O(1)"},
      {"client|reply", "ON|OFF|SKIP", "O(1)"},
      {"client|unblock", "client-id [TIMEOUT|ERROR]",
       "O(log N) where N is the number of client connections"},
      {"client|help", "", "O(1)"},
      // server
      {"time", "", "O(1)"},
      {"dbsize", "", "O(1)"},
      {"flushdb", "[ASYNC|SYNC]", "O(N) where N is the number of keys in the selected database"},
      {"flushall", "[ASYNC|SYNC]", "O(N) where N is the total number of keys in all databases"},
      {"command", "", "O(N) where N is the total number of Redis commands"},
      {"command|count", "", "O(1)"},
      {"command|info", "[command-name...]", "O(N) where N is the number of commands to look up"},
      {"command|docs", "[command-name...]", "O(N) where N is the number of commands to look up"},
      {"command|list", "[FILTERBY MODULE module-name|ACLCAT category|PATTERN pattern]",
       "O(N) where N is the total number of Redis commands"},
      // Redis 7.0 documents no arguments for these two.
      {"command|getkeys", "", "O(N) where N is the number of arguments to the command"},
      {"command|getkeysandflags", "", "O(N) where N is the number of arguments to the command"},
      {"command|help", "", "O(1)"},
      {"config", "", "Depends on subcommand."},
      {"config|get", "parameter...",
       "O(N) when N is the number of configuration parameters provided"},
      {"config|set", "{parameter value}...",
       "O(N) when N is the number of configuration parameters provided"},
      {"config|resetstat", "", "O(1)"},
      {"config|rewrite", "", "O(1)"},
      {"config|help", "", "O(1)"},
      {"shutdown", "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]",
       "O(N) when saving, where N is the total number of keys in all databases when saving data, "
       "otherwise O(1)"},
      {"lastsave", "", "O(1)"},
      {"debug", "subcommand [arg...]", "Depends on subcommand."},
      {"role", "", "O(1)"},
      {"wait", "numreplicas timeout", "O(1)"},
      {"monitor", "", ""},  // Redis gives MONITOR no complexity.
      {"slowlog", "", "Depends on subcommand."},
      {"slowlog|get", "[count]", "O(N) where N is the number of entries returned"},
      {"slowlog|len", "", "O(1)"},
      {"slowlog|reset", "", "O(N) where N is the number of entries in the slowlog"},
      {"slowlog|help", "", "O(1)"},
      {"memory", "", "Depends on subcommand."},
      {"memory|usage", "key [SAMPLES count]", "O(N) where N is the number of samples."},
      {"memory|stats", "", "O(1)"},
      {"memory|purge", "", "Depends on how much memory is allocated, could be slow"},
      {"memory|help", "", "O(1)"},
      {"function", "", "Depends on subcommand."},
      {"function|flush", "[ASYNC|SYNC]", "O(N) where N is the number of functions deleted"},
      {"script", "", "Depends on subcommand."},
      {"script|flush", "[ASYNC|SYNC]", "O(N) with N being the number of scripts in cache"},
      {"info", "[section...]", "O(1)"},
      {"swapdb", "index1 index2",
       "O(N) where N is the count of clients watching or blocking on keys from both databases."},
      // generic
      {"del", "key...",
       "O(N) where N is the number of keys that will be removed. When a key to remove holds a "
       "value other than a string, the individual complexity for this key is O(M) where M is the "
       "number of elements in the list, set, sorted set or hash. Removing a single key that holds "
       "a string value is O(1)."},
      {"unlink", "key...",
       "O(1) for each key removed regardless of its size. Then the command does O(N) work in a "
       "different thread in order to reclaim memory, where N is the number of allocations the "
       "deleted objects where composed of."},
      {"exists", "key...", "O(N) where N is the number of keys to check."},
      {"touch", "key...", "O(N) where N is the number of keys that will be touched."},
      {"type", "key", "O(1)"},
      {"rename", "key newkey", "O(1)"},
      {"renamenx", "key newkey", "O(1)"},
      {"copy", "source destination [DB destination-db] [REPLACE]",
       "O(N) worst case for collections, where N is the number of nested items. O(1) for string "
       "values."},
      {"move", "key db", "O(1)"},
      {"keys", "pattern",
       "O(N) with N being the number of keys in the database, under the assumption that the key "
       "names in the database and the given pattern have limited length."},
      {"scan", "cursor [MATCH pattern] [COUNT count] [TYPE type]",
       "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
       "cursor to return back to 0. N is the number of elements inside the collection."},
      {"randomkey", "", "O(1)"},
      {"object", "", "Depends on subcommand."},
      {"object|encoding", "key", "O(1)"},
      {"object|refcount", "key", "O(1)"},
      {"object|idletime", "key", "O(1)"},
      {"object|freq", "key", "O(1)"},
      {"object|help", "", "O(1)"},
      {"expire", "key seconds [NX|XX|GT|LT]", "O(1)"},
      {"pexpire", "key milliseconds [NX|XX|GT|LT]", "O(1)"},
      {"expireat", "key unix-time-seconds [NX|XX|GT|LT]", "O(1)"},
      {"pexpireat", "key unix-time-milliseconds [NX|XX|GT|LT]", "O(1)"},
      {"ttl", "key", "O(1)"},
      {"pttl", "key", "O(1)"},
      {"expiretime", "key", "O(1)"},
      {"pexpiretime", "key", "O(1)"},
      {"persist", "key", "O(1)"},
      // transactions
      {"multi", "", "O(1)"},
      {"exec", "", "Depends on commands in the transaction"},
      {"discard", "", "O(N), when N is the number of queued commands"},
      {"watch", "key...", "O(1) for every key."},
      {"unwatch", "", "O(1)"},
      // string
      {"get", "key", "O(1)"},
      {"set",
       "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT "
       "unix-time-milliseconds|KEEPTTL]",
       "O(1)"},
      {"setnx", "key value", "O(1)"},
      {"setex", "key seconds value", "O(1)"},
      {"psetex", "key milliseconds value", "O(1)"},
      {"getset", "key value", "O(1)"},
      {"getdel", "key", "O(1)"},
      {"getex",
       "key [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT "
       "unix-time-milliseconds|PERSIST]",
       "O(1)"},
      {"mget", "key...", "O(N) where N is the number of keys to retrieve."},
      {"mset", "{key value}...", "O(N) where N is the number of keys to set."},
      {"msetnx", "{key value}...", "O(N) where N is the number of keys to set."},
      {"append", "key value",
       "O(1). The amortized time complexity is O(1) assuming the appended value is small and the "
       "already present value is of any size, since the dynamic string library used by Redis will "
       "double the free space available on every reallocation."},
      {"strlen", "key", "O(1)"},
      {"getrange", "key start end",
       "O(N) where N is the length of the returned string. The complexity is ultimately determined "
       "by the returned length, but because creating a substring from an existing string is very "
       "cheap, it can be considered O(1) for small strings."},
      {"substr", "key start end",
       "O(N) where N is the length of the returned string. The complexity is ultimately determined "
       "by the returned length, but because creating a substring from an existing string is very "
       "cheap, it can be considered O(1) for small strings."},
      {"setrange", "key offset value",
       "O(1), not counting the time taken to copy the new string in place. Usually, this string is "
       "very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being "
       "the length of the value argument."},
      {"incr", "key", "O(1)"},
      {"decr", "key", "O(1)"},
      {"incrby", "key increment", "O(1)"},
      {"decrby", "key decrement", "O(1)"},
      {"incrbyfloat", "key float-increment", "O(1)"},
      {"lcs", "key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]",
       "O(N*M) where N and M are the lengths of s1 and s2, respectively"},
      // bitmap
      {"setbit", "key offset value", "O(1)"},
      {"getbit", "key offset", "O(1)"},
      {"bitcount", "key [start end [BYTE|BIT]]", "O(N)"},
      {"bitpos", "key bit [start [end [BYTE|BIT]]]", "O(N)"},
      {"bitop", "{AND|OR|XOR|NOT} destkey key...", "O(N)"},
      {"bitfield",
       "key [GET encoding offset|SET encoding offset value|INCRBY encoding offset increment|"
       "OVERFLOW {WRAP|SAT|FAIL}]...",
       "O(1) for each subcommand specified"},
      {"bitfield_ro", "key [GET encoding offset]...", "O(1) for each subcommand specified"},
      // sort
      {"sort",
       "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] "
       "[STORE destination]",
       "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "
       "number of returned elements. When the elements are not sorted, complexity is O(N)."},
      {"sort_ro",
       "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]",
       "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "
       "number of returned elements. When the elements are not sorted, complexity is O(N)."},
      // hash
      {"hset", "key {field value}...",
       "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command "
       "is called with multiple field/value pairs."},
      {"hsetnx", "key field value", "O(1)"},
      {"hget", "key field", "O(1)"},
      {"hmget", "key field...", "O(N) where N is the number of fields being requested."},
      {"hmset", "key {field value}...", "O(N) where N is the number of fields being set."},
      {"hdel", "key field...", "O(N) where N is the number of fields to be removed."},
      {"hlen", "key", "O(1)"},
      {"hstrlen", "key field", "O(1)"},
      {"hexists", "key field", "O(1)"},
      {"hincrby", "key field increment", "O(1)"},
      {"hincrbyfloat", "key field float-increment", "O(1)"},
      {"hkeys", "key", "O(N) where N is the size of the hash."},
      {"hvals", "key", "O(N) where N is the size of the hash."},
      {"hgetall", "key", "O(N) where N is the size of the hash."},
      {"hrandfield", "key [count [WITHVALUES]]", "O(N) where N is the number of fields returned"},
      {"hscan", "key cursor [MATCH pattern] [COUNT count]",
       "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
       "the cursor to return back to 0. N is the number of elements inside the collection.."},
      // set
      {"sadd", "key member...",
       "O(1) for each element added, so O(N) to add N elements when the command is called with "
       "multiple arguments."},
      {"srem", "key member...", "O(N) where N is the number of members to be removed."},
      {"scard", "key", "O(1)"},
      {"sismember", "key member", "O(1)"},
      {"smismember", "key member...",
       "O(N) where N is the number of elements being checked for membership"},
      {"smembers", "key", "O(N) where N is the set cardinality."},
      {"spop", "key [count]",
       "Without the count argument O(1), otherwise O(N) where N is the value of the passed count."},
      {"srandmember", "key [count]",
       "Without the count argument O(1), otherwise O(N) where N is the absolute value of the "
       "passed count."},
      {"smove", "source destination member", "O(1)"},
      {"sinter", "key...",
       "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
       "sets."},
      {"sintercard", "numkeys key... [LIMIT limit]",
       "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
       "sets."},
      {"sinterstore", "destination key...",
       "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
       "sets."},
      {"sunion", "key...", "O(N) where N is the total number of elements in all given sets."},
      {"sunionstore", "destination key...",
       "O(N) where N is the total number of elements in all given sets."},
      {"sdiff", "key...", "O(N) where N is the total number of elements in all given sets."},
      {"sdiffstore", "destination key...",
       "O(N) where N is the total number of elements in all given sets."},
      {"sscan", "key cursor [MATCH pattern] [COUNT count]",
       "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
       "cursor to return back to 0. N is the number of elements inside the collection.."},
      // list
      {"lpush", "key element...",
       "O(1) for each element added, so O(N) to add N elements when the command is called with "
       "multiple arguments."},
      {"rpush", "key element...",
       "O(1) for each element added, so O(N) to add N elements when the command is called with "
       "multiple arguments."},
      {"lpushx", "key element...",
       "O(1) for each element added, so O(N) to add N elements when the command is called with "
       "multiple arguments."},
      {"rpushx", "key element...",
       "O(1) for each element added, so O(N) to add N elements when the command is called with "
       "multiple arguments."},
      {"lpop", "key [count]", "O(N) where N is the number of elements returned"},
      {"rpop", "key [count]", "O(N) where N is the number of elements returned"},
      {"llen", "key", "O(1)"},
      {"lindex", "key index",
       "O(N) where N is the number of elements to traverse to get to the element at index. This "
       "makes asking for the first or the last element of the list O(1)."},
      {"lset", "key index element",
       "O(N) where N is the length of the list. Setting either the first or the last element of "
       "the list is O(1)."},
      {"lrange", "key start stop",
       "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest "
       "end (HEAD or TAIL) for large lists; and N is the number of elements in the specified "
       "range."},
      {"ltrim", "key start stop",
       "O(N) where N is the number of elements to be removed by the operation."},
      {"lrem", "key count element",
       "O(N+M) where N is the length of the list and M is the "
       "number of elements removed."},
      {"linsert", "key {BEFORE|AFTER} pivot element",
       "O(N) where N is the number of elements to traverse before seeing the value pivot. This "
       "means that inserting somewhere on the left end on the list (head) can be considered O(1) "
       "and inserting somewhere on the right end (tail) is O(N)."},
      {"lpos", "key element [RANK rank] [COUNT num-matches] [MAXLEN len]",
       "O(N) where N is the number of elements in the list, for the average case. When searching "
       "for elements near the head or the tail of the list, or when the MAXLEN option is provided, "
       "the command may run in constant time."},
      {"lmove", "source destination {LEFT|RIGHT} {LEFT|RIGHT}", "O(1)"},
      {"rpoplpush", "source destination", "O(1)"},
      {"lmpop", "numkeys key... {LEFT|RIGHT} [COUNT count]",
       "O(N+M) where N is the number of provided keys and M is the number of elements returned."},
      {"blpop", "key... timeout", "O(N) where N is the number of provided keys."},
      {"brpop", "key... timeout", "O(N) where N is the number of provided keys."},
      {"blmove", "source destination {LEFT|RIGHT} {LEFT|RIGHT} timeout", "O(1)"},
      {"brpoplpush", "source destination timeout", "O(1)"},
      {"blmpop", "timeout numkeys key... {LEFT|RIGHT} [COUNT count]",
       "O(N+M) where N is the number of provided keys and M is the number of elements returned."},
      // sorted-set
      {"zadd", "key [NX|XX] [GT|LT] [CH] [INCR] {score member}...",
       "O(log(N)) for each item added, where N is the number of elements in the sorted set."},
      {"zincrby", "key increment member",
       "O(log(N)) where N is the number of elements in the sorted set."},
      {"zscore", "key member", "O(1)"},
      {"zmscore", "key member...", "O(N) where N is the number of members being requested."},
      {"zcard", "key", "O(1)"},
      {"zcount", "key min max", "O(log(N)) with N being the number of elements in the sorted set."},
      {"zlexcount", "key min max",
       "O(log(N)) with N being the number of elements in the sorted set."},
      {"zrange", "key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements returned."},
      {"zrangestore", "dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements stored into the destination key."},
      {"zrangebyscore", "key min max [WITHSCORES] [LIMIT offset count]",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
       "with LIMIT), you can consider it O(log(N))."},
      {"zrevrangebyscore", "key max min [WITHSCORES] [LIMIT offset count]",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
       "with LIMIT), you can consider it O(log(N))."},
      {"zrangebylex", "key min max [LIMIT offset count]",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
       "with LIMIT), you can consider it O(log(N))."},
      {"zrevrangebylex", "key max min [LIMIT offset count]",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
       "with LIMIT), you can consider it O(log(N))."},
      {"zrevrange", "key start stop [WITHSCORES]",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements returned."},
      {"zrank", "key member", "O(log(N))"},
      {"zrevrank", "key member", "O(log(N))"},
      {"zrem", "key member...",
       "O(M*log(N)) with N being the number of elements in the sorted set and M the number of "
       "elements to be removed."},
      {"zremrangebyrank", "key start stop",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements removed by the operation."},
      {"zremrangebyscore", "key min max",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements removed by the operation."},
      {"zremrangebylex", "key min max",
       "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
       "elements removed by the operation."},
      {"zpopmin", "key [count]",
       "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number "
       "of elements popped."},
      {"zpopmax", "key [count]",
       "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number "
       "of elements popped."},
      {"zmpop", "numkeys key... MIN|MAX [COUNT count]",
       "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements "
       "in the sorted set, and M being the number of elements popped."},
      {"zrandmember", "key [{count [WITHSCORES]}]",
       "O(N) where N is the number of elements returned"},
      {"zunion", "numkeys key... [WEIGHTS weight...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]",
       "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being "
       "the number of elements in the resulting sorted set."},
      {"zinter", "numkeys key... [WEIGHTS weight...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]",
       "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
       "number of input sorted sets and M being the number of elements in the resulting sorted "
       "set."},
      {"zdiff", "numkeys key... [WITHSCORES]",
       "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N "
       "is the size of the first set, and K is the size of the result set."},
      {"zunionstore", "destination numkeys key... [WEIGHTS weight...] [AGGREGATE SUM|MIN|MAX]",
       "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being "
       "the number of elements in the resulting sorted set."},
      {"zinterstore", "destination numkeys key... [WEIGHTS weight...] [AGGREGATE SUM|MIN|MAX]",
       "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
       "number of input sorted sets and M being the number of elements in the resulting sorted "
       "set."},
      {"zdiffstore", "destination numkeys key...",
       "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N "
       "is the size of the first set, and K is the size of the result set."},
      {"zintercard", "numkeys key... [LIMIT limit]",
       "O(N*K) worst case with N being the smallest input sorted set, K being the number of input "
       "sorted sets."},
      {"zscan", "key cursor [MATCH pattern] [COUNT count]",
       "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
       "the cursor to return back to 0. N is the number of elements inside the collection.."},
      {"bzpopmin", "key... timeout",
       "O(log(N)) with N being the number of elements in the sorted set."},
      {"bzpopmax", "key... timeout",
       "O(log(N)) with N being the number of elements in the sorted set."},
      {"bzmpop", "timeout numkeys key... MIN|MAX [COUNT count]",
       "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements "
       "in the sorted set, and M being the number of elements popped."},
  };
  return kDocs;
}

const CommandDoc* FindCommandDoc(std::string_view name) {
  for (const CommandDoc& doc : AllCommandDocs()) {
    if (doc.name == name) return &doc;
  }
  return nullptr;
}

const CommandDocExtras* FindCommandDocExtras(std::string_view name) {
  // Redis 7.0's doc flags, deprecations and histories, as its COMMAND DOCS reports them
  // (checked against redis-server by tests/e2e/test_server_commands.py).
  static const auto* extras = new std::vector<CommandDocExtras>{
      {"auth", "", "", "", {{"6.0.0", "Added ACL style (username and password)."}}},
      {"bitcount", "", "", "", {{"7.0.0", "Added the `BYTE|BIT` option."}}},
      {"bitpos", "", "", "", {{"7.0.0", "Added the `BYTE|BIT` option."}}},
      {"blpop",
       "",
       "",
       "",
       {{"6.0.0", "`timeout` is interpreted as a double instead of an integer."}}},
      {"brpop",
       "",
       "",
       "",
       {{"6.0.0", "`timeout` is interpreted as a double instead of an integer."}}},
      {"brpoplpush",
       "deprecated",
       "6.2.0",
       "`BLMOVE` with the `RIGHT` and `LEFT` arguments",
       {{"6.0.0", "`timeout` is interpreted as a double instead of an integer."}}},
      {"bzpopmax",
       "",
       "",
       "",
       {{"6.0.0", "`timeout` is interpreted as a double instead of an integer."}}},
      {"bzpopmin",
       "",
       "",
       "",
       {{"6.0.0", "`timeout` is interpreted as a double instead of an integer."}}},
      {"client|pause",
       "",
       "",
       "",
       {{"6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option."}}},
      {"client|kill",
       "",
       "",
       "",
       {{"2.8.12", "Added new filter format."},
        {"2.8.12", "`ID` option."},
        {"3.2.0", "Added `master` type in for `TYPE` option."},
        {"5.0.0",
         "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward "
         "compatibility."},
        {"6.2.0", "`LADDR` option."}}},
      {"client|list",
       "",
       "",
       "",
       {{"2.8.12", "Added unique client `id` field."},
        {"5.0.0", "Added optional `TYPE` filter."},
        {"6.0.0", "Added `user` field."},
        {"6.2.0",
         "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."},
        {"7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."},
        {"7.0.3", "Added `ssub` field."}}},
      {"command|info",
       "",
       "",
       "",
       {{"7.0.0", "Allowed to be called with no argument to get info on all commands."}}},
      {"config|get",
       "",
       "",
       "",
       {{"7.0.0", "Added the ability to pass multiple pattern parameters in one call"}}},
      {"config|set",
       "",
       "",
       "",
       {{"7.0.0", "Added the ability to set multiple parameters in one call."}}},
      {"debug", "syscmd", "", "", {}},
      {"slowlog|get",
       "",
       "",
       "",
       {{"4.0.0", "Added client IP address, port and name to the reply."}}},
      {"exists", "", "", "", {{"3.0.3", "Accepts multiple `key` arguments."}}},
      {"expire", "", "", "", {{"7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."}}},
      {"expireat", "", "", "", {{"7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."}}},
      {"flushall",
       "",
       "",
       "",
       {{"4.0.0", "Added the `ASYNC` flushing mode modifier."},
        {"6.2.0", "Added the `SYNC` flushing mode modifier."}}},
      {"flushdb",
       "",
       "",
       "",
       {{"4.0.0", "Added the `ASYNC` flushing mode modifier."},
        {"6.2.0", "Added the `SYNC` flushing mode modifier."}}},
      {"getset", "deprecated", "6.2.0", "`SET` with the `!GET` argument", {}},
      {"hdel", "", "", "", {{"2.4.0", "Accepts multiple `field` arguments."}}},
      {"hello",
       "",
       "",
       "",
       {{"6.2.0",
         "`protover` made optional; when called without arguments the command reports the current "
         "connection's context."}}},
      {"hmset", "deprecated", "4.0.0", "`HSET` with multiple field-value pairs", {}},
      {"hset", "", "", "", {{"4.0.0", "Accepts multiple `field` and `value` arguments."}}},
      {"info", "", "", "", {{"7.0.0", "Added support for taking multiple section arguments."}}},
      {"lpop", "", "", "", {{"6.2.0", "Added the `count` argument."}}},
      {"lpush", "", "", "", {{"2.4.0", "Accepts multiple `element` arguments."}}},
      {"lpushx", "", "", "", {{"4.0.0", "Accepts multiple `element` arguments."}}},
      {"pexpire", "", "", "", {{"7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."}}},
      {"pexpireat", "", "", "", {{"7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."}}},
      {"pttl", "", "", "", {{"2.8.0", "Added the -2 reply."}}},
      {"renamenx",
       "",
       "",
       "",
       {{"3.2.0",
         "The command no longer returns an error when source and destination names are the "
         "same."}}},
      {"rpop", "", "", "", {{"6.2.0", "Added the `count` argument."}}},
      {"rpoplpush", "deprecated", "6.2.0", "`LMOVE` with the `RIGHT` and `LEFT` arguments", {}},
      {"rpush", "", "", "", {{"2.4.0", "Accepts multiple `element` arguments."}}},
      {"rpushx", "", "", "", {{"4.0.0", "Accepts multiple `element` arguments."}}},
      {"sadd", "", "", "", {{"2.4.0", "Accepts multiple `member` arguments."}}},
      {"scan", "", "", "", {{"6.0.0", "Added the `TYPE` subcommand."}}},
      {"script|flush",
       "",
       "",
       "",
       {{"6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers."}}},
      {"set",
       "",
       "",
       "",
       {{"2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."},
        {"6.0.0", "Added the `KEEPTTL` option."},
        {"6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."},
        {"7.0.0", "Allowed the `NX` and `GET` options to be used together."}}},
      {"shutdown", "", "", "", {{"7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers."}}},
      {"spop", "", "", "", {{"3.2.0", "Added the `count` argument."}}},
      {"srandmember", "", "", "", {{"2.6.0", "Added the optional `count` argument."}}},
      {"srem", "", "", "", {{"2.4.0", "Accepts multiple `member` arguments."}}},
      {"substr", "deprecated", "2.0.0", "`GETRANGE`", {}},
      {"ttl", "", "", "", {{"2.8.0", "Added the -2 reply."}}},
      {"zadd",
       "",
       "",
       "",
       {{"2.4.0", "Accepts multiple elements."},
        {"3.0.2", "Added the `XX`, `NX`, `CH` and `INCR` options."},
        {"6.2.0", "Added the `GT` and `LT` options."}}},
      {"zrange",
       "",
       "",
       "",
       {{"6.2.0", "Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options."}}},
      {"zrangebylex", "deprecated", "6.2.0", "`ZRANGE` with the `BYLEX` argument", {}},
      {"zrangebyscore",
       "deprecated",
       "6.2.0",
       "`ZRANGE` with the `BYSCORE` argument",
       {{"2.0.0", "Added the `WITHSCORES` modifier."}}},
      {"zrem", "", "", "", {{"2.4.0", "Accepts multiple elements."}}},
      {"zrevrange", "deprecated", "6.2.0", "`ZRANGE` with the `REV` argument", {}},
      {"zrevrangebylex",
       "deprecated",
       "6.2.0",
       "`ZRANGE` with the `REV` and `BYLEX` arguments",
       {}},
      {"zrevrangebyscore",
       "deprecated",
       "6.2.0",
       "`ZRANGE` with the `REV` and `BYSCORE` arguments",
       {{"2.1.6", "`min` and `max` can be exclusive."}}},
  };
  for (const CommandDocExtras& entry : *extras) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace gigakv::server
