// COMMAND INFO's key specifications and command tips (Redis 7.0), and the per-key access flags
// that COMMAND GETKEYSANDFLAGS reports.
//
// A key spec says where a command's keys are and how it uses them:
//   begin_search  index N        the search starts at argument N (the command name is 0);
//                 unknown        the keys cannot be found from the spec (SORT's BY/GET/STORE);
//   find_keys     range L S M    keys from there to L (L >= 0: that many arguments further;
//                                L < 0: counted from the end, -1 = last), every S-th; M limits
//                                a -1 range to 1/M of the remaining arguments (0 = no limit);
//                 keynum K F S   the argument K after the start holds the number of keys, the
//                                first of which is F after the start, every S-th;
//                 unknown.
// Flags are printed as Redis prints them: the first (RW, RO, OW, RM) in capitals, then the
// access details (access, update, insert, delete, variable_flags...).
// The tables are data only; commands without an entry take no keys / have no tips.
#pragma once

#include <span>
#include <string_view>

namespace gigakv::server {

struct BeginSearch {
  enum class Type { kIndex, kUnknown };
  Type type = Type::kUnknown;
  int index = 0;
};

struct FindKeys {
  enum class Type { kRange, kKeynum, kUnknown };
  Type type = Type::kUnknown;
  int last_key = 0;      // kRange
  int key_step = 1;      // kRange and kKeynum
  int limit = 0;         // kRange
  int keynum_index = 0;  // kKeynum
  int first_key = 0;     // kKeynum
};

struct KeySpec {
  std::string_view flags;  // Space-separated: "RW access update".
  BeginSearch begin;
  FindKeys find;
  std::string_view notes = {};  // Empty: no "notes" field.
};

// The key specs of `command` (lower case; "container|sub" for a subcommand), in Redis's order;
// empty when it takes no keys.
std::span<const KeySpec> KeySpecsOf(std::string_view command);

// The command's tips, space-separated ("nondeterministic_output request_policy:all_shards");
// empty when it has none.
std::string_view TipsOf(std::string_view command);

}  // namespace gigakv::server
