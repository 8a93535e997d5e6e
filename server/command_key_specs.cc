#include "server/command_key_specs.h"

#include <string_view>
#include <unordered_map>
#include <vector>

namespace gigakv::server {
namespace {

constexpr BeginSearch Index(int index) { return {BeginSearch::Type::kIndex, index}; }
constexpr BeginSearch UnknownBegin() { return {}; }
constexpr FindKeys Range(int last_key, int key_step, int limit) {
  return {FindKeys::Type::kRange, last_key, key_step, limit, 0, 0};
}
constexpr FindKeys Keynum(int keynum_index, int first_key, int key_step) {
  return {FindKeys::Type::kKeynum, 0, key_step, 0, keynum_index, first_key};
}
constexpr FindKeys UnknownFind() { return {}; }

struct CommandKeySpecs {
  std::string_view command;
  std::vector<KeySpec> specs;
};

// Redis 7.0's key specs, as its COMMAND INFO reports them (checked by
// tests/e2e/test_server_commands.py against redis-server).
const std::vector<CommandKeySpecs>& KeySpecTable() {
  static const auto* table = new std::vector<CommandKeySpecs>{
      {"append", {{"RW insert", Index(1), Range(0, 1, 0)}}},
      {"bitcount", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"bitfield",
       {{"RW access update variable_flags", Index(1), Range(0, 1, 0),
         "This command allows both access and modification of the key"}}},
      {"bitfield_ro", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"bitop",
       {{"OW update", Index(2), Range(0, 1, 0)}, {"RO access", Index(3), Range(-1, 1, 0)}}},
      {"bitpos", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"blmove",
       {{"RW access delete", Index(1), Range(0, 1, 0)}, {"RW insert", Index(2), Range(0, 1, 0)}}},
      {"blmpop", {{"RW access delete", Index(2), Keynum(0, 1, 1)}}},
      {"blpop", {{"RW access delete", Index(1), Range(-2, 1, 0)}}},
      {"brpop", {{"RW access delete", Index(1), Range(-2, 1, 0)}}},
      {"brpoplpush",
       {{"RW access delete", Index(1), Range(0, 1, 0)}, {"RW insert", Index(2), Range(0, 1, 0)}}},
      {"bzmpop", {{"RW access delete", Index(2), Keynum(0, 1, 1)}}},
      {"bzpopmax", {{"RW access delete", Index(1), Range(-2, 1, 0)}}},
      {"bzpopmin", {{"RW access delete", Index(1), Range(-2, 1, 0)}}},
      {"copy", {{"RO access", Index(1), Range(0, 1, 0)}, {"OW update", Index(2), Range(0, 1, 0)}}},
      {"decr", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"decrby", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"del", {{"RM delete", Index(1), Range(-1, 1, 0)}}},
      {"exists", {{"RO", Index(1), Range(-1, 1, 0)}}},
      {"expire", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"expireat", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"expiretime", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"get", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"getbit", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"getdel", {{"RW access delete", Index(1), Range(0, 1, 0)}}},
      {"getex",
       {{"RW access update", Index(1), Range(0, 1, 0),
         "RW and UPDATE because it changes the TTL"}}},
      {"getrange", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"getset", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"hdel", {{"RW delete", Index(1), Range(0, 1, 0)}}},
      {"hexists", {{"RO", Index(1), Range(0, 1, 0)}}},
      {"hget", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"hgetall", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"hincrby", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"hincrbyfloat", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"hkeys", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"hlen", {{"RO", Index(1), Range(0, 1, 0)}}},
      {"hmget", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"hmset", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"hrandfield", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"hscan", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"hset", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"hsetnx", {{"RW insert", Index(1), Range(0, 1, 0)}}},
      {"hstrlen", {{"RO", Index(1), Range(0, 1, 0)}}},
      {"hvals", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"incr", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"incrby", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"incrbyfloat", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"lcs", {{"RO access", Index(1), Range(1, 1, 0)}}},
      {"lindex", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"linsert", {{"RW insert", Index(1), Range(0, 1, 0)}}},
      {"llen", {{"RO", Index(1), Range(0, 1, 0)}}},
      {"lmove",
       {{"RW access delete", Index(1), Range(0, 1, 0)}, {"RW insert", Index(2), Range(0, 1, 0)}}},
      {"lmpop", {{"RW access delete", Index(1), Keynum(0, 1, 1)}}},
      {"lpop", {{"RW access delete", Index(1), Range(0, 1, 0)}}},
      {"lpos", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"lpush", {{"RW insert", Index(1), Range(0, 1, 0)}}},
      {"lpushx", {{"RW insert", Index(1), Range(0, 1, 0)}}},
      {"lrange", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"lrem", {{"RW delete", Index(1), Range(0, 1, 0)}}},
      {"lset", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"ltrim", {{"RW delete", Index(1), Range(0, 1, 0)}}},
      {"memory|usage", {{"RO", Index(2), Range(0, 1, 0)}}},
      {"mget", {{"RO access", Index(1), Range(-1, 1, 0)}}},
      {"move", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"mset", {{"OW update", Index(1), Range(-1, 2, 0)}}},
      {"msetnx", {{"OW insert", Index(1), Range(-1, 2, 0)}}},
      {"object|encoding", {{"RO", Index(2), Range(0, 1, 0)}}},
      {"object|freq", {{"RO", Index(2), Range(0, 1, 0)}}},
      {"object|idletime", {{"RO", Index(2), Range(0, 1, 0)}}},
      {"object|refcount", {{"RO", Index(2), Range(0, 1, 0)}}},
      {"persist", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"pexpire", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"pexpireat", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"pexpiretime", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"psetex", {{"OW update", Index(1), Range(0, 1, 0)}}},
      {"pttl", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"rename",
       {{"RW access delete", Index(1), Range(0, 1, 0)}, {"OW update", Index(2), Range(0, 1, 0)}}},
      {"renamenx",
       {{"RW access delete", Index(1), Range(0, 1, 0)}, {"OW insert", Index(2), Range(0, 1, 0)}}},
      {"rpop", {{"RW access delete", Index(1), Range(0, 1, 0)}}},
      {"rpoplpush",
       {{"RW access delete", Index(1), Range(0, 1, 0)}, {"RW insert", Index(2), Range(0, 1, 0)}}},
      {"rpush", {{"RW insert", Index(1), Range(0, 1, 0)}}},
      {"rpushx", {{"RW insert", Index(1), Range(0, 1, 0)}}},
      {"sadd", {{"RW insert", Index(1), Range(0, 1, 0)}}},
      {"scard", {{"RO", Index(1), Range(0, 1, 0)}}},
      {"sdiff", {{"RO access", Index(1), Range(-1, 1, 0)}}},
      {"sdiffstore",
       {{"OW update", Index(1), Range(0, 1, 0)}, {"RO access", Index(2), Range(-1, 1, 0)}}},
      {"set",
       {{"RW access update variable_flags", Index(1), Range(0, 1, 0),
         "RW and ACCESS due to the optional `GET` argument"}}},
      {"setbit", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"setex", {{"OW update", Index(1), Range(0, 1, 0)}}},
      {"setnx", {{"OW insert", Index(1), Range(0, 1, 0)}}},
      {"setrange", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"sinter", {{"RO access", Index(1), Range(-1, 1, 0)}}},
      {"sintercard", {{"RO access", Index(1), Keynum(0, 1, 1)}}},
      {"sinterstore",
       {{"RW update", Index(1), Range(0, 1, 0)}, {"RO access", Index(2), Range(-1, 1, 0)}}},
      {"sismember", {{"RO", Index(1), Range(0, 1, 0)}}},
      {"smembers", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"smismember", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"smove",
       {{"RW access delete", Index(1), Range(0, 1, 0)}, {"RW insert", Index(2), Range(0, 1, 0)}}},
      {"sort",
       {{"RO access", Index(1), Range(0, 1, 0)},
        {"RO access", UnknownBegin(), UnknownFind(),
         "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive "
         "from the content of the key we sort"},
        {"OW update", UnknownBegin(), UnknownFind(),
         "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear "
         "anywhere in the argument array"}}},
      {"sort_ro",
       {{"RO access", Index(1), Range(0, 1, 0)},
        {"RO access", UnknownBegin(), UnknownFind(),
         "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive "
         "from the content of the key we sort"}}},
      {"spop", {{"RW access delete", Index(1), Range(0, 1, 0)}}},
      {"srandmember", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"srem", {{"RW delete", Index(1), Range(0, 1, 0)}}},
      {"sscan", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"strlen", {{"RO", Index(1), Range(0, 1, 0)}}},
      {"substr", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"sunion", {{"RO access", Index(1), Range(-1, 1, 0)}}},
      {"sunionstore",
       {{"OW update", Index(1), Range(0, 1, 0)}, {"RO access", Index(2), Range(-1, 1, 0)}}},
      {"touch", {{"RO", Index(1), Range(-1, 1, 0)}}},
      {"ttl", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"type", {{"RO", Index(1), Range(0, 1, 0)}}},
      {"unlink", {{"RM delete", Index(1), Range(-1, 1, 0)}}},
      {"watch", {{"RO", Index(1), Range(-1, 1, 0)}}},
      {"zadd", {{"RW update", Index(1), Range(0, 1, 0)}}},
      {"zcard", {{"RO", Index(1), Range(0, 1, 0)}}},
      {"zcount", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zdiff", {{"RO access", Index(1), Keynum(0, 1, 1)}}},
      {"zdiffstore",
       {{"OW update", Index(1), Range(0, 1, 0)}, {"RO access", Index(2), Keynum(0, 1, 1)}}},
      {"zincrby", {{"RW access update", Index(1), Range(0, 1, 0)}}},
      {"zinter", {{"RO access", Index(1), Keynum(0, 1, 1)}}},
      {"zintercard", {{"RO access", Index(1), Keynum(0, 1, 1)}}},
      {"zinterstore",
       {{"OW update", Index(1), Range(0, 1, 0)}, {"RO access", Index(2), Keynum(0, 1, 1)}}},
      {"zlexcount", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zmpop", {{"RW access delete", Index(1), Keynum(0, 1, 1)}}},
      {"zmscore", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zpopmax", {{"RW access delete", Index(1), Range(0, 1, 0)}}},
      {"zpopmin", {{"RW access delete", Index(1), Range(0, 1, 0)}}},
      {"zrandmember", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zrange", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zrangebylex", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zrangebyscore", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zrangestore",
       {{"OW update", Index(1), Range(0, 1, 0)}, {"RO access", Index(2), Range(0, 1, 0)}}},
      {"zrank", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zrem", {{"RW delete", Index(1), Range(0, 1, 0)}}},
      {"zremrangebylex", {{"RW delete", Index(1), Range(0, 1, 0)}}},
      {"zremrangebyrank", {{"RW delete", Index(1), Range(0, 1, 0)}}},
      {"zremrangebyscore", {{"RW delete", Index(1), Range(0, 1, 0)}}},
      {"zrevrange", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zrevrangebylex", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zrevrangebyscore", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zrevrank", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zscan", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zscore", {{"RO access", Index(1), Range(0, 1, 0)}}},
      {"zunion", {{"RO access", Index(1), Keynum(0, 1, 1)}}},
      {"zunionstore",
       {{"OW update", Index(1), Range(0, 1, 0)}, {"RO access", Index(2), Keynum(0, 1, 1)}}},
  };
  return *table;
}

struct CommandTips {
  std::string_view command;
  std::string_view tips;
};

constexpr CommandTips kTips[] = {
    {"client|info", "nondeterministic_output"},
    {"client|list", "nondeterministic_output"},
    {"command", "nondeterministic_output_order"},
    {"command|docs", "nondeterministic_output_order"},
    {"command|info", "nondeterministic_output_order"},
    {"command|list", "nondeterministic_output_order"},
    {"config|set", "request_policy:all_nodes response_policy:all_succeeded"},
    {"dbsize", "request_policy:all_shards response_policy:agg_sum"},
    {"del", "request_policy:multi_shard response_policy:agg_sum"},
    {"exists", "request_policy:multi_shard response_policy:agg_sum"},
    {"flushall", "request_policy:all_shards response_policy:all_succeeded"},
    {"flushdb", "request_policy:all_shards response_policy:all_succeeded"},
    {"function|flush", "request_policy:all_shards response_policy:all_succeeded"},
    {"hgetall", "nondeterministic_output_order"},
    {"hkeys", "nondeterministic_output_order"},
    {"hrandfield", "nondeterministic_output"},
    {"hscan", "nondeterministic_output"},
    {"hvals", "nondeterministic_output_order"},
    {"info", "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"keys", "request_policy:all_shards nondeterministic_output_order"},
    {"lastsave", "nondeterministic_output"},
    {"memory|purge", "request_policy:all_shards response_policy:all_succeeded"},
    {"slowlog|get", "request_policy:all_nodes nondeterministic_output"},
    {"slowlog|len", "request_policy:all_nodes response_policy:agg_sum nondeterministic_output"},
    {"slowlog|reset", "request_policy:all_nodes response_policy:all_succeeded"},
    {"memory|stats", "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"mget", "request_policy:multi_shard"},
    {"mset", "request_policy:multi_shard response_policy:all_succeeded"},
    {"msetnx", "request_policy:multi_shard response_policy:agg_min"},
    {"object|encoding", "nondeterministic_output"},
    {"object|freq", "nondeterministic_output"},
    {"object|idletime", "nondeterministic_output"},
    {"object|refcount", "nondeterministic_output"},
    {"ping", "request_policy:all_shards response_policy:all_succeeded"},
    {"pttl", "nondeterministic_output"},
    {"randomkey", "request_policy:all_shards nondeterministic_output"},
    {"scan", "nondeterministic_output request_policy:special"},
    {"script|flush", "request_policy:all_nodes response_policy:all_succeeded"},
    {"sdiff", "nondeterministic_output_order"},
    {"sinter", "nondeterministic_output_order"},
    {"smembers", "nondeterministic_output_order"},
    {"spop", "nondeterministic_output"},
    {"srandmember", "nondeterministic_output"},
    {"sscan", "nondeterministic_output"},
    {"sunion", "nondeterministic_output_order"},
    {"time", "nondeterministic_output"},
    {"touch", "request_policy:multi_shard response_policy:agg_sum"},
    {"ttl", "nondeterministic_output"},
    {"unlink", "request_policy:multi_shard response_policy:agg_sum"},
    {"wait", "request_policy:all_shards response_policy:agg_min"},
    {"zrandmember", "nondeterministic_output"},
    {"zscan", "nondeterministic_output"},
};

}  // namespace

std::span<const KeySpec> KeySpecsOf(std::string_view command) {
  static const auto* index = [] {
    auto* map = new std::unordered_map<std::string_view, const std::vector<KeySpec>*>();
    for (const CommandKeySpecs& entry : KeySpecTable()) map->emplace(entry.command, &entry.specs);
    return map;
  }();
  auto it = index->find(command);
  if (it == index->end()) return {};
  return *it->second;
}

std::string_view TipsOf(std::string_view command) {
  for (const CommandTips& entry : kTips) {
    if (entry.command == command) return entry.tips;
  }
  return {};
}

}  // namespace gigakv::server
