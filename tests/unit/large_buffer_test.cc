// Large buffers (gigakv/large_buffer.h): prefaulting never changes contents, and ReserveLarge /
// CopyLarge behave as std::string's reserve and copy at every size around the threshold.
#include "gigakv/large_buffer.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

std::string RandomBytes(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

TEST(LargeBufferTest, PrefaultKeepsContentsAtAnyAlignment) {
  const size_t size = kLargeBufferBytes + 12345;
  std::unique_ptr<char[]> buffer(new char[size + 64]);
  const std::string expected = RandomBytes(size + 64, 1);
  for (size_t shift : {0, 1, 7, 63}) {
    std::memcpy(buffer.get(), expected.data(), expected.size());
    PrefaultForWrite(buffer.get() + shift, size);
    EXPECT_EQ(std::string_view(buffer.get(), expected.size()), expected) << shift;
  }
  // Small and empty ranges are left alone.
  PrefaultForWrite(buffer.get(), 10);
  PrefaultForWrite(buffer.get(), 0);
  EXPECT_EQ(std::string_view(buffer.get(), expected.size()), expected);
}

TEST(LargeBufferTest, ReserveLargeKeepsContentsAndGivesCapacity) {
  for (size_t initial : {size_t{0}, size_t{100}, kLargeBufferBytes - 1, kLargeBufferBytes + 3}) {
    for (size_t wanted :
         {size_t{50}, kLargeBufferBytes - 1, kLargeBufferBytes, 3 * kLargeBufferBytes + 5}) {
      std::string s = RandomBytes(initial, initial + wanted);
      const std::string before = s;
      ReserveLarge(s, wanted);
      EXPECT_EQ(s, before) << initial << " " << wanted;
      EXPECT_GE(s.capacity(), wanted);
      const char* data = s.data();
      s.resize(std::max(wanted, initial), 'z');  // Within capacity: no reallocation.
      EXPECT_EQ(s.data(), data);
      EXPECT_EQ(s.substr(0, initial), before);
    }
  }
}

// Growth in small steps past the threshold (APPEND, SETRANGE at the end, pipelined big GET
// replies) reallocates a logarithmic number of times, not on every step.
TEST(LargeBufferTest, ReserveLargeGrowsGeometrically) {
  std::string s(kLargeBufferBytes, 'x');
  int reallocations = 0;
  for (int step = 0; step < 2000; ++step) {
    const char* before = s.data();
    ReserveLarge(s, s.size() + 4096);
    s.append(4096, static_cast<char>('a' + step % 26));
    if (s.data() != before) ++reallocations;
  }
  EXPECT_LE(reallocations, 4);
  EXPECT_EQ(s.size(), kLargeBufferBytes + 2000 * 4096);
  EXPECT_EQ(s[kLargeBufferBytes - 1], 'x');
  EXPECT_EQ(s.back(), static_cast<char>('a' + 1999 % 26));
}

TEST(LargeBufferTest, CopyLargeEqualsTheValue) {
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{4096}, kLargeBufferBytes, kLargeBufferBytes + 4097}) {
    const std::string value = RandomBytes(size, size);
    EXPECT_EQ(CopyLarge(value), value) << size;
  }
}

}  // namespace
}  // namespace gigakv
