// cmsgpack for scripts: the MessagePack subset that Redis 7.0's lua_cmsgpack.c (lua-cmsgpack
// 0.4.0) writes and reads, with its encoding choices, its limits and its error texts, so that a
// script packs the same bytes and fails with the same messages under gigakv as under Redis.
//
// What pack writes for a Lua value (multi-byte numbers big-endian; uN / iN an N-bit unsigned /
// two's-complement integer, fN an IEEE 754 float of N bits):
//
//   value   := nil | boolean | integer | float | string | array | map
//   nil     := c0                      nil, functions, userdata, threads, and any table nested
//                                      16 tables deep (so cyclic tables end)
//   boolean := c2 | c3                 false | true
//   integer := 00..7f | e0..ff         positive fixint 0..127 | negative fixint -32..-1
//            | cc u8 | cd u16 | ce u32 | cf u64     n >= 0: the smallest that holds n
//            | d0 i8 | d1 i16 | d2 i32 | d3 i64     n < 0: the smallest that holds n
//   float   := ca f32 | cb f64         f32 when the double survives the trip through a float
//   string  := a0..bf byte{0..31} | d9 u8 byte* | da u16 byte* | db u32 byte*
//   array   := 90..9f value{0..15} | dc u16 value* | dd u32 value*
//   map     := 80..8f (value value){0..15} | de u16 (value value)* | df u32 (value value)*
//
// A number is an integer when it is integral and within int64 (-0.0 packs as 0, 2^63 as cb).
// A table is an array when its keys are exactly the integers 1..n (so {} is an empty array),
// else a map, its pairs in lua_next order. That order is LuaJIT's, not Lua 5.1's: a map of more
// than one key may list its pairs in another order than Redis's.
//
// unpack reads the forms above back (both lengths of every form, e.g. d9 for short strings too);
// every number becomes a Lua number (a u64 above 2^63-1 comes back negative, as in Redis); c1,
// bin (c4..c6) and ext (c7..c9, d4..d8) are "Bad data format in input.", and a value cut short
// is "Missing bytes in input.". unpack_one and unpack_limit return first the offset where the
// next value starts, -1 once the input is used up.

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <lua.hpp>
#include <string>

#include "server/lua_libraries.h"

namespace gigakv {
namespace {

constexpr int kMaxNesting = 16;  // LUACMSGPACK_MAX_NESTING: deeper tables pack as nil.

// ---- encoding --------------------------------------------------------------------------------

void PutBigEndian(std::string* out, uint64_t value, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

void PutTagged(std::string* out, unsigned char tag, uint64_t value, int bytes) {
  out->push_back(static_cast<char>(tag));
  PutBigEndian(out, value, bytes);
}

void EncodeBytes(std::string* out, const char* data, size_t size) {
  if (size < 32) {
    out->push_back(static_cast<char>(0xa0 | size));
  } else if (size <= 0xff) {
    PutTagged(out, 0xd9, size, 1);
  } else if (size <= 0xffff) {
    PutTagged(out, 0xda, size, 2);
  } else {
    PutTagged(out, 0xdb, size & 0xffffffff, 4);
  }
  out->append(data, size);
}

void EncodeInteger(std::string* out, int64_t n) {
  const auto bits = static_cast<uint64_t>(n);
  if (n >= 0) {
    if (n <= 127) {
      out->push_back(static_cast<char>(n));
    } else if (n <= 0xff) {
      PutTagged(out, 0xcc, bits, 1);
    } else if (n <= 0xffff) {
      PutTagged(out, 0xcd, bits, 2);
    } else if (n <= 0xffffffffLL) {
      PutTagged(out, 0xce, bits, 4);
    } else {
      PutTagged(out, 0xcf, bits, 8);
    }
  } else if (n >= -32) {
    out->push_back(static_cast<char>(bits & 0xff));
  } else if (n >= -128) {
    PutTagged(out, 0xd0, bits, 1);
  } else if (n >= -32768) {
    PutTagged(out, 0xd1, bits, 2);
  } else if (n >= INT32_MIN) {
    PutTagged(out, 0xd2, bits, 4);
  } else {
    PutTagged(out, 0xd3, bits, 8);
  }
}

// f32 when the double converts to a float and back unchanged (infinities do; NaN never does).
void EncodeDouble(std::string* out, double d) {
  // A finite double beyond FLT_MAX cannot survive (and its conversion is undefined in C++).
  if (!(std::isfinite(d) && std::fabs(d) > FLT_MAX)) {
    const auto f = static_cast<float>(d);
    if (static_cast<double>(f) == d) {
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      PutTagged(out, 0xca, bits, 4);
      return;
    }
  }
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  PutTagged(out, 0xcb, bits, 8);
}

// The int64 equal to `d`, if there is one (Redis: !isinf(d) && (int64_t)d == d).
bool AsInt64(double d, int64_t* out) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;  // NaN too.
  const auto n = static_cast<int64_t>(d);
  if (static_cast<double>(n) != d) return false;
  *out = n;
  return true;
}

// Writes an array's or a map's header: the fix form for up to 15 entries, else 16 or 32 bits.
void EncodeCount(std::string* out, uint64_t count, unsigned char fix, unsigned char tag16,
                 unsigned char tag32) {
  if (count <= 15) {
    out->push_back(static_cast<char>(fix | count));
  } else if (count <= 0xffff) {
    PutTagged(out, tag16, count, 2);
  } else {
    PutTagged(out, tag32, count & 0xffffffff, 4);
  }
}

// Whether the table on top has exactly the keys 1..n (table_is_an_array): every key a number,
// positive, integral and within int, and the largest equal to the count.
bool TableIsArray(lua_State* lua) {
  const int top = lua_gettop(lua);
  luaL_checkstack(lua, 2, "in function table_is_an_array");
  int count = 0;
  int max = 0;
  lua_pushnil(lua);
  while (lua_next(lua, -2) != 0) {
    lua_pop(lua, 1);
    const double key = lua_type(lua, -1) == LUA_TNUMBER ? lua_tonumber(lua, -1) : 0;
    if (!(key > 0 && key <= INT_MAX && key == std::floor(key))) {
      lua_settop(lua, top);
      return false;
    }
    if (key > max) max = static_cast<int>(key);
    ++count;
  }
  lua_settop(lua, top);
  return max == count;
}

void EncodeValue(lua_State* lua, std::string* out, int level);

void EncodeArray(lua_State* lua, std::string* out, int level) {
  const size_t length = lua_objlen(lua, -1);
  EncodeCount(out, length, 0x90, 0xdc, 0xdd);
  luaL_checkstack(lua, 1, "in function mp_encode_lua_table_as_array");
  for (size_t i = 1; i <= length; ++i) {
    lua_rawgeti(lua, -1, static_cast<int>(i));
    EncodeValue(lua, out, level + 1);
  }
}

void EncodeMap(lua_State* lua, std::string* out, int level) {
  luaL_checkstack(lua, 3, "in function mp_encode_lua_table_as_map");
  size_t count = 0;
  lua_pushnil(lua);
  while (lua_next(lua, -2) != 0) {
    lua_pop(lua, 1);
    ++count;
  }
  EncodeCount(out, count, 0x80, 0xde, 0xdf);
  lua_pushnil(lua);
  while (lua_next(lua, -2) != 0) {  // table, key, value
    lua_pushvalue(lua, -2);         // table, key, value, key
    EncodeValue(lua, out, level + 1);
    EncodeValue(lua, out, level + 1);
  }
}

// Appends the value on top of the stack, and pops it.
void EncodeValue(lua_State* lua, std::string* out, int level) {
  int type = lua_type(lua, -1);
  if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t size = 0;
      const char* data = lua_tolstring(lua, -1, &size);
      EncodeBytes(out, data, size);
      break;
    }
    case LUA_TBOOLEAN:
      out->push_back(static_cast<char>(lua_toboolean(lua, -1) ? 0xc3 : 0xc2));
      break;
    case LUA_TNUMBER: {
      const double d = lua_tonumber(lua, -1);
      int64_t n = 0;
      if (AsInt64(d, &n)) {
        EncodeInteger(out, n);
      } else {
        EncodeDouble(out, d);
      }
      break;
    }
    case LUA_TTABLE:
      if (TableIsArray(lua)) {
        EncodeArray(lua, out, level);
      } else {
        EncodeMap(lua, out, level);
      }
      break;
    default:
      out->push_back(static_cast<char>(0xc0));
      break;
  }
  lua_pop(lua, 1);
}

// cmsgpack.pack(v1, ...): the encodings of all arguments, one after the other. Like Redis's, it
// leaves each argument's encoding on the stack and concatenates them at the end, so that the same
// number of arguments runs out of stack.
int Pack(lua_State* lua) {
  const int nargs = lua_gettop(lua);
  if (nargs == 0) return luaL_argerror(lua, 0, "MessagePack pack needs input.");
  if (!lua_checkstack(lua, nargs)) {
    return luaL_argerror(lua, 0, "Too many arguments for MessagePack pack.");
  }
  std::string buffer;
  for (int i = 1; i <= nargs; ++i) {
    luaL_checkstack(lua, 1, "in function mp_check");
    lua_pushvalue(lua, i);
    buffer.clear();
    EncodeValue(lua, &buffer, 0);
    lua_pushlstring(lua, buffer.data(), buffer.size());
  }
  lua_concat(lua, nargs);
  return 1;
}

// ---- decoding --------------------------------------------------------------------------------

enum class DecodeError { kNone, kMissingBytes, kBadFormat };

struct Cursor {
  const unsigned char* p;
  size_t left;
  DecodeError error;
};

bool Need(Cursor* cursor, size_t bytes) {
  if (cursor->left >= bytes) return true;
  cursor->error = DecodeError::kMissingBytes;
  return false;
}

void Consume(Cursor* cursor, size_t bytes) {
  cursor->p += bytes;
  cursor->left -= bytes;
}

uint64_t ReadBigEndian(const unsigned char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | p[i];
  return value;
}

// Reads the `bytes`-byte big-endian number after the tag byte and consumes both.
bool ReadTagged(Cursor* cursor, int bytes, uint64_t* value) {
  if (!Need(cursor, 1 + bytes)) return false;
  *value = ReadBigEndian(cursor->p + 1, bytes);
  Consume(cursor, 1 + bytes);
  return true;
}

void DecodeValue(lua_State* lua, Cursor* cursor);

void DecodeArray(lua_State* lua, Cursor* cursor, uint64_t length) {
  lua_newtable(lua);
  luaL_checkstack(lua, 1, "in function mp_decode_to_lua_array");
  for (uint64_t i = 1; i <= length; ++i) {
    lua_pushnumber(lua, static_cast<double>(i));
    DecodeValue(lua, cursor);
    if (cursor->error != DecodeError::kNone) return;
    lua_rawset(lua, -3);
  }
}

void DecodeMap(lua_State* lua, Cursor* cursor, uint64_t length) {
  lua_newtable(lua);
  for (uint64_t i = 0; i < length; ++i) {
    DecodeValue(lua, cursor);  // The key.
    if (cursor->error != DecodeError::kNone) return;
    DecodeValue(lua, cursor);  // The value.
    if (cursor->error != DecodeError::kNone) return;
    lua_settable(lua, -3);  // Raises for a nil or NaN key, as Redis's.
  }
}

void PushBytes(lua_State* lua, Cursor* cursor, size_t header, uint64_t size) {
  Consume(cursor, header);
  if (!Need(cursor, size)) return;
  lua_pushlstring(lua, reinterpret_cast<const char*>(cursor->p), size);
  Consume(cursor, size);
}

// Pushes the value at the cursor (on success only; the error is left in the cursor).
void DecodeValue(lua_State* lua, Cursor* cursor) {
  if (!Need(cursor, 1)) return;
  // One slot a value: a stream of many top-level values runs out of stack (Redis's text).
  luaL_checkstack(lua, 1,
                  "too many return values at once; use unpack_one or unpack_limit instead.");
  const unsigned char tag = cursor->p[0];
  uint64_t value = 0;
  switch (tag) {
    case 0xc0:
      lua_pushnil(lua);
      Consume(cursor, 1);
      return;
    case 0xc2:
    case 0xc3:
      lua_pushboolean(lua, tag == 0xc3);
      Consume(cursor, 1);
      return;
    case 0xcc:  // uint 8, 16, 32, 64 (above 2^63-1 wraps to negative, as lua_pushinteger's).
    case 0xcd:
    case 0xce:
    case 0xcf:
      if (ReadTagged(cursor, 1 << (tag - 0xcc), &value)) {
        lua_pushnumber(lua, static_cast<double>(static_cast<int64_t>(value)));
      }
      return;
    case 0xd0:
      if (ReadTagged(cursor, 1, &value)) {
        lua_pushnumber(lua, static_cast<int8_t>(value));
      }
      return;
    case 0xd1:
      if (ReadTagged(cursor, 2, &value)) {
        lua_pushnumber(lua, static_cast<int16_t>(value));
      }
      return;
    case 0xd2:
      if (ReadTagged(cursor, 4, &value)) {
        lua_pushnumber(lua, static_cast<int32_t>(value));
      }
      return;
    case 0xd3:
      if (ReadTagged(cursor, 8, &value)) {
        lua_pushnumber(lua, static_cast<double>(static_cast<int64_t>(value)));
      }
      return;
    case 0xca:
      if (ReadTagged(cursor, 4, &value)) {
        const auto bits = static_cast<uint32_t>(value);
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        lua_pushnumber(lua, f);
      }
      return;
    case 0xcb:
      if (ReadTagged(cursor, 8, &value)) {
        double d;
        std::memcpy(&d, &value, sizeof(d));
        lua_pushnumber(lua, d);
      }
      return;
    case 0xd9:
      if (Need(cursor, 2)) PushBytes(lua, cursor, 2, ReadBigEndian(cursor->p + 1, 1));
      return;
    case 0xda:
      if (Need(cursor, 3)) PushBytes(lua, cursor, 3, ReadBigEndian(cursor->p + 1, 2));
      return;
    case 0xdb:
      if (Need(cursor, 5)) PushBytes(lua, cursor, 5, ReadBigEndian(cursor->p + 1, 4));
      return;
    case 0xdc:
      if (ReadTagged(cursor, 2, &value)) DecodeArray(lua, cursor, value);
      return;
    case 0xdd:
      if (ReadTagged(cursor, 4, &value)) DecodeArray(lua, cursor, value);
      return;
    case 0xde:
      if (ReadTagged(cursor, 2, &value)) DecodeMap(lua, cursor, value);
      return;
    case 0xdf:
      if (ReadTagged(cursor, 4, &value)) DecodeMap(lua, cursor, value);
      return;
    default:
      break;
  }
  if ((tag & 0x80) == 0) {  // Positive fixint.
    lua_pushnumber(lua, tag);
    Consume(cursor, 1);
  } else if ((tag & 0xe0) == 0xe0) {  // Negative fixint.
    lua_pushnumber(lua, static_cast<int8_t>(tag));
    Consume(cursor, 1);
  } else if ((tag & 0xe0) == 0xa0) {  // Fixstr.
    if (Need(cursor, 1 + (tag & 0x1f))) PushBytes(lua, cursor, 1, tag & 0x1f);
  } else if ((tag & 0xf0) == 0x90) {  // Fixarray.
    Consume(cursor, 1);
    DecodeArray(lua, cursor, tag & 0x0f);
  } else if ((tag & 0xf0) == 0x80) {  // Fixmap.
    Consume(cursor, 1);
    DecodeMap(lua, cursor, tag & 0x0f);
  } else {  // c1, bin, ext.
    cursor->error = DecodeError::kBadFormat;
  }
}

// Decodes up to `limit` values from byte `offset` of argument 1 (everything when both are 0);
// unless both are 0, the offset of the next value (-1 at the end) comes first.
int UnpackFull(lua_State* lua, lua_Integer limit, lua_Integer offset) {
  size_t length = 0;
  const char* data = luaL_checklstring(lua, 1, &length);
  const bool decode_all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {
    // Redis's message shows the input's length where it says limit.
    return luaL_error(lua, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(length));
  }
  if (static_cast<size_t>(offset) > length) {
    return luaL_error(lua, "Start offset %d greater than input length %d.",
                      static_cast<int>(offset), static_cast<int>(length));
  }
  if (decode_all) limit = INT_MAX;
  Cursor cursor{reinterpret_cast<const unsigned char*>(data) + offset,
                length - static_cast<size_t>(offset), DecodeError::kNone};
  int count = 0;
  for (; cursor.left > 0 && count < limit; ++count) {
    DecodeValue(lua, &cursor);
    if (cursor.error == DecodeError::kMissingBytes) {
      return luaL_error(lua, "Missing bytes in input.");
    }
    if (cursor.error == DecodeError::kBadFormat) {
      return luaL_error(lua, "Bad data format in input.");
    }
  }
  if (!decode_all) {
    luaL_checkstack(lua, 1, "in function mp_unpack_full");
    lua_pushinteger(lua, cursor.left == 0 ? -1 : static_cast<lua_Integer>(length - cursor.left));
    lua_insert(lua, 2);
    ++count;
  }
  return count;
}

// cmsgpack.unpack(s): every value in s. (Extra arguments stay below the results, as in Redis.)
int Unpack(lua_State* lua) { return UnpackFull(lua, 0, 0); }

// Keeps only argument 1 (Redis pops the others; with no argument there is nothing to pop).
void KeepFirstArgument(lua_State* lua) {
  if (lua_gettop(lua) > 1) lua_settop(lua, 1);
}

// cmsgpack.unpack_one(s [, offset]): the next offset and one value.
int UnpackOne(lua_State* lua) {
  const lua_Integer offset = luaL_optinteger(lua, 2, 0);
  KeepFirstArgument(lua);
  return UnpackFull(lua, 1, offset);
}

// cmsgpack.unpack_limit(s, limit [, offset]): the next offset and up to `limit` values (all of
// them, and no offset, when limit and offset are both 0).
int UnpackLimit(lua_State* lua) {
  const lua_Integer limit = luaL_checkinteger(lua, 2);
  const lua_Integer offset = luaL_optinteger(lua, 3, 0);
  KeepFirstArgument(lua);
  return UnpackFull(lua, limit, offset);
}

}  // namespace

int OpenCmsgpack(lua_State* lua) {
  lua_newtable(lua);
  const luaL_Reg functions[] = {
      {"pack", Pack},
      {"unpack", Unpack},
      {"unpack_one", UnpackOne},
      {"unpack_limit", UnpackLimit},
  };
  for (const luaL_Reg& function : functions) {
    lua_pushcfunction(lua, function.func);
    lua_setfield(lua, -2, function.name);
  }
  const char* const fields[][2] = {
      {"_NAME", "cmsgpack"},
      {"_VERSION", "lua-cmsgpack 0.4.0"},
      {"_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"},
      {"_DESCRIPTION", "MessagePack C implementation for Lua"},
  };
  for (const auto& field : fields) {
    lua_pushstring(lua, field[1]);
    lua_setfield(lua, -2, field[0]);
  }
  return 1;
}

}  // namespace gigakv
