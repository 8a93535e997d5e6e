// Redis's glob-style pattern matching (stringmatchlen) used by KEYS, SCAN MATCH, CONFIG GET and
// PUBSUB patterns: `*`, `?`, `[abc]`, `[^a-z]`, and `\` escapes.
// Complexity: worst case O(pattern x text) with bounded recursion depth (nested `*` beyond the
// limit fails the match, as Redis does since 7.0 to avoid stack exhaustion).
#pragma once

#include <string_view>

namespace gigakv {

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase = false);

}  // namespace gigakv
