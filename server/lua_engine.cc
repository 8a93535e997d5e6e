#include "server/lua_engine.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>
int luaopen_cjson(lua_State* lua);  // Debian's lua-cjson (liblua5.1-cjson.a).
}

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gigakv/sha1.h"
#include "gigakv/strings.h"
#include "server/aof.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/dispatcher.h"
#include "server/errors.h"
#include "server/lifecycle.h"
#include "server/lua_libraries.h"
#include "server/scripting.h"
#include "server/snapshots.h"
#include "server/transaction.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {

// What the running script's redis.* functions need.
struct LuaEngine::RunState {
  const ScriptInvocation& invocation;
  ClientState& script_client;
  protocol::ReplyBuilder call_reply;  // A redis.call's reply, reused.
  int resp = 2;                       // redis.setresp.
};

namespace {

// The engine whose state `lua` is (kept in the registry under this key).
constexpr char kEngineKey[] = "gigakv_engine";

LuaEngine* EngineOf(lua_State* lua) {
  lua_getfield(lua, LUA_REGISTRYINDEX, kEngineKey);
  auto* engine = static_cast<LuaEngine*>(lua_touserdata(lua, -1));
  lua_pop(lua, 1);
  return engine;
}

// ---- Redis's random generator (rand.c) -------------------------------------------------------
// math.random and math.randomseed use Redis's 48-bit linear congruential generator (lrand48's
// constants), so scripts draw the numbers Redis's would. As in Redis 7.0 its state is one for
// the process, starts at lrand48's default and is never reseeded between scripts. Scripts run
// one at a time (the transaction gate), so plain relaxed loads and stores suffice.

std::atomic<uint64_t> rand48_state{0x1234ABCD330EULL};
constexpr int32_t kRand48Max = 0x7FFFFFFF;

int32_t Rand48Next() {
  const uint64_t next = (rand48_state.load(std::memory_order_relaxed) * 0x5DEECE66DULL + 0xB) &
                        ((uint64_t{1} << 48) - 1);
  rand48_state.store(next, std::memory_order_relaxed);
  return static_cast<int32_t>(next >> 17);  // The top 31 bits.
}

void Rand48Seed(int32_t seed) {
  rand48_state.store((static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 16) | 0x330E,
                     std::memory_order_relaxed);
}

int MathRandom(lua_State* lua) {
  const lua_Number r = static_cast<lua_Number>(Rand48Next() % kRand48Max) / kRand48Max;
  switch (lua_gettop(lua)) {
    case 0:
      lua_pushnumber(lua, r);
      return 1;
    case 1: {
      const int upper = luaL_checkint(lua, 1);
      luaL_argcheck(lua, 1 <= upper, 1, "interval is empty");
      lua_pushnumber(lua, std::floor(r * upper) + 1);
      return 1;
    }
    case 2: {
      const int lower = luaL_checkint(lua, 1);
      const int upper = luaL_checkint(lua, 2);
      luaL_argcheck(lua, lower <= upper, 2, "interval is empty");
      lua_pushnumber(lua, std::floor(r * (upper - lower + 1)) + lower);
      return 1;
    }
    default:
      return luaL_error(lua, "wrong number of arguments");
  }
}

int MathRandomSeed(lua_State* lua) {
  Rand48Seed(luaL_checkint(lua, 1));
  return 0;
}

// ---- errors -------------------------------------------------------------------------------

// Redis's error table {err = text} (text without the leading '-'). `counted`: the error of a
// command the script called, counted in errorstats already; the script's reply passing it on
// is not counted again (Redis's ignore_error_stats_update field).
constexpr char kCountedField[] = "ignore_error_stats_update";

void PushErrorTable(lua_State* lua, std::string_view text, bool counted = false) {
  lua_newtable(lua);
  lua_pushlstring(lua, text.data(), text.size());
  lua_setfield(lua, -2, "err");
  if (counted) {
    lua_pushboolean(lua, 1);
    lua_setfield(lua, -2, kCountedField);
  }
}

[[noreturn]] void RaiseErrorTable(lua_State* lua, std::string_view text, bool counted = false) {
  PushErrorTable(lua, text, counted);
  lua_error(lua);
  __builtin_unreachable();
}

// Whether the error table at the top of the stack carries kCountedField.
bool ErrorCounted(lua_State* lua) {
  lua_pushstring(lua, kCountedField);
  lua_rawget(lua, -2);
  const bool counted = lua_toboolean(lua, -1);
  lua_pop(lua, 1);
  return counted;
}

// REDIS_VERSION_NUM: 0x00MMmmpp of kRedisCompatVersion ("7.0.15" -> 0x00070f).
int RedisVersionNumber() {
  int parts[3] = {0, 0, 0};
  int index = 0;
  for (char c : kRedisCompatVersion) {
    if (c == '.') {
      if (++index == 3) break;
    } else {
      parts[index] = parts[index] * 10 + (c - '0');
    }
  }
  return (parts[0] << 16) | (parts[1] << 8) | parts[2];
}

// ---- a command's reply as Lua values ------------------------------------------------------

// Parses one RESP value at `*at` in `bytes` and pushes it as Redis converts replies for Lua
// (script_lua.c): RESP2 integer -> number, bulk -> string, null -> false, array -> table,
// status -> {ok=s}, error -> {err=s}; RESP3 additionally map -> {map={...}}, set ->
// {set={member=true}}, null -> nil, double -> {double=n}, boolean -> true/false, big number ->
// {big_number=s}, verbatim -> {verbatim_string={format=f, string=s}}. Returns false on bytes
// it cannot parse (never from the dispatcher's replies).
bool PushReply(lua_State* lua, std::string_view bytes, size_t* at) {
  if (*at >= bytes.size()) return false;
  const char type = bytes[*at];
  const size_t line_end = bytes.find("\r\n", *at);
  if (line_end == std::string_view::npos) return false;
  const std::string_view line = bytes.substr(*at + 1, line_end - *at - 1);
  *at = line_end + 2;
  auto read_blob = [&](std::string_view* blob) {
    int64_t length = 0;
    if (!absl::SimpleAtoi(ToAbsl(line), &length) || length < 0 ||
        *at + static_cast<size_t>(length) + 2 > bytes.size()) {
      return false;
    }
    *blob = bytes.substr(*at, length);
    *at += length + 2;
    return true;
  };
  lua_checkstack(lua, 8);
  switch (type) {
    case '+':
      lua_newtable(lua);
      lua_pushlstring(lua, line.data(), line.size());
      lua_setfield(lua, -2, "ok");
      return true;
    case '-':
      PushErrorTable(lua, line);
      return true;
    case ':': {
      int64_t value = 0;
      if (!absl::SimpleAtoi(ToAbsl(line), &value)) return false;
      lua_pushnumber(lua, static_cast<lua_Number>(value));
      return true;
    }
    case '$': {
      if (line == "-1") {
        lua_pushboolean(lua, 0);
        return true;
      }
      std::string_view blob;
      if (!read_blob(&blob)) return false;
      lua_pushlstring(lua, blob.data(), blob.size());
      return true;
    }
    case '*':
    case '>': {
      if (line == "-1") {
        lua_pushboolean(lua, 0);
        return true;
      }
      int64_t count = 0;
      if (!absl::SimpleAtoi(ToAbsl(line), &count) || count < 0) return false;
      lua_createtable(lua, static_cast<int>(count), 0);
      for (int64_t i = 0; i < count; ++i) {
        if (!PushReply(lua, bytes, at)) return false;
        lua_rawseti(lua, -2, static_cast<int>(i + 1));
      }
      return true;
    }
    case '%':
    case '~': {
      int64_t count = 0;
      if (!absl::SimpleAtoi(ToAbsl(line), &count) || count < 0) return false;
      lua_newtable(lua);
      lua_createtable(lua, 0, static_cast<int>(count));
      for (int64_t i = 0; i < count; ++i) {
        if (!PushReply(lua, bytes, at)) return false;
        if (type == '%') {
          if (!PushReply(lua, bytes, at)) return false;
        } else {
          lua_pushboolean(lua, 1);
        }
        lua_settable(lua, -3);
      }
      lua_setfield(lua, -2, type == '%' ? "map" : "set");
      return true;
    }
    case '_':
      lua_pushnil(lua);
      return true;
    case '#':
      lua_pushboolean(lua, line == "t");
      return true;
    case ',': {
      double value = 0;
      if (line == "inf") {
        value = std::numeric_limits<double>::infinity();
      } else if (line == "-inf") {
        value = -std::numeric_limits<double>::infinity();
      } else if (line == "nan") {
        value = std::numeric_limits<double>::quiet_NaN();
      } else if (!absl::SimpleAtod(ToAbsl(line), &value)) {
        return false;
      }
      lua_newtable(lua);
      lua_pushnumber(lua, value);
      lua_setfield(lua, -2, "double");
      return true;
    }
    case '(':
      lua_newtable(lua);
      lua_pushlstring(lua, line.data(), line.size());
      lua_setfield(lua, -2, "big_number");
      return true;
    case '=': {
      std::string_view blob;
      if (!read_blob(&blob) || blob.size() < 4) return false;
      lua_newtable(lua);
      lua_newtable(lua);
      lua_pushlstring(lua, blob.data() + 4, blob.size() - 4);
      lua_setfield(lua, -2, "string");
      lua_pushlstring(lua, blob.data(), 3);
      lua_setfield(lua, -2, "format");
      lua_setfield(lua, -2, "verbatim_string");
      return true;
    }
    default:
      return false;
  }
}

// ---- a Lua value as a reply ----------------------------------------------------------------

// Field `name` of the table at the top of the stack, pushed; its type returned.
int GetField(lua_State* lua, const char* name) {
  lua_pushstring(lua, name);
  lua_rawget(lua, -2);
  return lua_type(lua, -1);
}

// The string at the top of the stack with CR and LF as spaces (a status or big number must not
// break the reply's line).
std::string OneLineString(lua_State* lua) {
  size_t length = 0;
  const char* text = lua_tolstring(lua, -1, &length);
  std::string line(text, length);
  for (char& c : line) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return line;
}

// Writes the value at the top of the stack (left there) as Redis writes a script's result
// (script_lua.c luaReplyToRedisReply). `script_resp` is redis.setresp's version.
void WriteValue(lua_State* lua, protocol::ReplyBuilder& reply, int script_resp, int depth) {
  if (!lua_checkstack(lua, 4) || depth > 1000) {
    reply.Error("ERR reached lua stack limit");
    return;
  }
  switch (lua_type(lua, -1)) {
    case LUA_TSTRING: {
      size_t length = 0;
      const char* data = lua_tolstring(lua, -1, &length);
      reply.Bulk(std::string_view(data, length));
      return;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        if (lua_toboolean(lua, -1)) {
          reply.Integer(1);
        } else {
          reply.Null();
        }
      } else {
        reply.Bool(lua_toboolean(lua, -1));
      }
      return;
    case LUA_TNUMBER:
      reply.Integer(static_cast<int64_t>(lua_tonumber(lua, -1)));
      return;
    case LUA_TTABLE: {
      // {err=...}: an error; {ok=...}: a status; RESP3 types by their field; else an array.
      if (GetField(lua, "err") == LUA_TSTRING) {
        size_t length = 0;
        const char* text = lua_tolstring(lua, -1, &length);
        const std::string_view error(text, length);
        lua_pop(lua, 1);
        if (ErrorCounted(lua)) {
          reply.ErrorCountedElsewhere(error);
        } else {
          reply.Error(error);
        }
        return;
      }
      lua_pop(lua, 1);
      if (GetField(lua, "ok") == LUA_TSTRING) {
        reply.SimpleString(OneLineString(lua));
        lua_pop(lua, 1);
        return;
      }
      lua_pop(lua, 1);
      if (GetField(lua, "double") == LUA_TNUMBER) {
        reply.Double(lua_tonumber(lua, -1));
        lua_pop(lua, 1);
        return;
      }
      lua_pop(lua, 1);
      if (GetField(lua, "big_number") == LUA_TSTRING) {
        reply.BigNumber(OneLineString(lua));
        lua_pop(lua, 1);
        return;
      }
      lua_pop(lua, 1);
      if (GetField(lua, "verbatim_string") == LUA_TTABLE) {
        lua_pushliteral(lua, "format");
        lua_rawget(lua, -2);
        lua_pushliteral(lua, "string");
        lua_rawget(lua, -3);
        if (lua_type(lua, -1) == LUA_TSTRING && lua_type(lua, -2) == LUA_TSTRING) {
          size_t format_length = 0;
          size_t length = 0;
          const char* format = lua_tolstring(lua, -2, &format_length);
          const char* text = lua_tolstring(lua, -1, &length);
          if (format_length == 3) {
            reply.Verbatim(std::string_view(format, 3), std::string_view(text, length));
            lua_pop(lua, 3);
            return;
          }
        }
        lua_pop(lua, 2);
      }
      lua_pop(lua, 1);
      if (GetField(lua, "map") == LUA_TTABLE) {
        int64_t pairs = 0;
        lua_pushnil(lua);
        while (lua_next(lua, -2) != 0) {
          lua_pop(lua, 1);
          ++pairs;
        }
        reply.MapHeader(pairs);
        lua_pushnil(lua);
        while (lua_next(lua, -2) != 0) {
          lua_pushvalue(lua, -2);
          WriteValue(lua, reply, script_resp, depth + 1);  // The key.
          lua_pop(lua, 1);
          WriteValue(lua, reply, script_resp, depth + 1);  // The value.
          lua_pop(lua, 1);
        }
        lua_pop(lua, 1);
        return;
      }
      lua_pop(lua, 1);
      if (GetField(lua, "set") == LUA_TTABLE) {
        int64_t members = 0;
        lua_pushnil(lua);
        while (lua_next(lua, -2) != 0) {
          lua_pop(lua, 1);
          ++members;
        }
        reply.SetHeader(members);
        lua_pushnil(lua);
        while (lua_next(lua, -2) != 0) {
          lua_pop(lua, 1);
          lua_pushvalue(lua, -1);
          WriteValue(lua, reply, script_resp, depth + 1);
          lua_pop(lua, 1);
        }
        lua_pop(lua, 1);
        return;
      }
      lua_pop(lua, 1);
      // An array: elements 1, 2, ... up to the first nil.
      int64_t count = 0;
      while (true) {
        lua_rawgeti(lua, -1, static_cast<int>(count + 1));
        const bool present = !lua_isnil(lua, -1);
        lua_pop(lua, 1);
        if (!present) break;
        ++count;
      }
      reply.ArrayHeader(count);
      for (int64_t i = 1; i <= count; ++i) {
        lua_rawgeti(lua, -1, static_cast<int>(i));
        WriteValue(lua, reply, script_resp, depth + 1);
        lua_pop(lua, 1);
      }
      return;
    }
    default:
      reply.Null();
      return;
  }
}

// ---- the sandbox --------------------------------------------------------------------------

void OpenLibrary(lua_State* lua, lua_CFunction open, const char* name) {
  lua_pushcfunction(lua, open);
  lua_pushstring(lua, name);
  lua_call(lua, 1, 0);
}

// Redis 7.0 makes the globals and every library table read-only (its Lua has read-only tables)
// and turns the read of a missing global into an error. LuaJIT has no read-only tables, so the
// scripts' globals are an empty proxy: reads fall through (__index, a table, so no C call on the
// fast path) to the real globals, whose own __index raises the missing-global error; writes hit
// __newindex and fail. Library tables are proxied the same way. The functions that could write
// around a proxy (rawset, setmetatable, table.insert...) refuse proxies; those that read through
// one (rawget, next, pairs) see the real table.

constexpr char kProxiesKey[] = "gigakv_readonly_proxies";  // Registry: proxy -> real table.
constexpr char kGlobalsKey[] = "gigakv_globals";           // Registry: the real globals.
// Registry: what a library's code sees as its globals while it loads (a kFunctions engine).
constexpr char kLibraryApiKey[] = "gigakv_library_api";
constexpr char kReadonlyError[] = "Attempt to modify a readonly table";

int ReadonlyNewIndex(lua_State* lua) { return luaL_error(lua, kReadonlyError); }

int MissingGlobal(lua_State* lua) {
  const char* name = lua_tostring(lua, 2);
  return luaL_error(lua, "Script attempted to access nonexistent global variable '%s'",
                    name == nullptr ? "?" : name);
}

// Gives the table at the top of the stack a metatable that makes reading a missing field an
// error and refuses new ones (globals, the library API's tables).
void SetMissingIsError(lua_State* lua) {
  lua_newtable(lua);
  lua_pushcfunction(lua, MissingGlobal);
  lua_setfield(lua, -2, "__index");
  lua_pushcfunction(lua, ReadonlyNewIndex);
  lua_setfield(lua, -2, "__newindex");
  lua_setmetatable(lua, -2);
}

// If the value at `index` is a read-only proxy, pushes the real table and returns true.
bool PushProxied(lua_State* lua, int index) {
  if (!lua_istable(lua, index)) return false;
  if (index < 0) index = lua_gettop(lua) + index + 1;
  lua_getfield(lua, LUA_REGISTRYINDEX, kProxiesKey);
  lua_pushvalue(lua, index);
  lua_rawget(lua, -2);
  lua_remove(lua, -2);
  if (lua_istable(lua, -1)) return true;
  lua_pop(lua, 1);
  return false;
}

// Replaces the table at the top of the stack with a read-only proxy of it.
void ReplaceWithProxy(lua_State* lua) {
  lua_newtable(lua);  // real, proxy
  lua_newtable(lua);  // real, proxy, metatable
  lua_pushvalue(lua, -3);
  lua_setfield(lua, -2, "__index");
  lua_pushcfunction(lua, ReadonlyNewIndex);
  lua_setfield(lua, -2, "__newindex");
  lua_setmetatable(lua, -2);
  lua_getfield(lua, LUA_REGISTRYINDEX, kProxiesKey);  // real, proxy, proxies
  lua_pushvalue(lua, -2);
  lua_pushvalue(lua, -4);
  lua_rawset(lua, -3);
  lua_pop(lua, 1);
  lua_remove(lua, -2);  // proxy
}

// The original function is upvalue 1 of each wrapper.
int CallOriginal(lua_State* lua) {
  lua_pushvalue(lua, lua_upvalueindex(1));
  lua_insert(lua, 1);
  lua_call(lua, lua_gettop(lua) - 1, LUA_MULTRET);
  return lua_gettop(lua);
}

// rawset, setmetatable, table.insert/remove/sort/setn: a proxy is read-only (no position in
// the message, as Redis's C-level refusal has none).
int RefuseProxyThenCall(lua_State* lua) {
  if (PushProxied(lua, 1)) {
    lua_pushstring(lua, kReadonlyError);
    return lua_error(lua);
  }
  return CallOriginal(lua);
}

// rawget, next: a proxy reads as its real table.
int UnproxyThenCall(lua_State* lua) {
  if (PushProxied(lua, 1)) lua_replace(lua, 1);
  return CallOriginal(lua);
}

// pairs(proxy) iterates the real table through the wrapped next, and hands out only the proxy.
int Pairs(lua_State* lua) {
  if (!PushProxied(lua, 1)) return CallOriginal(lua);
  lua_pop(lua, 1);
  lua_getfield(lua, LUA_REGISTRYINDEX, kGlobalsKey);
  lua_getfield(lua, -1, "next");  // The wrapped next: it reads through the proxy.
  lua_remove(lua, -2);
  lua_pushvalue(lua, 1);
  lua_pushnil(lua);
  return 3;
}

constexpr char kStringMetatableKey[] = "gigakv_string_metatable";  // Registry: its proxy.

// getmetatable(proxy) is nil (a read-only table has none of its own to show); a string's is a
// read-only proxy of the strings' metatable, whose __index is the string library's proxy.
int GetMetatable(lua_State* lua) {
  if (lua_type(lua, 1) == LUA_TSTRING) {
    lua_getfield(lua, LUA_REGISTRYINDEX, kStringMetatableKey);
    return 1;
  }
  if (PushProxied(lua, 1)) {
    lua_pushnil(lua);
    return 1;
  }
  return CallOriginal(lua);
}

// loadstring(s [, name]) and load(s | reader [, name]): source text only. LuaJIT would load
// bytecode, which it never verifies (a forged chunk corrupts memory); Redis's Lua cannot load
// bytecode either.
int LoadText(lua_State* lua) {
  std::string text;
  if (lua_type(lua, 1) == LUA_TSTRING) {
    size_t length = 0;
    const char* data = lua_tolstring(lua, 1, &length);
    text.assign(data, length);
  } else {
    luaL_checktype(lua, 1, LUA_TFUNCTION);
    while (true) {
      lua_pushvalue(lua, 1);
      lua_call(lua, 0, 1);
      if (lua_isnil(lua, -1)) {
        lua_pop(lua, 1);
        break;
      }
      if (!lua_isstring(lua, -1)) return luaL_error(lua, "reader function must return a string");
      size_t length = 0;
      const char* piece = lua_tolstring(lua, -1, &length);
      if (length == 0) {
        lua_pop(lua, 1);
        break;
      }
      text.append(piece, length);
      lua_pop(lua, 1);
    }
  }
  const char* name = luaL_optstring(lua, 2, text.c_str());
  if (luaL_loadbufferx(lua, text.data(), text.size(), name, "t") != 0) {
    lua_pushnil(lua);
    lua_insert(lua, -2);
    return 2;  // nil and the message, as loadstring.
  }
  return 1;
}

// cjson.encode, bounded: Debian's lua-cjson sizes its buffer with int (CVE-2022-24834, fixed in
// Redis's own copy), so an output that could pass 2 GB (a string escapes to at most 6 bytes a
// byte) is refused before encoding.
constexpr size_t kMaxJsonInputBytes = (size_t{1} << 31) / 8;

size_t JsonInputBytes(lua_State* lua, int index, int depth) {
  if (depth > 1000) return 0;  // cjson refuses deeper nesting itself.
  switch (lua_type(lua, index)) {
    case LUA_TSTRING:
      return lua_objlen(lua, index) + 2;
    case LUA_TTABLE: {
      size_t total = 2;
      if (index < 0) index = lua_gettop(lua) + index + 1;
      lua_checkstack(lua, 3);
      lua_pushnil(lua);
      while (lua_next(lua, index) != 0) {
        total += JsonInputBytes(lua, -2, depth + 1) + JsonInputBytes(lua, -1, depth + 1) + 2;
        lua_pop(lua, 1);
        if (total > kMaxJsonInputBytes) {
          lua_pop(lua, 1);
          return total;
        }
      }
      return total;
    }
    default:
      return 32;
  }
}

int BoundedJsonEncode(lua_State* lua) {
  if (JsonInputBytes(lua, 1, 0) > kMaxJsonInputBytes) {
    return luaL_error(lua, "Cannot serialise: the encoded text would exceed 2 GB");
  }
  return CallOriginal(lua);
}

// Redis's pcall: an error table {err = s} raised by redis.call (or by error()) is caught as its
// string s.
int Pcall(lua_State* lua) {
  luaL_checkany(lua, 1);
  const int status = lua_pcall(lua, lua_gettop(lua) - 1, LUA_MULTRET, 0);
  if (status == 0) {
    lua_pushboolean(lua, 1);
    lua_insert(lua, 1);
    return lua_gettop(lua);
  }
  if (lua_istable(lua, -1)) {
    lua_getfield(lua, -1, "err");
    if (lua_isstring(lua, -1)) {
      lua_replace(lua, -2);
    } else {
      lua_pop(lua, 1);
    }
  }
  lua_pushboolean(lua, 0);
  lua_insert(lua, -2);
  return 2;
}

int ObsoleteSetn(lua_State* lua) { return luaL_error(lua, "'setn' is obsolete"); }

// Wraps the function `name` of the table at the top of the stack with `wrapper`.
void Wrap(lua_State* lua, const char* name, lua_CFunction wrapper) {
  lua_getfield(lua, -1, name);
  lua_pushcclosure(lua, wrapper, 1);
  lua_setfield(lua, -2, name);
}

// Redis's error handler (__redis__err__handler): an error becomes a table {err=...} with the
// `source` and `line` of the script line that raised it (skipping a C function that raised it,
// such as redis.call).
constexpr char kErrorHandler[] = R"lua(
local dbg = debug
local error_handler = function (err)
  local i = dbg.getinfo(2,'nSl')
  if i and i.what == 'C' then
    i = dbg.getinfo(3,'nSl')
  end
  if type(err) ~= 'table' then
    err = {err='ERR ' .. tostring(err)}
  end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end
return error_handler
)lua";

constexpr char kErrorHandlerKey[] = "gigakv_error_handler";

int RedisSha1Hex(lua_State* lua) {
  if (lua_gettop(lua) != 1) RaiseErrorTable(lua, "ERR wrong number of arguments");
  size_t length = 0;
  const char* text = lua_tolstring(lua, 1, &length);
  const std::string hex = Sha1Hex(std::string_view(text == nullptr ? "" : text, length));
  lua_pushlstring(lua, hex.data(), hex.size());
  return 1;
}

// redis.error_reply(s) and redis.status_reply(s) take one string; misuse returns an error
// table (not raised), as Redis.
bool OneStringArgumentOrPushError(lua_State* lua) {
  if (lua_gettop(lua) == 1 && lua_type(lua, -1) == LUA_TSTRING) return true;
  PushErrorTable(lua, "ERR wrong number or type of arguments");
  return false;
}

// An error text as Redis's luaPushErrorBuff stores it: "CODE message" from "-CODE message", or
// with the code ERR when there is none ("-message" without a space, or no leading '-');
// trailing CR/LF trimmed.
std::string ErrorTableText(std::string_view text) {
  std::string_view code = "ERR";
  std::string_view message = text;
  if (!text.empty() && text[0] == '-') {
    const size_t space = text.find(' ');
    if (space == std::string_view::npos) {
      message = text.substr(1);
    } else {
      code = text.substr(1, space - 1);
      message = text.substr(space + 1);
    }
  }
  while (!message.empty() && (message.back() == '\r' || message.back() == '\n')) {
    message.remove_suffix(1);
  }
  return StrCat(code, " ", message);
}

// redis.error_reply(s): {err = s as Redis stores errors}, with a '-' added when s has none.
int RedisErrorReply(lua_State* lua) {
  if (!OneStringArgumentOrPushError(lua)) return 1;
  size_t length = 0;
  const char* text = lua_tolstring(lua, 1, &length);
  std::string_view error(text, length);
  const std::string dashed = error.starts_with('-') ? std::string(error) : StrCat("-", error);
  PushErrorTable(lua, ErrorTableText(dashed));
  return 1;
}
// redis.status_reply(s): {ok = s}.
int RedisStatusReply(lua_State* lua) {
  if (!OneStringArgumentOrPushError(lua)) return 1;
  lua_newtable(lua);
  lua_pushvalue(lua, 1);
  lua_setfield(lua, -2, "ok");
  return 1;
}

constexpr int kLogDebug = 0, kLogVerbose = 1, kLogNotice = 2, kLogWarning = 3;

int RedisLog(lua_State* lua) {
  const int argc = lua_gettop(lua);
  if (argc < 2) RaiseErrorTable(lua, "ERR redis.log() requires two arguments or more.");
  if (!lua_isnumber(lua, 1))
    RaiseErrorTable(lua, "ERR First argument must be a number (log level).");
  const int level = static_cast<int>(lua_tonumber(lua, 1));
  if (level < kLogDebug || level > kLogWarning) RaiseErrorTable(lua, "ERR Invalid debug level.");
  std::string message;
  for (int j = 2; j <= argc; ++j) {
    size_t length = 0;
    const char* part = lua_tolstring(lua, j, &length);
    if (part == nullptr) continue;
    if (!message.empty()) message.push_back(' ');
    message.append(part, length);
  }
  switch (level) {
    case kLogDebug:
      spdlog::debug("{}", message);
      break;
    case kLogVerbose:
    case kLogNotice:
      spdlog::info("{}", message);  // spdlog has one level for Redis's verbose and notice.
      break;
    default:
      spdlog::warn("{}", message);
      break;
  }
  return 0;
}

// Replication flags (redis.set_repl): gigakv logs a script's effects whatever they say.
constexpr int kReplNone = 0, kReplAof = 1, kReplReplica = 2, kReplAll = 3;

int RedisSetRepl(lua_State* lua) {
  if (lua_gettop(lua) != 1) RaiseErrorTable(lua, "ERR redis.set_repl() requires one argument.");
  const int flags = static_cast<int>(lua_tonumber(lua, 1));
  if (flags < kReplNone || flags > kReplAll) {
    RaiseErrorTable(lua,
                    "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or "
                    "REPL_NONE.");
  }
  return 0;
}

int RedisReplicateCommands(lua_State* lua) {
  lua_pushboolean(lua, 1);  // Always on since Redis 7.0.
  return 1;
}

int RedisBreakpoint(lua_State* lua) {
  lua_pushboolean(lua, 0);  // No debugger session (SCRIPT DEBUG) is active.
  return 1;
}

int RedisDebug(lua_State* lua) {
  (void)lua;  // Only a debugger session shows it.
  return 0;
}

// ---- tail calls ---------------------------------------------------------------------------
// A script's error names the line that raised it ("script: <sha>, on @user_script:3."), which
// the error handler reads from the Lua frame below the C function that raised it. Lua 5.1 keeps
// that frame when a script tail-calls a C function (`return redis.call(...)`); LuaJIT replaces
// it, and the line is lost. So before compiling, `return f(...)` for the C functions of one
// result that commonly raise (redis.call, cjson.decode, cjson.encode) becomes
// `return (f(...))`: the same value, no tail call, and no line moved (only parentheses are
// added).

// Those that return one value become `return (f(...))`; those that may return several (the
// unpackers) `return select(1, f(...))`, which keeps them all.
struct Untailed {
  std::string_view name;
  bool multiple_results;
};
constexpr Untailed kUntailed[] = {
    {"redis.call", false},           {"cjson.decode", false},   {"cjson.encode", false},
    {"cmsgpack.pack", false},        {"cmsgpack.unpack", true}, {"cmsgpack.unpack_one", true},
    {"cmsgpack.unpack_limit", true}, {"struct.pack", false},    {"struct.unpack", true},
    {"struct.size", false},
};

bool IsNameChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The length of a long bracket's opening `[==[` at `at` (its level in *level), or 0.
size_t LongBracketOpen(std::string_view text, size_t at, size_t* level) {
  if (at >= text.size() || text[at] != '[') return 0;
  size_t i = at + 1;
  while (i < text.size() && text[i] == '=') ++i;
  if (i >= text.size() || text[i] != '[') return 0;
  *level = i - at - 1;
  return i - at + 1;
}

// Skips what starts at `at` if it is a comment, a string or a long string; returns the index
// after it, or `at` when none starts there.
size_t SkipCommentOrString(std::string_view text, size_t at) {
  size_t level = 0;
  if (text.compare(at, 2, "--") == 0) {
    if (size_t open = LongBracketOpen(text, at + 2, &level); open > 0) {
      const std::string close = "]" + std::string(level, '=') + "]";
      const size_t end = text.find(close, at + 2 + open);
      return end == std::string_view::npos ? text.size() : end + close.size();
    }
    const size_t end = text.find('\n', at);
    return end == std::string_view::npos ? text.size() : end;
  }
  if (size_t open = LongBracketOpen(text, at, &level); open > 0) {
    const std::string close = "]" + std::string(level, '=') + "]";
    const size_t end = text.find(close, at + open);
    return end == std::string_view::npos ? text.size() : end + close.size();
  }
  if (text[at] == '"' || text[at] == '\'') {
    const char quote = text[at];
    size_t i = at + 1;
    while (i < text.size() && text[i] != quote && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
    return std::min(i + 1, text.size());
  }
  return at;
}

size_t SkipSpace(std::string_view text, size_t at) {
  while (at < text.size() && absl::ascii_isspace(static_cast<unsigned char>(text[at]))) ++at;
  return at;
}

// `body` with the tail calls above parenthesized; empty when there was none.
std::string UntailCalls(std::string_view body) {
  std::string out;
  size_t copied = 0;
  size_t i = 0;
  while (i < body.size()) {
    if (size_t after = SkipCommentOrString(body, i); after != i) {
      i = after;
      continue;
    }
    if (!IsNameChar(body[i])) {
      ++i;
      continue;
    }
    size_t word_end = i;
    while (word_end < body.size() && IsNameChar(body[word_end])) ++word_end;
    const bool is_return = body.substr(i, word_end - i) == "return" &&
                           (i == 0 || (body[i - 1] != '.' && body[i - 1] != ':'));
    const size_t call_start = SkipSpace(body, word_end);
    i = word_end;
    if (!is_return) continue;
    size_t open = std::string_view::npos;
    bool multiple_results = false;
    for (const Untailed& untailed : kUntailed) {
      if (body.compare(call_start, untailed.name.size(), untailed.name) == 0) {
        const size_t paren = SkipSpace(body, call_start + untailed.name.size());
        if (paren < body.size() && body[paren] == '(') {
          open = paren;
          multiple_results = untailed.multiple_results;
        }
      }
    }
    if (open == std::string_view::npos) continue;
    // The matching parenthesis.
    size_t depth = 0;
    size_t close = open;
    while (close < body.size()) {
      if (size_t after = SkipCommentOrString(body, close); after != close) {
        close = after;
        continue;
      }
      if (body[close] == '(') ++depth;
      if (body[close] == ')' && --depth == 0) break;
      ++close;
    }
    if (close >= body.size()) break;
    // Only when the call is the whole returned expression (a statement ends after it).
    size_t next = SkipSpace(body, close + 1);
    while (next < body.size() && SkipCommentOrString(body, next) != next &&
           body.compare(next, 2, "--") == 0) {
      next = SkipSpace(body, SkipCommentOrString(body, next));
    }
    size_t next_end = next;
    while (next_end < body.size() && IsNameChar(body[next_end])) ++next_end;
    const std::string_view next_word = body.substr(next, next_end - next);
    const bool statement_ends = next >= body.size() || body[next] == ';' || next_word == "end" ||
                                next_word == "else" || next_word == "elseif" ||
                                next_word == "until";
    if (!statement_ends) continue;
    out.append(body.substr(copied, call_start - copied))
        .append(multiple_results ? "select(1, " : "(");
    out.append(body.substr(call_start, close + 1 - call_start)).append(")");
    copied = close + 1;
    i = close + 1;
  }
  if (copied == 0) return std::string();
  out.append(body.substr(copied));
  return out;
}

// Compiles `source` (text only) as the chunk `name` and leaves its function on the stack. It is
// compiled as written for its syntax errors, then run with its tail calls untailed (above), so
// that an error names the script's line. On a syntax error: false, `*error` = prefix + message.
bool LoadChunk(lua_State* lua, std::string_view source, const char* name,
               std::string_view error_prefix, std::string* error) {
  auto load = [&](std::string_view text) {
    if (luaL_loadbufferx(lua, text.data(), text.size(), name, "t") == 0) return true;
    *error = StrCat(error_prefix, lua_tostring(lua, -1));
    lua_pop(lua, 1);
    return false;
  };
  if (!load(source)) return false;
  const std::string untailed = UntailCalls(source);
  if (untailed.empty()) return true;
  lua_pop(lua, 1);  // The untailed text replaces it.
  return load(untailed);
}

}  // namespace

// ---- the engine -----------------------------------------------------------------------------

LuaEngine::LuaEngine(uint64_t generation, Kind kind)
    : generation_(generation), script_client_(std::make_unique<ClientState>(0)), kind_(kind) {
  script_client_->authenticated = true;
  script_client_->addr = "lua";    // MONITOR shows its commands as [db lua], as Redis.
  script_client_->in_exec = true;  // Nothing it runs blocks, queues or waits for a pause.
  lua_ = luaL_newstate();
  luaJIT_setmode(lua_, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
  lua_pushlightuserdata(lua_, this);
  lua_setfield(lua_, LUA_REGISTRYINDEX, kEngineKey);

  OpenLibrary(lua_, luaopen_base, "");
  OpenLibrary(lua_, luaopen_table, LUA_TABLIBNAME);
  OpenLibrary(lua_, luaopen_string, LUA_STRLIBNAME);
  OpenLibrary(lua_, luaopen_math, LUA_MATHLIBNAME);
  OpenLibrary(lua_, luaopen_debug, LUA_DBLIBNAME);
  OpenLibrary(lua_, luaopen_bit, "bit");
  lua_pushcfunction(lua_, luaopen_cjson);
  lua_call(lua_, 0, 1);
  lua_setglobal(lua_, "cjson");
  lua_pushcfunction(lua_, OpenCmsgpack);
  lua_call(lua_, 0, 1);
  lua_setglobal(lua_, "cmsgpack");
  lua_pushcfunction(lua_, OpenStruct);
  lua_call(lua_, 0, 1);
  lua_setglobal(lua_, "struct");
  // What Redis removes from the base library.
  for (const char* name : {"loadfile", "dofile"}) {
    lua_pushnil(lua_);
    lua_setglobal(lua_, name);
  }

  // math.random and math.randomseed on Redis's generator.
  lua_getglobal(lua_, "math");
  lua_pushcfunction(lua_, MathRandom);
  lua_setfield(lua_, -2, "random");
  lua_pushcfunction(lua_, MathRandomSeed);
  lua_setfield(lua_, -2, "randomseed");
  lua_pop(lua_, 1);

  // The redis table.
  lua_newtable(lua_);
  auto set_function = [&](const char* name, lua_CFunction function) {
    lua_pushcfunction(lua_, function);
    lua_setfield(lua_, -2, name);
  };
  // call and pcall find their engine in an upvalue (the registry lookup costs a string hash).
  for (auto [name, function] :
       {std::pair<const char*, lua_CFunction>{"call", RedisCall}, {"pcall", RedisPcall}}) {
    lua_pushlightuserdata(lua_, this);
    lua_pushcclosure(lua_, function, 1);
    lua_setfield(lua_, -2, name);
  }
  set_function("sha1hex", RedisSha1Hex);
  set_function("error_reply", RedisErrorReply);
  set_function("status_reply", RedisStatusReply);
  set_function("log", RedisLog);
  set_function("setresp", RedisSetResp);
  set_function("set_repl", RedisSetRepl);
  set_function("replicate_commands", RedisReplicateCommands);
  set_function("breakpoint", RedisBreakpoint);
  set_function("debug", RedisDebug);
  set_function("acl_check_cmd", RedisAclCheckCmd);
  auto set_number = [&](const char* name, int value) {
    lua_pushnumber(lua_, value);
    lua_setfield(lua_, -2, name);
  };
  set_number("LOG_DEBUG", kLogDebug);
  set_number("LOG_VERBOSE", kLogVerbose);
  set_number("LOG_NOTICE", kLogNotice);
  set_number("LOG_WARNING", kLogWarning);
  set_number("REPL_NONE", kReplNone);
  set_number("REPL_AOF", kReplAof);
  set_number("REPL_SLAVE", kReplReplica);
  set_number("REPL_REPLICA", kReplReplica);
  set_number("REPL_ALL", kReplAll);
  lua_pushlstring(lua_, kRedisCompatVersion.data(), kRedisCompatVersion.size());
  lua_setfield(lua_, -2, "REDIS_VERSION");
  set_number("REDIS_VERSION_NUM", RedisVersionNumber());
  lua_setglobal(lua_, "redis");
  if (kind_ == Kind::kFunctions) {
    // What a library's code sees while it loads: only `redis`, with register_function, log, the
    // LOG_* constants and the version; anything else is a missing global (as Redis's
    // LIBRARY_API table, made read-only below).
    lua_newtable(lua_);  // The library API's globals.
    lua_newtable(lua_);  // Its redis table.
    set_function("register_function", RegisterFunction);
    set_function("log", RedisLog);
    set_number("LOG_DEBUG", kLogDebug);
    set_number("LOG_VERBOSE", kLogVerbose);
    set_number("LOG_NOTICE", kLogNotice);
    set_number("LOG_WARNING", kLogWarning);
    lua_pushlstring(lua_, kRedisCompatVersion.data(), kRedisCompatVersion.size());
    lua_setfield(lua_, -2, "REDIS_VERSION");
    set_number("REDIS_VERSION_NUM", RedisVersionNumber());
    lua_setfield(lua_, -2, "redis");
    lua_setfield(lua_, LUA_REGISTRYINDEX, kLibraryApiKey);  // Protected in Protect().
  }

  if (luaL_loadbuffer(lua_, kErrorHandler, sizeof(kErrorHandler) - 1, "@err_handler_def") != 0 ||
      lua_pcall(lua_, 0, 1, 0) != 0) {
    spdlog::error("Lua error handler: {}", lua_tostring(lua_, -1));
    lua_pop(lua_, 1);
  } else {
    lua_pushvalue(lua_, -1);
    lua_setfield(lua_, LUA_REGISTRYINDEX, kErrorHandlerKey);
    lua_getfield(lua_, LUA_REGISTRYINDEX, kErrorHandlerKey);
    error_handler_ref_ = luaL_ref(lua_, LUA_REGISTRYINDEX);
    if (kind_ == Kind::kEval) {
      lua_setglobal(lua_, "__redis__err__handler");
    } else {
      lua_pop(lua_, 1);
    }
  }
  Protect();
  ReportMemory();
}

void LuaEngine::Protect() {
  // What Redis 7.0 does not offer scripts (the error handler above keeps its own reference to
  // debug).
  for (const char* name : {"loadfile", "dofile", "getfenv", "setfenv", "newproxy", "print", "debug",
                           "module", "require", "package", "jit", "ffi"}) {
    lua_pushnil(lua_);
    lua_setglobal(lua_, name);
  }
  // Lua 5.1 functions Redis's Lua has and LuaJIT dropped.
  lua_getglobal(lua_, "string");
  lua_getfield(lua_, -1, "gmatch");
  lua_setfield(lua_, -2, "gfind");
  lua_pop(lua_, 1);
  lua_getglobal(lua_, "math");
  lua_getfield(lua_, -1, "fmod");
  lua_setfield(lua_, -2, "mod");
  lua_pop(lua_, 1);
  lua_getglobal(lua_, "table");
  lua_pushcfunction(lua_, ObsoleteSetn);
  lua_setfield(lua_, -2, "setn");
  for (const char* name : {"insert", "remove", "sort", "setn", "foreach", "foreachi"}) {
    Wrap(lua_, name, RefuseProxyThenCall);
  }
  lua_pop(lua_, 1);

  lua_newtable(lua_);  // Weak-keyed: proxy -> real table.
  lua_newtable(lua_);
  lua_pushstring(lua_, "k");
  lua_setfield(lua_, -2, "__mode");
  lua_setmetatable(lua_, -2);
  lua_setfield(lua_, LUA_REGISTRYINDEX, kProxiesKey);

  lua_getglobal(lua_, "cjson");
  Wrap(lua_, "encode", BoundedJsonEncode);
  lua_pop(lua_, 1);

  lua_pushvalue(lua_, LUA_GLOBALSINDEX);  // The real globals.
  lua_pushcfunction(lua_, LoadText);
  lua_setfield(lua_, -2, "loadstring");
  lua_pushcfunction(lua_, LoadText);
  lua_setfield(lua_, -2, "load");
  Wrap(lua_, "rawset", RefuseProxyThenCall);
  Wrap(lua_, "setmetatable", RefuseProxyThenCall);
  Wrap(lua_, "rawget", UnproxyThenCall);
  Wrap(lua_, "next", UnproxyThenCall);
  Wrap(lua_, "pairs", Pairs);
  Wrap(lua_, "getmetatable", GetMetatable);
  lua_pushcfunction(lua_, Pcall);
  lua_setfield(lua_, -2, "pcall");
  for (const char* name :
       {"string", "table", "math", "coroutine", "bit", "cjson", "redis", "cmsgpack", "struct"}) {
    lua_getfield(lua_, -1, name);
    if (!lua_istable(lua_, -1)) {
      lua_pop(lua_, 1);
      continue;
    }
    ReplaceWithProxy(lua_);
    lua_setfield(lua_, -2, name);
  }
  lua_pushvalue(lua_, -1);
  lua_setfield(lua_, LUA_REGISTRYINDEX, kGlobalsKey);
  lua_pushvalue(lua_, -1);
  globals_ref_ = luaL_ref(lua_, LUA_REGISTRYINDEX);
  if (kind_ == Kind::kFunctions) {
    // The library API: its redis table read-only with missing fields an error, as its globals.
    lua_getfield(lua_, LUA_REGISTRYINDEX, kLibraryApiKey);
    lua_getfield(lua_, -1, "redis");
    SetMissingIsError(lua_);
    ReplaceWithProxy(lua_);
    lua_setfield(lua_, -2, "redis");
    SetMissingIsError(lua_);
    lua_pop(lua_, 1);
  }
  // Strings' methods come from the string library's proxy; their metatable shows as a proxy.
  lua_pushliteral(lua_, "");
  lua_getmetatable(lua_, -1);  // real globals, "", metatable
  lua_getfield(lua_, -3, "string");
  lua_setfield(lua_, -2, "__index");
  ReplaceWithProxy(lua_);
  lua_setfield(lua_, LUA_REGISTRYINDEX, kStringMetatableKey);
  lua_pop(lua_, 1);
  // A missing global is an error; a new one is refused.
  SetMissingIsError(lua_);
  // The scripts' globals: a proxy of the real ones, also as _G, and the thread's globals from
  // now on, so that every function compiled or loaded (loadstring) sees it.
  lua_pushvalue(lua_, -1);
  ReplaceWithProxy(lua_);  // real, proxy
  lua_pushvalue(lua_, -1);
  lua_setfield(lua_, -3, "_G");
  lua_replace(lua_, LUA_GLOBALSINDEX);
  lua_pop(lua_, 1);
}

namespace {
std::atomic<int64_t> lua_memory_bytes{0};
}  // namespace

int64_t LuaMemoryBytes() { return lua_memory_bytes.load(std::memory_order_relaxed); }

void LuaEngine::ReportMemory() {
  if (kind_ != Kind::kEval) return;  // The functions' state is FunctionLibraries' to report.
  const auto now = static_cast<int64_t>(memory_bytes());
  lua_memory_bytes.fetch_add(now - reported_memory_, std::memory_order_relaxed);
  reported_memory_ = now;
}

LuaEngine::~LuaEngine() {
  lua_memory_bytes.fetch_sub(reported_memory_, std::memory_order_relaxed);
  if (lua_ != nullptr) lua_close(lua_);
}

size_t LuaEngine::memory_bytes() const {
  return static_cast<size_t>(lua_gc(lua_, LUA_GCCOUNT, 0)) * 1024 +
         static_cast<size_t>(lua_gc(lua_, LUA_GCCOUNTB, 0));
}

bool LuaEngine::Compile(std::string_view sha, std::string_view body, std::string* error) {
  if (functions_.contains(ToAbsl(sha))) return true;
  // A `#!lua ...` first line becomes a comment (the lines keep their numbers, as in Redis).
  std::string commented;
  if (body.starts_with("#!")) {
    commented = StrCat("--", body.substr(2));
    body = commented;
  }
  if (!LoadChunk(lua_, body, "@user_script",
                 "ERR Error compiling script (new function): ", error)) {
    return false;
  }
  functions_.emplace(std::string(sha), CompiledScript{luaL_ref(lua_, LUA_REGISTRYINDEX), {}});
  return true;
}

std::optional<uint32_t> LuaEngine::ScriptFlags(std::string_view sha) const {
  auto it = functions_.find(ToAbsl(sha));
  if (it == functions_.end()) return std::nullopt;
  return it->second.flags;
}

void LuaEngine::SetScriptFlags(std::string_view sha, uint32_t flags) {
  auto it = functions_.find(ToAbsl(sha));
  if (it != functions_.end()) it->second.flags = flags;
}

namespace {

void PushArray(lua_State* lua, absl::Span<const std::string_view> values) {
  lua_createtable(lua, static_cast<int>(values.size()), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    lua_pushlstring(lua, values[i].data(), values[i].size());
    lua_rawseti(lua, -2, static_cast<int>(i + 1));
  }
}

// Sets the global `name` to an array of `values` (KEYS, ARGV), bypassing the protection.
void SetGlobalArray(lua_State* lua, int globals_ref, const char* name,
                    absl::Span<const std::string_view> values) {
  PushArray(lua, values);
  lua_rawgeti(lua, LUA_REGISTRYINDEX, globals_ref);
  lua_pushstring(lua, name);
  lua_pushvalue(lua, -3);
  lua_rawset(lua, -3);
  lua_pop(lua, 2);
}

}  // namespace

void LuaEngine::Run(const ScriptInvocation& invocation) {
  protocol::ReplyBuilder& reply = invocation.caller.reply;
  int function_ref = invocation.function_ref;
  if (function_ref == 0) {
    auto function = functions_.find(ToAbsl(invocation.sha));
    if (function == functions_.end()) {
      std::string error;
      if (!Compile(invocation.sha, invocation.body, &error)) {
        reply.Error(error);
        return;
      }
      function = functions_.find(ToAbsl(invocation.sha));
    }
    function_ref = function->second.ref;
  }
  RunState state{invocation, *script_client_, protocol::ReplyBuilder(2)};
  script_client_->db.store(invocation.caller.client.db.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
  script_client_->resp = 2;
  running_ = &state;
  running_name_.assign(invocation.sha);
  killed_ = false;
  kill_armed_.store(false, std::memory_order_relaxed);
  ScriptCache& scripts = invocation.caller.scripts();
  scripts.BeginRun(this, invocation.function_ref != 0 ? invocation.sha : std::string_view(),
                   &invocation.caller.args);

  lua_rawgeti(lua_, LUA_REGISTRYINDEX, error_handler_ref_);
  const int handler = lua_gettop(lua_);
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, function_ref);
  int arguments = 0;
  if (invocation.function_ref != 0) {  // A function gets them as arguments.
    PushArray(lua_, invocation.keys);
    PushArray(lua_, invocation.args);
    arguments = 2;
  } else {
    SetGlobalArray(lua_, globals_ref_, "KEYS", invocation.keys);
    SetGlobalArray(lua_, globals_ref_, "ARGV", invocation.args);
  }
  const int status = lua_pcall(lua_, arguments, 1, handler);
  scripts.EndRun();
  lua_sethook(lua_, nullptr, 0, 0);  // The watchdog can no longer arm it (EndRun).
  // Other threads stop answering BUSY before the gate opens.
  invocation.caller.transaction_gate().SetBusy(false);
  running_ = nullptr;
  if (status != 0) {
    // The error table from the handler: {err=..., source=..., line=...}, or a string when the
    // handler itself failed (out of memory).
    std::string text;
    bool counted = false;
    if (lua_istable(lua_, -1)) {
      counted = ErrorCounted(lua_);
      std::string err = "ERR unknown error";
      if (GetField(lua_, "err") == LUA_TSTRING) err = lua_tostring(lua_, -1);
      lua_pop(lua_, 1);
      const bool has_source = GetField(lua_, "source") == LUA_TSTRING;
      std::string source = has_source ? lua_tostring(lua_, -1) : "";
      lua_pop(lua_, 1);
      const bool has_line = GetField(lua_, "line") == LUA_TNUMBER;
      const int64_t line = has_line ? static_cast<int64_t>(lua_tonumber(lua_, -1)) : 0;
      lua_pop(lua_, 1);
      if (!err.empty() && err[0] == '-') err.erase(0, 1);
      text = has_source && has_line
                 ? StrCat(err, " script: ", invocation.sha, ", on ", source, ":", line, ".")
                 : err;
    } else {
      const char* message = lua_tostring(lua_, -1);
      text = StrCat("ERR Error running script: ", message == nullptr ? "" : message);
    }
    lua_pop(lua_, 2);  // The error and the handler.
    if (counted) {
      reply.ErrorCountedElsewhere(text);
    } else {
      reply.Error(text);
    }
  } else {
    WriteValue(lua_, reply, state.resp, 0);
    lua_pop(lua_, 2);  // The result and the handler.
  }
  // A step of garbage collection every 50 scripts, as Redis does (a step after every script
  // costs more than the script).
  if (++runs_since_gc_ == kGcPeriod) {
    lua_gc(lua_, LUA_GCSTEP, kGcPeriod);
    runs_since_gc_ = 0;
    ReportMemory();
  }
}

int LuaEngine::RedisCall(lua_State* lua) { return RedisCallImpl(lua, /*raise=*/true); }
int LuaEngine::RedisPcall(lua_State* lua) { return RedisCallImpl(lua, /*raise=*/false); }

int LuaEngine::RedisCallImpl(lua_State* lua, bool raise) {
  auto* engine = static_cast<LuaEngine*>(lua_touserdata(lua, lua_upvalueindex(1)));
  RunState* run = engine == nullptr ? nullptr : engine->running_;
  auto fail = [&](std::string_view text) -> int {
    if (raise) RaiseErrorTable(lua, text);
    PushErrorTable(lua, text);
    return 1;
  };
  if (run == nullptr) return fail("ERR redis.call is only available while a script runs");
  const int argc = lua_gettop(lua);
  if (argc == 0) return fail("ERR Please specify at least one argument for this redis lib call");
  // Strings are viewed where they are on the Lua stack (no Lua code runs until the command
  // returns); numbers are written out in the run's reused buffers.
  std::vector<std::string_view>& args = engine->call_args_;
  args.resize(argc);
  if (engine->number_args_.size() < static_cast<size_t>(argc)) engine->number_args_.resize(argc);
  for (int i = 0; i < argc; ++i) {
    const int type = lua_type(lua, i + 1);
    if (type == LUA_TNUMBER) {
      char buffer[64];
      const int length = std::snprintf(buffer, sizeof(buffer), "%.17g",
                                       static_cast<double>(lua_tonumber(lua, i + 1)));
      engine->number_args_[i].assign(buffer, length);
      args[i] = engine->number_args_[i];
    } else if (type == LUA_TSTRING) {
      size_t length = 0;
      const char* data = lua_tolstring(lua, i + 1, &length);
      args[i] = std::string_view(data, length);
    } else {
      return fail("ERR Lua redis lib command arguments must be strings or integers");
    }
  }
  const CommandServices& services = run->invocation.caller.services;
  // The command table never changes once built: a few recent names per engine skip its
  // case-insensitive lookup (a script calls the same commands over and over).
  CachedCommand& cached =
      engine->command_cache_[(reinterpret_cast<uintptr_t>(args[0].data()) >> 4) %
                             engine->command_cache_.size()];
  const CommandSpec* spec = cached.spec;
  if (spec == nullptr || cached.name != args[0]) {
    spec = services.commands().Find(args[0]);
    if (spec != nullptr) {
      cached.name.assign(args[0]);
      cached.spec = spec;
    }
  }
  if (spec == nullptr) return fail("ERR Unknown Redis command called from script");
  if (spec->handler == nullptr && args.size() >= 2) {
    if (const CommandSpec* sub = services.commands().FindSub(spec->name, args[1]); sub != nullptr) {
      spec = sub;
    }
  }
  const int arity = spec->arity;
  if ((arity > 0 && static_cast<int>(args.size()) != arity) ||
      (arity < 0 && static_cast<int>(args.size()) < -arity)) {
    return fail("ERR Wrong number of args calling Redis command from script");
  }
  if (spec->flags & kNoScript) return fail("ERR This Redis command is not allowed from script");
  if ((spec->flags & kWrite) && run->invocation.read_only) {
    return fail("ERR Write commands are not allowed from read-only scripts.");
  }
  // The checks the dispatcher skips for the script client (it runs as inside EXEC), made per
  // write as Redis's scriptVerifyWriteCommandAllow and scriptVerifyOOM make them.
  if (spec->flags & kWrite) {
    if (services.snapshots().writes_refused())
      return fail(ErrorTableText(StrCat("-", errors::kMisconf)));
    if (services.aof().writes_refused()) {
      return fail(
          ErrorTableText(StrCat("-", errors::kMisconfAofPrefix, services.aof().last_error())));
    }
  }
  if ((spec->flags & kDenyOom) && run->invocation.oom_at_start && !services.scripts().wrote()) {
    return fail(ErrorTableText(StrCat("-", errors::kOom)));
  }
  protocol::ReplyBuilder& call_reply = run->call_reply;
  call_reply.buffer().clear();
  call_reply.set_resp_version(run->resp);
  run->script_client.resp = run->resp;
  // SCRIPT KILL cannot stop a script that wrote (half its writes would stay), as in Redis.
  if (spec->flags & kWrite) services.scripts().MarkWrote();
  services.dispatcher().Execute(run->script_client, args, call_reply);
  const std::string_view bytes = call_reply.buffer();
  size_t at = 0;
  if (!bytes.empty() && bytes[0] == '-') {
    const size_t end = bytes.find("\r\n");
    // The command counted its error; the script passing it on does not count it again.
    const std::string text =
        ErrorTableText(bytes.substr(0, end == std::string_view::npos ? bytes.size() : end));
    if (raise) RaiseErrorTable(lua, text, /*counted=*/true);
    PushErrorTable(lua, text, /*counted=*/true);
    return 1;
  }
  if (!PushReply(lua, bytes, &at)) {
    lua_settop(lua, argc);
    return fail("ERR the command's reply could not be read");
  }
  return 1;
}

int LuaEngine::RedisSetResp(lua_State* lua) {
  if (lua_gettop(lua) != 1) RaiseErrorTable(lua, "ERR redis.setresp() requires one argument.");
  const int version = static_cast<int>(lua_tonumber(lua, -1));
  if (version != 2 && version != 3) RaiseErrorTable(lua, "ERR RESP version must be 2 or 3.");
  LuaEngine* engine = EngineOf(lua);
  if (engine != nullptr && engine->running_ != nullptr) engine->running_->resp = version;
  return 0;
}

// redis.acl_check_cmd(command, ...): whether the user may run it. gigakv has no ACL users yet,
// so every known command is allowed.
int LuaEngine::RedisAclCheckCmd(lua_State* lua) {
  LuaEngine* engine = EngineOf(lua);
  RunState* run = engine == nullptr ? nullptr : engine->running_;
  if (lua_gettop(lua) < 1)
    RaiseErrorTable(lua, "ERR Please specify at least one argument for this redis lib call");
  size_t length = 0;
  const char* name = lua_tolstring(lua, 1, &length);
  if (run == nullptr || name == nullptr ||
      run->invocation.caller.services.commands().Find(std::string_view(name, length)) == nullptr) {
    RaiseErrorTable(lua, "ERR Invalid command passed to redis.acl_check_cmd()");
  }
  lua_pushboolean(lua, 1);
  return 1;
}

void LuaEngine::ArmInterrupt(bool kill) {
  // Every 1,000 instructions: a busy script's thread answers its other clients within a
  // fraction of a millisecond. A kill raises on every line and instruction from then on, so a
  // pcall in a loop cannot swallow it; nothing arms the hook down again until the script ends.
  if (kill || kill_armed_.load(std::memory_order_acquire)) {
    kill_armed_.store(true, std::memory_order_release);
    lua_sethook(lua_, Hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
  } else {
    lua_sethook(lua_, Hook, LUA_MASKCOUNT, 1000);
  }
}

void LuaEngine::Hook(lua_State* lua, lua_Debug* debug) {
  (void)debug;
  LuaEngine* engine = EngineOf(lua);
  RunState* run = engine == nullptr ? nullptr : engine->running_;
  if (run == nullptr) return;
  const CommandServices& services = run->invocation.caller.services;
  if (!engine->killed_ &&
      (services.scripts().kill_requested() || services.lifecycle().shutdown_requested())) {
    engine->killed_ = true;
    spdlog::warn("Lua script killed by user with SCRIPT KILL.");
    // From now on every line raises again, so that a pcall in a loop cannot swallow it.
    engine->ArmInterrupt(/*kill=*/true);
  }
  if (engine->killed_) RaiseErrorTable(lua, "ERR Script killed by user with SCRIPT KILL...");
  ServeWhileBusy();
}

// ---- functions (FUNCTION LOAD) ----------------------------------------------------------------

struct LuaEngine::LoadState {
  std::vector<RegisteredFunction>* registered;
  std::chrono::steady_clock::time_point start;
  int64_t timeout_ms;
};

void LuaEngine::SetGlobalsView(const char* key) {
  lua_getmetatable(lua_, LUA_GLOBALSINDEX);  // The globals' proxy's metatable (plain).
  lua_getfield(lua_, LUA_REGISTRYINDEX, key);
  lua_setfield(lua_, -2, "__index");
  lua_pop(lua_, 1);
}

bool LuaEngine::LoadLibrary(std::string_view code, int64_t timeout_ms,
                            std::vector<RegisteredFunction>* registered, std::string* error) {
  registered->clear();
  if (kind_ != Kind::kFunctions) {
    *error = "Error registering functions: ERR not a functions engine";
    return false;
  }
  if (!LoadChunk(lua_, code, "@user_function", "Error compiling function: ", error)) return false;
  LoadState load{registered, std::chrono::steady_clock::now(), timeout_ms};
  loading_ = &load;
  SetGlobalsView(kLibraryApiKey);
  lua_sethook(lua_, LoadHook, LUA_MASKCOUNT, 100000);
  const int status = lua_pcall(lua_, 0, 0, 0);
  lua_sethook(lua_, nullptr, 0, 0);
  SetGlobalsView(kGlobalsKey);
  loading_ = nullptr;
  if (status != 0) {
    // An error table raised by the API ({err = "ERR ..."}), or Lua's own message.
    std::string message = "ERR unknown error";
    if (lua_istable(lua_, -1)) {
      if (GetField(lua_, "err") == LUA_TSTRING) message = lua_tostring(lua_, -1);
      lua_pop(lua_, 1);
    } else if (const char* text = lua_tostring(lua_, -1); text != nullptr) {
      message = StrCat("ERR ", text);
    }
    lua_pop(lua_, 1);
    *error = StrCat("Error registering functions: ", message);
    Release(*registered);
    registered->clear();
    return false;
  }
  ReportMemory();
  return true;
}

void LuaEngine::Release(const std::vector<RegisteredFunction>& functions) {
  for (const RegisteredFunction& function : functions) {
    luaL_unref(lua_, LUA_REGISTRYINDEX, function.ref);
  }
}

void LuaEngine::LoadHook(lua_State* lua, lua_Debug* debug) {
  (void)debug;
  LuaEngine* engine = EngineOf(lua);
  LoadState* load = engine == nullptr ? nullptr : engine->loading_;
  if (load == nullptr || load->timeout_ms <= 0) return;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - load->start)
                           .count();
  if (elapsed <= load->timeout_ms) return;
  // From now on every line raises, so that a pcall in a loop cannot swallow it.
  lua_sethook(lua, LoadHook, LUA_MASKLINE, 0);
  RaiseErrorTable(lua, "ERR FUNCTION LOAD timeout");
}

namespace {

// Function and library names: letters, digits and underscores, at least one (Redis's
// functionsVerifyName).
bool ValidFunctionName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// The string (or number, as text) at `index`, without converting the value in place.
bool CopyString(lua_State* lua, int index, std::string* out) {
  if (!lua_isstring(lua, index)) return false;
  lua_pushvalue(lua, index);
  size_t length = 0;
  const char* data = lua_tolstring(lua, -1, &length);
  out->assign(data, length);
  lua_pop(lua, 1);
  return true;
}

}  // namespace

// redis.register_function(name, callback) or redis.register_function{function_name=...,
// callback=..., flags={...}, description=...}, with Redis's checks and error texts.
int LuaEngine::RegisterFunction(lua_State* lua) {
  LuaEngine* engine = EngineOf(lua);
  LoadState* load = engine == nullptr ? nullptr : engine->loading_;
  if (load == nullptr) {
    RaiseErrorTable(lua, "ERR redis.register_function can only be called on FUNCTION LOAD command");
  }
  const int argc = lua_gettop(lua);
  if (argc < 1 || argc > 2) {
    RaiseErrorTable(lua, "ERR wrong number of arguments to redis.register_function");
  }
  RegisteredFunction function;
  if (argc == 1) {
    if (!lua_istable(lua, 1)) {
      RaiseErrorTable(lua,
                      "ERR calling redis.register_function with a single argument is only "
                      "applicable to Lua table (representing named arguments).");
    }
    lua_settop(lua, 2);  // Slot 2 holds the callback once found.
    bool has_name = false;
    lua_pushnil(lua);
    while (lua_next(lua, 1) != 0) {
      std::string key;
      if (!CopyString(lua, -2, &key)) {
        RaiseErrorTable(lua,
                        "ERR named argument key given to redis.register_function is not a string");
      }
      if (EqualsIgnoreCase(key, "function_name")) {
        if (!CopyString(lua, -1, &function.name)) {
          RaiseErrorTable(
              lua, "ERR function_name argument given to redis.register_function must be a string");
        }
        has_name = true;
      } else if (EqualsIgnoreCase(key, "description")) {
        std::string description;
        if (!CopyString(lua, -1, &description)) {
          RaiseErrorTable(
              lua, "ERR description argument given to redis.register_function must be a string");
        }
        function.description = std::move(description);
      } else if (EqualsIgnoreCase(key, "callback")) {
        if (!lua_isfunction(lua, -1)) {
          RaiseErrorTable(
              lua, "ERR callback argument given to redis.register_function must be a function");
        }
        lua_pushvalue(lua, -1);
        lua_replace(lua, 2);
      } else if (EqualsIgnoreCase(key, "flags")) {
        if (!lua_istable(lua, -1)) {
          RaiseErrorTable(lua,
                          "ERR flags argument to redis.register_function must be a table "
                          "representing function flags");
        }
        for (int j = 1;; ++j) {
          lua_rawgeti(lua, -1, j);
          if (lua_isnil(lua, -1)) {
            lua_pop(lua, 1);
            break;
          }
          std::string flag;
          const bool is_string = CopyString(lua, -1, &flag);
          lua_pop(lua, 1);
          bool found = false;
          for (const ScriptFlagName& known : kScriptFlagNames) {
            if (is_string && EqualsIgnoreCase(flag, known.name)) {
              function.flags |= known.flag;
              found = true;
              break;
            }
          }
          if (!found) RaiseErrorTable(lua, "ERR unknown flag given");
        }
      } else {
        RaiseErrorTable(lua, "ERR unknown argument given to redis.register_function");
      }
      lua_pop(lua, 1);  // The value; the key stays for lua_next.
    }
    if (!has_name) {
      RaiseErrorTable(lua, "ERR redis.register_function must get a function name argument");
    }
    if (!lua_isfunction(lua, 2)) {
      RaiseErrorTable(lua, "ERR redis.register_function must get a callback argument");
    }
  } else {
    if (!CopyString(lua, 1, &function.name)) {
      RaiseErrorTable(lua, "ERR first argument to redis.register_function must be a string");
    }
    if (!lua_isfunction(lua, 2)) {
      RaiseErrorTable(lua, "ERR second argument to redis.register_function must be a function");
    }
  }
  // Redis's text names libraries here too.
  if (!ValidFunctionName(function.name)) {
    RaiseErrorTable(lua,
                    "ERR Library names can only contain letters, numbers, or underscores(_) and "
                    "must be at least one character long");
  }
  for (const RegisteredFunction& other : *load->registered) {
    if (other.name == function.name) {
      RaiseErrorTable(lua, "ERR Function already exists in the library");
    }
  }
  lua_pushvalue(lua, 2);
  function.ref = luaL_ref(lua, LUA_REGISTRYINDEX);
  load->registered->push_back(std::move(function));
  return 0;
}

LuaEngine& ThreadEngine(uint64_t generation) {
  thread_local std::unique_ptr<LuaEngine> engine;
  if (engine == nullptr || engine->generation() != generation) {
    engine = std::make_unique<LuaEngine>(generation);
  }
  return *engine;
}

}  // namespace gigakv::server
