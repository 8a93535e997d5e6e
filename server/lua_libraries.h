// The Lua libraries Redis 7.0 loads for scripts that Debian does not package, rewritten to produce
// the same bytes and the same errors as Redis's copies (deps/lua/src/lua_cmsgpack.c and
// lua_struct.c) under LuaJIT's Lua 5.1 API:
// - cmsgpack (lua_cmsgpack.cc): MessagePack encoding of Lua values, cmsgpack.pack(...),
//   cmsgpack.unpack(s), cmsgpack.unpack_one(s [, offset]), cmsgpack.unpack_limit(s, n [, offset]).
// - struct (lua_struct.cc): C structures to and from strings, struct.pack(fmt, ...),
//   struct.unpack(fmt, s [, pos]), struct.size(fmt).
//
// Each Open* function is a lua_CFunction that pushes its library's table and returns 1, as a
// luaopen_* function does, but sets no global: the caller names it.
#pragma once

struct lua_State;

namespace gigakv {

int OpenCmsgpack(lua_State* lua);
int OpenStruct(lua_State* lua);

}  // namespace gigakv
