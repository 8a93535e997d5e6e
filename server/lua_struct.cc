// struct for scripts: Roberto Ierusalimschy's library for packing C structures into strings and
// back (struct.c 1.7) as Redis 7.0.15 ships it, with its fixes (CVE-2020-14147: a count in a
// format cannot overflow int; unpack checks every size against the data), byte for byte and
// error for error as Redis on x86-64 Linux.
//
// struct.pack(fmt, v1, ...) -> string; struct.unpack(fmt, s [, pos]) -> v1, ..., next_pos (pos and
// next_pos 1-based); struct.size(fmt) -> the length pack writes for fmt. The format language:
//
//   format := option*
//   option := ' '              ignored
//           | '<' | '>'        little / big endian from here on (native, little, at the start)
//           | '!' [n]          maximum alignment n, a power of 2 (default 8; 1 at the start)
//           | 'x'              one zero byte (unpack skips a byte)
//           | 'b' | 'B'        signed / unsigned char (1 byte)
//           | 'h' | 'H'        short (2 bytes)
//           | 'l' | 'L'        long (8 bytes)
//           | 'T'              size_t (8 bytes, unsigned)
//           | 'i' [n] | 'I' [n]  signed / unsigned integer of n bytes, n <= 32 (default 4)
//           | 'f' | 'd'        float (4 bytes) / double (8 bytes)
//           | 'c' [n]          n bytes of a string (default 1). Packing, c0 is the whole string;
//                              unpacking, c0 reads as many bytes as the previous result says
//           | 's'              a zero-terminated string
//   n      := digit+           at most INT_MAX ("integral size overflow")
//
// Before an option of size s (not c or s) come zero bytes up to the next multiple of min(s,
// alignment), computed as Redis's (a - pos % a) % a with a mask, which for an odd integer size
// such as i3 is not a multiple. Integers are 64-bit inside: pack converts a negative number
// through int64, another through uint64 (x86-64's conversions, so out of range becomes 2^63 or
// 0), and writes its low n bytes (zeros past the 8th); unpack keeps the last 8 bytes read,
// sign-extends signed options from bit 8n-1 (shift count taken mod 64, as x86 does) and returns
// a Lua number. struct.size accepts letters that are no option (they count 0 bytes) where pack
// and unpack refuse them.

#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <lua.hpp>
#include <utility>

#include "server/lua_libraries.h"

namespace gigakv {
namespace {

constexpr int kMaxIntSize = 32;  // MAXINTSIZE.
constexpr int kMaxAlign = 8;     // MAXALIGN on x86-64: a double's alignment.

enum Endian { kBig, kLittle };
constexpr Endian kNative = std::endian::native == std::endian::little ? kLittle : kBig;

// What the control options set.
struct Header {
  Endian endian = kNative;
  int align = 1;
};

bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsAlnum(int c) { return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The count after an option, or `default_value` without one.
int ReadCount(lua_State* lua, const char** fmt, int default_value) {
  if (!IsDigit(**fmt)) return default_value;
  int count = 0;
  do {
    const int digit = **fmt - '0';
    if (count > INT_MAX / 10 || count * 10 > INT_MAX - digit) {
      luaL_error(lua, "integral size overflow");
    }
    count = count * 10 + digit;
    ++*fmt;
  } while (IsDigit(**fmt));
  return count;
}

// The size of option `opt` (reading its count), 0 for options that take no room by themselves.
size_t OptionSize(lua_State* lua, int opt, const char** fmt) {
  switch (opt) {
    case 'b':
    case 'B':
    case 'x':
      return 1;
    case 'h':
    case 'H':
      return 2;
    case 'f':
      return 4;
    case 'l':
    case 'L':
    case 'T':
    case 'd':
      return 8;
    case 'c':
      return ReadCount(lua, fmt, 1);
    case 'i':
    case 'I': {
      const int size = ReadCount(lua, fmt, 4);
      if (size > kMaxIntSize) {
        luaL_error(lua, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      }
      return size;
    }
    default:
      return 0;
  }
}

// The padding before an item of `size` bytes at `pos` (gettoalign).
size_t Padding(size_t pos, const Header& header, int opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > static_cast<size_t>(header.align)) size = header.align;
  return (size - (pos & (size - 1))) & (size - 1);
}

// Applies a control option (controloptions); anything else is an invalid option.
void ControlOption(lua_State* lua, int opt, const char** fmt, Header* header) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      header->endian = kBig;
      return;
    case '<':
      header->endian = kLittle;
      return;
    case '!': {
      const int align = ReadCount(lua, fmt, kMaxAlign);
      if (align <= 0 || (align & (align - 1)) != 0) {
        luaL_error(lua, "alignment %d is not a power of 2", align);
      }
      header->align = align;
      return;
    }
    default:
      luaL_argerror(lua, 1, lua_pushfstring(lua, "invalid format option '%c'", opt));
  }
}

bool IsIntegerOption(int opt) {
  switch (opt) {
    case 'b':
    case 'B':
    case 'h':
    case 'H':
    case 'l':
    case 'L':
    case 'T':
    case 'i':
    case 'I':
      return true;
    default:
      return false;
  }
}

// (uint64_t)d as GCC compiles it for x86-64, defined for every double: in range, truncation;
// NaN and what int64 cannot hold below 2^63 give 2^63; 2^64 and above give 0.
uint64_t ToUint64(double d) {
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr uint64_t kTopBit = uint64_t{1} << 63;
  if (std::isnan(d)) return kTopBit;
  if (d < kTwo63) return d >= -kTwo63 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : kTopBit;
  if (d < 2 * kTwo63) return static_cast<uint64_t>(static_cast<int64_t>(d - kTwo63)) ^ kTopBit;
  return 0;
}

// (float)d as x86-64 rounds it: a finite double beyond FLT_MAX becomes FLT_MAX or infinity.
float ToFloat(double d) {
  if (!std::isfinite(d) || std::fabs(d) <= FLT_MAX) return static_cast<float>(d);
  constexpr double kOverflow = 340282356779733661637539395458142568448.0;  // 2^128 - 2^103.
  const float magnitude = std::fabs(d) >= kOverflow ? HUGE_VALF : FLT_MAX;
  return d < 0 ? -magnitude : magnitude;
}

// Reverses the `size` bytes at `bytes` when `endian` is not the machine's (correctbytes).
void CorrectBytes(char* bytes, size_t size, Endian endian) {
  if (endian == kNative) return;
  for (size_t i = 0, j = size - 1; i < j; ++i, --j) std::swap(bytes[i], bytes[j]);
}

void PutInteger(lua_State* lua, luaL_Buffer* buffer, int arg, Endian endian, size_t size) {
  uint64_t value = ToUint64(luaL_checknumber(lua, arg));
  char bytes[kMaxIntSize];
  for (size_t i = 0; i < size; ++i) {
    bytes[endian == kLittle ? i : size - 1 - i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  luaL_addlstring(buffer, bytes, size);
}

double GetInteger(const char* data, Endian endian, bool is_signed, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i) {
    value = (value << 8) | static_cast<unsigned char>(data[endian == kBig ? i : size - 1 - i]);
  }
  if (!is_signed) return static_cast<double>(value);
  const uint64_t mask = ~uint64_t{0} << ((size * 8 - 1) & 63);
  if ((value & mask) != 0) value |= mask;
  return static_cast<double>(static_cast<int64_t>(value));
}

// struct.pack(fmt, v1, ...).
int Pack(lua_State* lua) {
  const char* fmt = luaL_checkstring(lua, 1);
  Header header;
  int arg = 2;
  size_t total = 0;
  // As in Redis, a nil between the arguments and the buffer's pieces: a missing argument is
  // "got nil", not "got no value".
  lua_pushnil(lua);
  luaL_Buffer buffer;
  luaL_buffinit(lua, &buffer);
  while (*fmt != '\0') {
    const int opt = static_cast<unsigned char>(*fmt++);
    size_t size = OptionSize(lua, opt, &fmt);
    const size_t padding = Padding(total, header, opt, size);
    total += padding;
    for (size_t i = 0; i < padding; ++i) luaL_addchar(&buffer, '\0');
    if (IsIntegerOption(opt)) {
      PutInteger(lua, &buffer, arg++, header.endian, size);
    } else if (opt == 'x') {
      luaL_addchar(&buffer, '\0');
    } else if (opt == 'f') {
      float f = ToFloat(luaL_checknumber(lua, arg++));
      CorrectBytes(reinterpret_cast<char*>(&f), sizeof(f), header.endian);
      luaL_addlstring(&buffer, reinterpret_cast<const char*>(&f), sizeof(f));
    } else if (opt == 'd') {
      double d = luaL_checknumber(lua, arg++);
      CorrectBytes(reinterpret_cast<char*>(&d), sizeof(d), header.endian);
      luaL_addlstring(&buffer, reinterpret_cast<const char*>(&d), sizeof(d));
    } else if (opt == 'c' || opt == 's') {
      size_t length = 0;
      const char* text = luaL_checklstring(lua, arg++, &length);
      if (size == 0) size = length;
      // Redis's check names the argument after the string.
      luaL_argcheck(lua, length >= size, arg, "string too short");
      luaL_addlstring(&buffer, text, size);
      if (opt == 's') {
        luaL_addchar(&buffer, '\0');
        ++size;
      }
    } else {
      ControlOption(lua, opt, &fmt, &header);
    }
    total += size;
  }
  luaL_pushresult(&buffer);
  return 1;
}

// struct.unpack(fmt, s [, pos]).
int Unpack(lua_State* lua) {
  const char* fmt = luaL_checkstring(lua, 1);
  size_t length = 0;
  const char* data = luaL_checklstring(lua, 2, &length);
  // As Redis's, the position is a size_t: a negative one passes this check (and then any option
  // finds the data too short; an empty format returns it as it came).
  size_t pos = static_cast<size_t>(luaL_optinteger(lua, 3, 1));
  luaL_argcheck(lua, pos > 0, 3, "offset must be 1 or greater");
  --pos;
  int results = 0;
  Header header;
  while (*fmt != '\0') {
    const int opt = static_cast<unsigned char>(*fmt++);
    size_t size = OptionSize(lua, opt, &fmt);
    pos += Padding(pos, header, opt, size);
    luaL_argcheck(lua, size <= length && pos <= length - size, 2, "data string too short");
    luaL_checkstack(lua, 2, "too many results");  // The item and the next position.
    if (IsIntegerOption(opt)) {
      const bool is_signed = opt >= 'a' && opt <= 'z';
      lua_pushnumber(lua, GetInteger(data + pos, header.endian, is_signed, size));
      ++results;
    } else if (opt == 'x') {
      // Skipped.
    } else if (opt == 'f') {
      float f;
      std::memcpy(&f, data + pos, sizeof(f));
      CorrectBytes(reinterpret_cast<char*>(&f), sizeof(f), header.endian);
      lua_pushnumber(lua, f);
      ++results;
    } else if (opt == 'd') {
      double d;
      std::memcpy(&d, data + pos, sizeof(d));
      CorrectBytes(reinterpret_cast<char*>(&d), sizeof(d), header.endian);
      lua_pushnumber(lua, d);
      ++results;
    } else if (opt == 'c') {
      if (size == 0) {  // The previous result (a number, or a string that reads as one).
        if (results == 0 || !lua_isnumber(lua, -1)) {
          luaL_error(lua, "format 'c0' needs a previous size");
        }
        size = ToUint64(lua_tonumber(lua, -1));
        lua_pop(lua, 1);
        --results;
        luaL_argcheck(lua, size <= length && pos <= length - size, 2, "data string too short");
      }
      lua_pushlstring(lua, data + pos, size);
      ++results;
    } else if (opt == 's') {
      const void* end = std::memchr(data + pos, '\0', length - pos);
      if (end == nullptr) luaL_error(lua, "unfinished string in data");
      size = static_cast<const char*>(end) - (data + pos) + 1;
      lua_pushlstring(lua, data + pos, size - 1);
      ++results;
    } else {
      ControlOption(lua, opt, &fmt, &header);
    }
    pos += size;
  }
  lua_pushinteger(lua, static_cast<lua_Integer>(pos + 1));
  return results + 1;
}

// struct.size(fmt).
int Size(lua_State* lua) {
  const char* fmt = luaL_checkstring(lua, 1);
  Header header;
  size_t pos = 0;
  while (*fmt != '\0') {
    const int opt = static_cast<unsigned char>(*fmt++);
    const size_t size = OptionSize(lua, opt, &fmt);
    pos += Padding(pos, header, opt, size);
    if (opt == 's') {
      luaL_argerror(lua, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(lua, 1, "option 'c0' has no fixed size");
    }
    if (!IsAlnum(opt)) ControlOption(lua, opt, &fmt, &header);
    pos += size;
  }
  lua_pushinteger(lua, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

int OpenStruct(lua_State* lua) {
  lua_newtable(lua);
  const luaL_Reg functions[] = {{"pack", Pack}, {"unpack", Unpack}, {"size", Size}};
  for (const luaL_Reg& function : functions) {
    lua_pushcfunction(lua, function.func);
    lua_setfield(lua, -2, function.name);
  }
  return 1;
}

}  // namespace gigakv
