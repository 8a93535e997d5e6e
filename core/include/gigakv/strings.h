// String helpers over std::string_view. Debian 12's abseil is built with its own
// absl::string_view (not an alias of std::string_view), so abseil's string functions do not
// accept std::string_view; these wrappers bridge the two and add the few helpers we need.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace gigakv {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
inline std::string_view FromAbsl(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

namespace strings_internal {
template <typename T>
decltype(auto) AlphaNumArg(const T& value) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return ToAbsl(value);
  } else {
    return (value);
  }
}
}  // namespace strings_internal

// absl::StrCat / StrAppend that also take std::string_view.
template <typename... Args>
std::string StrCat(const Args&... args) {
  return absl::StrCat(strings_internal::AlphaNumArg(args)...);
}
template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  absl::StrAppend(out, strings_internal::AlphaNumArg(args)...);
}

std::string AsciiLower(std::string_view s);
std::string AsciiUpper(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
std::string_view StripWhitespace(std::string_view s);
// Splits on `delimiter`, dropping empty pieces.
std::vector<std::string> SplitNonEmpty(std::string_view s, char delimiter);
std::string Join(const std::vector<std::string>& parts, std::string_view separator);
// Replaces each "%s" in `format` with the next argument, in order (for error texts).
std::string FormatText(std::string_view format, std::initializer_list<std::string_view> args);

}  // namespace gigakv
