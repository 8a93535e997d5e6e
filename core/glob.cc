#include "gigakv/glob.h"

#include "absl/strings/ascii.h"

namespace gigakv {
namespace {

constexpr int kMaxNesting = 1000;

char Fold(char c, bool nocase) {
  return nocase ? static_cast<char>(absl::ascii_tolower(static_cast<unsigned char>(c))) : c;
}

// Returns 1 on match, 0 on mismatch; *skip_longer is set when the text ran out during a '*'
// expansion, so callers stop trying longer prefixes (Redis's skipLongerMatches).
int Match(const char* p, size_t plen, const char* s, size_t slen, bool nocase, bool* skip_longer,
          int nesting) {
  if (nesting > kMaxNesting) return 0;
  while (plen > 0 && slen > 0) {
    switch (p[0]) {
      case '*':
        while (plen > 1 && p[1] == '*') {
          ++p;
          --plen;
        }
        if (plen == 1) return 1;
        while (slen > 0) {
          if (Match(p + 1, plen - 1, s, slen, nocase, skip_longer, nesting + 1)) return 1;
          if (*skip_longer) return 0;
          ++s;
          --slen;
        }
        *skip_longer = true;
        return 0;
      case '?':
        ++s;
        --slen;
        break;
      case '[': {
        ++p;
        --plen;
        bool negate = plen > 0 && p[0] == '^';
        if (negate) {
          ++p;
          --plen;
        }
        bool matched = false;
        while (true) {
          if (plen == 0) {
            --p;  // Unterminated class: Redis treats the rest as literal end.
            ++plen;
            break;
          }
          if (p[0] == '\\' && plen >= 2) {
            ++p;
            --plen;
            if (p[0] == s[0]) matched = true;
          } else if (p[0] == ']') {
            break;
          } else if (plen >= 3 && p[1] == '-') {
            char start = Fold(p[0], nocase);
            char end = Fold(p[2], nocase);
            char c = Fold(s[0], nocase);
            if (start > end) std::swap(start, end);
            if (c >= start && c <= end) matched = true;
            p += 2;
            plen -= 2;
          } else if (Fold(p[0], nocase) == Fold(s[0], nocase)) {
            matched = true;
          }
          ++p;
          --plen;
        }
        if (negate) matched = !matched;
        if (!matched) return 0;
        ++s;
        --slen;
        break;
      }
      case '\\':
        if (plen >= 2) {
          ++p;
          --plen;
        }
        [[fallthrough]];
      default:
        if (Fold(p[0], nocase) != Fold(s[0], nocase)) return 0;
        ++s;
        --slen;
        break;
    }
    ++p;
    --plen;
    if (slen == 0) {
      while (plen > 0 && *p == '*') {
        ++p;
        --plen;
      }
      break;
    }
  }
  return plen == 0 && slen == 0 ? 1 : 0;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  bool skip_longer = false;
  return Match(pattern.data(), pattern.size(), text.data(), text.size(), nocase, &skip_longer, 0) ==
         1;
}

}  // namespace gigakv
