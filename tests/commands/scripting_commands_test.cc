// Scripting in process (server/scripting.h, server/lua_engine.h, scripting_commands.cc): what
// a script changes and how it is logged, the script cache, state that must not survive a script,
// and the sandbox. Byte-for-byte comparisons of replies and error texts with redis-server are in
// tests/e2e/test_scripting.py.
#include <string>
#include <vector>

#include "gigakv/sha1.h"
#include "gtest/gtest.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

class ScriptingTest : public CommandTest {};

TEST_F(ScriptingTest, WritesAreLoggedAsOneTransaction) {
  effects_.Take();
  EXPECT_EQ(Reply({"EVAL",
                   "redis.call('set', KEYS[1], ARGV[1]); redis.call('rpush', KEYS[2], 'x'); "
                   "return redis.call('incrby', KEYS[3], 2)",
                   "3", "a", "l", "n", "1"}),
            ":2");
  // Each write's effect, as logged for EXEC (INCRBY as the SET of its result).
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: MULTI", "0: SET a 1", "0: RPUSH l x",
                                                       "0: SET n 2", "0: EXEC"}));
  // A script that writes nothing logs nothing.
  EXPECT_EQ(Reply({"EVAL", "return redis.call('get', 'a')", "0"}), "\"1\"");
  EXPECT_TRUE(effects_.Take().empty());
}

TEST_F(ScriptingTest, CommandsCalledFromScriptsCountInCommandstats) {
  Run({"EVAL", "redis.call('set', 'k', 'v'); redis.call('get', 'k'); return 1", "0"});
  Run({"EVAL", "return redis.call('get', 'k')", "0"});
  const std::string info = Run({"INFO", "commandstats"}).str;
  EXPECT_NE(info.find("cmdstat_eval:calls=2,"), std::string::npos) << info;
  EXPECT_NE(info.find("cmdstat_get:calls=2,"), std::string::npos) << info;
  EXPECT_NE(info.find("cmdstat_set:calls=1,"), std::string::npos) << info;
}

TEST_F(ScriptingTest, ScriptCacheLoadExistsFlush) {
  const std::string sha = Sha1Hex("return ARGV[1]");
  EXPECT_EQ(Reply({"SCRIPT", "EXISTS", sha}), "[:0]");
  EXPECT_EQ(Reply({"EVALSHA", sha, "0", "x"}), "-NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_EQ(Reply({"SCRIPT", "LOAD", "return ARGV[1]"}), "\"" + sha + "\"");
  EXPECT_EQ(Reply({"EVALSHA", sha, "0", "x"}), "\"x\"");
  // A syntax error is not cached.
  EXPECT_TRUE(Reply({"SCRIPT", "LOAD", "return +"})
                  .starts_with("-ERR Error compiling script (new function): user_script:1: "));
  EXPECT_EQ(Reply({"SCRIPT", "EXISTS", Sha1Hex("return +"), sha}), "[:0, :1]");
  EXPECT_EQ(Reply({"SCRIPT", "FLUSH"}), "+OK");
  EXPECT_EQ(Reply({"SCRIPT", "EXISTS", sha}), "[:0]");
  EXPECT_EQ(Reply({"EVALSHA", sha, "0", "x"}), "-NOSCRIPT No matching script. Please use EVAL.");
  // EVAL caches too.
  EXPECT_EQ(Reply({"EVAL", "return ARGV[1]", "0", "y"}), "\"y\"");
  EXPECT_EQ(Reply({"EVALSHA", sha, "0", "z"}), "\"z\"");
}

TEST_F(ScriptingTest, KeysAndArgvAreEachCallsOwn) {
  EXPECT_EQ(Reply({"EVAL", "return {#KEYS, #ARGV}", "2", "a", "b", "c"}), "[:2, :1]");
  EXPECT_EQ(Reply({"EVAL", "return {#KEYS, #ARGV}", "0"}), "[:0, :0]");
}

// Nothing a script does can leave state for the next one: globals and library tables are
// read-only, and the ways around a read-only table are closed.
TEST_F(ScriptingTest, NoScriptLeavesStateBehind) {
  const std::vector<std::string> attempts = {
      "x = 1",
      "rawset(_G, 'x', 1)",
      "redis.x = 1",
      "string.x = 1",
      "rawset(redis, 'x', 1)",
      "table.insert(redis, 1)",
      "setmetatable(_G, nil)",
      "loadstring('x = 1')()",
      "local g = _G; g.x = 1",
      "local _, t = pairs(redis); rawset(t, 'call', 1)",
      "local _, g = pairs(_G); rawset(g, 'x', 1)",
      "getmetatable('').__index.upper = 1",
      "getmetatable('').x = 1",
  };
  for (const std::string& attempt : attempts) {
    const std::string reply = Reply({"EVAL", attempt, "0"});
    EXPECT_NE(reply.find("Attempt to modify a readonly table"), std::string::npos)
        << attempt << " -> " << reply;
  }
  EXPECT_EQ(Reply({"EVAL", "return rawget(_G, 'x')", "0"}), "(nil)");
  EXPECT_EQ(Reply({"EVAL", "return rawget(redis, 'x')", "0"}), "(nil)");
  EXPECT_EQ(Reply({"EVAL", "return #redis", "0"}), ":0");
  EXPECT_EQ(Reply({"EVAL", "return type(string.x)", "0"}), "\"nil\"");
  // Reading through the proxies still works.
  EXPECT_EQ(Reply({"EVAL", "local n = 0; for k in pairs(redis) do n = n + 1 end; return n", "0"}),
            ":23");  // Redis 7.0's 23 functions and constants.
  EXPECT_EQ(Reply({"EVAL", "return rawget(_G, 'redis') ~= nil", "0"}), ":1");
  EXPECT_EQ(Reply({"EVAL", "return ('abc'):upper()", "0"}), "\"ABC\"");
  EXPECT_EQ(Reply({"EVAL", "return type(redis.call)", "0"}), "\"function\"");
}

// LuaJIT bytecode is never loaded (it is not verified: a forged chunk corrupts memory).
TEST_F(ScriptingTest, BytecodeIsRefused) {
  const std::string bytecode_script =
      "local f = string.dump(function() return 1 end); local g, e = loadstring(f); "
      "if g then return 'loaded' end; local h = load(f); if h then return 'loaded' end; "
      "return e";
  const std::string reply = Reply({"EVAL", bytecode_script, "0"});
  EXPECT_EQ(reply, "\"attempt to load chunk with wrong mode\"");
  EXPECT_TRUE(Reply({"EVAL", std::string("\x1bLJ\x02\x00", 5), "0"})
                  .starts_with("-ERR Error compiling script (new function): "));
}

// Debian's lua-cjson sizes its buffer with int: an encoding that could pass 2 GB is refused.
TEST_F(ScriptingTest, HugeJsonEncodingsAreRefused) {
  const std::string reply =
      Reply({"EVAL", "local s = string.rep('a', 300000000); return #cjson.encode({s})", "0"});
  EXPECT_NE(reply.find("Cannot serialise"), std::string::npos) << reply;
  EXPECT_EQ(Reply({"EVAL", "return cjson.encode({string.rep('a', 3)})", "0"}), "\"[\"aaa\"]\"");
}

TEST_F(ScriptingTest, ScriptWritesObeyMaxmemoryUntilTheyWrote) {
  EXPECT_EQ(Reply({"SET", "big", std::string(10000, 'x')}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "1000"}), "+OK");
  server_.Cron();  // Refreshes used_memory.
  const std::string refused = Reply({"EVAL", "return redis.call('set', 'k', 'v')", "0"});
  EXPECT_TRUE(refused.starts_with("-OOM command not allowed when used memory > 'maxmemory'."))
      << refused;
  // Not deny-oom: runs; and once a script wrote (DEL), its later writes go through, as Redis.
  EXPECT_EQ(
      Reply({"EVAL", "redis.call('del', 'nothing'); return redis.call('set', 'k', 'v')", "0"}),
      "+OK");
}

TEST_F(ScriptingTest, SelectInsideAScriptLeavesTheCallersDatabase) {
  Run({"SELECT", "2"});
  EXPECT_EQ(Reply({"EVAL", "redis.call('select', 7); redis.call('set', 'k', 'v'); return 1", "0"}),
            ":1");
  EXPECT_EQ(Reply({"EXISTS", "k"}), ":0");
  // The next script starts in the caller's database again.
  EXPECT_EQ(Reply({"EVAL", "redis.call('set', 'k2', 'v'); return 1", "0"}), ":1");
  EXPECT_EQ(Reply({"EXISTS", "k2"}), ":1");
  Run({"SELECT", "7"});
  EXPECT_EQ(Reply({"EXISTS", "k"}), ":1");
}

TEST_F(ScriptingTest, EvalInsideMultiRunsWithTheTransaction) {
  effects_.Take();
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"SET", "a", "1"}), "+QUEUED");
  EXPECT_EQ(Reply({"EVAL", "return redis.call('incr', 'a')", "0"}), "+QUEUED");
  EXPECT_EQ(Reply({"EXEC"}), "[+OK, :2]");
  EXPECT_EQ(effects_.Take(),
            (std::vector<std::string>{"0: MULTI", "0: SET a 1", "0: SET a 2", "0: EXEC"}));
}

TEST_F(ScriptingTest, ReadOnlyScriptsRefuseWritesButRead) {
  Run({"SET", "k", "v"});
  EXPECT_EQ(Reply({"EVAL_RO", "return redis.call('get', 'k')", "0"}), "\"v\"");
  const std::string refused = Reply({"EVAL_RO", "return redis.call('del', 'k')", "0"});
  EXPECT_EQ(refused.substr(0, 63),
            "-ERR Write commands are not allowed from read-only scripts. scr");
  EXPECT_EQ(Reply({"EXISTS", "k"}), ":1");
}

TEST_F(ScriptingTest, LongTailCallsKeepTheirLineAndValue) {
  // Multi-line scripts whose error comes from a tail call name the line of the call.
  Run({"SET", "s", "text"});
  const std::string reply =
      Reply({"EVAL", "local x = 1\n-- return redis.call('nothing')\nreturn redis.call('incr', 's')",
             "0"});
  EXPECT_NE(reply.find("on @user_script:3."), std::string::npos) << reply;
  // Parenthesizing changes no value: strings with parentheses and comments inside the call.
  EXPECT_EQ(Reply({"EVAL", "return redis.call('echo', ')--(' --[[ ) ]]\n)", "0"}), "\")--(\"");
  EXPECT_EQ(Reply({"EVAL", "if true then return redis.call('ping') end", "0"}), "+PONG");
}

TEST_F(ScriptingTest, ShebangScriptsObeyMaxmemoryAtStart) {
  EXPECT_EQ(Reply({"SET", "big", std::string(10000, 'x')}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "1000"}), "+OK");
  server_.Cron();  // Refreshes used_memory.
  const std::string oom = "-OOM command not allowed when used memory > 'maxmemory'.";
  // Refused whole, even a script that would not write, unless it says it may run (allow-oom)
  // or cannot write (no-writes).
  EXPECT_EQ(Reply({"EVAL", "#!lua\nreturn 1", "0"}), oom);
  EXPECT_EQ(Reply({"EVAL", "#!lua flags=no-writes\nreturn 1", "0"}), ":1");
  EXPECT_EQ(Reply({"EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'q', '1')", "0"}),
            "+OK");
  EXPECT_EQ(Reply({"GET", "q"}), "\"1\"");
}

TEST_F(ScriptingTest, InfoCountsScriptsAndLuaMemory) {
  auto field = [&](const std::string& name) {
    const std::string info = Run({"INFO", "memory"}).str;
    const size_t at = info.find(name + ":");
    EXPECT_NE(at, std::string::npos) << name;
    return std::stoll(info.substr(at + name.size() + 1));
  };
  Run({"SCRIPT", "FLUSH"});
  EXPECT_EQ(field("number_of_cached_scripts"), 0);
  Run({"SCRIPT", "LOAD", "return 1"});
  Run({"EVAL", "return 2", "0"});
  EXPECT_EQ(field("number_of_cached_scripts"), 2);
  EXPECT_GE(field("used_memory_scripts_eval"), 16);
  EXPECT_GT(field("used_memory_lua"), 10000);  // A state with its libraries.
}

// FUNCTION LOAD/DELETE/FLUSH reach the log as themselves (replayed at start-up); a function's
// writes as one transaction, like a script's; a failed load logs nothing.
TEST_F(ScriptingTest, LibraryChangesAndFunctionWritesAreLogged) {
  const std::string code =
      "#!lua name=lib\nredis.register_function('f', function(keys, args) "
      "redis.call('set', keys[1], args[1]) return redis.call('incr', keys[2]) end)";
  effects_.Take();
  EXPECT_EQ(Reply({"FUNCTION", "LOAD", code}), "\"lib\"");
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: FUNCTION LOAD " + code}));
  EXPECT_EQ(Reply({"FUNCTION", "LOAD", code}), "-ERR Library 'lib' already exists");
  EXPECT_TRUE(effects_.Take().empty());
  EXPECT_EQ(Reply({"FCALL", "F", "2", "a", "n", "v"}), ":1");
  EXPECT_EQ(effects_.Take(),
            (std::vector<std::string>{"0: MULTI", "0: SET a v", "0: SET n 1", "0: EXEC"}));
  EXPECT_EQ(Reply({"FUNCTION", "DELETE", "lib"}), "+OK");
  EXPECT_EQ(Reply({"FUNCTION", "FLUSH", "ASYNC"}), "+OK");
  EXPECT_EQ(effects_.Take(),
            (std::vector<std::string>{"0: FUNCTION DELETE lib", "0: FUNCTION FLUSH ASYNC"}));
  EXPECT_EQ(Reply({"FCALL", "f", "0"}), "-ERR Function not found");
}

// A library's upvalues live from one call to the next, and FUNCTION FLUSH starts them over;
// INFO counts libraries and functions.
TEST_F(ScriptingTest, LibrariesKeepTheirStateUntilFlushed) {
  const std::string code =
      "#!lua name=counter\nlocal n = 0\n"
      "redis.register_function{function_name='next', flags={'no-writes'}, "
      "callback=function() n = n + 1 return n end}\n"
      "redis.register_function('peek', function() return n end)";
  ASSERT_EQ(Reply({"FUNCTION", "LOAD", code}), "\"counter\"");
  EXPECT_EQ(Reply({"FCALL", "next", "0"}), ":1");
  EXPECT_EQ(Reply({"FCALL_RO", "next", "0"}), ":2");
  EXPECT_EQ(Reply({"FCALL", "peek", "0"}), ":2");
  const std::string info = Run({"INFO", "memory"}).str;
  EXPECT_NE(info.find("number_of_functions:2\r\n"), std::string::npos) << info;
  EXPECT_NE(info.find("number_of_libraries:1\r\n"), std::string::npos) << info;
  EXPECT_EQ(Reply({"FUNCTION", "FLUSH"}), "+OK");
  ASSERT_EQ(Reply({"FUNCTION", "LOAD", code}), "\"counter\"");
  EXPECT_EQ(Reply({"FCALL", "next", "0"}), ":1");
}

}  // namespace
}  // namespace gigakv::testing
